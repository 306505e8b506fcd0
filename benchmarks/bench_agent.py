"""The agent loop's own cost, and what concurrency buys: `python benchmarks/bench_agent.py [N]`.

1. Loop overhead per tool round trip, model time and tool time excluded (target < 1 ms median).
   `Agent.run("北京现在天气怎么样？")` against the in-process practice model with a no-op tool: one
   tool round trip, two model requests. The client is wrapped so that every SDK call
   (`chat.completions.create`: request building, HTTP on loopback, the practice planner, parsing) is
   timed, and the tool times its own body. Overhead = run wall time - SDK time - tool time: what the
   framework adds (event loop, worker threads, message conversion, argument repair and validation,
   events). Reported per run, and per extra round trip (the slope between runs of `practice-loop`
   capped at 2 and at 12 iterations). The `ModelResponse.seconds` the Agent itself reports (SDK
   time plus the hop to a worker thread) is shown for comparison.
2. Eight tools that each sleep 0.2 s, in one reply: `Executor.run` with `max_concurrency=1`
   (sequential, ~1.6 s) and the default (concurrent, target < 0.3 s), for async tools and for
   blocking ones, and the same reply inside a whole `Agent.run` (a scripted client sends the eight
   calls, then an answer).

Prints machine info (nproc, Python). A report, not a timed test.
"""
from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import sys
import time
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from mini_framework import Agent, Executor, ToolCall, connect, tool
from mini_framework.agent import ModelResponse


class TimedClient:
    """Wraps an OpenAI client; `seconds` accumulates the time spent inside `chat.completions.create`."""

    def __init__(self, client: Any) -> None:
        self._create = client.chat.completions.create
        self.seconds = 0.0
        self.chat = self
        self.completions = self

    def create(self, **params: Any) -> Any:
        start = time.perf_counter()
        try:
            return self._create(**params)
        finally:
            self.seconds += time.perf_counter() - start


TOOL_SECONDS = [0.0]


@tool
def get_weather(city: str) -> str:
    """查询指定城市当前的天气情况

    Args:
        city: 城市名称，例如北京、上海
    """
    start = time.perf_counter()
    text = '{"temperature": 22, "condition": "晴"}'  # a no-op: the answer is fixed
    TOOL_SECONDS[0] += time.perf_counter() - start
    return text


def overhead_of_runs(agent: Agent, client: TimedClient, question: str, n: int) -> dict[str, list[float]]:
    """Per run, in ms: wall, SDK, tool, overhead, and the Agent's own ModelResponse.seconds."""
    out: dict[str, list[float]] = {k: [] for k in ("wall", "sdk", "tool", "overhead", "reported", "round_trips")}
    for _ in range(n):
        client.seconds, TOOL_SECONDS[0] = 0.0, 0.0
        reported: list[float] = []

        def note(event: object, reported: list[float] = reported) -> None:
            if isinstance(event, ModelResponse):
                reported.append(event.seconds)

        start = time.perf_counter()
        result = agent.run(question, on_event=note)
        wall = time.perf_counter() - start
        out["wall"].append(wall * 1000)
        out["sdk"].append(client.seconds * 1000)
        out["tool"].append(TOOL_SECONDS[0] * 1000)
        out["overhead"].append((wall - client.seconds - TOOL_SECONDS[0]) * 1000)
        out["reported"].append(sum(reported) * 1000)
        out["round_trips"].append(len(result.tool_results))
    return out


