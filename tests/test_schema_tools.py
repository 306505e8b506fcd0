"""Tool.from_schema: tools described by a JSON schema (MCP, OpenAPI) checked and run like @tool functions."""
from __future__ import annotations

import asyncio
import json
import time

import pytest

from mini_framework import Agent, Executor, ToolCall, connect
from mini_framework.arguments import ArgumentsError, prepare
from mini_framework.budget import SpillHook
from mini_framework.budget.cache import ResultCache
from mini_framework.schema import ToolDefinitionError
from mini_framework.schemas import MAX_DEPTH, MAX_NODES, model_from_schema
from mini_framework.tools import Tool
from tests.test_agent import ScriptedClient
from tests.test_approvals import calls, tool_messages


def echo(**arguments):
    """A handler that returns what it was given."""
    return arguments


def one(schema: dict, required: bool = True, **options) -> Tool:
    """A tool with one property `x` of this schema."""
    return Tool.from_schema("t", "A test tool.", {"type": "object", "properties": {"x": schema},
                                                   "required": ["x"] if required else []}, echo, **options)


def run(tool: Tool, arguments) -> dict:
    return asyncio.run(tool.acall(arguments))


# ----------------------------------------------------------------------------- each supported keyword

KEYWORDS = [  # (schema of x, a valid value, what the handler gets, an invalid value, words in the message)
    ({"type": "string"}, "北京", "北京", 5, "expected a string"),
    ({"type": "integer"}, "42", 42, "many", "expected a whole number"),
    ({"type": "number"}, "3.5", 3.5, "x", "expected a number"),
    ({"type": "boolean"}, "是", True, "maybe", "expected true or false"),
    ({"type": "null"}, None, None, 1, "x: got 1"),
    ({"type": ["string", "null"]}, None, None, 5, "x: got 5"),
    ({"type": ["integer", "string"]}, 7, 7, [1], "x: got [1]"),
    ({"enum": ["celsius", "fahrenheit"]}, "celsius", "celsius", "kelvin", "one of 'celsius' | 'fahrenheit'"),
    ({"type": "integer", "enum": [1, 3, 7]}, "三", 3, 5, "one of 1 | 3 | 7"),
    ({"const": "v1"}, "v1", "v1", "v2", "one of 'v1'"),
    ({"type": "array", "items": {"type": "integer"}}, ["1", "二"], [1, 2], [1, "x"], "x[1]: got \"x\""),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"a": 1}, {"a": 1}, {},
     "x.a: missing"),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
     {"a": 1}, {"a": 1}, {"a": 1, "b": 2}, "x.b: unknown field"),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": True},
     {"a": 1, "b": [2]}, {"a": 1, "b": [2]}, {"a": "x"}, "x.a: got \"x\""),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"k": "一"}, {"k": 1}, {"k": "x"},
     "x.k: got \"x\""),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
     {"a": "s", "k": 2}, {"a": "s", "k": 2}, {"a": "s", "k": "x"}, "x.k: got \"x\""),
    ({"type": "integer", "minimum": 0}, 0, 0, -1, "greater than or equal to 0"),
    ({"type": "integer", "maximum": 10}, 10, 10, 11, "less than or equal to 10"),
    ({"type": "integer", "exclusiveMinimum": 0}, 1, 1, 0, "greater than 0"),
    ({"type": "number", "exclusiveMaximum": 10}, 9.5, 9.5, 10, "less than 10"),
    ({"type": "integer", "minimum": 0, "exclusiveMinimum": True}, 1, 1, 0, "greater than 0"),  # OpenAPI 3.0
    ({"type": "integer", "multipleOf": 5}, 10, 10, 7, "multiple of 5"),
    ({"type": "string", "minLength": 2}, "ab", "ab", "a", "at least 2 characters"),
    ({"type": "string", "maxLength": 2}, "ab", "ab", "abc", "at most 2 characters"),
    ({"type": "array", "minItems": 1}, [1], [1], [], "at least 1 item"),
    ({"type": "array", "maxItems": 1}, ["a"], ["a"], [1, 2], "at most 1 item"),
    ({"type": "string", "pattern": "^[A-Z]{3}$"}, "CNY", "CNY", "cny", "match pattern"),
    ({"type": "string", "format": "date", "description": "YYYY-MM-DD", "title": "Day"}, "2025-01-15",
     "2025-01-15", 20250115, "expected a string"),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, None, None, "x", "x: got \"x\""),
    ({"oneOf": [{"type": "integer"}, {"type": "boolean"}]}, "一百", 100, "ab", "x: got \"ab\""),
    ({}, {"any": ["json"]}, {"any": ["json"]}, None, None),  # {} accepts any value: nothing is invalid
]


