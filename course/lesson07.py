"""Checks for lesson 07 (concurrent tools)."""
from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
from typing import Any, Callable

from openai.types.chat import ChatCompletionMessageToolCall

from mini_framework.executor import run_sync

from .checking import CheckResult, Hints, run_check, solved


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> ChatCompletionMessageToolCall:
    return ChatCompletionMessageToolCall.model_validate(
        {"id": call_id, "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}})


def _finish(value: Any) -> Any:
    """The value an async (or, by mistake, plain) function gave back."""
    return run_sync(value) if inspect.isawaitable(value) else value


def _check_messages(answers: Any, calls: list[Any], expected: dict[str, str]) -> None:
    """One tool message per call, in call order, each with its own id and its own result."""
    assert isinstance(answers, list), f"return a list of tool messages, not {type(answers).__name__}"
    assert len(answers) == len(calls), (f"{len(calls)} calls need {len(calls)} answers (every tool_call_id gets one, "
                                        f"late or failed calls too), got {len(answers)}")
    assert all(isinstance(a, dict) for a in answers), "each answer is a tool message, a dict"
    ids = [a.get("tool_call_id") for a in answers]
    assert ids == [c.id for c in calls], f"answers must follow the calls' order ({[c.id for c in calls]}), got {ids}"
    assert all(a.get("role") == "tool" for a in answers), 'every answer needs role "tool"'
    for answer in answers:
        if inspect.iscoroutine(answer.get("content")):
            answer["content"].close()  # never awaited: closed, so that Python doesn't warn about it later
    for answer, call in zip(answers, calls):
        content = answer.get("content")
        assert isinstance(content, str), (
            f"{call.id}'s content is a {type(content).__name__}, not text (a coroutine is a call never awaited)")
        if call.id in expected:
            assert content == expected[call.id], (
                f"{call.id} asked for {expected[call.id]!r} but its answer says {content!r}: results were paired "
                "with the wrong calls")


# ----------------------------------------------------------------------------- exercise 1

class _Mixed:
    """Two tools, one async and one blocking, that record where the blocking one ran."""

    SLOWEST, SERIAL = 0.25, 0.45  # the slowest call; the blocking calls one after another

    def __init__(self) -> None:
        self.on_loop: list[bool] = []

    async def get_weather(self, city: str) -> str:
        await asyncio.sleep({"北京": 0.2, "上海": 0.05}[city])
        return f"{city}的天气"

    def get_rate(self, currency: str) -> str:
        try:
            asyncio.get_running_loop()
            self.on_loop.append(True)  # called straight from a coroutine: the event loop is stuck meanwhile
        except RuntimeError:
            self.on_loop.append(False)
        time.sleep({"USD": 0.25, "EUR": 0.2}[currency])
        return f"{currency}的汇率"


def answer_all(answer_all: Callable[..., Any]) -> CheckResult:
    """Exercise 1: async and blocking tools together, answered in call order."""
    def test() -> str:
        tools = _Mixed()
        calls = [_call("call_A", "get_weather", {"city": "北京"}), _call("call_B", "get_rate", {"currency": "USD"}),
                 _call("call_C", "get_weather", {"city": "上海"}), _call("call_D", "get_rate", {"currency": "EUR"})]
        expected = {"call_A": "北京的天气", "call_B": "USD的汇率", "call_C": "上海的天气", "call_D": "EUR的汇率"}
        start = time.perf_counter()
        answers = solved(_finish(answer_all(calls, {"get_weather": tools.get_weather, "get_rate": tools.get_rate})))
        elapsed = time.perf_counter() - start
        _check_messages(answers, calls, expected)
        assert not any(tools.on_loop), (
            "a blocking tool ran on the event loop's own thread, so nothing else could run while it slept: run "
            "blocking functions in a thread (await asyncio.to_thread(function, **arguments))")
        assert elapsed < _Mixed.SLOWEST + 0.1, (
            f"the four calls took {elapsed:.2f} s; the slowest alone takes {_Mixed.SLOWEST} s: start them all "
            "before waiting for any (asyncio.gather)")
        return f"two async and two blocking calls in {elapsed:.2f} s, each answer under its own id, in call order"
    return run_check(1, test, "Two kinds of functions: one you can await, one that blocks. Where should the "
                              "blocking kind run?", recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

# call id -> (city, seconds): made in this order, finished in another (上海, 广州, 北京)
DELAYS = {"call_A": ("北京", 0.2), "call_B": ("上海", 0.05), "call_C": ("广州", 0.1)}
SLOWEST = 0.2


def _weather_calls() -> list[ChatCompletionMessageToolCall]:
    return [_call(call_id, "get_weather", {"city": city}) for call_id, (city, _) in DELAYS.items()]


def _run_blocking(call: Any) -> str:
    time.sleep(DELAYS[call.id][1])
    return f"{json.loads(call.function.arguments)['city']}的天气"


def run_with_progress(run_with_progress: Callable[..., Any]) -> CheckResult:
    """Exercise 2: progress reported in finishing order, answers in call order."""
    def test() -> str:
        calls, reported, lock = _weather_calls(), [], threading.Lock()

        def on_done(call_id: Any) -> None:
            with lock:
                reported.append(call_id)

        start = time.perf_counter()
        answers = solved(run_with_progress(calls, _run_blocking, on_done))
        elapsed = time.perf_counter() - start
        _check_messages(answers, calls, {c.id: f"{DELAYS[c.id][0]}的天气" for c in calls})
        assert elapsed < SLOWEST + 0.1, (f"the three calls took {elapsed:.2f} s, about the sum of their times: "
                                         "submit them all to the ThreadPoolExecutor before waiting for any")
        assert reported, "on_done was never called: call it with each call's id as that call finishes"
        assert sorted(map(str, reported)) == sorted(DELAYS), (
            f"call on_done once per call, with the call's id (call.id); it got {reported}")
        finishing = sorted(DELAYS, key=lambda call_id: DELAYS[call_id][1])
        assert reported == finishing, (
            f"on_done got {reported}, but the calls finished in the order {finishing}: report each one as it "
            "finishes (concurrent.futures.as_completed yields futures in finishing order)")
        return f"progress in finishing order {reported}, answers in call order, in {elapsed:.2f} s"
    return run_check(2, test, "Progress follows the finishing order, the answers follow the call order: keep each "
                              "result with its call.", recipe=hint.recipes[2])


# ----------------------------------------------------------------------------- exercise 3

def answer_by_deadline(answer_by_deadline: Callable[..., Any]) -> CheckResult:
    """Exercise 3: one deadline for a reply's calls; late calls answered and cancelled."""
    def test() -> str:
        calls = [_call("call_A", "get_weather", {"city": "北京"}), _call("call_B", "get_weather", {"city": "深圳"}),
                 _call("call_C", "get_weather", {"city": "上海"})]
        delays = {"call_A": 0.05, "call_B": 1.0, "call_C": 0.1}  # 深圳's service hangs
        state = {"cancelled": False, "finished": False}

        async def run(call: Any) -> str:
            try:
                await asyncio.sleep(delays[call.id])
            except asyncio.CancelledError:
                if call.id == "call_B":
                    state["cancelled"] = True
                raise
            if call.id == "call_B":
                state["finished"] = True
            return f"{json.loads(call.function.arguments)['city']}的天气"

        async def scenario() -> tuple[Any, float, bool]:
            start = time.perf_counter()
            value = answer_by_deadline(calls, run, 0.3)
            answers = await value if inspect.isawaitable(value) else value
            elapsed = time.perf_counter() - start
            await asyncio.sleep(0.05)  # a cancelled task needs a turn of the loop to notice
            return answers, elapsed, state["cancelled"] or state["finished"]

        answers, elapsed, stopped = run_sync(scenario())
        solved(answers)
        assert elapsed < 0.6, (f"a deadline of 0.3 s, but the answers came after {elapsed:.2f} s: wait with a "
                               "timeout (asyncio.wait(tasks, timeout=seconds)), not for every call")
        if isinstance(answers, list) and answers and isinstance(answers[0], dict):
            first = answers[0].get("content")
            assert first == "北京的天气" or not isinstance(first, str) or "0.3" not in first, (
                f"call_A finished in 0.05 s, long before the deadline, yet its answer is {first!r}: keep what "
                "finished in time. One timeout around all the calls together loses every result")
        _check_messages(answers, calls, {"call_A": "北京的天气", "call_C": "上海的天气"})
        message = answers[1]["content"]
        assert message != "深圳的天气", "the hung call can't have a result"
        assert "get_weather" in message, f"name the tool (call.function.name) in the late call's message: {message!r}"
        assert "0.3" in message, f"say what the limit was (0.3 s): {message!r}"
        assert len(message) >= 40, f"{message!r} is too short to tell the model what to do next"
        assert stopped, ("the late call was still running after you answered: asyncio.wait returns what is still "
                         "pending and leaves it running. Cancel each pending task (task.cancel())")
        return f"two results in time, the hung call stopped at 0.3 s; the model reads: {message}"
    return run_check(3, test, "Start every call as a task, wait with a timeout, then look at what did not finish.",
                     recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "write an async run(call): find the function by name in functions and parse the arguments; await a "
        "coroutine function, and hand a blocking one to asyncio.to_thread. Then run every call at once with "
        "asyncio.gather, and pair calls and results in order into tool messages, each with its own "
        "tool_call_id.\n"
        "中文：写一个 async 的 run(call)：按名字从 functions 找到函数，解析参数；是协程函数就 await "
        "它，否则用 asyncio.to_thread 放到线程里执行；再用 asyncio.gather "
        "同时跑所有调用，把调用和结果按顺序配对，生成带各自 tool_call_id 的 tool 消息"),
    2: (
        "submit one task per call to a ThreadPoolExecutor and remember which call each task is for; take "
        "the results with as_completed, in the order they finish, store each by call.id and call "
        "on_done(call.id); finally build the tool messages in call order from what you stored\n"
        "中文：在 ThreadPoolExecutor 里为每个调用提交一个任务，记住任务对应哪个调用；用 as_completed "
        "按完成顺序取结果，存进以 call.id 为键的字典，并调用 "
        "on_done(call.id)；最后按调用顺序从字典取结果，生成 tool 消息"),
    3: (
        "make one task per call; asyncio.wait(tasks, timeout=seconds) gives the done and the pending ones: "
        "cancel() each pending one. Then, in call order: a done task gives task.result(); a pending one "
        "gets a sentence naming the tool, saying it did not answer within the seconds and was stopped, and "
        "to answer with the other results\n"
        "中文：为每个调用建一个任务；用 asyncio.wait(tasks, timeout=seconds) "
        "得到完成的和没完成的，没完成的逐个 cancel()；再按调用顺序：完成的用 "
        "task.result()，没完成的写一句话，说明哪个工具没在几秒内回答、已被停止、请用其他结果作答"),
})
