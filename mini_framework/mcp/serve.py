"""Serving: the course's `@tool` functions as an MCP server over stdio, for any MCP client to call.

    serve([get_weather, add_numbers])                       # blocks: the client talks over stdin/stdout
    python -m mini_framework.mcp serve my_tools:tools       # the same, as the `command` an MCP client starts

A client gets what our Agent's model gets, because every call goes through the framework's own path
(an `Executor`, the same one the Agent uses):

    tools/list    each tool's name, description and parameters exactly as `tool.to_openai_tool()` builds
                  them (as `inputSchema`), with `annotations` only where our options say something:
                  a tool that acts (`side_effects=True`, `requires_approval`) is `readOnlyHint: false,
                  destructiveHint: true`; of the others we know nothing for sure, so nothing is claimed
    tools/call    repaired and coerced arguments ("一百二十三" -> 123); what still fails, one line per field;
                  the error envelope for a tool that raises (no traceback, secrets redacted); the tool's
                  timeout; images it returns (`ImgPath`, `(text, ImgPath)`), read within the media policy
                  (allowed folders, sniffed bytes, size limits), as image content. Every failure is a
                  result with `isError: true` and the envelope as its text
    unknown tool  a protocol error (-32602, as the MCP specification asks), naming the tools there are
                  and the closest name

Gated tools (`requires_approval=True` or a predicate) are served only with `approve=`, a function of
`(tool_name, arguments) -> bool` (or an awaitable bool) that this side decides with; only `True` runs
the call, anything else (an exception, no answer within 300 s) declines it, and the client reads that
the call was declined. Without `approve`, such a tool is left out of `tools/list`, a line on stderr
names it, and a call of it anyway is an `isError` result saying this server has no way to approve it.
A client cannot approve a call: nothing it sends (arguments, `_meta`) reaches the decision.

Concessions: MCP elicitation (asking the client's user) is not used for approvals, by design: the client
that asks for a call would also answer the question, so it could approve its own calls. Over stdio,
stdin is the client's: an `approve` that reads the keyboard (`input()`) gets end-of-file and declines.
Each call is answered on its own: the Executor's retry budget ("stop calling it") belongs to the client's
conversation, which the server cannot see. Stdout is the protocol's from the first byte: a script that
calls `serve` must print nothing before it (the command line sends what a module prints while it is
imported to stderr; while serving, the SDK sends the tools' prints there). Only stdio; no structured
content, resources or prompts.
"""
from __future__ import annotations

import asyncio
import base64
import copy
import inspect
import itertools
import logging
import sys
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Iterable, Union

from ..approvals import Approvals, Pending
from ..executor import Executor, ToolResult, envelope, tools_by_name, unknown_tool_message
from ..media import MediaPolicy, MediaStore
from ..replies import ToolCall
from ..tools import Tool

if TYPE_CHECKING:  # the optional `mcp` extra (the official SDK) is imported when a server is made
    from mcp import types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

__all__ = ["Approve", "NO_APPROVER", "mcp_server", "run_stdio", "serve", "serve_async", "tool_listing"]

log = logging.getLogger("mini_framework")

Approve = Callable[[str, dict[str, Any]], Union[bool, Awaitable[bool]]]
NO_APPROVER = ("{name} is not served here: it needs a person's approval before it runs, and this server was "
               "started without a way to decide (serve(..., approve=...)). Do not retry it; tell the user it "
               "cannot be used through this server.")
BUG = "The server failed while handling this call; the tool may or may not have run. Tell the user."
MAX_NAME = 64  # characters of a client's tool name shown back to it


def tool_listing(one: Tool) -> types.Tool:
    """How a client sees a tool: the framework's own schema, and only the hints our options justify.

    >>> from mini_framework import tool
    >>> @tool(side_effects=True)
    ... def send(to: str) -> str:
    ...     '''Send a note.'''
    >>> listed = tool_listing(send)
    >>> listed.input_schema == send.to_openai_tool()["function"]["parameters"], listed.annotations
    (True, ToolAnnotations(title=None, read_only_hint=False, destructive_hint=True, idempotent_hint=None,
                           open_world_hint=None))
    """
    from mcp import types

    function = one.to_openai_tool()["function"]
    hints = types.ToolAnnotations(read_only_hint=False, destructive_hint=True) if one.acts else None
    return types.Tool(name=function["name"], description=function["description"],
                      input_schema=function["parameters"], annotations=hints)


