"""arguments.py: lenient JSON, number-word coercion, messages for the model, and `prepare` under fuzzing."""
from __future__ import annotations

import json
import random
import re
from typing import Any, Literal, Optional

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from mini_framework.arguments import REPAIRS, ArgumentsError, coerce, explain, parse_arguments, prepare, repair_json
from mini_framework.tools import tool

# ----------------------------------------------------------------------------- example tools

class Location(BaseModel):
    latitude: float
    longitude: float
    name: Optional[str] = None


class Item(BaseModel):
    sku: str
    qty: int

    @field_validator("sku")
    @classmethod
    def upper_case(cls, value: str) -> str:
        if value != value.upper():
            raise ValueError("SKUs are upper case, like 'ABC-1'")
        return value


class Node(BaseModel):
    value: int
    children: list[Node] = []


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def get_weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius", days: int = 1) -> str:
    """Current weather in a city."""
    return city


@tool
def place_order(items: list[Item], location: Optional[Location] = None, express: bool = False,
                budget: Optional[float] = None, note: str = "") -> str:
    """Order items, delivered to a location."""
    return "ok"


@tool
def tree_sum(root: Node) -> int:
    """Sum a tree of numbers."""
    return root.value + sum(tree_sum(child) for child in root.children)


@tool
def ping() -> str:
    """Check that the service is up."""
    return "pong"


TOOLS = [add, get_weather, place_order, tree_sum, ping]


def message(tool_: Any, raw: Any) -> str:
    """The ArgumentsError message prepare raises (the test fails if it does not raise)."""
    with pytest.raises(ArgumentsError) as info:
        prepare(tool_, raw)
    return str(info.value)


# ----------------------------------------------------------------------------- lenient JSON

REPAIRED = [
    # (what the model sent, the arguments, the repairs named)
    ('{"city": "北京",}', {"city": "北京"}, ["trailing commas"]),
    ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}, ["trailing commas"]),
    ('{"text": "a,}", "n": 1,}', {"text": "a,}", "n": 1}, ["trailing commas"]),
    ("{'city': 'Paris'}", {"city": "Paris"}, ["single quotes"]),
    ("{'text': 'it's fine', 'n': 2}", {"text": "it's fine", "n": 2}, ["single quotes"]),
    ("{'rock': 'rock 'n' roll'}", {"rock": "rock 'n' roll"}, ["single quotes"]),
    ("{'a': 'He said \"hi\"', 'b': \"it's\"}", {"a": 'He said "hi"', "b": "it's"}, ["single quotes"]),
    ("{'a': 'it\\'s'}", {"a": "it's"}, ["single quotes"]),
    ('{"ok": True, "x": None, "y": False}', {"ok": True, "x": None, "y": False}, ["Python literals"]),
    ('{"note": "True or None", "ok": True}', {"note": "True or None", "ok": True}, ["Python literals"]),
    ('{city: "北京", days: 3}', {"city": "北京", "days": 3}, ["unquoted keys"]),
    ('{城市: "北京"}', {"城市": "北京"}, ["unquoted keys"]),
    ('{{"city": "北京"}}', {"city": "北京"}, ["doubled braces"]),
    ('{{"a": {{"b": "{{x}}"}}}}', {"a": {"b": "{{x}}"}}, ["doubled braces"]),
    ('{{"a": {"b": {"c": 1}}}}', {"a": {"b": {"c": 1}}}, ["doubled braces"]),
    ('```json\n{"city": "Paris"}\n```', {"city": "Paris"}, ["code fence"]),
    ('```\n{"city": "Paris"}', {"city": "Paris"}, ["code fence"]),
    ('Sure! Here you go: {"city": "Paris"} Hope that helps.', {"city": "Paris"}, ["surrounding prose"]),
    ('好的，我来查询：{"city": "北京"}。', {"city": "北京"}, ["surrounding prose"]),
    ('｛“city”：“北京”，“days”：3｝', {"city": "北京", "days": 3}, ["full-width punctuation"]),
    ('{"city"："北京，上海"，"days"：3}', {"city": "北京，上海", "days": 3}, ["full-width punctuation"]),
    ('{"a": "x", "b": [1, 2', {"a": "x", "b": [1, 2]}, ["unterminated"]),
    ('{"a": {"b": "cut', {"a": {"b": "cut"}}, ["unterminated"]),
    ('{"a": 1, "b":', {"a": 1}, ["unterminated"]),
    ('{"a": 1, "b', {"a": 1}, ["unterminated"]),
    ('{"a": "x\\', {"a": "x"}, ["unterminated"]),
    ('{"a": [1, 2,', {"a": [1, 2]}, ["unterminated"]),
    # combinations
    ('```json\n{"city": "Paris",}\n```', {"city": "Paris"}, ["code fence", "trailing commas"]),
    ("Here's the call:\n```json\n{'city': 'Paris'}\n```\nDone.", {"city": "Paris"}, ["code fence", "single quotes"]),
    ("{'city': '北京', 'hot': True,}", {"city": "北京", "hot": True},
     ["single quotes", "Python literals", "trailing commas"]),
    ("{city: '上海', 'tags': ['a', 'b',], extra: None}", {"city": "上海", "tags": ["a", "b"], "extra": None},
     ["single quotes", "Python literals", "unquoted keys", "trailing commas"]),
    ('调用：｛"city"：\'北京\'，｝', {"city": "北京"}, ["surrounding prose", "full-width punctuation", "single quotes",
                                                 "trailing commas"]),
    ("{'a': {'b': {'c': [1, {'d': 'x, y}'}]}}, 'e': 2,}", {"a": {"b": {"c": [1, {"d": "x, y}"}]}}, "e": 2},
     ["single quotes", "trailing commas"]),
    ('{"code": "```py\\nx = {1: 2,}\\n```", "n": 1,}', {"code": "```py\nx = {1: 2,}\n```", "n": 1},
     ["trailing commas"]),
    ("{'items': [{'sku': 'A', 'qty': 2}, {'sku': 'B'", {"items": [{"sku": "A", "qty": 2}, {"sku": "B"}]},
     ["single quotes", "unterminated"]),
    ('{{city: "北京", ok: True,}}', {"city": "北京", "ok": True},
     ["doubled braces", "Python literals", "unquoted keys", "trailing commas"]),
]


