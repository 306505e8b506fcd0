"""Checks for lesson 06 (the agent loop and iteration caps)."""
from __future__ import annotations

import json
import math
from typing import Any, Callable

from openai.types.chat import ChatCompletionMessageToolCall

from mini_framework import Agent, Executor, connect, tool
from mini_framework.agent import Usage

from .checking import CheckResult, Hints, practice_in_use, run_check, solved
from .examples import WEATHER
from .shop import Shop, create_shop

SAME = [  # pairs that are the same call
    (("get_weather", '{"city":"上海"}'), ("get_weather", '{ "city" : "上海" }')),
    (("f", '{"a": 1, "b": 2}'), ("f", '{"b":2,"a":1}')),
    (("f", '{"q": {"x": 1, "y": [1, 2]}}'), ("f", '{"q":{"y":[1,2],"x":1}}')),
]
DIFFERENT = [  # pairs that are not
    (("get_weather", '{"city":"上海"}'), ("get_weather", '{"city":"北京"}')),
    (("get_weather", '{"city":"上海"}'), ("get_forecast", '{"city":"上海"}')),
    (("f", '{"ids": [1, 2]}'), ("f", '{"ids": [2, 1]}')),
    (("f", '{"a": 1}'), ("f", '{"a": "1"}')),
]


def call_key(call_key: Callable[[str, str], str]) -> CheckResult:
    """Exercise 1: one key per (tool, arguments), whatever the JSON's key order and spacing."""
    def test() -> str:
        for (a, b), same in [(pair, True) for pair in SAME] + [(pair, False) for pair in DIFFERENT]:
            key_a, key_b = solved(call_key(*a)), solved(call_key(*b))
            assert isinstance(key_a, str), f"return a string, not {type(key_a).__name__}"
            if same:
                assert key_a == key_b, f"{a} and {b} are the same call, but the keys differ: {key_a!r} / {key_b!r}"
            else:
                assert key_a != key_b, f"{a} and {b} are different calls, but both keys are {key_a!r}"
        broken = '{"city": "上海"'
        assert call_key("get_weather", broken) == call_key("get_weather", broken), "invalid JSON: use the text as is"
        return "key order and spacing ignored; names, values and list order respected"
    return run_check(1, test, "json.loads the arguments, json.dumps them again with sort_keys=True, and put the "
                              "tool name in front; if json.loads raises ValueError, use the text itself")


def _weather_counting(runs: list[str]) -> Any:
    @tool
    def get_weather(city: str) -> str:
        """查询指定城市当前的天气情况，包括温度、天气状况和风力

        Args:
            city: 城市名称，例如北京、上海、广州
        """
        runs.append(city)
        return json.dumps(WEATHER.get(city, {"error": "暂无该城市数据"}), ensure_ascii=False)
    return get_weather


def _tool_call(call_id: str, arguments: str) -> ChatCompletionMessageToolCall:
    return ChatCompletionMessageToolCall.model_validate(
        {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}})


def _check_reply(reply: Any, call: Any) -> None:
    assert isinstance(reply, dict), f"return the tool message as a dict, not {type(reply).__name__}"
    assert reply.get("role") == "tool", 'the answer is a message with role "tool"'
    assert reply.get("tool_call_id") == call.id, \
        f"answer call {call.id} with its own id, not {reply.get('tool_call_id')!r}"
    assert isinstance(reply.get("content"), str) and reply["content"], "the content must be a non-empty string"


def run_or_refuse(run_or_refuse: Callable[..., dict]) -> CheckResult:
    """Exercise 2: identical calls run max_repeats times, then are answered without running."""
    def test() -> str:
        runs: list[str] = []
        executor, seen = Executor([_weather_counting(runs)]), {}
        calls = [_tool_call(f"call_{i}", text) for i, text in
                 enumerate(['{"city": "上海"}', '{"city":"上海"}', '{ "city": "上海" }', '{"city": "北京"}'])]
        replies = []
        for call in calls:
            replies.append(solved(run_or_refuse(call, executor, seen, 2)))
            _check_reply(replies[-1], call)
        assert runs == ["上海", "上海", "北京"], (
            f"three identical 上海 calls and one 北京 call with max_repeats=2 should run the tool for "
            f"上海, 上海, 北京; it ran for {runs}")
        assert replies[2]["content"] != replies[0]["content"], "the refused call needs a message saying so"
        assert seen, "count the calls in `seen`, so the count lasts for the whole run"
        if not practice_in_use():
            return "repeats refused after max_repeats runs"
        client, model = connect("practice-loop")
        for max_repeats in (2, 1):
            runs.clear()
            seen = {}
            get_weather = _weather_counting(runs)
            executor = Executor([get_weather])
            messages: list[Any] = [{"role": "user", "content": "上海天气怎么样？"}]
            answer = None
            for _ in range(8):
                message = client.chat.completions.create(
                    model=model, messages=messages, tools=[get_weather.to_openai_tool()]).choices[0].message
                messages.append(message)
                if not message.tool_calls:
                    answer = message.content
                    break
                for call in message.tool_calls:
                    messages.append(run_or_refuse(call, executor, seen, max_repeats))
                    _check_reply(messages[-1], call)
            assert len(runs) == max_repeats, f"with max_repeats={max_repeats} the tool ran {len(runs)} times"
            assert answer is not None, ("practice-loop kept calling after your refusal: say plainly that it "
                                        "already called the tool with the same arguments")
        return f"practice-loop ran get_weather twice, was refused once, and answered: {answer}"
    return run_check(2, test, "count call_key(...) in seen; up to max_repeats, executor.run_sync([call])[0].message "
                              "is the answer; after that, build the tool message for call.id yourself")


def run_cost(run_cost: Callable[[Any, float, float], float]) -> CheckResult:
    """Exercise 3: a run's cost from its usage and per-million-token prices."""
    def test() -> str:
        for usage, prices in [(Usage(4, 1725, 174), (2.0, 8.0)), (Usage(1, 1_000_000, 0), (0.15, 0.6)),
                              (Usage(2, 0, 500_000), (0.15, 0.6)), (Usage(3, 123_456, 7_890), (2.5, 10.0))]:
            got = solved(run_cost(usage, *prices))
            want = (usage.prompt_tokens * prices[0] + usage.completion_tokens * prices[1]) / 1_000_000
            assert isinstance(got, (int, float)), f"return a number, not {type(got).__name__}"
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (
                f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens at {prices[0]} / "
                f"{prices[1]} per million should cost {want:.6f}, not {got}")
        client, model = connect()
        lookup = Agent(client, model, tools=Shop(create_shop()).tools).run("帮我看看张三最近买了什么还没发货")
        _, loop_model = connect("practice-loop")
        runaway = Agent(client, loop_model, tools=[_weather_counting([])], max_iterations=20,
                        max_repeats=1000).run("上海天气怎么样？")
        a, b = run_cost(lookup.usage, 2.0, 8.0), run_cost(runaway.usage, 2.0, 8.0)
        return (f"at ¥2 / ¥8 per million tokens the order lookup cost ¥{a:.4f}, "
                f"the 20-request runaway ¥{b:.4f} ({b / a:.1f}× as much)")
    return run_check(3, test, "prices are per million tokens, and prompt and completion tokens have different prices")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "json.loads the arguments, json.dumps them again with sort_keys=True, and put the tool name in front;"
        " if json.loads raises ValueError, use the text itself"),
    2: (
        "count call_key(...) in seen; up to max_repeats, executor.run_sync([call])[0].message is the answer; "
        "after that, build the tool message for call.id yourself"),
    3: "prices are per million tokens, and prompt and completion tokens have different prices",
})