@pytest.mark.parametrize(("schema", "good", "gets", "bad", "words"), KEYWORDS)
def test_each_keyword_accepts_a_valid_value_and_names_the_field_of_an_invalid_one(schema, good, gets, bad, words):
    t = one(schema)
    assert run(t, {"x": good}) == {"x": gets}
    if words is None:
        return
    with pytest.raises(ArgumentsError) as caught:
        prepare(t, {"x": bad})
    assert words in str(caught.value) and "call t again" in str(caught.value)


def test_defaults_are_filled_in_and_optional_properties_not_sent_are_left_out():
    t = Tool.from_schema("t", "d", {"type": "object", "properties": {
        "n": {"type": "integer", "default": 5}, "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        "note": {"type": "string"}, "maybe": {"type": ["string", "null"]}}}, echo)
    assert run(t, {}) == {"n": 5, "tags": []}
    assert run(t, {"note": "hi", "maybe": None}) == {"n": 5, "tags": [], "note": "hi", "maybe": None}
    assert run(t, {"n": None, "note": None}) == {"n": 5, "tags": []}  # null for "not given", as for @tool
    first, second = run(t, {}), run(t, {})
    assert first["tags"] is not second["tags"]  # a mutable default is not shared between calls


def test_the_shown_schema_is_portable_and_the_strict_one_is_accepted():
    t = Tool.from_schema("t", "d", {
        "$schema": "http://json-schema.org/draft-07/schema#", "title": "Args", "type": "object",
        "properties": {"mode": {"const": "fast", "title": "Mode", "examples": ["fast"], "x-internal": 1},
                       "limit": {"type": ["integer", "null"], "minimum": 1, "description": "at most this many"}},
        "required": ["mode"], "additionalProperties": False}, echo)
    assert t.json_schema == {"type": "object", "properties": {
        "mode": {"enum": ["fast"]},
        "limit": {"description": "at most this many", "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}},
        "required": ["mode"]}
    strict = t.to_openai_tool(strict=True)["function"]
    assert strict["strict"] and strict["parameters"]["additionalProperties"] is False
    assert strict["parameters"]["required"] == ["mode", "limit"]


# ----------------------------------------------------------------------------- names, nesting, references

NAMES = {"type": "object", "properties": {
    "user-id": {"type": "integer"}, "class": {"type": "string"}, "2fa": {"type": "boolean"}, "名字": {"type": "string"},
    "_id": {"type": "string"}, "json": {"type": "string"}, "user_id": {"type": "string"}},
    "required": ["user-id", "class"]}


def test_property_names_that_are_not_identifiers_reach_the_handler_by_their_json_names():
    got = {}

    def handler(**kwargs):
        got.update(kwargs)
        return "ok"

    t = Tool.from_schema("names", "d", NAMES, handler)
    assert [p.name for p in t.parameters] == list(NAMES["properties"])
    arguments = {"user-id": "一百二十三", "class": "A", "2fa": "true", "名字": "李雷", "_id": "x1", "json": "{}",
                 "user_id": "u"}
    assert run(t, json.dumps(arguments, ensure_ascii=False)) == "ok"
    assert got == {**arguments, "user-id": 123, "2fa": True}
    assert list(t.json_schema["properties"]) == list(NAMES["properties"])
    args, kwargs = t.bind(t.validate({"user-id": 1, "class": "B"}))
    assert (args, kwargs) == ([], {"user-id": 1, "class": "B"})


def test_a_python_name_of_a_json_name_is_not_accepted_in_its_place():
    t = Tool.from_schema("names", "d", NAMES, echo)
    with pytest.raises(ArgumentsError) as caught:
        prepare(t, {"user-id": 1, "class_": "A"})
    message = str(caught.value)
    assert "- class: missing; expected a string" in message
    assert "- class_: unknown field (did you mean 'class'?)" in message


ORDER = {"type": "object", "properties": {
    "customer": {"type": "object", "properties": {"name": {"type": "string"}, "e-mail": {"type": "string"}},
                 "required": ["name"]},
    "items": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
        "sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}, "required": ["sku", "qty"]}}},
    "required": ["customer", "items"]}


def test_nested_objects_and_arrays_of_objects_arrive_as_plain_json():
    t = Tool.from_schema("order", "d", ORDER, echo)
    got = run(t, {"customer": {"name": "王", "e-mail": "w@x.cn"}, "items": [{"sku": "A1", "qty": "两"}]})
    assert got == {"customer": {"name": "王", "e-mail": "w@x.cn"}, "items": [{"sku": "A1", "qty": 2}]}
    assert type(got["customer"]) is dict
    with pytest.raises(ArgumentsError) as caught:
        prepare(t, {"customer": {"name": "王", "email": "w@x.cn"}, "items": [{"sku": "A1", "qty": 0}]})
    message = str(caught.value)
    assert "- customer.email: unknown field (did you mean 'e-mail'?)" in message
    assert "- items[0].qty: got 0; expected a value greater than or equal to 1" in message


def test_refs_to_defs_and_definitions_are_inlined():
    t = Tool.from_schema("t", "d", {
        "type": "object", "properties": {"home": {"$ref": "#/$defs/Point", "description": "where I live"},
                                         "work": {"$ref": "#/definitions/Point"}},
        "required": ["home"],
        "$defs": {"Point": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                            "required": ["lat", "lon"]}},
        "definitions": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}}}}}, echo)
    assert "$defs" not in t.json_schema and "$ref" not in json.dumps(t.json_schema)
    assert t.json_schema["properties"]["home"]["description"] == "where I live"
    assert run(t, {"home": {"lat": "39.9", "lon": 116.4}, "work": {"x": 1}}) == {
        "home": {"lat": 39.9, "lon": 116.4}, "work": {"x": 1}}


TREE = {"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}}, "required": ["root"],
        "$defs": {"Node": {"type": "object", "properties": {
            "name": {"type": "string"}, "size": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}, "required": ["name"]}}}


def test_a_recursive_schema_keeps_its_ref_and_validates_every_level():
    t = Tool.from_schema("tree", "d", TREE, echo)
    assert t.json_schema["properties"]["root"] == {"$ref": "#/$defs/Node"} and list(t.json_schema["$defs"]) == ["Node"]
    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c", "size": "三"}]}]}
    assert run(t, {"root": tree}) == {"root": {"name": "a", "children": [
        {"name": "b", "children": [{"name": "c", "size": 3}]}]}}
    with pytest.raises(ArgumentsError, match=r"root\.children\[0\]\.children\[0\]\.name: got 5"):
        prepare(t, {"root": {"name": "a", "children": [{"name": "b", "children": [{"name": 5}]}]}})
    assert t.strict_json_schema["$defs"]["Node"]["additionalProperties"] is False


# ----------------------------------------------------------------------------- refused

REFUSED = [  # (parameters schema, words the error must contain)
    ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}, "'allOf' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"not": {"type": "string"}}}}, "'not' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"if": {"type": "string"}, "then": {"minLength": 1}}}},
     "'if' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "object", "patternProperties": {"^x": {}}}}},
     "'patternProperties' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "dependentRequired": {"a": ["b"]}},
     "'dependentRequired' at #"),
    ({"type": "object", "properties": {"a": {"type": "array", "prefixItems": [{"type": "string"}]}}},
     "'prefixItems' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": [{"type": "string"}]}}},
     "'items' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"$ref": "https://example.com/schemas/a.json"}}},
     "'$ref' at #/properties/a is not supported: only local references"),
    ({"type": "object", "properties": {"a": {"$ref": "#/properties/b"}, "b": {"type": "string"}}},
     "'$ref' at #/properties/a"),
    ({"type": "object", "properties": {"child": {"$ref": "#"}}}, "'$ref' at #/properties/child"),
    ({"type": "object", "properties": {"a": {"type": "string", "minLenght": 2}}}, "'minLenght' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "string", "nullable": True}}}, "'nullable' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "object", "$defs": {}}}}, "'$defs' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"enum": [0.5, 1.5]}}}, "'enum' at #/properties/a"),
    ({"type": "object", "properties": {"a~/b": {"not": {}}}}, "'not' at #/properties/a~0~1b"),
    ({"type": "object", "properties": {"a": {"$ref": "#/$defs/L"}},
      "$defs": {"L": {"type": "array", "items": {"$ref": "#/$defs/L"}}}}, "recursive but not an object"),
    ({"type": "object", "properties": {"a": {"type": "text"}}}, "'type' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "integer", "minimum": "0"}}}, "'minimum' at #/properties/a"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, "names 'b'"),
    ({"type": "string"}, "must have \"type\": \"object\""),
    ({"type": "array", "items": {"type": "string"}}, "must have \"type\": \"object\""),
    ({"properties": {"a": {"type": "string"}}}, "must have \"type\": \"object\""),
]


