"""`python -m mini_framework.mcp serve MODULE:ATTRIBUTE`: a module's tools as an MCP server over stdio.

    python -m mini_framework.mcp serve my_tools:tools                      # a list of tools, or one Tool
    python -m mini_framework.mcp serve my_tools:tools --approve my_tools:decide --name my-tools

An MCP client starts it as its server's command, e.g. `{"command": "python", "args": ["-m",
"mini_framework.mcp", "serve", "my_tools:tools"]}`. MODULE is imported from the working directory;
ATTRIBUTE is a list of tools, one `Tool`, or an object with a `.tools` list (a FileToolset); `--approve`
names a function `(tool_name, arguments) -> bool` that decides each call of a gated tool (without it,
gated tools are not served: serve.py). What the module prints while it is imported goes to stderr, so
it cannot break the protocol on stdout; the framework's log (a failing tool's traceback) goes to stderr
too. A MODULE:ATTRIBUTE that cannot be used is one line on stderr and exit status 2, before anything is
served.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import logging
import sys
from typing import Any

from ..tools import Tool
from .serve import mcp_server, run_stdio

__all__ = ["load", "main"]


class UsageError(Exception):
    """A MODULE:ATTRIBUTE that cannot be served; the message says why."""


def load(spec: str) -> Any:
    """The object that `MODULE:ATTRIBUTE` names (ATTRIBUTE may be dotted), imported with stdout sent to stderr.

    >>> load("mini_framework.builtin.files:FileToolset").__name__
    'FileToolset'
    >>> load("no colon")
    Traceback (most recent call last):
    ...
    mini_framework.mcp.__main__.UsageError: 'no colon' is not MODULE:ATTRIBUTE (e.g. my_tools:tools)
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise UsageError(f"{spec!r} is not MODULE:ATTRIBUTE (e.g. my_tools:tools)")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            value: Any = importlib.import_module(module_name)
    except Exception as exc:  # a module that fails to import: one line, not its traceback
        raise UsageError(f"cannot import {module_name!r}: {type(exc).__name__}: {str(exc)[:300]}") from None
    for part in attribute.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise UsageError(f"{module_name!r} has no {attribute!r}") from None
    return value


def tools_of(value: Any, spec: str) -> list[Any]:
    """What `spec` named, as a list of tools: one Tool, a list or tuple of them, or an object's `.tools`."""
    if isinstance(value, Tool):
        return [value]
    if isinstance(getattr(value, "tools", None), list):
        value = value.tools
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Tool) or callable(v) for v in value):
        return list(value)
    raise UsageError(f"{spec} is {type(value).__name__}, not a Tool or a non-empty list of tools")


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m mini_framework.mcp",
                                     description="Serve @tool functions as an MCP server over stdio.")
    commands = parser.add_subparsers(dest="command", required=True)
    serving = commands.add_parser("serve", help="serve MODULE:ATTRIBUTE (a list of tools, or a Tool)")
    serving.add_argument("tools", metavar="MODULE:ATTRIBUTE")
    serving.add_argument("--name", default="mini-framework", help="the server's name, as clients show it")
    serving.add_argument("--approve", metavar="MODULE:FUNCTION",
                         help="a function (tool_name, arguments) -> bool deciding calls of gated tools")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(levelname)s: %(message)s")
    try:
        tools = tools_of(load(args.tools), args.tools)
        approve = load(args.approve) if args.approve else None
        if approve is not None and not callable(approve):
            raise UsageError(f"{args.approve} is {type(approve).__name__}, not a function")
        server = mcp_server(tools, name=args.name, approve=approve)
    except UsageError as problem:
        print(f"python -m mini_framework.mcp: {problem}", file=sys.stderr)
        return 2
    except (TypeError, ValueError, ImportError) as problem:  # two tools with one name, a missing feature folder
        print(f"python -m mini_framework.mcp: cannot serve {args.tools}: {str(problem)[:500]}", file=sys.stderr)
        return 2
    try:
        asyncio.run(run_stdio(server))
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
