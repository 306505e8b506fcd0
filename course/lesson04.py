"""Checks for lesson 04 (arguments you can't trust)."""
from __future__ import annotations

import json
from typing import Any, Callable

from pydantic import ValidationError

from mini_framework import Tool, connect, tool
from mini_framework.arguments import parse_arguments

from .checking import CheckResult, Hints, expect_text, practice_in_use, run_check, solved

# (text, value, what a wrong answer has missed)
CHINESE = [
    ("一百二十三", 123, "each digit waits for its unit: 一百 is 100, 二十 is 20, then 三"),
    ("两千零五", 2005, "两 is another way to write 2, and 零 marks a skipped place (no hundreds, no tens)"),
    ("十二", 12, "a bare 十 at the start means 一十, so 十二 is 10 + 2"),
    ("十", 10, "a bare 十 is 10"),
    ("二十", 20, "二十 is 2 × 10"),
    ("一万二千", 12000, "万 multiplies everything before it by 10,000; then 二千 adds 2,000"),
    ("三点五", 3.5, "点 starts the decimals, so 三点五 is the float 3.5"),
    ("负十二", -12, "负 in front makes the number negative"),
    ("零", 0, "零 alone is 0"),
    ("九百九十九", 999, "九百 + 九十 + 九"),
    ("一千零一", 1001, "零 stands for the missing hundreds and tens"),
    ("三万零五十", 30050, "三万, then 零 for the missing thousands and hundreds, then 五十"),
    ("五十六", 56, "五十 + 六"),
    ("一些", None, "一些 means 'some': a word that is not a numeral makes the text not a number, so return None"),
    ("abc", None, "not a numeral: return None rather than guess"),
    ("", None, "empty text is not a number: return None"),
]


def _numbers(parse: Callable[[str], Any], cases: list[tuple[str, Any, str]]) -> Callable[[], str]:
    """A test of a number-word parser against a table of cases, each with the rule a wrong answer missed."""
    def test() -> str:
        solved(parse(cases[0][0]))
        wrong = []
        for text, expected, rule in cases:
            got = parse(text)
            if isinstance(got, str) and expected is not None:
                wrong.append(f"{text!r} gave the text {got!r}: return the number itself (an int, or a float when "
                             "there are decimals), not a string")
            elif got != expected or type(got) is not type(expected):
                shown = f"{got!r} ({type(got).__name__})" if got == expected else repr(got)
                wrong.append(f"{text!r} gave {shown}, expected {expected!r}: {rule}")
        assert not wrong, "; ".join(wrong[:3]) + (f" (and {len(wrong) - 3} more)" if len(wrong) > 3 else "")
        return f"all {len(cases)} cases right, e.g. {cases[2][0]!r} → {parse(cases[2][0])!r}"
    return test