@pytest.mark.parametrize(("schema", "words"), REFUSED)
def test_what_is_not_supported_is_refused_naming_the_keyword_and_where_it_is(schema, words):
    with pytest.raises(ToolDefinitionError) as caught:
        Tool.from_schema("t", "d", schema, echo)
    assert words in str(caught.value) and str(caught.value).startswith("t: ")


def test_bad_calls_to_from_schema_are_refused_clearly():
    good = {"type": "object", "properties": {}}
    with pytest.raises(ToolDefinitionError, match="must be a JSON object"):
        Tool.from_schema("t", "d", '{"type": "object"}', echo)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="handler"):
        Tool.from_schema("t", "d", good, None)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="tool name 'get time'"):
        Tool.from_schema("get time", "d", good, echo)
    with pytest.raises(TypeError, match="retries"):
        Tool.from_schema("t", "d", good, echo, retries=3)
    with pytest.raises(ToolDefinitionError, match="strict mode"):
        Tool.from_schema("t", "d", {"type": "object", "properties": {"a": {"type": "object"}}}, echo, strict=True)
    with pytest.raises(ToolDefinitionError, match="must not be cached"):
        Tool.from_schema("t", "d", good, echo, cache=60, side_effects=True)


# ----------------------------------------------------------------------------- hostile schemas


