"""Checks for lesson 04 (arguments you can't trust)."""
from __future__ import annotations

import json
from typing import Any, Callable

from pydantic import ValidationError

from mini_framework import Tool, connect, tool
from mini_framework.arguments import parse_arguments

from .checking import CheckResult, Hints, practice_in_use, run_check, solved

NUMERALS = [("一百二十三", 123), ("两千零五", 2005), ("十二", 12), ("十", 10), ("二十", 20), ("一万二千", 12000),
            ("三点五", 3.5), ("负十二", -12), ("零", 0), ("九百九十九", 999), ("一千零一", 1001),
            ("三万零五十", 30050), ("五十六", 56), ("一些", None), ("abc", None), ("", None)]


def parse_chinese_number(parse: Callable[[str], Any]) -> CheckResult:
    """Exercise 1: a table of Chinese numerals, and things that are not numbers."""
    def test() -> str:
        solved(parse("一百二十三"))
        wrong = []
        for text, expected in NUMERALS:
            got = parse(text)
            if got != expected or type(got) is not type(expected):
                wrong.append(f"{text!r} → {got!r} (expected {expected!r})")
        assert not wrong, "; ".join(wrong[:4])
        return f"all {len(NUMERALS)} cases right, e.g. 两千零五 → {parse('两千零五')}, 三点五 → {parse('三点五')}"
    return run_check(1, test, "keep a running total: a digit waits for its unit (十/百/千 multiply it; a bare 十 is "
                              "一十); 万 multiplies everything before it by 10000; 点 starts the decimals; 负 the sign")


@tool
def book_table(guests: int, time: str, vegetarian: bool = False) -> str:
    """Book a restaurant table.

    Args:
        guests: number of people, 1-12
        time: the time, e.g. 19:30
        vegetarian: whether a vegetarian menu is needed
    """
    return "booked"


@tool
def get_weather(city: str) -> str:
    """查询指定城市当前的天气情况

    Args:
        city: 城市名称，例如北京、上海
    """
    return '{"temperature": 22, "condition": "晴"}'


def _error(tool: Tool, arguments: dict) -> ValidationError:
    try:
        tool.validate(arguments)
    except ValidationError as error:
        return error
    raise AssertionError("expected a validation error")  # pragma: no cover - the cases below are all invalid


def explain_errors(explain: Callable[[ValidationError, str], str]) -> CheckResult:
    """Exercise 2: field, value and reason for every problem, an instruction to retry, and a model that does."""
    def test() -> str:
        error = _error(book_table, {"guests": "a few", "vegetarian": "maybe"})
        message = solved(explain(error, "book_table"))
        assert isinstance(message, str), f"return the message (a str), not {type(message).__name__}"
        for field in ("guests", "time", "vegetarian"):
            assert field in message, f"the message should name the field {field!r}"
        for value in ("a few", "maybe"):
            assert value in message, f"the message should show the value received, {value!r}"
        assert "book_table" in message.splitlines()[-1], "end with an instruction to call book_table again"
        assert "Traceback" not in message and "pydantic" not in message.lower(), "no traceback, no library internals"
        if not practice_in_use():
            return "the message names every field, value and fix"
        client, model = connect("practice-sloppy")
        messages: list[Any] = [{"role": "user", "content": "北京现在天气怎么样？"}]
        tools = [get_weather.to_openai_tool()]
        first = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        call = first.tool_calls[0]
        feedback = explain(_error(get_weather, parse_arguments(call.function.arguments)), "get_weather")
        messages += [first, {"role": "tool", "tool_call_id": call.id, "content": feedback}]
        retry = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        fixed = json.loads(retry.tool_calls[0].function.arguments)
        assert fixed == {"city": "北京"}, f"after your message the model sent {fixed}: name the field it got wrong"
        return f"after your message the sloppy model sent {json.dumps(fixed, ensure_ascii=False)}"
    return run_check(2, test, "for problem in error.errors(): use problem['loc'] (the field), problem['input'] "
                              "(what was sent) and problem['msg'] (what is wrong); finish with "
                              "f'Fix these arguments and call {tool_name} again.'")


SCHEMA = {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "integer"}, "city": {"type": "string"}, "n": {"type": "integer"}}}
COERCIONS = [
    ({"a": "一百二十三", "b": "456"}, {"a": 123, "b": 456}),
    ({"a": "三点五", "b": "twelve"}, {"a": 3.5, "b": 12}),
    ({"a": 1, "b": 2}, {"a": 1, "b": 2}),
    ({"city": "三亚", "a": "负十二"}, {"city": "三亚", "a": -12}),
    ({"a": "abc", "b": "12abc"}, {"a": "abc", "b": "12abc"}),
    ({"b": "3.5"}, {"b": "3.5"}),
    ({"n": "1.2万", "extra": "五"}, {"n": 12000, "extra": "五"}),
]


def coerce_numbers(coerce: Callable[[dict, dict], dict]) -> CheckResult:
    """Exercise 3: number words replaced where the schema wants numbers, nothing else touched."""
    def test() -> str:
        for arguments, expected in COERCIONS:
            before = dict(arguments)
            got = solved(coerce(arguments, SCHEMA))
            assert arguments == before, "don't modify the arguments you were given: build a new dict"
            assert got == expected and all(type(got[k]) is type(v) for k, v in expected.items()), (
                f"coerce_numbers({before}) gave {got}, expected {expected}")
        return f"{len(COERCIONS)} cases: 一百二十三 → 123, 三亚 stays a city, '3.5' is not silently made an integer"
    return run_check(3, test, "loop over arguments.items(); look up schema['properties'][name]['type']; only "
                              "strings, only number/integer slots; parse_number(value) may be None")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "keep a running total: a digit waits for its unit (十/百/千 multiply it; a bare 十 is 一十); 万 multiplies "
        "everything before it by 10000; 点 starts the decimals; 负 the sign"),
    2: (
        "for problem in error.errors(): use problem['loc'] (the field), problem['input'] (what was sent) and "
        "problem['msg'] (what is wrong); finish with f'Fix these arguments and call {tool_name} again.'"),
    3: (
        "loop over arguments.items(); look up schema['properties'][name]['type']; only strings, only "
        "number/integer slots; parse_number(value) may be None"),
})