def mcp_server(tools: Tool | Iterable[Any], *, name: str = "mini-framework", approve: Approve | None = None,
               instructions: str | None = None, timeout: float | None = 60.0,
               media: MediaPolicy | None = None) -> Server[Any]:
    """The tools as an MCP `Server` (the SDK's low-level one), not yet running: `serve` runs it over stdio,
    and `mcp.Client(server)` talks to it in-process (tests).

    >>> import asyncio, mcp
    >>> from mini_framework import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> async def main():
    ...     async with mcp.Client(mcp_server([add])) as client:
    ...         return (await client.call_tool("add", {"a": "一百二十三", "b": 1})).content[0].text
    >>> asyncio.run(main())
    '124'
    """
    _require_sdk()
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    if approve is not None and not callable(approve):
        raise TypeError(f"approve must be a function of (tool_name, arguments) returning True to run the call, "
                        f"not {approve!r:.60}")
    offered = tools_by_name([tools] if isinstance(tools, Tool) else tools)  # two tools with one name: ValueError
    held = sorted(n for n, t in offered.items() if "requires_approval" in t.options) if approve is None else []
    for one in held:  # on stderr: a server's own console (stdout is the client's)
        print(f"mcp server {name}: {one} is not served: it requires approval, and no approve= was given",
              file=sys.stderr)
    served = [t for n, t in offered.items() if n not in held]
    hooks = [Approvals(approver=_approver(approve))] if approve is not None else []
    executor = Executor(served, timeout=timeout, hooks=hooks, media=MediaStore(media))  # a missing feature: now
    listing = [tool_listing(t) for t in served]
    ids = itertools.count(1)

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)  # one page: a cursor the client sends changes nothing

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        tool_name = params.name
        if tool_name in held:
            return _error(envelope("error", error=NO_APPROVER.format(name=tool_name)))
        if tool_name not in executor.tools:
            shown = tool_name if len(tool_name) <= MAX_NAME else tool_name[:MAX_NAME] + "..."
            raise MCPError(types.INVALID_PARAMS, unknown_tool_message(shown, executor.tools))
        call = ToolCall(f"mcp_{next(ids)}", tool_name, params.arguments if params.arguments is not None else {})
        one = copy.copy(executor)  # shares the tools and hooks (the cache, the media store); counts on its own
        one.failures = {}
        try:
            [result] = await one.run([call])
            return _result(result)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except Exception:  # a bug of ours: still an answer, and a traceback in the log only
            log.exception("MCP server %s: call %s of %s failed", name, call.id, tool_name)
            return _error(envelope("error", error=BUG))

    return Server(name, instructions=instructions, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_async(tools: Tool | Iterable[Any], *, name: str = "mini-framework", approve: Approve | None = None,
                      instructions: str | None = None, timeout: float | None = 60.0,
                      media: MediaPolicy | None = None) -> None:
    """`serve`, for code that already runs an event loop: returns when the client closes stdin."""
    await run_stdio(mcp_server(tools, name=name, approve=approve, instructions=instructions, timeout=timeout,
                               media=media))


async def run_stdio(server: Server[Any]) -> None:
    """Run a server over this process's stdin/stdout until the client closes stdin (the SDK's stdio transport:
    while it runs, what the tools print goes to stderr, and what they read from stdin is end-of-file)."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(tools: Tool | Iterable[Any], *, name: str = "mini-framework", approve: Approve | None = None,
          instructions: str | None = None, timeout: float | None = 60.0, media: MediaPolicy | None = None) -> None:
    """Serve the tools over stdin/stdout until the client closes the connection (blocking).

        serve([get_weather, send_email], name="office",
              approve=lambda tool_name, arguments: arguments["to"].endswith("@corp.example"))

    `approve(tool_name, arguments) -> bool` decides each call of a gated tool (without it, gated tools are
    not served); `timeout` is the seconds a call may take (a tool's own `timeout` wins); `media` says
    where images a tool returns may be read from (default: the working directory and `media_dir()`).
    Inside a running event loop, `await serve_async(...)` instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(serve_async(tools, name=name, approve=approve, instructions=instructions, timeout=timeout,
                                media=media))
        return
    raise RuntimeError("serve() blocks, and an event loop is running here: use `await serve_async(...)`")


def _require_sdk() -> None:
    """An ImportError saying what to install, when the optional `mcp` extra (the official SDK) is not there."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ImportError("serving tools over MCP needs the official SDK: pip install -e \".[mcp]\" in this "
                          "repository, or pip install \"mcp>=2.3,<3\"") from None


def _approver(approve: Approve) -> Callable[[Pending], Any]:
    """The approvals feature's approver, asking `approve(tool_name, arguments)` with a copy of the arguments
    (so what it changes is not what runs). A sync `approve` runs in a worker thread, an async one on the loop."""
    def approver(item: Pending) -> Any:
        return approve(item.name, copy.deepcopy(item.arguments or {}))

    approver.__name__ = getattr(approve, "__name__", type(approve).__name__)  # named in the audit log
    if inspect.iscoroutinefunction(approve):
        async def awaited(item: Pending) -> Any:
            return await approve(item.name, copy.deepcopy(item.arguments or {}))

        awaited.__name__ = approver.__name__
        return awaited
    return approver


def _result(result: ToolResult) -> types.CallToolResult:
    """What the Executor made of a call, as MCP content: the text the model would read, then the images."""
    from mcp import types

    if not result.ok:
        return _error(result.content)
    content: list[types.ContentBlock] = [types.TextContent(text=result.content)] if result.content else []
    for media in result.media:
        content.append(types.ImageContent(data=base64.b64encode(media.data).decode("ascii"), mime_type=media.info.mime))
    return types.CallToolResult(content=content)


def _error(text: str) -> types.CallToolResult:
    from mcp import types

    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