@pytest.mark.parametrize("raw,expected,repairs", REPAIRED)
def test_repairs(raw, expected, repairs):
    fixed, applied = repair_json(raw)
    assert json.loads(fixed) == expected
    assert applied == repairs
    assert parse_arguments(raw) == expected


def test_repairs_are_listed_in_order():
    assert [name for name, _ in REPAIRS] == [
        "code fence", "surrounding prose", "full-width punctuation", "doubled braces", "single quotes",
        "Python literals", "unquoted keys", "trailing commas", "unterminated"]


@pytest.mark.parametrize("raw", ['{"a": 1}', '{"s": "it\'s {x}, [y],}"}', '{"ok": "True"}'])
def test_valid_json_is_not_repaired(raw):
    assert repair_json(raw) == (raw, [])


HOPELESS = [
    # (what the model sent, words the message must contain)
    ("hello", "not valid JSON: Expecting value at character 0"),
    ('{"a": 1 "b": 2}', "Expecting ',' delimiter at character 8, near `{\"a\": 1 ⟨here⟩\"b\": 2}`"),
    ("[1, 2]", "not a JSON object: got a JSON array, [1, 2]"),
    ("42", "not a JSON object: got a number, 42"),
    ("true", "not a JSON object: got a boolean, true"),
    ('"just a sentence"', "not a JSON object: got a JSON string, \"just a sentence\""),
    ('{"a": 1}{"b": 2}', "Extra data at character 8"),
    ('{"a": [1, 2}', "Expecting ',' delimiter"),
    ("{:}", "Expecting property name"),
    ("```\n```", "not valid JSON"),
    ('{"a": ' + "[" * 100_000, "nested too deeply"),
    ('{"a": 1, ' + "x" * 1_000_000, "not valid JSON"),
    (["a", "list"], "not a JSON object: got a JSON array"),
    (42, "not a JSON object: got a number"),
]


@pytest.mark.parametrize("raw,words", HOPELESS)
def test_hopeless_arguments(raw, words):
    text = message(get_weather, raw)
    assert words in text
    assert text.endswith('Send one JSON object, e.g. {"city": "..."}.')  # the example fits the tool
    assert len(text) < 400


@pytest.mark.parametrize("raw", [None, "", "   \n", "null", {}, "{}", '""'])
def test_no_arguments(raw):
    assert parse_arguments(raw) == {}
    assert prepare(ping, raw).model_dump() == {}


