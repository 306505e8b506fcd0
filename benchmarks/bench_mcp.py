"""What an MCP tool call costs beyond the tool's own time: `python benchmarks/bench_mcp.py [CALLS]` (default 300).

Each figure is the median of CALLS calls through the framework's Executor (repair, validation, the envelope):

1. local      the practice notes server's read_note code as a local Tool.from_schema tool: the tool's own time
              plus the framework's per-call work, no MCP
2. mcp        the same read_note over MCP: the practice server as a child process over stdio (stdio_tools)
3. sdk        the same call with the official SDK's client alone, on its own loop (no framework): what the
              protocol and the pipe cost
4. time       mcp-server-time's convert_time over MCP, and its own function called directly (the tool's time)

overhead = (2) - (1): what MCP adds to a call. Also the start of each server (open to tools ready) and its
close. Prints machine info and the load. A report, not a timed test.
"""
from __future__ import annotations

import asyncio
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.timing import load, median_us  # noqa: E402
from mini_framework import Executor, ToolCall  # noqa: E402
from mini_framework.mcp import stdio_tools  # noqa: E402
from mini_framework.tools import Tool  # noqa: E402
from practice_model import mcp_server  # noqa: E402

TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "Asia/Shanghai"]
CONVERT = {"source_timezone": "Asia/Shanghai", "time": "16:30", "target_timezone": "Asia/Tokyo"}


def through(executor: Executor, name: str, arguments: str) -> float:
    """Median microseconds of one call through `executor`."""
    call = ToolCall("c", name, arguments)

    def once() -> None:
        [result] = executor.run_sync([call])
        assert result.ok, result.content
    return median_us(once, CALLS)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1000, value


def sdk_alone() -> float:
    """Median microseconds of read_note with the SDK's client and nothing else."""
    from mcp import Client, StdioServerParameters

    async def main() -> float:
        argv = mcp_server.command()
        async with Client(StdioServerParameters(command=argv[0], args=argv[1:]), cache=None) as client:
            times = []
            for _ in range(CALLS):
                start = time.perf_counter()
                await client.call_tool("read_note", {"note_id": "shopping"})
                times.append((time.perf_counter() - start) * 1e6)
            return statistics.median(times)
    return asyncio.run(main())


def main() -> None:
    print(f"{platform.machine()}, {platform.python_version()}, load {load()}; {CALLS} calls each, medians")
    server = mcp_server.NotesServer(mcp_server.parser().parse_args([]), sys.stdout.buffer)
    local = Tool.from_schema("read_note", "Read a note.", {"type": "object", "properties": {
        "note_id": {"type": "string"}}, "required": ["note_id"]},
        lambda **a: mcp_server.read_note(server, a)[0]["text"])
    local_us = through(Executor([local]), "read_note", '{"note_id": "shopping"}')

    opened_ms, box = timed(lambda: stdio_tools(*mcp_server.command(), name="notes", approve=True, approvals=None))
    start_ms, tools = timed(box.open)
    mcp_us = through(Executor(list(tools)), "read_note", '{"note_id": "shopping"}')
    close_ms, _ = timed(box.close)
    sdk_us = sdk_alone()

    from mcp_server_time.server import TimeServer
    own_us = median_us(lambda: TimeServer().convert_time("Asia/Shanghai", "16:30", "Asia/Tokyo"), CALLS)
    box = stdio_tools(*TIME, name="time", approve=True, approvals=None)
    time_start_ms, tools = timed(box.open)
    time_us = through(Executor(list(tools)), "convert_time", json.dumps(CONVERT))
    time_close_ms, _ = timed(box.close)

    print(f"1. local read_note (Tool.from_schema)      {local_us:8.0f} µs")
    print(f"2. read_note over MCP (practice server)    {mcp_us:8.0f} µs   overhead (2)-(1): {mcp_us - local_us:.0f} µs")
    print(f"3. read_note with the SDK's client alone   {sdk_us:8.0f} µs   the framework's share of (2): "
          f"{mcp_us - sdk_us:.0f} µs")
    print(f"4. convert_time over MCP (mcp-server-time) {time_us:8.0f} µs   its own function: {own_us:.0f} µs; "
          f"overhead {time_us - own_us:.0f} µs")
    print(f"start and close: practice server {start_ms:.0f} ms / {close_ms:.0f} ms; "
          f"mcp-server-time {time_start_ms:.0f} ms / {time_close_ms:.0f} ms")


CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 300

if __name__ == "__main__":
    main()
