"""MCP: tools from other programs (Model Context Protocol servers), offered to an Agent with every gate.

    with stdio_tools(sys.executable, "-m", "mcp_server_time", "--local-timezone", "Asia/Shanghai",
                     approve=ask) as time_tools:
        agent = Agent(client, model, tools=[*time_tools])

    toolbox.py   stdio_tools(command, *args, ...): start a server, approve its list, its tools as Tools
    session.py   the server process and the SDK's client, on an event loop of their own (Jupyter-safe)
    trust.py     ToolListing (escaped, fingerprinted), Approvals (a signed file), ask (at the keyboard)
    results.py   an MCP result as a tool's value: text, images (media_id), links that stay text
    errors.py    MCPServerError (names the server), NotApproved (says how to approve)
    serve.py     the other way round: serve(tools) offers your @tool functions to any MCP client (stdio),
                 every call through the framework's Executor; gated tools only with approve=
    __main__.py  python -m mini_framework.mcp serve MODULE:ATTRIBUTE

Needs: the core, the schemas feature (Tool.from_schema) and the media feature's types; the approvals
feature for gated tools and the signed approvals file; budget (optional) for spilling long results;
and the official SDK: `pip install -e ".[mcp]"` (mcp 2.x), imported when a server starts.
"""
from .errors import MCPServerError, NotApproved
from .serve import serve, serve_async
from .toolbox import MCPTool, MCPTools, StdioTools, stdio_tools
from .trust import Approvals, ToolListing, ask, fingerprint

__all__ = ["Approvals", "MCPServerError", "MCPTool", "MCPTools", "NotApproved", "StdioTools", "ToolListing", "ask",
           "fingerprint", "serve", "serve_async", "stdio_tools"]