def test_arguments_given_as_an_object_or_double_encoded():
    assert parse_arguments({"city": "北京"}) == {"city": "北京"}
    assert parse_arguments(json.dumps(json.dumps({"city": "北京"}))) == {"city": "北京"}
    assert parse_arguments(json.dumps("{'city': '北京',}")) == {"city": "北京"}
    assert prepare(get_weather, {"city": "北京", "days": "三"}).days == 3


def test_json_errors_are_structured():
    with pytest.raises(ArgumentsError) as info:
        prepare(add, "[1, 2]")
    assert [(p.field, p.kind, p.expected) for p in info.value.problems] == [("", "json", "one JSON object")]
    assert str(info.value).endswith('e.g. {"a": 1, "b": 1}.')


# ----------------------------------------------------------------------------- coercion, through prepare

COERCED = [
    # (tool, arguments, expected fields of the validated model)
    (add, {"a": "一百二十三", "b": 456}, {"a": 123, "b": 456}),      # number words
    (add, {"a": "两千零五", "b": "十"}, {"a": 2005, "b": 10}),
    (add, {"a": "负十二", "b": "零"}, {"a": -12, "b": 0}),
    (add, {"a": "1.2万", "b": "3亿"}, {"a": 12000, "b": 300000000}),
    (add, {"a": "一万二", "b": "二百五"}, {"a": 12000, "b": 250}),
    (add, {"a": "壹佰贰拾叁", "b": "二〇二四"}, {"a": 123, "b": 2024}),
    (add, {"a": "一点二万", "b": "两"}, {"a": 12000, "b": 2}),
    (add, {"a": "１２３", "b": "－７"}, {"a": 123, "b": -7}),
    (add, {"a": "twelve", "b": "one hundred and five"}, {"a": 12, "b": 105}),
    (add, {"a": "Twenty-One", "b": "minus three"}, {"a": 21, "b": -3}),
    (add, {"a": "a dozen", "b": "two million"}, {"a": 12, "b": 2000000}),
    (add, {"a": " 42 ", "b": "1,000"}, {"a": 42, "b": 1000}),
    (add, {"a": "3.0", "b": 3.0}, {"a": 3, "b": 3}),
    (add, {"a": "1e3", "b": "+5"}, {"a": 1000, "b": 5}),
    (add, {"a": "三点零", "b": "-0"}, {"a": 3, "b": 0}),
    (add, '{"a": "一百二十三", "b": 456}', {"a": 123, "b": 456}),
    (add, "{'a': '七', 'b': 'eight',}", {"a": 7, "b": 8}),
    (add, {"a": "九十九", "b": "一千零五十"}, {"a": 99, "b": 1050}),
    (add, {"a": "nineteen hundred", "b": "zero"}, {"a": 1900, "b": 0}),
    (add, {"a": "十二万三千四百五十六", "b": "five thousand and six"}, {"a": 123456, "b": 5006}),
    (add, {"a": 7, "b": "1,234,567"}, {"a": 7, "b": 1234567}),
    (get_weather, {"city": "北京", "days": "三"}, {"city": "北京", "days": 3}),
    (get_weather, {"city": "123", "days": "五"}, {"city": "123", "days": 5}),       # a string slot stays a string
    (get_weather, {"city": "一百", "units": "celsius"}, {"city": "一百"}),
    (place_order, {"items": [{"sku": "A", "qty": "三"}]}, {"items": [{"sku": "A", "qty": 3}]}),
    (place_order, {"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": "twelve"}]},
     {"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 12}]}),
    (place_order, {"items": [], "location": {"latitude": "三十九点九", "longitude": "116.4"}},
     {"location": {"latitude": 39.9, "longitude": 116.4, "name": None}}),
    (place_order, {"items": [], "location": {"latitude": "负三点五", "longitude": "一百", "name": "北京"}},
     {"location": {"latitude": -3.5, "longitude": 100.0, "name": "北京"}}),
    (place_order, {"items": [], "budget": "三点五"}, {"budget": 3.5}),
    (place_order, {"items": [], "budget": "1.2万"}, {"budget": 12000.0}),
    (place_order, {"items": [], "budget": "one hundred"}, {"budget": 100.0}),
    (place_order, {"items": [], "budget": None}, {"budget": None}),
    (place_order, {"items": [], "note": "一百"}, {"note": "一百"}),
    (place_order, {"items": [], "express": "是"}, {"express": True}),
    (place_order, {"items": [], "express": "对"}, {"express": True}),
    (place_order, {"items": [], "express": "否"}, {"express": False}),
    (place_order, {"items": [], "express": "不是"}, {"express": False}),
    (place_order, {"items": [], "express": "yes"}, {"express": True}),     # Pydantic's own lax bool
    (place_order, {"items": [], "express": "no"}, {"express": False}),
    (place_order, {"items": [], "express": "True"}, {"express": True}),
    (tree_sum, {"root": {"value": "一", "children": [{"value": "二", "children": [{"value": "three"}]}]}},
     {"root": {"value": 1, "children": [{"value": 2, "children": [{"value": 3, "children": []}]}]}}),
    (tree_sum, '{"root": {"value": "十", "children": []}}', {"root": {"value": 10, "children": []}}),
]


