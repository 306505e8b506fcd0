"""Checks for lesson 06b (repeats and cost), the optional second part of lesson 06."""
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
DIFFERENT = [  # pairs that are not, and what a key that mixes them up has missed
    (("search_flights", '{"origin": "a,b", "destination": "c"}'),
     ("search_flights", '{"origin": "b", "destination": "c,a"}'),
     "a value can contain the separator you join with (here a comma), so joined values collide: keep each value "
     "with its name and its quotes, as JSON does"),
    (("get_weather", '{"city":"上海"}'), ("get_weather", '{"city":"北京"}'), "the values belong in the key"),
    (("f", '{"a": 1}'), ("f", '{"b": 1}'), "the argument names belong in the key too"),
    (("get_weather", '{"city":"上海"}'), ("get_forecast", '{"city":"上海"}'), "the tool's name belongs in the key"),
    (("f", '{"ids": [1, 2]}'), ("f", '{"ids": [2, 1]}'), "the order inside a list is part of the value"),
    (("f", '{"a": 1}'), ("f", '{"a": "1"}'), "the number 1 and the text \"1\" are different values"),
]
BROKEN = '{"city": "上海"'  # the closing brace is missing


def _key(call_key: Callable[[str, str], Any], name: str, arguments: str) -> str:
    """The learner's key for one call; a ❌ that says what to do if it is not a string."""
    try:
        key = call_key(name, arguments)
    except ValueError as error:
        raise AssertionError(f"call_key raised {type(error).__name__} for arguments that are not valid JSON "
                             f"({arguments!r}): catch it (except ValueError) and use the text itself") from None
    assert isinstance(key, str) and key, (
        f"call_key({name!r}, {arguments!r}) returned {key!r}; every call needs a key, a non-empty string "
        "(arguments that are not valid JSON too: two broken calls must not all share one key)")
    return key


def check_call_key(call_key: Callable[[str, str], Any]) -> str:
    """The test of exercise 1 (also used by exercise 2 to see whether the learner's call_key is right)."""
    first = solved(call_key(*SAME[0][0]))
    assert isinstance(first, str), f"return a string, not {type(first).__name__} {first!r:.60}"
    for a, b, missed in DIFFERENT:
        key_a = _key(call_key, *a)
        assert key_a != _key(call_key, *b), f"{a} and {b} are different calls, but both keys are {key_a!r}: {missed}"
    for a, b in SAME:
        key_a, key_b = _key(call_key, *a), _key(call_key, *b)
        assert key_a == key_b, f"{a} and {b} are the same call, but the keys differ: {key_a!r} / {key_b!r}"
    broken = _key(call_key, "get_weather", BROKEN)
    assert broken == _key(call_key, "get_weather", BROKEN), "the same broken arguments twice should get the same key"
    other = _key(call_key, "get_weather", '{"city": "北京"')
    assert broken != other, (f"two different broken arguments both got the key {broken!r}: put the text itself "
                             "in the key, so only identical calls match")
    assert broken != _key(call_key, "get_forecast", BROKEN), \
        "the tool's name belongs in the key for broken arguments too"
    return "key order and spacing ignored; names, values, types and list order respected; broken JSON keyed by its text"


def call_key(call_key: Callable[[str, str], str]) -> CheckResult:
    """Exercise 1: one key per (tool, arguments), whatever the JSON's key order and spacing."""
    return run_check(1, lambda: check_call_key(call_key),
                     "Two texts, one meaning: bring the JSON to one form first. And decide what broken JSON gets.",
                     recipe=hint.recipes[1])


def _weather_counting(runs: list[str]) -> Any:
    @tool
    def get_weather(city: str) -> str:
        """Today's weather in a city: temperature in °C, sky and wind.

        Args:
            city: the city, e.g. 上海
        """
        runs.append(city)
        return json.dumps(WEATHER.get(city, {"error": f"no weather for {city}"}), ensure_ascii=False)
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


def _uses_a_wrong_call_key(function: Callable[..., Any]) -> bool:
    """Whether `function` calls a `call_key` (the learner's, from exercise 1) that does not pass exercise 1."""
    code = getattr(function, "__code__", None)
    helper = getattr(function, "__globals__", {}).get("call_key")
    if code is None or "call_key" not in code.co_names or not callable(helper):
        return False
    try:
        check_call_key(helper)
    except Exception:
        return True
    return False


