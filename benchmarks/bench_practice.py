"""Practice-model latency on loopback: `python benchmarks/bench_practice.py [N]`.

Measures, over one keep-alive connection, a non-streaming completion with 10 tools (median and
p90; target < 5 ms) and the streaming time to first chunk (target < 5 ms). Uses the real
`practice` persona (the planner) when it can be imported, else a stand-in that calls one tool,
and says which. A report, not a timed test.

`python benchmarks/bench_practice.py --large [MODEL]` instead sends each of `LARGE` once (huge
tool lists, 15,000 parameters, enum and nesting bombs, thousands of calls, a huge strict
`response_format`, a conversation full of keys...) and reports the
status and the time each took (target: well under a second, or a refusal). With the default
window of 16,384 tokens most of them are refused as too long for the context (`context.py`);
`--large practice@ctx=99999999` lets them through to the planner.
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

from practice_model import Persona, PlannedCall, PracticeServer, Reply

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


def _tool(name: str, params: dict[str, Any], description: str = "", required: list[str] | None = None) -> dict:
    """A function tool; every parameter is required unless `required` says otherwise."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": params, "required": list(params) if required is None else required}}}


def _ask(text: str, tools: list[dict] | None = None, **extra: Any) -> dict:
    return {"model": "practice", "messages": [{"role": "user", "content": text}], **({"tools": tools} if tools else {}),
            **extra}