@pytest.mark.parametrize("tool_,arguments,expected", COERCED)
def test_coercion(tool_, arguments, expected):
    validated = prepare(tool_, arguments).model_dump()
    got = {key: validated[key] for key in expected}
    assert got == expected
    assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]


NOT_COERCED = [
    # (tool, arguments, the line the message must contain)
    (add, {"a": "abc", "b": 1}, '- a: got "abc"; expected a whole number'),
    (add, {"a": "12abc", "b": 1}, '- a: got "12abc"; expected a whole number'),
    (add, {"a": "1.2.3", "b": 1}, '- a: got "1.2.3"; expected a whole number'),
    (add, {"a": "", "b": 1}, '- a: got ""; expected a whole number'),
    (add, {"a": "一些", "b": 1}, '- a: got "一些"; expected a whole number'),
    (add, {"a": 3.5, "b": 1}, "- a: got 3.5; expected a whole number"),
    (add, {"a": "3.5", "b": 1}, '- a: got "3.5"; expected a whole number'),
    (add, {"a": "三点五", "b": 1}, '- a: got "三点五"; expected a whole number'),
    (add, {"a": [1], "b": 1}, "- a: got [1]; expected a whole number"),
    (add, {"a": {"n": 1}, "b": 1}, '- a: got {"n": 1}; expected a whole number'),
    (add, {"a": "1e400", "b": 1}, '- a: got "1e400"; expected a whole number'),
    (get_weather, {"city": 12}, "- city: got 12; expected a string"),
    (place_order, {"items": [], "budget": [3]}, "- budget: got [3]; expected a number"),
    (place_order, {"items": [], "express": "maybe"}, '- express: got "maybe"; expected true or false'),
    (place_order, {"items": [], "express": "一些"}, '- express: got "一些"; expected true or false'),
    (place_order, {"items": [{"sku": "A", "qty": "很多"}]}, '- items[0].qty: got "很多"; expected a whole number'),
    (place_order, {"items": [], "location": {"latitude": "north", "longitude": 1}},
     '- location.latitude: got "north"; expected a number'),
]


@pytest.mark.parametrize("tool_,arguments,line", NOT_COERCED)
def test_no_coercion(tool_, arguments, line):
    assert line in message(tool_, arguments).splitlines()


COERCE_DIRECT = [
    ({"type": "integer"}, "abc", "abc"), ({"type": "integer"}, "12abc", "12abc"), ({"type": "integer"}, "", ""),
    ({"type": "number"}, [1], [1]), ({"type": "number"}, {"a": 1}, {"a": 1}), ({"type": "string"}, 12, 12),
    ({"type": "string"}, "十二", "十二"), ({"type": "integer"}, True, True), ({"type": "boolean"}, 1, 1),
    ({"type": "integer"}, 3.5, 3.5), ({"type": "integer"}, 3.0, 3), ({"type": "number"}, "三点五", 3.5),
    ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, "十二", "十二"),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "十二", 12),
    ({"type": ["integer", "null"]}, "十二", 12),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"x": "五"}, {"x": 5}),
    ({"type": "array", "items": {"type": "number"}}, ["一", "two", 3, "x"], [1, 2, 3, "x"]),
    ({}, "十二", "十二"), ({"$ref": "#/$defs/Missing"}, "十二", "十二"),
]


@pytest.mark.parametrize("schema,value,expected", COERCE_DIRECT)
def test_coerce_directly(schema, value, expected):
    assert coerce(schema, value) == expected
    assert type(coerce(schema, value)) is type(expected)


