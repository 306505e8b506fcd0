"""Checks for lesson 08 (error wrapping)."""
from __future__ import annotations

import json
import re
import uuid
from types import SimpleNamespace
from typing import Any, Callable

import openai

from mini_framework import Executor, ToolCall, ToolError, connect, tool

from .checking import (
    CheckResult,
    Hints,
    NotSolved,
    expect_json_object,
    expect_tool,
    practice_in_use,
    run_check,
    solved,
)
from .examples import WEATHER
from .shop import Shop, create_shop

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
    raise ToolError(f"没有{city}的天气数据，目前能查：{'、'.join(WEATHER)}。请换一个城市，或告诉用户暂时查不到。")


def _raised(name: str) -> Exception:
    """The exception the tool called `name` raises (run here without the executor)."""
    try:
        {"forecast": forecast, "lookup": lookup, "guarded": guarded}[name]("深圳")
    except Exception as exc:
        return exc
    raise AssertionError(f"{name} did not raise")


def format_error(format_error: Callable[[BaseException, ToolCall], str]) -> CheckResult:
    """Exercise 1: an error envelope with a retryable flag, safe to show a model."""
    def test() -> str:
        expect_json_object(format_error(KeyError("city"), ToolCall("call_0", "lookup", "{}")), "format_error's result")
        executor = Executor([forecast, lookup, guarded], format_error=format_error)
        calls = [ToolCall(f"call_{name}", name, '{"city": "深圳"}') for name in ("forecast", "lookup", "guarded")]
        envelopes = {}
        for call in calls:  # the learner's function on its own first, so that an error points at their line
            try:
                raise _raised(call.name)
            except Exception as exc:
                text = format_error(exc, call)
            envelope = envelopes[call.name] = expect_json_object(text, f"format_error's result for {call.name}")
            assert envelope.get("status") == "error", f'the envelope needs "status": "error": {envelope}'
            assert isinstance(envelope.get("error"), str) and envelope["error"], \
                f'give it an "error" message: {envelope}'
            assert "Traceback" not in text, "no traceback in what the model reads: that goes to your log"
            assert isinstance(envelope.get("retryable"), bool), f'"retryable" must be true or false: {envelope}'
        for result in executor.run_sync(calls):  # and as the executor uses it
            assert json.loads(result.content).get("status") == "error", f"the executor sent {result.content[:80]!r}"
        assert KEY not in envelopes["forecast"]["error"], (
            f"the API key leaked into what the model reads (and may repeat to a user): "
            f"{envelopes['forecast']['error']!r}. Pass the text through redact(), which takes keys and paths out")
        assert "/srv/app" not in envelopes["forecast"]["error"], (
            "a source path leaked (it tells a reader how your server is laid out): pass the text through redact()")
        assert "ConnectionError" in envelopes["forecast"]["error"], (
            f"name the exception's type (type(exc).__name__, here ConnectionError), so the model knows what kind "
            f"of failure it was: {envelopes['forecast']['error']!r}")
        assert "lookup" in envelopes["lookup"]["error"] and "KeyError" in envelopes["lookup"]["error"], (
            f"name the tool and the exception's type: {envelopes['lookup']['error']!r}")
        expected = str(_raised("guarded"))
        assert envelopes["guarded"]["error"] == expected, (
            f"a ToolError's text goes to the model unchanged, got {envelopes['guarded']['error']!r}")
        flags = {name: e["retryable"] for name, e in envelopes.items()}
        assert flags == {"forecast": True, "lookup": False, "guarded": False}, (
            f"retryable should be true only for the ConnectionError: {flags}")
        return f"the model reads: {json.dumps(envelopes['forecast'], ensure_ascii=False)}"
    return run_check(1, test, "Three fields; what goes in the message depends on the kind of exception.",
                     recipe=hint.recipes[1])


def find_order(find_order: Any) -> CheckResult:
    """Exercise 2: ToolError with a message that says what to do next."""
    def test() -> str:
        order_tool = expect_tool(find_order, "find_order")
        found = order_tool("202405220012")
        assert isinstance(found, dict) and found.get("order_id") == "202405220012", (
            f"an existing order should come back as shop.get_order_detail returns it, got {found!r}")
        executor = Executor([order_tool])
        [result] = executor.run_sync([ToolCall("call_1", "find_order", '{"order_id": "202405990000"}')])
        if result.ok and result.value == Shop(create_shop()).get_order_detail("202405990000"):
            raise NotSolved  # still the stub: the shop's error dict is returned as it is
        if result.ok and isinstance(result.value, dict) and "error" in result.value:
            raise AssertionError(
                f"find_order returned {result.value!r}: a returned dict counts as a success, so the framework "
                "reports ok and never says the call failed. Raise ToolError with your message instead")
        assert not result.ok, "a missing order should raise ToolError, not return normally"
        message = json.loads(result.content).get("error", "")
        assert "failed:" not in message, f"raise ToolError (its text goes to the model as is), not {message!r}"
        assert "202405990000" in message, f"repeat the order id that was not found: {message!r}"
        assert "12" in message, f"say what a valid order id looks like (12 digits): {message!r}"
        assert "get_orders" in message, f"tell the model which tool lists a user's orders (get_orders): {message!r}"
        return f"the model reads: {message}"
    return run_check(2, test, "A missing order is a failure you saw coming: which exception carries your own words?",
                     recipe=hint.recipes[2])


