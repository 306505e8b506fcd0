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
ENGLISH = [
    ("one hundred and five", 105, "'and' only joins the words: skip it (one hundred + five)"),
    ("twenty-one", 21, "split on hyphens: twenty + one"),
    ("three thousand and twelve", 3012, "a scale word closes the group before it: 3 × 1000, then 12"),
    ("twelve", 12, "the words up to nineteen are numbers of their own"),
    ("zero", 0, "zero is 0"),
    ("ninety nine", 99, "ninety + nine"),
    ("seven hundred", 700, "hundred multiplies the number before it"),
    ("one hundred twenty", 120, "'and' is optional: one hundred twenty is 120"),
    ("eleven thousand", 11000, "eleven × 1000"),
    ("two million three hundred thousand", 2_300_000, "each scale word multiplies only its own group: "
                                                      "2 × 1,000,000 + 300 × 1000"),
    ("minus seven", -7, "'minus' (or 'negative') in front makes the number negative"),
    ("two point five", 2.5, "after 'point' each word is one decimal digit, so two point five is the float 2.5"),
    ("Forty-Two", 42, "ignore upper and lower case"),
    ("a few", None, "'a few' is not a number: return None rather than guess"),
    ("twelve apples", None, "'apples' is not a number word, so the text is not a number: return None"),
    ("minus", None, "a sign without a number is not a number: return None"),
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


def parse_english_number(parse: Callable[[str], Any]) -> CheckResult:
    """Exercise 2: a table of English number words, and things that are not numbers."""
    return run_check(2, _numbers(parse, ENGLISH), "Split into words and keep a running total; try "
                                                     "'three thousand and twelve' by hand first.",
                     recipe=hint.recipes[2])


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
    """Exercise 3: field, value and reason for every problem, an instruction to retry, and a model that does."""
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
    return run_check(3, test, "Look at what error.errors() gives for each problem, and write one line per "
                              "problem; finish with what the model should do next.", recipe=hint.recipes[3])


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
    """Exercise 4: number words replaced where the schema wants numbers, nothing else touched."""
    def test() -> str:
        for arguments, expected, rule in COERCIONS:
            given = dict(arguments)
            got = solved(coerce(given, SCHEMA))
            assert given == arguments, "don't modify the arguments you were given: build a new dict"
            assert isinstance(got, dict), f"return the arguments as a dict, not {type(got).__name__}"
            if got != expected or any(type(got[k]) is not type(v) for k, v in expected.items()):
                raise AssertionError(f"coerce_numbers({arguments}) gave {got}, expected {expected}: {rule}")
        return f"{len(COERCIONS)} cases: 一百二十三 → 123, 三亚 stays a city, '3.5' is not silently made an integer"
    return run_check(4, test, "Only a string in a slot whose schema type is a number is a candidate; "
                              "parse_number says whether it is one.", recipe=hint.recipes[4])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "keep a running total, a current section and the last digit: a digit waits for its unit (十/百/千 multiply "
        "it; a bare 十 is 一十); 万 multiplies the section so far by 10000 and adds it to the total; 点 starts the "
        "decimals (one digit each); 负 in front is the sign; any other character means return None"),
    2: (
        "lower-case, replace '-' by ' ', split, drop 'and'; 'minus'/'negative' first is the sign; split at 'point' "
        "(each word after it is one decimal digit); then for each word: SMALL and TENS add to the current group, "
        "'hundred' multiplies it by 100, SCALES (thousand, million) add current × scale to the total and start a "
        "new group; any other word means return None"),
    3: (
        "for problem in error.errors(): use problem['loc'] (the field), problem['input'] (what was sent) and "
        "problem['msg'] (what is wrong), one line each; finish with f'Fix these arguments and call {tool_name} "
        "again.'"),
    4: (
        "out = dict(arguments); for each name, value: kind = schema['properties'].get(name, {}).get('type'); only if "
        "kind is 'number' or 'integer' and value is a str: n = parse_number(value); replace it when n is not None, "
        "and for 'integer' only when n is a whole number (then int(n))"),
})