def test_coerce_returns_a_new_value():
    arguments = {"a": "一", "nested": {"b": "二"}}
    schema = {"type": "object", "properties": {"a": {"type": "integer"},
                                               "nested": {"type": "object", "properties": {"b": {"type": "integer"}}}}}
    assert coerce(schema, arguments) == {"a": 1, "nested": {"b": 2}}
    assert arguments == {"a": "一", "nested": {"b": "二"}}


def test_good_arguments_are_not_touched():
    """The fast path: arguments that validate as sent are not coerced."""
    @tool
    def either(x: int | str) -> str:
        """Take a number or a name."""
        return str(x)
    assert prepare(either, '{"x": "十二"}').x == "十二"
    assert prepare(either, '{"x": 12}').x == 12


# ----------------------------------------------------------------------------- messages for the model

EXPLAINED = [
    (add, {"a": 1}, "Invalid arguments for add:\n"
                    "- b: missing; expected a whole number\n"
                    "Fix these arguments and call add again."),
    (get_weather, {"city": "北京", "days": "many"}, "Invalid arguments for get_weather:\n"
                                                     '- days: got "many"; expected a whole number\n'
                                                     "Fix these arguments and call get_weather again."),
    (get_weather, {"city": "北京", "units": "kelvin"},
     "Invalid arguments for get_weather:\n"
     "- units: got \"kelvin\"; expected one of 'celsius' | 'fahrenheit'\n"
     "Fix these arguments and call get_weather again."),
    (place_order, {"items": [], "location": {"latitude": "north"}},
     "Invalid arguments for place_order:\n"
     '- location.latitude: got "north"; expected a number\n'
     "- location.longitude: missing; expected a number\n"
     "Fix these arguments and call place_order again."),
    (place_order, {"items": [{"sku": "A", "qty": 1}, {"sku": "b", "qty": 2}, {"sku": "C", "qty": "lots"}]},
     "Invalid arguments for place_order:\n"
     "- items[1].sku: got \"b\"; SKUs are upper case, like 'ABC-1'\n"
     '- items[2].qty: got "lots"; expected a whole number\n'
     "Fix these arguments and call place_order again."),
    (get_weather, {"cty": "北京"},
     "Invalid arguments for get_weather:\n"
     "- city: missing; expected a string\n"
     "- cty: unknown field (did you mean 'city'?); the fields are: city, units, days\n"
     "Fix these arguments and call get_weather again."),
    (get_weather, {"city": "北京", "forecast": True},
     "Invalid arguments for get_weather:\n"
     "- forecast: unknown field; the fields are: city, units, days\n"
     "Fix these arguments and call get_weather again."),
    (tree_sum, {"root": {"value": 1, "children": [{"value": "x"}]}},
     "Invalid arguments for tree_sum:\n"
     '- root.children[0].value: got "x"; expected a whole number\n'
     "Fix these arguments and call tree_sum again."),
]


@pytest.mark.parametrize("tool_,arguments,expected", EXPLAINED)
def test_explain_exact(tool_, arguments, expected):
    assert message(tool_, arguments) == expected
    with pytest.raises(ValidationError) as info:
        tool_.validate(arguments)
    assert explain(info.value, tool_.name, arguments, tool_.json_schema) == expected


def test_many_errors_are_counted_not_listed():
    text = message(place_order, {"items": [{"sku": "a", "qty": "b"}] * 20_000})
    assert text.splitlines()[1:3] == ["- items[0].sku: got \"a\"; SKUs are upper case, like 'ABC-1'",
                                      '- items[0].qty: got "b"; expected a whole number']
    assert "- ... and 39992 more" in text and len(text) < 1000


def test_explain_without_a_schema_still_helps():
    with pytest.raises(ValidationError) as info:
        get_weather.validate({"cty": "北京", "units": "kelvin"})
    assert explain(info.value, "get_weather", {"cty": "北京", "units": "kelvin"}) == (
        "Invalid arguments for get_weather:\n"
        "- city: missing; expected a value\n"
        "- units: got \"kelvin\"; expected one of 'celsius' or 'fahrenheit'\n"
        "- cty: unknown field (did you mean 'city'?); the fields are: city\n"
        "Fix these arguments and call get_weather again.")


