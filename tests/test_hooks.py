"""The README's two hooks of your own, run against the practice model: spans for calls, a closing time.

The classes below are the README's ("Your own hook"), character for character: the first test holds
that, so what the README shows is what is tested. Like the README's, they are left without type hints.

    agent = Agent(*connect(), [get_weather], hooks=[Spans(spans.append), ClosedAfter(18, now=clock)])
"""
from __future__ import annotations

import datetime as dt
import inspect
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from mini_framework import Agent, Hook, connect, tool

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


class Spans(Hook):
    """Every call that runs, as a span: its name, start (epoch seconds), duration and status."""

    def __init__(self, export=print):
        self.export = export  # e.g. a list's append, or your tracer's exporter

    async def around_call(self, plan, proceed):
        start, began, status = time.time(), time.perf_counter(), "ERROR"
        try:
            result = await proceed()
            status = "OK" if result.ok else "ERROR"
            return result
        finally:
            self.export({"name": f"execute_tool {plan.call.name}", "start": start,
                         "duration": time.perf_counter() - began, "status": status})


class ClosedAfter(Hook):
    """No calls from `hour` o'clock on: each is answered without running."""

    def __init__(self, hour=18, now=dt.datetime.now):
        self.hour, self.now = hour, now

    async def before_calls(self, run, plans):
        if self.now().hour >= self.hour:
            for plan in plans:
                plan.answer(f"Not run: the office is closed after {self.hour}:00. Tell the user to ask tomorrow.")


ran: list[str] = []


@tool
def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city name, e.g. 北京 or Paris
    """
    ran.append(city)
    return '{"temperature": 22, "condition": "晴"}'


@tool
def get_forecast(city: str) -> str:
    """Tomorrow's weather forecast for a city.

    Args:
        city: the city name, e.g. 北京 or Paris
    """
    raise ConnectionError("the forecast service is down")


def at(hour: int, minute: int = 0) -> Any:
    """A fake clock that always says `hour`:`minute` (today's date)."""
    return lambda: dt.datetime.combine(dt.date.today(), dt.time(hour, minute))


@pytest.fixture(autouse=True)
def nothing_ran() -> None:
    ran.clear()


@pytest.mark.parametrize("hook", [Spans, ClosedAfter])
def test_the_hooks_are_the_readmes(hook: type[Hook]) -> None:
    section = README.split("\n### Your own hook", 1)[1].split("\n## ", 1)[0]
    assert textwrap.dedent(inspect.getsource(hook)) in section


def test_spans_record_each_call_that_runs() -> None:
    spans: list[dict[str, Any]] = []
    before = time.time()
    result = Agent(*connect(), [get_weather], hooks=[Spans(spans.append)]).run("北京现在天气怎么样？")
    assert "22" in (result.text or "") and ran == ["北京"]
    [span] = spans
    assert span["name"] == "execute_tool get_weather" and span["status"] == "OK"
    assert before <= span["start"] <= time.time() and 0 <= span["duration"] < 10


def test_a_call_that_fails_is_an_error_span() -> None:
    spans: list[dict[str, Any]] = []
    result = Agent(*connect(), [get_forecast], hooks=[Spans(spans.append)]).run("What is the forecast for Paris tomorrow?")
    assert [r.ok for r in result.tool_results] == [False]
    assert [(s["name"], s["status"]) for s in spans] == [("execute_tool get_forecast", "ERROR")]


def test_after_closing_time_no_call_runs_and_the_model_is_told() -> None:
    spans: list[dict[str, Any]] = []
    agent = Agent(*connect(), [get_weather], hooks=[Spans(spans.append), ClosedAfter(18, now=at(18, 0))])
    result = agent.run("北京现在天气怎么样？")
    assert ran == [] and spans == []  # answered before running: no call, so no span
    [answered] = result.tool_results
    assert not answered.ok and answered.failure == "not_run" and "closed after 18:00" in answered.content
    assert "closed" in (result.text or "")


def test_before_closing_time_calls_run() -> None:
    spans: list[dict[str, Any]] = []
    agent = Agent(*connect(), [get_weather], hooks=[Spans(spans.append), ClosedAfter(18, now=at(17, 59))])
    result = agent.run("北京现在天气怎么样？")
    assert ran == ["北京"] and "22" in (result.text or "")
    assert [s["status"] for s in spans] == ["OK"]


class HoldTwice(Hook):
    """Holds each call with two items (as a hook running a sub-agent holds the calls the child paused on)."""

    async def before_calls(self, run, plans):
        for plan in plans:
            plan.hold([f"{plan.call.id}/first", f"{plan.call.id}/second"])


def test_a_hook_may_hold_a_call_with_several_items_and_the_run_lists_each():
    agent = Agent(*connect(), [get_weather], hooks=[HoldTwice()])
    result = agent.run("北京现在天气怎么样？")
    assert result.paused
    call_id = result.messages[-1]["tool_calls"][0]["id"]
    assert result.pending == [f"{call_id}/first", f"{call_id}/second"]
