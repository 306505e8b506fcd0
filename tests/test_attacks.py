"""Regression tests for what an attack on the framework found: each test reproduces one finding."""
from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import threading
import time

import pytest
from openai import OpenAI
from openai.types.chat import ChatCompletionMessage

from mini_framework import Agent, Executor, RunPaused, ToolCall, Verdict, load_settings, read_reply, redact, tool
from practice_model import shared_server


def reply(*calls: dict, content: str | None = None, finish_reason: str | None = None) -> dict:
    message: dict = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    finish = finish_reason or ("tool_calls" if calls else "stop")
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class Scripted:
    """A client that answers from a list of replies (dicts), then "done"."""

    def __init__(self, replies: list[dict]):
        self.replies, self.requests = list(replies), []
        self.chat = self.completions = self

    def create(self, **params):
        self.requests.append(params)
        return self.replies.pop(0) if self.replies else reply(content="done")


def finishes_within(seconds: float, function):
    box: list = []
    thread = threading.Thread(target=lambda: box.append(function()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return box[0]


def test_a_call_cut_off_by_max_tokens_does_not_run():
    moved = []

    @tool
    def transfer(to: str, amount: int) -> str:
        """Move money."""
        moved.append(amount)
        return "ok"

    cut = reply(call("c1", "transfer", '{"to": "alice", "amount": 10'), finish_reason="length")
    result = Agent(Scripted([cut]), "m", [transfer]).run("pay alice 1000")
    assert moved == [] and result.tool_results[0].failure == "truncated"
    assert "cut off" in result.messages[2]["content"]


def test_a_paused_run_resumes_once_even_when_resumed_twice_at_the_same_time():
    sent = []

    @tool
    def transfer(amount: int) -> str:
        """Move money."""
        sent.append(amount)
        return "ok"

    agent = Agent(Scripted([reply(call("c1", "transfer", '{"amount": 100}'))]), "m", [transfer],
                  checkpoint=lambda c, t: Verdict.pause("needs a person"))
    paused = agent.run("pay")
    paused.pending[0].run()

    async def twice():
        return await asyncio.gather(agent.aresume(paused), agent.aresume(paused), return_exceptions=True)

    outcomes = asyncio.run(twice())
    assert sent == [100] and sum(isinstance(o, ValueError) for o in outcomes) == 1


def test_many_refused_repeats_cost_linear_time():
    @tool
    def lookup(n: int) -> int:
        """Look up."""
        return n

    first = reply(*[call(f"a{i}", "lookup", json.dumps({"n": i})) for i in range(2000)])
    again = reply(*[call(f"b{i}", "lookup", '{"n": 1}') for i in range(2000)])
    agent = Agent(Scripted([first, again]), "m", [lookup], max_repeats=1, max_concurrency=64)
    result = finishes_within(30, lambda: agent.run("q"))
    assert sum(r.failure == "repeated" for r in result.tool_results) == 2000


@pytest.mark.parametrize("name", ["functions.get_weather", "get weather", "", "get_weather<|channel|>commentary",
                                  "x" * 65, "天气", None, 1.5])
def test_a_name_the_api_refuses_is_stored_so_that_the_follow_up_is_accepted(name):
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return "晴"

    real = OpenAI(base_url=shared_server().base_url, api_key="practice", max_retries=0)

    class FirstBad(Scripted):
        def create(self, **params):
            self.requests.append(params)
            if len(self.requests) == 1:
                return reply({"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}})
            return real.chat.completions.create(**params)

    result = Agent(FirstBad([]), "practice", [get_weather]).run("北京天气？")
    assert result.text  # the practice server checks names like the API: no 400
    stored = result.messages[1]["tool_calls"][0]["function"]["name"]
    assert 1 <= len(stored) <= 64 and all(ch.isalnum() or ch in "_-" for ch in stored)


@pytest.mark.parametrize("content", [[], ["x"], [{}], [None], [{"type": "text", "text": "hi"}]])
def test_assistant_content_in_odd_shapes_is_stored_as_text(content):
    message = read_reply({"choices": [{"message": {"content": content}}]}).message
    assert message["content"] is None or isinstance(message["content"], str)


@pytest.mark.parametrize("usage", [{"prompt_tokens": float("inf")}, {"prompt_tokens": 10**5000},
                                   {"prompt_tokens": float("nan")}])
def test_absurd_usage_counts_zero(usage):
    assert read_reply({"choices": [{"message": {"content": "x"}}], "usage": usage}).prompt_tokens == 0


def test_hung_sync_tools_keep_a_bounded_number_of_threads():
    from mini_framework.concurrency import MAX_TOOL_THREADS
    release = threading.Event()

    @tool(timeout=0.02)
    def hang(i: int) -> str:
        """Hangs."""
        release.wait()
        return "late"

    try:
        before = threading.active_count()
        calls = [ToolCall(f"c{i}", "hang", json.dumps({"i": i})) for i in range(MAX_TOOL_THREADS + 100)]
        out = finishes_within(60, lambda: Executor([hang], max_concurrency=1000).run_sync(calls))
        assert all(r.failure == "timeout" for r in out)
        assert threading.active_count() - before <= MAX_TOOL_THREADS + 5
        # a model request (a sync client's call) never waits behind hung tools
        result = finishes_within(10, lambda: Agent(Scripted([]), "m", [hang]).run("q"))
        assert result.text == "done"
    finally:
        release.set()


def test_an_async_generator_with_a_slow_finally_does_not_hold_up_run():
    cache = []

    async def stream():
        try:
            yield 1
            yield 2
        finally:
            await asyncio.sleep(30)

    @tool
    async def first_item(x: int) -> int:
        """Opens a generator and keeps it."""
        generator = stream()
        cache.append(generator)
        return await generator.__anext__()

    agent = Agent(Scripted([reply(call("c1", "first_item", '{"x": 1}'))]), "m", [first_item])
    assert finishes_within(10, lambda: agent.run("q")).text == "done"


def test_the_log_keeps_the_traceback_without_the_secrets_of_chained_errors(caplog):
    caplog.set_level(logging.WARNING, logger="mini_framework")

    @tool
    def deploy(x: int) -> str:
        """Runs a command with a token in its command line, then wraps the failure."""
        token = "sk-live-" + "".join(reversed("4321ponmlkjihgfedcba"))  # not in the source the traceback quotes
        password = "".join(reversed("2retnuh2retnuh"))
        try:
            raise subprocess.CalledProcessError(1, ["deploy", "--token", token])
        except subprocess.CalledProcessError as error:
            raise RuntimeError(f"deploy failed with password={password}") from error

    [r] = Executor([deploy]).run_sync([ToolCall("c", "deploy", '{"x": 1}')])
    assert "CalledProcessError" in caplog.text and "RuntimeError" in caplog.text
    for secret in ("abcdefghijklmnop1234", "hunter2hunter2"):
        assert secret not in caplog.text and secret not in r.content


def test_this_machines_paths_do_not_reach_the_model():
    import sys
    text = redact(f"Command '[{sys.executable!r}, 'job.py']' failed; see {sys.prefix}/bin/pip and /srv/a/tools.py:41:7")
    assert sys.executable not in text and sys.prefix not in text and "tools.py" not in text


def test_answers_that_are_not_text_never_reach_the_api():
    @tool
    def boom(x: int) -> str:
        """Fails."""
        raise ValueError("no")

    for formatter in (lambda exc, call: None, lambda exc, call: b"bytes", lambda exc, call: {"a": 1}):
        [r] = Executor([boom], format_error=formatter).run_sync([ToolCall("c", "boom", '{"x": 1}')])
        assert isinstance(r.content, str) and json.loads(r.content)["status"] == "error"
    for verdict in (Verdict("answer", None), Verdict("answer", {"a": 1}), Verdict("RUN")):  # type: ignore[arg-type]
        result = Agent(Scripted([reply(call("c1", "boom", '{"x": 1}'))]), "m", [boom],
                       checkpoint=lambda c, t, v=verdict: v).run("q")
        assert result.paused and "unusable verdict" in result.pending[0].reason


@pytest.mark.parametrize("setting", [{"max_iterations": float("nan")}, {"max_iterations": "5"},
                                     {"max_concurrency": None}, {"max_repeats": None}, {"max_concurrency": 0},
                                     {"tool_timeout": "10"}, {"tool_timeout": float("nan")}, {"tool_timeout": 0},
                                     {"retry_budget": -1}, {"max_iterations": True}])
def test_unusable_setting_values_are_refused_at_construction(setting):
    with pytest.raises(ValueError, match=next(iter(setting))):
        Agent(Scripted([]), "m", [], **setting)


def test_options_that_look_right_but_are_not_get_a_clear_message():
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    with pytest.raises(TypeError, match="stream must be True or False"):
        Agent(Scripted([]), "m", [get_weather], stream="on")
    with pytest.raises(TypeError, match=r"tools=\[get_weather\]"):
        Agent(Scripted([]), "m", get_weather)


def test_a_run_watched_through_events_can_be_resumed_from_its_pause_event():
    @tool
    def send(to: str) -> str:
        """Send."""
        return "sent"

    agent = Agent(Scripted([reply(call("c1", "send", '{"to": "a"}'))]), "m", [send],
                  checkpoint=lambda c, t: Verdict.pause("ask"))
    pause = [e for e in agent.events("q") if isinstance(e, RunPaused)][0]
    pause.result.pending[0].run()
    assert agent.resume(pause.result).text == "done"
    with pytest.raises(TypeError, match="RunResult of a paused run"):
        agent.resume(pause)


def test_an_error_mid_run_carries_what_ran_so_far():
    ran = []

    @tool
    def step(n: int) -> int:
        """A step with a side effect."""
        ran.append(n)
        return n

    class FailsSecond(Scripted):
        def create(self, **params):
            self.requests.append(params)
            if len(self.requests) == 1:
                return reply(call("c1", "step", '{"n": 1}'))
            raise ConnectionError("provider down")

    with pytest.raises(ConnectionError) as error:
        Agent(FailsSecond([]), "m", [step]).run("q")
    partial = error.value.partial_result
    assert ran == [1] and [r.call.id for r in partial.tool_results] == ["c1"]
    assert [m["role"] for m in partial.messages] == ["user", "assistant", "tool"]


def test_abandoning_the_events_iterator_stops_the_run():
    sent = []

    @tool
    def send(n: int) -> str:
        """Send one e-mail."""
        sent.append(n)
        return "sent"

    replies = [reply(call(f"c{i}", "send", json.dumps({"n": i}))) for i in range(6)]
    events = Agent(Scripted(replies), "m", [send], max_iterations=10).events("q")
    next(events)
    events.close()
    time.sleep(0.5)
    assert len(sent) <= 1


def test_systemexit_while_formatting_a_result_fails_only_that_call():
    class Exits:
        def __str__(self) -> str:
            raise SystemExit(3)

    @tool
    def odd(x: int) -> object:
        """Returns something whose text ends the process."""
        return Exits()

    def formatter(value, call, tool):
        raise SystemExit(4)

    [r] = Executor([odd]).run_sync([ToolCall("c", "odd", '{"x": 1}')])
    assert isinstance(r.content, str)
    [r] = Executor([odd], format_result=formatter).run_sync([ToolCall("c", "odd", '{"x": 1}')])
    assert r.failure == "exception"


def test_ids_of_earlier_calls_stored_as_sdk_objects_are_not_reused():
    earlier = ChatCompletionMessage(role="assistant", content=None, tool_calls=[
        {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}])
    history = [{"role": "user", "content": "q"},
               {"role": "assistant", "content": None, "tool_calls": earlier.tool_calls},
               {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]

    @tool
    def f() -> str:
        """F."""
        return "ok"

    result = Agent(Scripted([reply(call("call_1", "f", "{}"))]), "m", [f]).run(history)
    assert result.tool_results[0].call.id != "call_1"


def test_the_executor_answers_garbage_entries_instead_of_raising():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    out = Executor([add]).run_sync([None, 42, "not json", {"id": "x", "function": 5},
                                    {"id": "ok", "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'}}])
    assert len(out) == 5 and out[-1].content == "3" and all(not r.ok for r in out[:4])


@pytest.mark.parametrize("key", ["sk-abc\u200bdef", "“sk-abcdef”x", "sk-abc def"])
def test_a_key_pasted_with_invisible_or_typographic_characters_is_named(monkeypatch, key):
    monkeypatch.setenv("LLM_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("LLM_MODEL", "m")
    monkeypatch.setenv("LLM_API_KEY", key)
    with pytest.raises(ValueError, match="cannot be sent in an HTTP header"):
        load_settings()


def test_a_returned_exception_object_is_redacted():
    @tool
    def leaky(x: int) -> object:
        """Returns an exception instead of raising it."""
        return ConnectionError("GET https://x.example/?api_key=abcdefgh12345678 failed")

    [r] = Executor([leaky]).run_sync([ToolCall("c", "leaky", '{"x": 1}')])
    assert "abcdefgh12345678" not in r.content