def fast(seconds: float = 2.0):
    """A context that fails if its block takes longer than `seconds`."""
    class Timer:
        def __enter__(self):
            self.start = time.perf_counter()

        def __exit__(self, *exc):
            assert time.perf_counter() - self.start < seconds
    return Timer()


def test_a_deeply_nested_schema_is_refused_quickly():
    deep: dict = {"type": "string"}
    for _ in range(5_000):
        deep = {"type": "object", "properties": {"a": deep}}
    with fast(), pytest.raises(ToolDefinitionError, match=f"nested more than {MAX_DEPTH} deep"):
        model_from_schema("t", deep)
    ok: dict = {"type": "string"}
    for _ in range(MAX_DEPTH - 1):
        ok = {"type": "object", "properties": {"a": ok}}
    model_from_schema("t", ok)
    model_from_schema("t", {"type": "object", "properties": {"a": {"$ref": "#/$defs/Deep"}},
                            "$defs": {"Deep": ok["properties"]["a"]}})  # as deep, inside a definition


def test_ten_thousand_properties_and_a_ref_bomb_are_refused_quickly():
    wide = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(10_000)}}
    with fast(), pytest.raises(ToolDefinitionError, match=f"more than {MAX_NODES:,} schemas"):
        model_from_schema("t", wide)
    defs = {f"L{i}": {"type": "object", "properties": {f"k{j}": {"$ref": f"#/$defs/L{i + 1}"} for j in range(10)}}
            for i in range(9)}
    defs["L9"] = {"type": "string"}  # 10**9 strings once inlined
    bomb = {"type": "object", "properties": {"x": {"$ref": "#/$defs/L0"}}, "$defs": defs}
    with fast(), pytest.raises(ToolDefinitionError, match="counted with every \\$ref inlined"):
        model_from_schema("t", bomb)