def run_or_refuse(run_or_refuse: Callable[..., dict]) -> CheckResult:
    """Exercise 2: identical calls run max_repeats times, then are answered without running."""
    def test() -> str:
        runs: list[str] = []
        executor, seen = Executor([_weather_counting(runs)]), {}
        calls = [_tool_call(f"call_{i}", text) for i, text in
                 enumerate(['{"city": "上海"}', '{"city":"上海"}', '{ "city": "上海" }', '{"city": "北京"}'])]
        assert not _uses_a_wrong_call_key(run_or_refuse), (
            "your run_or_refuse uses call_key, and call_key does not pass Exercise 1 yet: fix that first "
            "(check.call_key(call_key) says what is wrong)")
        replies = []
        for call in calls:
            replies.append(solved(run_or_refuse(call, executor, seen, 2)))
            _check_reply(replies[-1], call)
        assert seen, "count the calls in the `seen` you were given, so the count lasts for the whole run"
        assert runs == ["上海", "上海", "北京"], (
            f"three 上海 calls (spaced differently, so count them by call_key) and one 北京 call with "
            f"max_repeats=2 should run the tool for 上海, 上海, 北京; it ran for {runs}")
        assert replies[2]["content"] != replies[0]["content"], "the refused call needs a message saying so"
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
                                        "already called the tool with the same arguments, and should answer now")
        return f"practice-loop ran get_weather twice, was refused once, and answered: {answer}"
    return run_check(2, test, "Count each call under its call_key in `seen`; run it, or answer it without running.",
                     recipe=hint.recipes[2])


def run_cost(run_cost: Callable[[Any, float, float], float]) -> CheckResult:
    """Exercise 3: a run's cost from its usage and per-million-token prices."""
    def test() -> str:
        for usage, prices in [(Usage(4, 1725, 174), (2.0, 8.0)), (Usage(1, 1_000_000, 0), (0.15, 0.6)),
                              (Usage(2, 0, 500_000), (0.15, 0.6)), (Usage(3, 123_456, 7_890), (2.5, 10.0))]:
            got = solved(run_cost(usage, *prices))
            want = (usage.prompt_tokens * prices[0] + usage.completion_tokens * prices[1]) / 1_000_000
            assert isinstance(got, (int, float)) and not isinstance(got, bool), (
                f"return a number (the cost), not {type(got).__name__} {got!r:.40}: format it only when you print it")
            rounded = " (keep every digit: don't round, a run often costs less than a cent)" \
                if got != want and math.isclose(got, round(want, 2)) else ""
            assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12), (
                f"a made-up usage of {usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens at "
                f"{prices[0]} (input) / {prices[1]} (output) per million tokens should cost {want:.6f}, not "
                f"{got}{rounded}")
        client, model = connect()
        lookup = Agent(client, model, tools=Shop(create_shop()).tools).run("帮我看看张三最近买了什么还没发货")
        _, loop_model = connect("practice-loop")
        runaway = Agent(client, loop_model, tools=[_weather_counting([])], max_iterations=20,
                        max_repeats=1000).run("上海天气怎么样？")
        a, b = run_cost(lookup.usage, 2.0, 8.0), run_cost(runaway.usage, 2.0, 8.0)
        return (f"at ¥2 / ¥8 per million tokens the order lookup cost ¥{a:.4f}, "
                f"the 20-request runaway ¥{b:.4f} ({b / a:.1f}× as much)")
    return run_check(3, test, "Two kinds of tokens, two prices, and the prices are per million.",
                     recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "parse the arguments and write them out again as JSON with sorted keys (ensure_ascii=False keeps "
        "Chinese readable), with the tool's name in front. If parsing raises ValueError, use the text "
        "itself (stripped) in place of the canonical JSON.\n"
        "中文：先解析参数，再按排好序的键写回 JSON（ensure_ascii=False "
        "让中文可读），前面加上工具名；解析抛出 ValueError 时，用去掉首尾空白的原文代替规范化的 JSON"),
    2: (
        "compute the call's key with your call_key and add one to its count in seen. Up to max_repeats, run "
        "the call with executor.run_sync and return its message. After that, don't run it: return a tool "
        "message with the call's id whose content tells the model it already made this exact call, not to "
        "repeat it, and to answer with the result it has.\n"
        "中文：用 call_key 算出这个调用的键，在 seen 里加一；次数不超过 max_repeats 就用 executor.run_sync "
        "执行并返回它的 message；超过以后不再执行，返回一条带 call.id 的 tool "
        "消息，告诉模型它已经用相同的参数调用过这个工具，不要重复，用已有的结果作答"),
    3: (
        "prompt tokens times the input price plus completion tokens times the output price, divided by one "
        "million; return the number, not rounded\n"
        "中文：用 prompt_tokens 乘输入价格、completion_tokens 乘输出价格，两者相加再除以 "
        "1,000,000；返回数字，不要四舍五入"),
})
