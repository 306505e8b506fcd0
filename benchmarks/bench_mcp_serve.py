"""What serving a tool over MCP costs per call: `python benchmarks/bench_mcp_serve.py [N]`.

A trivial tool (`ping() -> "pong"`), called N times (default 300) each way, medians:

1. `Executor.run` alone: the framework's own path (lookup, validation, hooks, worker thread), no MCP.
2. Served in-process: `mcp.Client(mcp_server([ping]))` (the SDK's direct dispatcher: no JSON-RPC framing).
3. Served over stdio: `python -m mini_framework.mcp serve ...` as a subprocess, JSON-RPC over pipes.
4. For comparison, the SDK's own high-level `MCPServer` serving the same function over stdio.

Also the time from starting the server process to its first `tools/list` answer. A report, not a timed test.
"""
from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import mcp
from timing import load

from mini_framework import tool
from mini_framework.executor import Executor, ToolCall
from mini_framework.mcp.serve import mcp_server

ROOT = Path(__file__).resolve().parent.parent
PING = '''
from mini_framework import tool

@tool
def ping() -> str:
    """Check that the server answers."""
    return "pong"

tools = [ping]
'''
SDK_SERVER = '''
from mcp.server.mcpserver import MCPServer
server = MCPServer("sdk-ping")

@server.tool()
def ping() -> str:
    """Check that the server answers."""
    return "pong"

server.run("stdio")
'''


@tool
def ping() -> str:
    """Check that the server answers."""
    return "pong"


async def median_ms(call: Callable[[], Awaitable[Any]], n: int) -> float:
    for _ in range(min(n, 30)):
        await call()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def over_stdio(args: list[str], n: int, cwd: str) -> tuple[float, float]:
    """(ms to the first tools/list answer, median ms per call) for a server started as `python args...`."""
    params = mcp.StdioServerParameters(command=sys.executable, args=args, cwd=cwd,
                                       env={"PYTHONPATH": os.pathsep.join([cwd, str(ROOT)])})
    started = time.perf_counter()
    async with mcp.Client(params) as client:
        await client.list_tools()
        startup = (time.perf_counter() - started) * 1000
        return startup, await median_ms(lambda: client.call_tool("ping", {}), n)


async def main(n: int) -> None:
    executor = Executor([ping])
    ids = iter(range(10**9))
    alone = await median_ms(lambda: executor.run([ToolCall(f"c{next(ids)}", "ping", {})]), n)
    async with mcp.Client(mcp_server([ping])) as client:
        inproc = await median_ms(lambda: client.call_tool("ping", {}), n)
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "bench_ping_tools.py").write_text(PING)
        Path(folder, "bench_sdk_ping.py").write_text(SDK_SERVER)
        ours = await over_stdio(["-m", "mini_framework.mcp", "serve", "bench_ping_tools:tools"], n, folder)
        sdk = await over_stdio(["bench_sdk_ping.py"], n, folder)
    print(f"{platform.python_version()} on {os.cpu_count()} CPUs, {load()}; {n} calls each, medians")
    print(f"  Executor.run alone (no MCP)            {alone:7.3f} ms per call")
    print(f"  served in-process (mcp.Client(server)) {inproc:7.3f} ms per call")
    for label, (startup, per_call) in (("served over stdio (our server)        ", ours),
                                       ("SDK MCPServer over stdio (same tool)  ", sdk)):
        print(f"  {label} {per_call:7.3f} ms per call; first tools/list after {startup:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
