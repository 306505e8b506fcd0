"""Checks for lesson 07 (concurrent tools)."""
from __future__ import annotations

import asyncio
import inspect
import json
import time
from typing import Any, Callable

from openai.types.chat import ChatCompletionMessageToolCall

from mini_framework.executor import run_sync

from .checking import CheckResult, Hints, run_check, solved

# call id -> (city, seconds): made in this order, finished in another (上海, 广州, 北京)
DELAYS = {"call_A": ("北京", 0.3), "call_B": ("上海", 0.1), "call_C": ("广州", 0.2)}
SUM, SLOWEST = 0.6, 0.3


def _calls() -> list[ChatCompletionMessageToolCall]:
    return [ChatCompletionMessageToolCall.model_validate(
        {"id": call_id, "type": "function",
         "function": {"name": "get_weather", "arguments": json.dumps({"city": city}, ensure_ascii=False)}})
        for call_id, (city, _) in DELAYS.items()]


def _result(call: Any) -> str:
    return f"{json.loads(call.function.arguments)['city']}的天气"


async def _run_async(call: Any) -> str:
    await asyncio.sleep(DELAYS[call.id][1])
    return _result(call)


def _run_blocking(call: Any) -> str:
    time.sleep(DELAYS[call.id][1])
    return _result(call)


def _finish(value: Any) -> Any:
    """The value an async (or, by mistake, plain) function gave back."""
    return run_sync(value) if inspect.isawaitable(value) else value


def _check_time(elapsed: float, how: str) -> None:
    assert elapsed < SLOWEST + 0.2, (f"the three calls took {elapsed:.1f} s, about the sum of their times "
                                     f"({SUM} s): {how}")


def answer_concurrently(answer_concurrently: Callable[..., Any]) -> CheckResult:
    """Exercise 1: gather the calls, answer them in call order with their own ids."""
    def test() -> str:
        calls = _calls()
        start = time.perf_counter()
        answers = solved(_finish(answer_concurrently(calls, _run_async)))
        elapsed = time.perf_counter() - start
        assert isinstance(answers, list), f"return a list of tool messages, not {type(answers).__name__}"
        assert len(answers) == 3, f"three calls need three answers, got {len(answers)}"
        ids = [a.get("tool_call_id") for a in answers]
        assert ids == list(DELAYS), f"answers must follow the calls' order (call_A, call_B, call_C), got {ids}"
        assert all(a.get("role") == "tool" for a in answers), 'every answer needs role "tool"'
        for answer, call in zip(answers, calls):
            assert answer.get("content") == _result(call), (
                f"{call.id} asked about {_result(call)[:2]} but its answer says {answer.get('content')!r}: "
                "results were paired with the wrong calls")
        _check_time(elapsed, "start them all at once with asyncio.gather")
        return f"three calls in {SLOWEST} s instead of {SUM} s, each answer under its own id, in call order"
    return run_check(1, test, "asyncio.gather(...) runs coroutines together and returns their results in the order you "
                              "passed them in")


def run_in_threads(run_in_threads: Callable[..., Any]) -> CheckResult:
    """Exercise 2: a thread pool returning (id, result) pairs in call order."""
    def test() -> str:
        calls = _calls()
        start = time.perf_counter()
        pairs = solved(run_in_threads(calls, _run_blocking))
        elapsed = time.perf_counter() - start
        assert isinstance(pairs, list), f"return a list of (id, result) pairs, not {type(pairs).__name__}"
        assert all(isinstance(p, tuple) and len(p) == 2 for p in pairs), "each item is a pair: (tool_call.id, result)"
        assert [p[0] for p in pairs] == list(DELAYS), (
            f"pairs must follow the calls' order (call_A, call_B, call_C), got {[p[0] for p in pairs]}")
        for (call_id, result), call in zip(pairs, calls):
            assert result == _result(call), f"{call_id} is paired with {result!r}, which belongs to another call"
        _check_time(elapsed, "submit them all to a ThreadPoolExecutor")
        return f"three blocking calls in {SLOWEST} s instead of {SUM} s, as (id, result) pairs in call order"
    return run_check(2, test, "let each task return (call.id, function(call)); ThreadPoolExecutor.map returns results "
                              "in input order")


def with_timeout(with_timeout: Callable[..., Any]) -> CheckResult:
    """Exercise 3: a deadline per call, and a message the model can act on when it passes."""
    def test() -> str:
        [call, *_] = _calls()

        async def fast(call: Any) -> str:
            await asyncio.sleep(0.01)
            return "北京的天气"

        async def hangs(call: Any) -> str:
            await asyncio.sleep(2)
            return "too late"

        result = solved(_finish(with_timeout(call, fast, 0.5)))
        assert result == "北京的天气", f"a call that finishes in time should return its result, not {result!r}"
        start = time.perf_counter()
        message = solved(_finish(with_timeout(call, hangs, 0.3)))
        elapsed = time.perf_counter() - start
        assert elapsed < 1.0, f"a 0.3 s limit, but it waited {elapsed:.1f} s: use asyncio.wait_for(run(call), seconds)"
        assert isinstance(message, str) and message != "too late", "after the limit, return a message instead"
        assert "get_weather" in message, f"name the tool (call.function.name) in the message: {message!r}"
        assert "0.3" in message, f"say what the limit was ({0.3} s): {message!r}"
        assert len(message) >= 40, f"{message!r} is too short to tell the model what to do next"
        return f"the model reads: {message}"
    return run_check(3, test, "asyncio.wait_for(run(call), seconds) raises asyncio.TimeoutError when the time is up; "
                              "catch it and return a sentence with the tool's name, the limit and what to do")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "asyncio.gather(...) runs coroutines together and returns their results in the order you passed them "
        "in"),
    2: (
        "let each task return (call.id, function(call)); ThreadPoolExecutor.map returns results in input "
        "order"),
    3: (
        "asyncio.wait_for(run(call), seconds) raises asyncio.TimeoutError when the time is up; catch it and "
        "return a sentence with the tool's name, the limit and what to do"),
})