def loop_overhead(n: int) -> None:
    base, model = connect()
    client = TimedClient(base)
    agent = Agent(client, model, tools=[get_weather])
    overhead_of_runs(agent, client, "北京现在天气怎么样？", 20)  # warm up (imports, connection pool, caches)
    runs = overhead_of_runs(agent, client, "北京现在天气怎么样？", n)
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"\n1. Loop overhead: Agent.run('北京现在天气怎么样？'), 1 tool round trip, 2 model requests; "
          f"{n} runs, median")
    print("| per run                                        |      ms |")
    print("|------------------------------------------------|--------:|")
    print(f"| wall time of the run                           | {med['wall']:7.3f} |")
    print(f"| inside the SDK call (HTTP + practice planner)  | {med['sdk']:7.3f} |")
    print(f"| inside the tool                                | {med['tool']:7.3f} |")
    print(f"| = framework overhead                           | {med['overhead']:7.3f} |")
    print(f"| (ModelResponse.seconds, as the Agent reports)  | {med['reported']:7.3f} |")
    p90 = statistics.quantiles(runs["overhead"], n=10)[-1]
    verdict = "ok" if med["overhead"] < 1 else "over target"
    print(f"overhead per run: median {med['overhead']:.3f} ms, p90 {p90:.3f} ms (target < 1 ms median: {verdict})")

    _, loop_model = connect("practice-loop")
    per_cap = {}
    for cap in (2, 12):
        looping = Agent(client, loop_model, tools=[get_weather], max_iterations=cap, max_repeats=10_000)
        overhead_of_runs(looping, client, "上海天气怎么样？", 5)
        per_cap[cap] = overhead_of_runs(looping, client, "上海天气怎么样？", max(20, n // 4))
    trips = {cap: statistics.median(r["round_trips"]) for cap, r in per_cap.items()}
    slope = ((statistics.median(per_cap[12]["overhead"]) - statistics.median(per_cap[2]["overhead"]))
             / (trips[12] - trips[2]))
    print(f"per extra round trip (practice-loop, {trips[2]:.0f} vs {trips[12]:.0f} tool round trips per run): "
          f"{slope:.3f} ms (target < 1 ms: {'ok' if slope < 1 else 'over target'})")


@tool
async def slow_async(n: int) -> str:
    """Wait 0.2 s, then answer."""
    await asyncio.sleep(0.2)
    return f"result {n}"


@tool
def slow_sync(n: int) -> str:
    """Wait 0.2 s (blocking), then answer."""
    time.sleep(0.2)
    return f"result {n}"


class ScriptedClient:
    """A stand-in client: the first reply asks for eight calls of one tool, the next one answers."""

    def __init__(self, name: str) -> None:
        self.name, self.chat, self.completions = name, self, self

    def create(self, **params: Any) -> ChatCompletion:
        first = not any(m.get("role") == "tool" for m in params["messages"])
        message: dict[str, Any] = {"role": "assistant", "content": None if first else "done"}
        if first:
            message["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                      "function": {"name": self.name, "arguments": json.dumps({"n": i})}}
                                     for i in range(8)]
        return ChatCompletion.model_validate({
            "id": "x", "object": "chat.completion", "created": 0, "model": params["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if first else "stop"}]})


def timed(function: Any) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def concurrency(repeats: int) -> None:
    print("\n2. Eight tools that each sleep 0.2 s, in one reply (median of "
          f"{repeats}; target: concurrent < 0.3 s)")
    print("| tools                      | sequential s | concurrent s | speed-up | whole Agent.run s |")
    print("|----------------------------|-------------:|-------------:|---------:|------------------:|")
    for slow in (slow_async, slow_sync):
        calls = [ToolCall(f"call_{i}", slow.name, json.dumps({"n": i})) for i in range(8)]
        one_at_a_time, together = Executor([slow], max_concurrency=1), Executor([slow])
        agent = Agent(ScriptedClient(slow.name), "scripted", tools=[slow])
        sequential = statistics.median(timed(lambda: one_at_a_time.run_sync(calls)) for _ in range(repeats))  # noqa: B023
        concurrent = statistics.median(timed(lambda: together.run_sync(calls)) for _ in range(repeats))  # noqa: B023
        whole = statistics.median(timed(lambda: agent.run("eight calls")) for _ in range(repeats))  # noqa: B023
        kind = "async def + asyncio.sleep" if slow is slow_async else "def + time.sleep (threads)"
        print(f"| {kind:<26} | {sequential:12.3f} | {concurrent:12.3f} | {sequential / concurrent:7.1f}× | "
              f"{whole:17.3f} |")


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 200
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine: {cpus} CPUs (nproc), Python {platform.python_version()}, openai {openai.__version__}, "
          f"{platform.platform()}")
    loop_overhead(n)
    concurrency(5)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