def parse_chinese_number(parse: Callable[[str], Any]) -> CheckResult:
    """Exercise 1: a table of Chinese numerals, and things that are not numbers."""
    return run_check(1, _numbers(parse, CHINESE), "Read the characters left to right, keeping a running total; "
                                                     "try 一百二十三 by hand first.", recipe=hint.recipes[1])


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
    """查一个城市现在的天气：气温（摄氏度）、晴雨和风

    Args:
        city: 城市名，如 北京、上海 或 Paris
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
        message = expect_text(explain(error, "book_table"), "your message")
        for field in ("guests", "time", "vegetarian"):
            assert field in message, (
                f"name every field that is wrong; {field!r} is missing from your message, so the model can't tell "
                "which argument to fix")
        for value in ("a few", "maybe"):
            assert value in message, (
                f"show the value that was received ({value!r}): the model sees what it sent and why it failed")
        assert "book_table" in message.strip().splitlines()[-1], (
            "end with what to do next, naming the tool, e.g. 'Fix these arguments and call book_table again.'; "
            "without it, a model may apologise and stop")
        assert "Traceback" not in message and "pydantic" not in message.lower(), (
            "no traceback and no library names: the model can act on the field, the value and the reason only")
        if not practice_in_use():
            return "the message names every field, value and fix"
        client, model = connect("practice-sloppy")
        messages: list[Any] = [{"role": "user", "content": "北京现在天气怎么样？"}]
        tools = [get_weather.to_openai_tool()]
        first = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        call = first.tool_calls[0]
        feedback = expect_text(explain(_error(get_weather, parse_arguments(call.function.arguments)), "get_weather"),
                               "your message")
        messages += [first, {"role": "tool", "tool_call_id": call.id, "content": feedback}]
        retry = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        if not retry.tool_calls:
            raise AssertionError(
                "the model didn't read your message as an error and answered instead of calling get_weather again: "
                "say plainly that the arguments were wrong (e.g. 'Invalid arguments' or '参数有误') and ask it to "
                f"call the tool again. It replied: {retry.content!r}")
        fixed = json.loads(retry.tool_calls[0].function.arguments)
        assert fixed == {"city": "北京"}, (
            f"after your message the model sent {fixed}: it can only fix the field your message names")
        return f"after your message the sloppy model sent {json.dumps(fixed, ensure_ascii=False)}"
    return run_check(2, test, "Look at what error.errors() gives for each problem, and write one line per "
                              "problem; finish with what the model should do next.", recipe=hint.recipes[2])


SCHEMA = {"type": "object", "properties": {
    "a": {"type": "number"}, "b": {"type": "integer"}, "city": {"type": "string"}, "n": {"type": "integer"}}}
# (arguments, what coerce_numbers should return, the rule behind it)
COERCIONS = [
    ({"a": "一百二十三", "b": "456"}, {"a": 123, "b": 456},
     "number words and digit strings in number slots become numbers"),
    ({"a": "三点五", "b": "twelve"}, {"a": 3.5, "b": 12}, "English number words count too"),
    ({"a": 1, "b": 2}, {"a": 1, "b": 2}, "values that are numbers already stay as they are"),
    ({"city": "三亚", "a": "负十二"}, {"city": "三亚", "a": -12},
     "三亚 (Sanya) is a city in a string slot: only number slots are coerced, or a city would become a number"),
    ({"a": "abc", "b": "12abc"}, {"a": "abc", "b": "12abc"},
     "text that is not a number stays as it is, so that validation refuses it and the model is told"),
    ({"b": "3.5"}, {"b": "3.5"},
     "b is an integer slot and 3.5 is not a whole number. Leave '3.5' as it is, so that validation refuses it and "
     "the model is asked for a whole number: rounding to 3 or 4 would be a guess about what the user meant, and "
     "3.5 as a float only moves the error into your function"),
    ({"n": "1.2万", "extra": "五"}, {"n": 12000, "extra": "五"},
     "1.2万 is 12000, and an argument the schema does not declare ('extra') is left alone: validation reports it"),
]


def coerce_numbers(coerce: Callable[[dict, dict], dict]) -> CheckResult:
    """Exercise 3: number words replaced where the schema wants numbers, nothing else touched."""
    def test() -> str:
        for arguments, expected, rule in COERCIONS:
            given = dict(arguments)
            got = solved(coerce(given, SCHEMA))
            assert given == arguments, "don't modify the arguments you were given: build a new dict"
            assert isinstance(got, dict), f"return the arguments as a dict, not {type(got).__name__}"
            if got != expected or any(type(got[k]) is not type(v) for k, v in expected.items()):
                raise AssertionError(f"coerce_numbers({arguments}) gave {got}, expected {expected}: {rule}")
        return f"{len(COERCIONS)} cases: 一百二十三 → 123, 三亚 stays a city, '3.5' is not silently made an integer"
    return run_check(3, test, "Only a string in a slot whose schema type is a number is a candidate; "
                              "parse_number says whether it is one.", recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "keep a running total, a current section and the last digit: a digit waits for its unit (十/百/千 multiply "
        "it; a bare 十 is 一十); 万 multiplies the section so far by 10000 and adds it to the total; 点 starts the "
        "decimals (one digit each); 负 in front is the sign; any other character means return None\n"
        "中文：记住累计总数、当前一节和最后一个数字：数字等它后面的单位（十/百/千 相乘；开头单独的 十 就是 一十）；"
        "万 把前面这一节乘以 10000 加进总数；点 之后每个字是一位小数；开头的 负 表示负数；出现其他字就返回 None"),
    2: (
        "for each problem in error.errors(): its loc (the field), input (what was sent) and msg (what is wrong), "
        "one line each; finish with a line telling the model to fix these arguments and call the tool (by its "
        "name) again\n"
        "中文：对 error.errors() 里的每个问题，用 loc（字段）、input（收到的值）和 msg（哪里不对）各写一行；"
        "最后一行让模型改正参数，并点名再次调用这个工具"),
    3: (
        "start from a copy of arguments; for each name and value, read the type its schema property declares; only "
        "when that is 'number' or 'integer' and the value is a str, ask parse_number; replace the value when it "
        "found a number, and for 'integer' only when the number is whole (then as an int)\n"
        "中文：先复制 arguments；对每个参数，看 schema 里它的 type；只有 type 是 number 或 integer、值又是字符串时，"
        "才交给 parse_number；得到数字就替换，integer 还要求是整数（转成 int），否则原样保留"),
})
