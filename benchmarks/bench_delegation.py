"""What running a sub-agent as a tool costs: `python benchmarks/bench_delegation.py [N]`.

1. Overhead of one delegation round trip beyond model and tool time. Against the in-process practice
   model, every SDK call timed (as bench_agent.py does) and the tool a no-op:
       plain       the parent calls a plain tool once (2 model requests)
       child       the sub-agent on its own: it calls its tool once (2 requests)
       delegated   the parent calls the sub-agent as a tool, which calls its tool (4 requests)
   overhead = wall - SDK time - tool time, per run (the cases interleaved). What the parent adds around
   its sub-agent (delegated - child) compares with a plain tool call (plain); and the hook's own work per
   delegation (its time, the sub-agent's run excluded: the copy of the agent, the budget, events
   forwarded, usage added, the answer bounded) is timed directly.
2. Two sub-agents in one reply, with a blocking client whose every request takes 0.2 s (2 requests each):
   concurrently ~0.4 s; one after the other (what happens when a blocking client is called right on the
   loop `run()` made, which the hook avoids for concurrent sub-agents) ~0.8 s.

A report, not a timed test.
"""
from __future__ import annotations

import contextvars
import json
import statistics
import sys
import time
from typing import Any

from openai.types.chat import ChatCompletion

import mini_framework.delegation.hook as delegation_hook
from mini_framework import Agent, as_tool, connect, tool

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
from bench_agent import TOOL_SECONDS, TimedClient, get_weather  # noqa: E402
from timing import load  # noqa: E402


def overhead(agent: Agent, client: TimedClient, question: str, n: int) -> list[float]:
    """Per run, in ms: wall time minus SDK time minus tool time."""
    out = []
    for _ in range(n):
        client.seconds, TOOL_SECONDS[0] = 0.0, 0.0
        start = time.perf_counter()
        agent.run(question)
        out.append((time.perf_counter() - start - client.seconds - TOOL_SECONDS[0]) * 1000)
    return out


def round_trip(n: int) -> None:
    base, model = connect()
    client = TimedClient(base)
    child = Agent(client, model, [get_weather])
    expert = as_tool(child, name="weather_expert", description="Ask the weather expert about the weather in any city.")
    cases = {"plain": (Agent(client, model, [get_weather]), "北京现在天气怎么样？"),
             "child": (child, "北京现在天气怎么样？"),
             "delegated": (Agent(client, model, [expert]), "北京现在天气怎么样？")}
    for agent, question in cases.values():
        overhead(agent, client, question, 10)  # warm up
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(n):  # interleaved, so a change in the machine's load touches every case alike
        for name, (agent, question) in cases.items():
            times[name] += overhead(agent, client, question, 1)
    medians = {name: statistics.median(values) for name, values in times.items()}
    hook_us = statistics.median(hook_time(cases["delegated"][0], n)) * 1e6
    print(f"\n1. Overhead beyond model and tool time, median of {n} runs ({load()})")
    print("| run                                                  |      ms |")
    print("|------------------------------------------------------|--------:|")
    print(f"| plain: the parent calls a tool once                  | {medians['plain']:7.3f} |")
    print(f"| child: the sub-agent on its own, one tool call       | {medians['child']:7.3f} |")
    print(f"| delegated: the parent calls the sub-agent as a tool  | {medians['delegated']:7.3f} |")
    print(f"| delegated - child: what the parent adds around it    | {medians['delegated'] - medians['child']:7.3f} |")
    print(f"the hook's own work per delegation (the sub-agent's run excluded): median {hook_us:.0f} µs")


def hook_time(parent: Agent, n: int) -> list[float]:
    """Seconds the Delegation hook spends per delegation outside the sub-agent's own run (its `arun`)."""
    spent = {"hook": 0.0, "child": 0.0}
    run, arun = delegation_hook.Delegation._run, Agent.arun

    async def timed_run(self: Any, *args: Any) -> None:
        start = time.perf_counter()
        await run(self, *args)
        spent["hook"] += time.perf_counter() - start

    async def timed_arun(self: Agent, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await arun(self, *args, **kwargs)
        finally:
            if self is not parent:
                spent["child"] += time.perf_counter() - start

    delegation_hook.Delegation._run, Agent.arun = timed_run, timed_arun  # type: ignore[method-assign]
    out = []
    try:
        for _ in range(n):
            spent.update(hook=0.0, child=0.0)
            parent.run("北京现在天气怎么样？")
            out.append(spent["hook"] - spent["child"])
    finally:
        delegation_hook.Delegation._run, Agent.arun = run, arun  # type: ignore[method-assign]
    return out


class SlowClient:
    """A blocking stand-in for OpenAI(): each request takes `seconds`; one tool call, then an answer."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.chat = self
        self.completions = self

    def create(self, **params: Any) -> Any:
        time.sleep(self.seconds)
        asked = any(m.get("role") == "tool" for m in params["messages"])
        message: dict[str, Any] = {"role": "assistant", "content": "done"}
        if not asked and params.get("tools"):
            name = params["tools"][0]["function"]["name"]
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{name}", "type": "function",
                 "function": {"name": name, "arguments": '{"city": "Paris"}'}}]}
        return ChatCompletion.model_validate({
            "id": "x", "object": "chat.completion", "created": 0, "model": params["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
                         "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})


@tool
def look(city: str) -> str:
    """Look something up."""
    return city


def two_children(n: int) -> None:
    children = [as_tool(Agent(SlowClient(0.2), "m", [look]), name=name) for name in ("a", "b")]

    class Parent:  # asks for both sub-agents at once, then answers
        chat = completions = None

        def create(self, **params: Any) -> Any:
            calls = [{"id": f"c{i}", "type": "function",
                      "function": {"name": n, "arguments": json.dumps({"task": "t"})}} for i, n in enumerate("ab")]
            done = any(m.get("role") == "tool" for m in params["messages"])
            message = {"role": "assistant", "content": "done"} if done else \
                {"role": "assistant", "content": None, "tool_calls": calls}
            return ChatCompletion.model_validate({
                "id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop" if done else "tool_calls", "message": message}]})

    parent_client = Parent()
    parent_client.chat = parent_client.completions = parent_client  # type: ignore[assignment]
    parent = Agent(parent_client, "m", children)
    seconds = {}
    for label in ("concurrently", "one after the other"):
        if label != "concurrently":  # what the hook's reset of the private-loop mark avoids
            delegation_hook._private_loop = contextvars.ContextVar("unused", default=None)  # type: ignore[misc]
        times = []
        for _ in range(n):
            start = time.perf_counter()
            parent.run("go")
            times.append(time.perf_counter() - start)
        seconds[label] = statistics.median(times)
    print(f"\n2. Two sub-agents in one reply, a blocking client of 0.2 s per request, median of {n} runs")
    for label, value in seconds.items():
        print(f"   {label:22s} {value:.3f} s")


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    round_trip(runs)
    two_children(5)
