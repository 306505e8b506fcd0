"""The tool option this feature reads: `delegate`, set by `as_tool` (never written by hand).

A tool with it runs a sub-agent: its value is the `Delegate` that says which agent and within which limits.
The option is what gives a parent Agent the `Delegation` hook (hook.py), as `requires_approval` gives it the gate.
"""
from __future__ import annotations

from typing import Any

from ..schema import ToolDefinitionError
from ..tools import Option, Tool

__all__ = ["OPTIONS"]


def _check(value: Any, tool: Tool) -> Any:
    from .tool import Delegate  # here: tool.py builds tools, which read this module

    if not isinstance(value, Delegate):
        raise ToolDefinitionError(f"{tool.name}: delegate is set by as_tool(agent), not by hand")
    return value


OPTIONS = {"delegate": Option(default=None, check=_check, acts=True)}