def _large() -> dict[str, Callable[[], dict]]:
    """Request bodies that are expensive to answer naively, by name (built on demand: some are megabytes)."""
    words = " ".join(f"city{i} weather 天气 查询 {i}" for i in range(400))
    long = (words * 3)[:20_000]

    def many_params(n: int) -> dict:
        return _ask("北京天气怎么样？", [_tool("get_weather", {f"p{i}": {"type": "string"} for i in range(n)})])

    def wide_tools(description: str, n_params: int, enum: int = 0) -> dict:
        def param(i: int, j: int) -> dict:
            schema: dict[str, Any] = {"type": "string", "description": f"city {j} {description}"}
            if enum:
                schema["enum"] = [f"v{i}_{j}_{k}" for k in range(enum)]
            return schema
        return _ask("北京和上海的天气，1 2 3 4 5 6 7 8 9 10", [
            _tool(f"get_weather_{i}", {f"city{j}": param(i, j) for j in range(n_params)},
                  f"查询天气 weather {description}") for i in range(128)])

    def nested(width: int, depth: int) -> dict:
        schema: dict[str, Any] = {"type": "string", "description": "city"}
        for _ in range(depth):
            schema = {"type": "object", "properties": {f"k{i}": schema for i in range(width)},
                      "required": [f"k{i}" for i in range(width)]}
        return _ask("北京天气", [_tool("get_weather", {"where": schema})])

    def ref_bomb(width: int) -> dict:
        step = [{"$ref": f"#/$defs/D{d + 1}"} for d in range(12)]
        defs = {f"D{d}": {"anyOf": [step[d]] * width, "allOf": [step[d]] * width} for d in range(12)}
        return {"model": "practice", "messages": [{"role": "user", "content": "北京天气"}], "tools": [{
            "type": "function", "function": {"name": "get_weather", "parameters": {
                "$defs": defs, "type": "object", "properties": {"city": {"$ref": "#/$defs/D0"}},
                "required": ["city"]}}}]}

    def many_calls(n: int) -> dict:
        calls = [{"id": f"c{i}", "type": "function", "function": {"name": "get_weather",
                  "arguments": json.dumps({"city": f"city{i}"})}} for i in range(n)]
        results = [{"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"temperature": i})}
                   for i in range(n)]
        return {"model": "practice", "messages": [{"role": "user", "content": "北京天气"},
                                                  {"role": "assistant", "content": None, "tool_calls": calls},
                                                  *results], "tools": TOOLS}

    def huge_result(size: int) -> dict:
        chain = [_tool("get_user", {"name": {"type": "string"}}, "查询用户"),
                 _tool("get_orders", {f"user_id_{i}": {"type": "integer"} for i in range(64)}, "查询用户订单")]
        return {"model": "practice", "tools": chain, "messages": [
            {"role": "user", "content": "张三的订单"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "get_user", "arguments": '{"name":"张三"}'}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "user " * (size // 5)}]}

    def strict_schema(width: int, depth: int) -> dict:
        schema: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "minItems": 50}
        for _ in range(depth):
            schema = {"type": "object", "additionalProperties": False, "required": [f"k{i}" for i in range(width)],
                      "properties": {f"k{i}": schema for i in range(width)}}
        return _ask("北京天气，用 JSON 回答", response_format={"type": "json_schema", "json_schema": {
            "name": "bomb", "strict": True, "schema": schema}})

    def many_secrets(n: int) -> dict:
        system = [{"role": "system", "content": f"API key {i}: sk-{i:08d}abcdef, 身份证号 11010519491231002X"}
                  for i in range(n)]
        return {"model": "practice", "tools": [_tool("find_bookings", {
            "id_number": {"type": "string"}, "api_key": {"type": "string"}}, "查机票")],
            "messages": [*system, {"role": "user", "content": "帮我查一下我订的机票"}]}

    return {
        "1 tool, 15,000 parameters": lambda: many_params(15_000),
        "1 tool, 100,000 parameters": lambda: many_params(100_000),
        "1 tool, 150,000 parameters (over 4 MiB)": lambda: many_params(150_000),
        "129 tools": lambda: _ask("北京天气", [_tool(f"t{i}", {"city": {"type": "string"}}) for i in range(129)]),
        "128 tools x 8 params, 2,000-char texts": lambda: wide_tools(long[:2000], 8),
        "128 tools x 32 params x 64-member enums": lambda: wide_tools("", 32, enum=64),
        "128 tools x 2 params x 1,000-member enums": lambda: wide_tools("", 2, enum=1000),
        "nested objects, 8 wide x 5 deep": lambda: nested(8, 5),
        "$ref / anyOf / allOf bomb": lambda: ref_bomb(6),
        "10,000 calls in one message": lambda: many_calls(10_000),
        "a 4 MB tool result, 64 ids to find": lambda: huge_result(4_000_000),
        "a 100,000-character question": lambda: _ask(long * 5, TOOLS),
        "strict json_schema, 8 wide x 5 deep": lambda: strict_schema(8, 5),
        "20,000 system messages with keys": lambda: many_secrets(20_000),
    }


def large(model: str = "practice") -> int:
    """Send each large request once and report status and time."""
    print(f"large requests, one each, model {model}")
    print("| request                                      |    bytes | status | seconds |")
    print("|----------------------------------------------|---------:|-------:|--------:|")
    with PracticeServer() as server:
        warm = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        warm.request("POST", "/v1/chat/completions", body=json.dumps({**REQUEST, "model": model}).encode(),
                     headers={"Content-Type": "application/json"})
        warm.getresponse().read()                           # the persona is built (and imported) on first use
        warm.close()
        for name, build in _large().items():
            body = json.dumps({**build(), "model": model}, ensure_ascii=False).encode()
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
            start = time.perf_counter()
            conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            seconds = time.perf_counter() - start
            conn.close()
            print(f"| {name:<44} | {len(body):8d} | {response.status:6d} | {seconds:7.3f} |", flush=True)
    return 0


def stand_in(request: dict[str, Any]) -> Reply:
    """Used when the planner is not importable: one call, like the planner's first step."""
    return Reply(tool_calls=(PlannedCall.of("get_weather", {"city": "北京"}),))


def personas() -> tuple[list[Persona] | None, str]:
    """The default registry if the planner imports, else the stand-in under the same name."""
    try:
        from practice_model import planner  # noqa: F401
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
    if argv[:1] == ["--large"]:
        return large(*argv[1:2])
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
