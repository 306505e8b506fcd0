"""Checks for lesson 08 (error wrapping)."""
from __future__ import annotations

import json
import uuid
from typing import Any, Callable

import openai

from mini_framework import Executor, ToolCall, ToolError, tool

from .checking import CheckResult, Hints, NotSolved, run_check, solved
from .examples import WEATHER

KEY = "demo-key-1234"


@tool
def forecast(city: str) -> str:
    """A tool that fails in a way worth retrying, with a key in its message."""
    raise ConnectionError(f"GET https://api.weather.example/v3/forecast?city={city}&api_key={KEY} failed "
                          "(see /srv/app/weather/client.py:88)")


@tool
def lookup(city: str) -> str:
    """A tool with a bug."""
    data: dict = {}
    return data["city"]


@tool
def guarded(city: str) -> str:
    """A tool that knows what went wrong."""
    raise ToolError(f"天气服务暂时查不到{city}，请尝试查询其他城市（支持：{'、'.join(WEATHER)}）")


def format_error(format_error: Callable[[BaseException, ToolCall], str]) -> CheckResult:
    """Exercise 1: an error envelope with a retryable flag, safe to show a model."""
    def test() -> str:
        solved(format_error(KeyError("city"), ToolCall("call_0", "lookup", "{}")))
        executor = Executor([forecast, lookup, guarded], format_error=format_error)
        calls = [ToolCall(f"call_{name}", name, '{"city": "深圳"}') for name in ("forecast", "lookup", "guarded")]
        envelopes = {}
        for result in executor.run_sync(calls):
            name = result.call.name
            try:
                envelopes[name] = json.loads(result.content)
            except ValueError:
                raise AssertionError(f"return JSON text (json.dumps), got {result.content[:80]!r}") from None
            envelope = envelopes[name]
            assert isinstance(envelope, dict) and envelope.get("status") == "error", (
                f'the envelope needs "status": "error": {envelope}')
            assert isinstance(envelope.get("error"), str) and envelope["error"], \
                f'give it an "error" message: {envelope}'
            assert "Traceback" not in result.content, "no traceback: that goes to the log"
            assert isinstance(envelope.get("retryable"), bool), f'"retryable" must be true or false: {envelope}'
        assert KEY not in envelopes["forecast"]["error"], \
            f"the API key leaked: {envelopes['forecast']['error']!r}; use redact()"
        assert "/srv/app" not in envelopes["forecast"]["error"], "a source path leaked; use redact()"
        assert "ConnectionError" in envelopes["forecast"]["error"], "name the exception's type"
        assert "lookup" in envelopes["lookup"]["error"] and "KeyError" in envelopes["lookup"]["error"], (
            f"name the tool and the exception's type: {envelopes['lookup']['error']!r}")
        expected = str(ToolError(f"天气服务暂时查不到深圳，请尝试查询其他城市（支持：{'、'.join(WEATHER)}）"))
        assert envelopes["guarded"]["error"] == expected, (
            f"a ToolError's text goes to the model unchanged, got {envelopes['guarded']['error']!r}")
        flags = {name: e["retryable"] for name, e in envelopes.items()}
        assert flags == {"forecast": True, "lookup": False, "guarded": False}, (
            f"retryable should be true only for the ConnectionError: {flags}")
        return f"the model reads: {json.dumps(envelopes['forecast'], ensure_ascii=False)}"
    return run_check(1, test, "a ToolError's text as is; for anything else a sentence with call.name and "
                              "type(exc).__name__, through redact(); json.dumps(..., ensure_ascii=False)")


def find_order(find_order: Any) -> CheckResult:
    """Exercise 2: ToolError with a message that says what to do next."""
    def test() -> str:
        solved(find_order)
        found = find_order("202405220012")
        assert isinstance(found, dict) and found.get("order_id") == "202405220012", (
            f"an existing order should come back as shop.get_order_detail returns it, got {found!r}")
        executor = Executor([find_order])
        [result] = executor.run_sync([ToolCall("call_1", "find_order", '{"order_id": "202405990000"}')])
        if result.ok and isinstance(result.value, dict) and "error" in result.value:
            raise NotSolved  # still the stub: the error dict is returned, not raised
        assert not result.ok, "a missing order should raise ToolError, not return normally"
        message = json.loads(result.content).get("error", "")
        assert "failed:" not in message, f"raise ToolError (its text goes to the model as is), not {message!r}"
        assert "202405990000" in message, f"repeat the order id that was not found: {message!r}"
        assert "12" in message, f"say what a valid order id looks like (12 digits): {message!r}"
        assert "get_orders" in message, f"tell the model which tool lists a user's orders (get_orders): {message!r}"
        return f"the model reads: {message}"
    return run_check(2, test, "when shop.get_order_detail returns an 'error', raise ToolError(...) with the id, "
                              "what an order id looks like and the name get_orders")


def _seconds(timeout: Any) -> float:
    """The longest one attempt may take, from a number or an httpx Timeout."""
    if isinstance(timeout, (int, float)):
        return float(timeout)
    parts = [getattr(timeout, name, None) for name in ("connect", "read", "write", "pool")]
    return max((p for p in parts if p is not None), default=float("inf"))


def resilient_connection(resilient_connection: Callable[[], Any]) -> CheckResult:
    """Exercise 3: max_retries and timeout set so that practice-flaky is survived quickly."""
    def test() -> str:
        client, model = solved(resilient_connection())
        assert client.max_retries >= 2, (f"max_retries={client.max_retries}: practice-flaky fails twice "
                                         "(429, then 500) before it answers")
        seconds = _seconds(client.timeout)
        assert seconds <= 30, f"one attempt may take up to {seconds:g} s; set timeout=30 or less"
        question = [{"role": "system", "content": f"check {uuid.uuid4()}"},  # a new conversation every time
                    {"role": "user", "content": "北京现在天气怎么样？"}]
        try:
            client.chat.completions.create(model=model, messages=question, tools=[{"type": "function", "function": {
                "name": "get_weather", "description": "查询指定城市当前的天气情况",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])
        except openai.APIStatusError as error:
            raise AssertionError(f"the request failed with {type(error).__name__} ({error.status_code})") from None
        return f"a 429 and a 500 absorbed with max_retries={client.max_retries}, each attempt limited to {seconds:g} s"
    return run_check(3, test, "connect() passes max_retries= and timeout= on to the OpenAI client")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "a ToolError's text as is; for anything else a sentence with call.name and type(exc).__name__, "
        "through redact(); json.dumps(..., ensure_ascii=False)"),
    2: (
        "when shop.get_order_detail returns an 'error', raise ToolError(...) with the id, what an order id "
        "looks like and the name get_orders"),
    3: "connect() passes max_retries= and timeout= on to the OpenAI client",
})
