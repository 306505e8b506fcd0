"""Practice-model latency on loopback: `python benchmarks/bench_practice.py [N]`.

Measures, over one keep-alive connection, a non-streaming completion with 10 tools (median and
p90; target < 5 ms) and the streaming time to first chunk (target < 5 ms). Uses the real
`practice` persona (the planner) when it can be imported, else a stand-in that calls one tool,
and says which. A report, not a timed test.
"""
from __future__ import annotations

import http.client
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from mini_framework.practice import Persona, PlannedCall, PracticeServer, Reply

TOOLS = [{"type": "function", "function": {
    "name": name, "description": description,
    "parameters": {"type": "object", "properties": {arg: {"type": "string", "description": f"The {arg}."}},
                   "required": [arg]}}}
    for name, description, arg in [
        ("get_weather", "Current weather for a city.", "city"), ("get_time", "Local time in a city.", "city"),
        ("search_web", "Search the web.", "query"), ("send_email", "Send an e-mail.", "to"),
        ("get_user", "Look a user up by name.", "name"), ("list_orders", "A user's orders.", "user_id"),
        ("get_order", "One order's details.", "order_id"), ("convert_currency", "Convert money.", "amount"),
        ("translate", "Translate text.", "text"), ("read_file", "Read a file.", "path")]]
REQUEST = {"model": "practice", "messages": [{"role": "system", "content": "You are a helpful assistant."},
                                             {"role": "user", "content": "北京现在天气怎么样？"}], "tools": TOOLS}


def stand_in(request: dict[str, Any]) -> Reply:
    """Used when the planner is not importable: one call, like the planner's first step."""
    return Reply(tool_calls=(PlannedCall.of("get_weather", {"city": "北京"}),))


def personas() -> tuple[list[Persona] | None, str]:
    """The default registry if the planner imports, else the stand-in under the same name."""
    try:
        from mini_framework.practice import planner  # noqa: F401
        return None, "practice (the real planner)"
    except ImportError:
        return [Persona.of("practice", stand_in)], "stand-in persona (planner.py not importable)"


def measure(conn: http.client.HTTPConnection, body: bytes, n: int, first_chunk: bool) -> list[float]:
    """`n` timings in milliseconds: whole response, or until the first `data:` line of a stream."""
    out = []
    for _ in range(n):
        start = time.perf_counter()
        conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        if first_chunk:
            while not response.readline().startswith(b"data: "):
                pass
            out.append((time.perf_counter() - start) * 1000)
            response.read()
        else:
            response.read()
            out.append((time.perf_counter() - start) * 1000)
        assert response.status == 200, response.status
    return out


def row(name: str, times: list[float], target: float) -> str:
    """One table row."""
    median, p90 = statistics.median(times), statistics.quantiles(times, n=10)[-1]
    verdict = "ok" if p90 < target else "SLOW"
    return f"| {name:<34} | {median:9.3f} | {p90:8.3f} | {f'< {target:g} ms':<8} | {verdict:<4} |"


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 500
    registry, which = personas()
    with PracticeServer(personas=registry) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        plain = json.dumps(REQUEST, ensure_ascii=False).encode()
        stream = json.dumps({**REQUEST, "stream": True}, ensure_ascii=False).encode()
        runs: list[tuple[str, Callable[[], list[float]]]] = [
            ("non-streaming, 10 tools", lambda: measure(conn, plain, n, False)),
            ("streaming, time to first chunk", lambda: measure(conn, stream, n, True)),
            ("streaming, whole stream", lambda: measure(conn, stream, n, False)),
        ]
        measure(conn, plain, 50, False)  # warm up
        results = [(name, run()) for name, run in runs]
        conn.close()
    print(f"practice model on loopback, {n} requests each, one keep-alive connection; persona: {which}")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine: {cpus} CPUs (nproc), Python {platform.python_version()}, {platform.platform()}")
    print("| measurement                        | median ms |   p90 ms | target   |      |")
    print("|------------------------------------|----------:|---------:|----------|------|")
    for (name, times), target in zip(results, [5, 5, 10]):
        print(row(name, times, target))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