def test_a_catastrophic_pattern_runs_in_linear_time_and_unsafe_ones_are_refused():
    t = one({"type": "string", "pattern": "^(a+)+$"})  # exponential in a backtracking engine such as Python's re
    with fast(), pytest.raises(ArgumentsError, match="match pattern"):
        prepare(t, {"x": "a" * 100_000 + "!"})
    assert run(t, {"x": "aaa"}) == {"x": "aaa"}
    for pattern in (r"^(?=.*\d)\w+$", r"(a)\1", r"(a{1000}){1000}", "[unclosed"):
        with pytest.raises(ToolDefinitionError, match="'pattern' at #/properties/x"):
            one({"type": "string", "pattern": pattern})


# ----------------------------------------------------------------------------- an MCP server's tool list

MCP_TOOLS = [  # as the reference servers list them (mcp-server-time, mcp-server-fetch, @mcp/server-filesystem)
    {"name": "get_current_time", "description": "Get current time in a specific timezones",
     "inputSchema": {"type": "object", "properties": {"timezone": {
         "type": "string", "description": "IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use "
                                          "'Asia/Shanghai' as local timezone if no timezone provided by the user."}},
         "required": ["timezone"]}},
    {"name": "convert_time", "description": "Convert time between timezones",
     "inputSchema": {"type": "object", "properties": {
         "source_timezone": {"type": "string", "description": "Source IANA timezone name"},
         "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
         "target_timezone": {"type": "string", "description": "Target IANA timezone name"}},
         "required": ["source_timezone", "time", "target_timezone"]}},
    {"name": "fetch", "description": "Fetches a URL from the internet and optionally extracts its contents as "
                                     "markdown.",
     "inputSchema": {"description": "Parameters for fetching a URL.", "title": "Fetch", "type": "object",
                     "properties": {
                         "url": {"description": "URL to fetch", "format": "uri", "minLength": 1, "maxLength": 2083,
                                 "title": "Url", "type": "string"},
                         "max_length": {"default": 5000, "description": "Maximum number of characters to return.",
                                        "exclusiveMaximum": 1000000, "exclusiveMinimum": 0, "title": "Max Length",
                                        "type": "integer"},
                         "start_index": {"default": 0, "description": "On return output starting at this character "
                                         "index.", "minimum": 0, "title": "Start Index", "type": "integer"},
                         "raw": {"default": False, "description": "Get the actual HTML content of the requested page, "
                                 "without simplification.", "title": "Raw", "type": "boolean"}},
                     "required": ["url"]}},
    {"name": "edit_file", "description": "Make line-based edits to a text file.",
     "inputSchema": {"type": "object", "properties": {
         "path": {"type": "string"},
         "edits": {"type": "array", "items": {"type": "object", "properties": {
             "oldText": {"type": "string", "description": "Text to search for - must match exactly"},
             "newText": {"type": "string", "description": "Text to replace with"}},
             "required": ["oldText", "newText"], "additionalProperties": False}},
         "dryRun": {"type": "boolean", "default": False, "description": "Preview changes using git-style diff format"}},
         "required": ["path", "edits"], "additionalProperties": False,
         "$schema": "http://json-schema.org/draft-07/schema#"}},
]


def mcp_tools(sent: list) -> list[Tool]:
    """The MCP list as tools whose handler records (tool, arguments), as an MCP client would forward them."""
    def forward(name):
        async def call_tool(**arguments):
            sent.append((name, arguments))
            return json.dumps({"tool": name, "ok": True})
        return call_tool
    return [Tool.from_schema(t["name"], t["description"], t["inputSchema"], forward(t["name"])) for t in MCP_TOOLS]