BAD = [
    (add, {"a": "x" * 1_000_000, "b": ["y"] * 100_000}),
    (add, {"a": None, "b": {"deep": [[[[1]]]]}, "c": 1, "d": 2}),
    (get_weather, {"city": None, "units": 3, "days": [], "x" * 500_000: 1}),
    (get_weather, {"city": ["北京"], "units": "Celsius", "days": "three and a half"}),
    (place_order, {"items": [{"sku": "a", "qty": "b"}] * 50, "location": "home", "express": "perhaps"}),
    (place_order, {"items": "ABC-1", "budget": "cheap", "note": 5}),
    (place_order, {"items": [{"sku": "A", "qty": 1, "colour": "red"}], "location": {"latitude": [], "longitude": {}}}),
    (tree_sum, {"root": {"value": "x", "children": [{"value": None}, "leaf", {"children": 3}]}}),
    (tree_sum, {"root": []}),
]


@pytest.mark.parametrize("tool_,arguments", BAD)
def test_explain_properties(tool_, arguments):
    with pytest.raises(ArgumentsError) as info:
        prepare(tool_, arguments)
    text, problems = str(info.value), info.value.problems
    lines = text.splitlines()
    assert lines[0] == f"Invalid arguments for {tool_.name}:"
    assert lines[-1] == f"Fix these arguments and call {tool_.name} again."
    assert problems and all(p.field for p in problems)
    assert all(any(line.startswith(f"- {p.field}:") for line in lines) for p in problems[:8])
    assert len(problems) <= 8 or re.fullmatch(r"- \.\.\. and \d+ more", lines[-2])
    for word in ("pydantic", "https://", "int_parsing", "Traceback", "input_value", "type="):
        assert word not in text
    assert len(text) < 2000


# ----------------------------------------------------------------------------- fuzz

VALID = ['{"a": 1, "b": 2}', '{"city": "北京", "units": "celsius", "days": 3}',
         '{"items": [{"sku": "A", "qty": 2}, {"sku": "B", "qty": 1}],'
         ' "location": {"latitude": 39.9, "longitude": 116.4},'
         ' "express": true, "budget": null, "note": "it\'s {fine}, [ok]"}',
         '{"root": {"value": 1, "children": [{"value": 2, "children": []}]}}', "{}"]
ALPHABET = list('{}[]":,\'\\ \n\tabc012-.eE') + ["｛", "：", "，", "“", "”", "一百", "true", "None", "```", "\u0000", "😀"]


def malformed(rng: random.Random) -> str:
    """One broken `arguments` string: a truncation, a mutation, random bytes, deep nesting or a huge string."""
    base = rng.choice(VALID)
    kind = rng.randrange(6)
    if kind == 0:
        return base[:rng.randrange(len(base) + 1)]
    if kind == 1:
        chars = list(base)
        for _ in range(rng.randint(1, 6)):
            at = rng.randrange(len(chars) + 1)
            op = rng.randrange(3)
            if op == 0 and chars:
                del chars[min(at, len(chars) - 1)]
            elif op == 1:
                chars.insert(at, rng.choice(ALPHABET))
            elif chars:
                chars[min(at, len(chars) - 1)] = rng.choice(ALPHABET)
        return "".join(chars)
    if kind == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).decode("utf-8", "replace")
    if kind == 3:
        depth = rng.choice([10, 500, 5_000, 50_000])
        opener, closer = rng.choice([("[", "]"), ('{"a": ', "}"), ("{'a': ", "}")])
        return '{"a": ' + opener * depth + ("1" + closer * depth if rng.random() < 0.5 else "") + "}"
    if kind == 4:
        filler = rng.choice(["x", "'", "{", ",", "\\", " ", "一", '"'])
        size = rng.choice([1_000, 50_000, 200_000])
        return rng.choice(['{"city": "%s"}', "{'city': '%s'", '{"a": %s}', "%s"]) % (filler * size)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(1, 60)))


@pytest.mark.parametrize("seed", range(5))
def test_fuzz_prepare(seed):
    rng = random.Random(seed)
    for _ in range(120):
        raw = malformed(rng)
        for tool_ in (add, get_weather, place_order, tree_sum, ping):
            try:
                result = prepare(tool_, raw)
            except ArgumentsError as exc:
                assert str(exc) and len(str(exc)) < 2000 and exc.problems
            else:
                assert isinstance(result, BaseModel)