def _bug(**params: Any) -> Any:
    """A client method with a bug in it (as if a parameter were misspelled in your own code)."""
    raise TypeError("create() got an unexpected keyword argument 'mesages'")


TECHNICAL = re.compile(r"(?i)\b[45]\d\d\b|error|exception|traceback|rate ?limit|http|openai")


def _asked(answer_or_apologise: Callable[..., Any], client: Any, model: str, question: str) -> Any:
    """The learner's function on one question; an API error that comes through is a ❌ that says so."""
    try:
        return answer_or_apologise(client, model, question)
    except openai.APIError as error:
        status = getattr(error, "status_code", None)
        raise AssertionError(f"{type(error).__name__}{f' ({status})' if status else ''} came through your function, "
                             "so the user would see a crash: catch the API's failures and return an apology") from None


def answer_or_apologise(answer_or_apologise: Callable[..., Any]) -> CheckResult:
    """Exercise 3: the API's failures (after the SDK's retries) become an apology; bugs still raise."""
    def test() -> str:
        tag = uuid.uuid4().hex[:8]  # practice-flaky fails each new conversation twice: every question is new
        enough, flaky_model = connect("practice-flaky", max_retries=3, timeout=30)
        answer = solved(_asked(answer_or_apologise, enough, flaky_model, f"广州现在天气怎么样？({tag}-1)"))
        assert isinstance(answer, str) and answer.strip(), (
            f"with max_retries=3 the request succeeds: return the model's answer text, not {answer!r}")
        broken = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=_bug)))
        try:
            hidden = answer_or_apologise(broken, flaky_model, f"深圳现在天气怎么样？({tag}-2)")
        except TypeError:
            pass
        else:
            raise AssertionError(
                f"a bug in the code that calls the API (a TypeError) became {hidden!r}, so nobody would ever see it: "
                "catch the API's failures (openai.APIError), not every exception")
        if not practice_in_use():
            return "the answer comes back, and bugs still raise"
        none, _ = connect("practice-flaky", max_retries=0)
        apology = _asked(answer_or_apologise, none, flaky_model, f"北京现在天气怎么样？({tag}-3)")
        assert isinstance(apology, str) and apology.strip(), (
            f"when the API fails, return a sentence for the user, not {apology!r}")
        assert apology != answer, (
            "with max_retries=0 the first failure should give the apology, but your function came back with the "
            "model's answer, so it tried again on its own. Leave retrying to the client (its max_retries): a loop on "
            "top multiplies how long the user waits when the API is really down")
        technical = TECHNICAL.search(apology)
        assert not technical, (f"the user reads {apology!r}: say it in plain words, without status codes or "
                               f"exception names ({technical.group(0) if technical else ''!r})")
        one_retry, _ = connect("practice-flaky", max_retries=1)
        second = _asked(answer_or_apologise, one_retry, flaky_model, f"上海现在天气怎么样？({tag}-4)")
        assert isinstance(second, str) and second.strip(), (
            f"a server error (500) after the retries should get the apology too, not {second!r}")
        return f"the user reads {apology!r} when the API gives up, the answer when it recovers, and bugs still raise"
    return run_check(3, test, "Which exception class covers every way the API can fail, and nothing else?",
                     recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "a ToolError's message is its own text; any other exception becomes '<tool name> failed: <exception "
        "type>: <its text>', passed through redact. Return json.dumps of a dict with status 'error', that "
        "message as error, and retryable saying whether exc is a ConnectionError (ensure_ascii=False)\n"
        "中文：ToolError 就用 str(exc)；其他异常用 redact 处理“工具名 failed: 异常类型: 异常文字”；返回 "
        "json.dumps 的字典：status 为 error、error 为这段消息、retryable 表示 exc 是否是 "
        "ConnectionError（ensure_ascii=False）"),
    2: (
        "order = shop.get_order_detail(order_id); if \"error\" in order: raise ToolError(...) with a "
        "sentence that repeats order_id, says an order id has 12 digits, and names get_orders as the tool "
        "that lists a user's orders; else return order.\n"
        "中文：用 shop.get_order_detail(order_id) 查订单；结果里有 error 就抛出 ToolError，消息重复 "
        "order_id、说明订单号是 12 位数字，并点名 get_orders 是列出用户订单的工具；否则返回订单"),
    3: (
        "inside try, send the request (one user message, no tools) and return the answer's text; on "
        "openai.APIError return an apology such as 抱歉，服务暂时繁忙，请稍后再试。 (*Sorry, the service is "
        "busy; please try again later.*). openai.APIError covers rate limits, server errors, timeouts and "
        "lost connections; a TypeError from a bug is not one of them, so it still raises\n"
        "中文：在 try 里发请求（一条用户消息，不带工具）并返回回答文字；except openai.APIError "
        "时返回一句道歉，例如“抱歉，服务暂时繁忙，请稍后再试。”。openai.APIError "
        "包括限流、服务端错误、超时和断线；bug 引起的 TypeError 不在其中，会照常抛出"),
})