def test_an_mcp_tool_list_becomes_tools_for_the_request_in_both_modes():
    tools = mcp_tools([])
    specs = Tool.serialize_tools(tools)
    assert [s["function"]["name"] for s in specs] == [t["name"] for t in MCP_TOOLS]
    fetch = specs[2]["function"]["parameters"]
    assert fetch["properties"]["max_length"] == {
        "type": "integer", "description": "Maximum number of characters to return.", "exclusiveMinimum": 0,
        "exclusiveMaximum": 1000000, "default": 5000}
    assert fetch["properties"]["url"]["format"] == "uri" and "title" not in json.dumps(fetch)
    assert "$schema" not in json.dumps(specs[3])
    for strict in Tool.serialize_tools(tools, strict=True):
        assert strict["function"]["strict"] and strict["function"]["parameters"]["additionalProperties"] is False


def test_mcp_calls_run_through_the_executor_with_defaults_and_repairs():
    sent: list = []
    executor = Executor(mcp_tools(sent))
    results = executor.run_sync([
        ToolCall("c1", "fetch", '{"url": "https://example.com", "max_length": "一百二十三",}'),
        ToolCall("c2", "edit_file", json.dumps({"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]})),
        ToolCall("c3", "convert_time", "{'source_timezone': 'Asia/Shanghai', 'time': '14:30', "
                                       "'target_timezone': 'Europe/London'}"),
    ])
    assert all(r.ok for r in results)
    assert sent == [
        ("fetch", {"url": "https://example.com", "max_length": 123, "start_index": 0, "raw": False}),
        ("edit_file", {"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": False}),
        ("convert_time", {"source_timezone": "Asia/Shanghai", "time": "14:30", "target_timezone": "Europe/London"})]


# ----------------------------------------------------------------------------- the executor's path


def test_a_bad_field_is_named_then_the_retry_budget_runs_out():
    sent: list = []
    executor = Executor(mcp_tools(sent), retry_budget=2)
    bad = ToolCall("c", "fetch", '{"url": "https://example.com", "max_length": 0, "rwa": true}')
    first, second, third = (executor.run_sync([bad])[0] for _ in range(3))
    error = json.loads(first.content)["error"]
    assert "- max_length: got 0; expected a value greater than 0" in error
    assert "- rwa: unknown field (did you mean 'raw'?)" in error and "call fetch again" in error
    assert (first.failure, second.failure, third.failure) == ("invalid_arguments", "invalid_arguments", "gave_up")
    assert sent == []


def test_sync_async_and_callable_object_handlers_all_run():
    class Counter:
        def __init__(self):
            self.calls = 0

        def __call__(self, **kwargs):
            self.calls += 1
            return f"{kwargs['user-id']}: {self.calls}"

    async def lookup(**kwargs):
        await asyncio.sleep(0)
        return {"user": kwargs["user-id"]}

    schema = {"type": "object", "properties": {"user-id": {"type": "integer"}}, "required": ["user-id"]}
    counter = Counter()
    tools = [Tool.from_schema("count", "d", schema, counter), Tool.from_schema("lookup", "d", schema, lookup)]
    assert not tools[0].is_async and tools[1].is_async
    results = Executor(tools).run_sync([ToolCall("a", "count", '{"user-id": "七"}'),
                                        ToolCall("b", "lookup", '{"user-id": 8}')])
    assert [r.content for r in results] == ["7: 1", '{"user": 8}']
    assert tools[0](**{"user-id": 1}) == "1: 2"  # calling the tool calls the handler directly


def test_a_cached_schema_tool_runs_once_for_the_same_arguments():
    ran: list = []
    t = Tool.from_schema("weather", "d", {"type": "object", "properties": {"city-name": {"type": "string"}, "days": {
        "type": "integer", "default": 1}}, "required": ["city-name"]}, lambda **kw: ran.append(kw) or "晴", cache=60)
    executor = Executor([t], cache=ResultCache())
    first = executor.run_sync([ToolCall("a", "weather", '{"city-name": "北京"}')])[0]
    second = executor.run_sync([ToolCall("b", "weather", '{"city-name": "北京", "days": 1}')])[0]
    assert ran == [{"city-name": "北京", "days": 1}] and (first.cached, second.cached) == (False, True)


def test_timeout_and_spill_options_apply(tmp_path):
    slow = Tool.from_schema("slow", "d", {"type": "object", "properties": {}}, lambda: time.sleep(2), timeout=0.1)
    [r] = Executor([slow]).run_sync([ToolCall("a", "slow", "{}")])
    assert r.failure == "timeout"
    log = "\n".join(f"line {i}: payment failed" for i in range(3000))
    big = Tool.from_schema("read_log", "d", {"type": "object", "properties": {}}, lambda: log, too_long_to_file=500)
    [r] = Executor([big], hooks=[SpillHook(tmp_path)]).run_sync([ToolCall("a", "read_log", "{}")])
    assert r.ok and "<system-reminder>" in r.content and r.value == log


SEND = {"type": "object", "properties": {"to-address": {"type": "string"}, "body": {"type": "string"},
                                         "cc": {"type": "array", "items": {"type": "string"}}},
        "required": ["to-address", "body"]}


def test_requires_approval_pauses_the_run_and_approve_or_edit_runs_with_json_names():
    sent: list = []
    mail = Tool.from_schema("send_mail", "Send an e-mail.", SEND, lambda **kw: sent.append(kw) or "sent",
                            requires_approval=True)
    agent = Agent(ScriptedClient([calls(("c1", "send_mail", {"to-address": "li@example.com", "body": "hi"}))]),
                  "m", [mail])
    paused = agent.run("mail li")
    assert paused.paused and sent == []
    [item] = paused.pending
    assert item.gated and item.arguments == {"to-address": "li@example.com", "body": "hi"}
    item.edit({"to-address": "wang@example.com", "body": "你好"})
    result = agent.resume(paused)
    assert sent == [{"to-address": "wang@example.com", "body": "你好"}]
    assert tool_messages(result)["c1"].startswith("A person changed the arguments")

    agent = Agent(ScriptedClient([calls(("c2", "send_mail", {"to-address": "li@example.com", "body": "hi",
                                                              "cc": ["a@x.cn"]}))]), "m", [mail])
    paused = agent.run("mail li")
    paused.pending[0].approve()
    agent.resume(paused)
    assert sent[-1] == {"to-address": "li@example.com", "body": "hi", "cc": ["a@x.cn"]}


def test_an_approval_predicate_reads_fields_by_their_python_names():
    mail = Tool.from_schema("send_mail", "d", SEND, echo,
                            requires_approval=lambda args: not args.to_address.endswith("@corp.example"))
    assert [mail.needs_approval(mail.validate({"to-address": to, "body": "x"}))
            for to in ("me@corp.example", "li@external.example")] == [False, True]


def test_an_agent_answers_through_a_schema_tool_on_the_practice_server():
    asked: list = []

    def get_current_time(**arguments):
        asked.append(arguments)
        return json.dumps({"city": arguments["city-name"], "timezone": arguments["timezone"],
                           "datetime": "2025-01-15T14:30:00+08:00"}, ensure_ascii=False)

    now = Tool.from_schema("get_current_time", "查询一个城市的当前时间", {"type": "object", "properties": {
        "city-name": {"type": "string", "description": "城市名称，例如北京、上海"},
        "timezone": {"type": "string", "description": "IANA timezone name", "default": "Asia/Shanghai"}},
        "required": ["city-name"]}, get_current_time)
    client, model = connect()
    result = Agent(client, model, tools=[now]).run("北京现在几点？")
    assert asked == [{"city-name": "北京", "timezone": "Asia/Shanghai"}]
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.text == "北京现在是 14:30。" and result.tool_results[0].ok     # the time the tool gave, no date
