"""The tool-result cache: canonical keys, time-to-live, never for tools that do something."""
from __future__ import annotations

import json

import pytest

from mini_framework import Agent, ToolDefinitionError, ToolError, tool
from mini_framework.budget.cache import ResultCache
from mini_framework.events import ToolFinished
from tests.test_agent import ScriptedClient

RAN: list[str] = []


@tool(cache=600)
def forecast(city: str, days: int = 1) -> str:
    """Weather forecast."""
    RAN.append(city)
    if city == "火星":
        raise ToolError("没有火星的天气数据")
    return f"{city}: 晴, {days} 天"


def reply(*arguments: str) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}_{len(RAN)}", "type": "function", "function": {"name": "forecast", "arguments": a}}
        for i, a in enumerate(arguments)]}


@pytest.fixture(autouse=True)
def _clear():
    RAN.clear()


def test_reordered_keys_and_numbers_as_text_hit_the_same_entry():
    events = []
    agent = Agent(ScriptedClient([reply('{"city": "北京", "days": 3}'), reply('{"days": "3", "city": "北京"}')]),
                  "m", [forecast], on_event=events.append)
    result = agent.run("q")
    assert RAN == ["北京"] and [r.cached for r in result.tool_results] == [False, True]
    assert result.tool_results[1].content == "北京: 晴, 3 天"
    assert [e.result.cached for e in events if isinstance(e, ToolFinished)] == [False, True]


def test_entries_expire_and_failures_are_not_kept():
    clock = [0.0]
    cache = ResultCache(clock=lambda: clock[0])
    agent = Agent(ScriptedClient([reply('{"city": "北京"}', '{"city": "火星"}')]), "m", [forecast], result_cache=cache)
    agent.run("q")
    agent.client.replies = [reply('{"city": "北京"}', '{"city": "火星"}')]
    second = agent.run("q")  # across runs of one agent: 北京 from the cache, 火星 runs again
    assert RAN == ["北京", "火星", "火星"] and [r.cached for r in second.tool_results] == [True, False]
    clock[0] = 601.0
    agent.client.replies = [reply('{"city": "北京"}')]
    agent.run("q")
    assert RAN[-1] == "北京" and cache.hits == 1


def test_a_tool_that_does_something_cannot_be_cached():
    def send(to: str) -> str:
        """Send a note."""
        return "sent"

    with pytest.raises(ToolDefinitionError, match="must not be cached"):
        tool(send, cache=60, side_effects=True)
    with pytest.raises(ToolDefinitionError, match="must not be cached"):
        tool(send, cache=60, requires_approval=True)
    with pytest.raises(ToolDefinitionError, match="must not be cached"):
        tool(send, cache=60, requires_approval=lambda args: True)
    for bad in (0, -5, float("inf"), "60", True):
        with pytest.raises(ToolDefinitionError, match="seconds"):
            tool(send, cache=bad)


def test_the_cache_is_bounded_least_recently_used_first():
    cache = ResultCache(max_items=2)
    for key in "abc":
        cache.put(key, 60, key, key)
    assert len(cache) == 2 and cache.get("a") is None and cache.get("c").content == "c"
    with pytest.raises(ValueError):
        ResultCache(max_items=0)


def test_an_uncached_tool_always_runs():
    calls = []

    @tool
    def now(city: str) -> str:
        """Local time."""
        calls.append(city)
        return json.dumps({"city": city})

    script = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "now", "arguments": '{"city": "北京"}'}}]}
        for i in range(2)]
    Agent(ScriptedClient(script), "m", [now]).run("q")
    assert calls == ["北京", "北京"]
