"""tools.py: @tool and Tool subclasses, the wire format, guidance for the system prompt, validation and calls."""
from __future__ import annotations

import asyncio
import copy
import doctest
import inspect
import json
import sys
import threading
from pathlib import Path
from typing import Any, Optional

import pytest
from pydantic import BaseModel, Field, ValidationError

import mini_framework.schema as schema_module
import mini_framework.strict as strict_module
import mini_framework.tools as tools_module
from mini_framework.arguments import ArgumentsError
from mini_framework.media.types import ImgPath, ImgUrl, Text
from mini_framework.tools import Parameter, Tool, ToolDefinitionError, as_tool, tool, tool_guidance

SPEC_CANDIDATES = [Path(__file__).resolve().parent / "openapi" / "chat_schemas.json",
                   Path(__file__).resolve().parents[2] / "shared" / "reference" / "openai-openapi.json"]


# ----------------------------------------------------------------------------- example tools

class Location(BaseModel):
    latitude: float = Field(..., description="纬度")
    longitude: float = Field(..., description="经度")
    name: Optional[str] = Field(None, description="位置名称")


@tool
def add(a: int, b: int = 1) -> int:
    """Add two integers.

    Args:
        a: The first
        b: The second
    """
    return a + b


@tool(name="get_weather", description="获取天气信息", best_practices="Ask for the city if it is missing.",
      timeout=5)
async def weather(location: Location, days: int = 1) -> dict[str, Any]:
    """获取指定位置的天气预报

    Args:
        location: 位置信息，包含经纬度坐标
        days: 预报天数，1-7天，默认1天
    """
    return {"where": location.name or f"{location.latitude},{location.longitude}", "days": days}


def describe_image(image: ImgPath, extra: list[ImgUrl] = [], caption: Text = Text("")) -> str:  # noqa: B006, B008
    """Describe an image.

    Args:
        image: The picture
        extra: More pictures
        caption: A caption
    """
    return f"{type(image).__name__}:{image.path.name}, {[type(u).__name__ for u in extra]}, {type(caption).__name__}"


class WebSearch(Tool):
    """Search the web and return page titles."""

    name = "web_search"
    best_practices = "Use precise keywords; search at most twice."

    def run(self, query: str, max_results: int = 5) -> list[str]:
        """
        Args:
            query: 搜索关键词
            max_results: 最大结果数量
        """
        return [f"{query} #{i}" for i in range(max_results)]


class ApiCall(Tool):
    """SimpleLLMFunc's style: name and description given to super().__init__."""

    def __init__(self, base_url: str) -> None:
        super().__init__(name="api_call", description="调用外部 API 获取数据")
        self.base_url = base_url

    async def run(self, endpoint: str, method: str = "GET") -> str:
        """Call an endpoint.

        Args:
            endpoint: API 端点路径
            method: HTTP 方法
        """
        return f"{method} {self.base_url}/{endpoint.lstrip('/')}"

    def prompt_injection_builder(self, context: Any) -> str:
        return f"The API lives at {self.base_url}; the user is {context['user']}."


# ----------------------------------------------------------------------------- decorator forms

def test_bare_decorator_keeps_the_function_callable_and_described():
    assert add(2, 3) == 5 and add(a=2) == 3
    assert isinstance(add, Tool)
    assert (add.name, add.description, add.is_async) == ("add", "Add two integers.", False)
    assert add.parameters == [Parameter("a", "The first", True), Parameter("b", "The second", False)]
    assert add.__name__ == "add" and "Add two integers" in add.__doc__
    assert str(inspect.signature(add)) == "(a: 'int', b: 'int' = 1) -> 'int'"


def test_decorator_with_arguments_overrides_name_and_description_and_stores_options():
    assert (weather.name, weather.description) == ("get_weather", "获取天气信息")
    assert weather.best_practices == "Ask for the city if it is missing." and weather.timeout == 5
    assert weather.is_async and inspect.iscoroutinefunction(weather.func)
    assert asyncio.run(weather(Location(latitude=1, longitude=2))) == {"where": "1.0,2.0", "days": 1}  # still a coroutine function
    assert weather.strict is False and add.timeout is None


@pytest.mark.parametrize("make", [
    lambda f: tool(f),
    lambda f: tool()(f),
    lambda f: tool(name="lookup")(f),
    lambda f: Tool(func=f),
    lambda f: as_tool(f),
], ids=["tool(f)", "tool()(f)", "tool(name=)(f)", "Tool(func=f)", "as_tool(f)"])
def test_every_way_of_making_a_tool_gives_the_same_schema(make):
    def lookup(order_id: int, verbose: bool = False) -> str:
        """Look an order up."""
        return f"#{order_id}"
    t = make(lookup)
    assert t.name == "lookup" and t(7) == "#7"
    assert t.json_schema == {"type": "object", "properties": {"order_id": {"type": "integer"},
                             "verbose": {"type": "boolean", "default": False}}, "required": ["order_id"]}


# ----------------------------------------------------------------------------- names

@pytest.mark.parametrize("name, ok", [
    ("get_weather", True), ("get-weather-2", True), ("A" * 64, True), ("x", True),
    ("get weather", False), ("get.weather", False), ("天气", False), ("", False), ("A" * 65, False), ("<lambda>", False),
    ("get_weather\n", False), ("\nget_weather", False), ("get_weather ", False), ("A" * 64 + "\n", False),
])
def test_names_must_match_the_api_pattern(name, ok):
    def f(city: str) -> str:
        return city
    if ok:
        assert tool(f, name=name).name == name
    else:
        with pytest.raises(ToolDefinitionError, match="is not allowed: use 1-64 characters"):
            tool(f, name=name or None) if name else Tool(name="", func=lambda: 0)


def test_a_lambda_needs_a_name_and_the_error_suggests_one():
    with pytest.raises(ToolDefinitionError, match=r"'<lambda>' is not allowed.*name='lambda'"):
        tool(lambda: 0)
    assert tool(lambda: 0, name="zero")() == 0


# ----------------------------------------------------------------------------- Tool subclasses

def test_subclass_with_class_attributes_and_a_sync_run():
    search = WebSearch()
    assert (search.name, search.description, search.is_async) == ("web_search", "Search the web and return page titles.", False)
    assert [(p.name, p.description, p.required) for p in search.parameters] == \
        [("query", "搜索关键词", True), ("max_results", "最大结果数量", False)]
    assert search("cats", 2) == ["cats #0", "cats #1"]
    assert asyncio.run(search.acall({"query": "cats", "max_results": "1"})) == ["cats #0"]


def test_subclass_in_simplellmfunc_style_with_an_async_run():
    api = ApiCall("https://api.example.com")
    assert (api.name, api.description, api.is_async) == ("api_call", "调用外部 API 获取数据", True)
    assert list(api.json_schema["properties"]) == ["endpoint", "method"]  # no self
    assert asyncio.run(api.acall({"endpoint": "/v1/users"})) == "GET https://api.example.com/v1/users"


def test_subclass_defaults_name_from_the_class_and_description_from_run():
    class CurrencyRate(Tool):
        async def run(self, base: str, quote: str = "USD") -> float:
            """Latest exchange rate between two currencies."""
            return 7.1

    rate = CurrencyRate()
    assert (rate.name, rate.description) == ("currency_rate", "Latest exchange rate between two currencies.")


def test_a_tool_without_a_function_or_run_is_an_error():
    class Empty(Tool):
        pass
    with pytest.raises(TypeError, match="define run"):
        Empty()
    with pytest.raises(TypeError, match=r"pass an instance of WebSearch, e.g. WebSearch\(\)"):
        Tool.serialize_tools([WebSearch])


def test_tool_on_a_method_binds_to_the_instance():
    class Workspace:
        def __init__(self, root: str) -> None:
            self.root = root

        @tool
        def read(self, path: str) -> str:
            """Read a file in the workspace."""
            return f"{self.root}/{path}"

    ws = Workspace("/ws")
    assert ws.read("a.txt") == "/ws/a.txt"
    assert asyncio.run(ws.read.acall({"path": "b.txt"})) == "/ws/b.txt"
    assert ws.read.params_model is Workspace.read.params_model  # the schema is shared, not rebuilt
    assert list(Workspace.read.json_schema["properties"]) == ["path"]


# ----------------------------------------------------------------------------- wire format

def _chat_completion_tool_validator():
    """A validator for the spec's ChatCompletionTool (vendored subset first, then the shared spec)."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
    spec_path = next((p for p in SPEC_CANDIDATES if p.exists()), None)
    if spec_path is None:
        pytest.skip("the OpenAI OpenAPI description is not available")
    spec = json.loads(spec_path.read_text(encoding="utf-8"))
    registry = Registry().with_resource("urn:openai", Resource.from_contents(spec, default_specification=DRAFT202012))
    return Draft202012Validator({"type": "array", "items": {"$ref": "urn:openai#/components/schemas/ChatCompletionTool"}},
                                registry=registry)


def test_serialized_tools_validate_against_the_openai_spec():
    validator = _chat_completion_tool_validator()
    tools = [add, weather, WebSearch(), ApiCall("https://x"), describe_image]  # Tools and a plain function
    for strict in (None, True):
        serialized = Tool.serialize_tools(tools, strict=strict) if strict else Tool.serialize_tools(tools)
        assert [e.message for e in validator.iter_errors(serialized)] == []
    broken = Tool.serialize_tools([add])
    broken[0]["function"]["parameters"] = "not an object"
    assert list(validator.iter_errors(broken))  # the validator can fail


def test_a_serialized_request_passes_the_vendored_request_validator():
    openapi = Path(__file__).resolve().parent / "openapi"
    if not (openapi / "validate_openai_chat.py").exists():
        pytest.skip("tests/openapi is not there")
    sys.path.insert(0, str(openapi))
    import validate_openai_chat
    body = {"model": "practice", "messages": [{"role": "user", "content": "hi"}],
            "tools": Tool.serialize_tools([add, weather], strict=True), "tool_choice": "auto"}
    assert validate_openai_chat.errors_in_request(body, str(openapi / "chat_schemas.json")) == []


def test_to_openai_tool_has_the_chat_completions_shape():
    assert add.to_openai_tool() == {"type": "function", "function": {
        "name": "add", "description": "Add two integers.",
        "parameters": {"type": "object", "properties": {
            "a": {"type": "integer", "description": "The first"},
            "b": {"type": "integer", "description": "The second", "default": 1}}, "required": ["a"]}}}
    strict = add.to_openai_tool(strict=True)["function"]
    assert strict["strict"] is True and strict["parameters"]["required"] == ["a", "b"]
    assert strict["parameters"]["additionalProperties"] is False


def test_strict_decorator_makes_strict_the_default_and_it_can_be_switched_off():
    @tool(strict=True)
    def f(city: str, days: int = 1) -> str:
        """F."""
        return city
    assert f.to_openai_tool()["function"]["strict"] is True
    assert "strict" not in f.to_openai_tool(strict=False)["function"]
    assert Tool.serialize_tools([f], strict=False)[0]["function"]["parameters"] == f.json_schema


def test_serialize_tools_accepts_specs_and_refuses_duplicates_and_junk():
    spec = {"type": "function", "function": {"name": "raw", "parameters": {"type": "object", "properties": {}}}}
    assert Tool.serialize_tools([spec, add])[0] is spec
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Tool.serialize_tools([add, add])
    with pytest.raises(TypeError, match="not a tool or a function"):
        Tool.serialize_tools([42])


def test_the_wire_format_is_a_fresh_copy_and_the_cache_stays_intact():
    first = weather.to_openai_tool()
    first["function"]["parameters"]["properties"]["days"]["default"] = 99
    assert weather.to_openai_tool()["function"]["parameters"]["properties"]["days"]["default"] == 1
    assert json.loads(json.dumps(weather.to_openai_tool(strict=True))) == weather.to_openai_tool(strict=True)


# ----------------------------------------------------------------------------- caching

def test_the_model_and_schemas_are_built_once(monkeypatch):
    built, stricts = [], []
    real_create, real_strict = schema_module.create_model, strict_module.strict_schema
    monkeypatch.setattr(schema_module, "create_model", lambda *a, **k: built.append(a) or real_create(*a, **k))
    monkeypatch.setattr(strict_module, "strict_schema", lambda s: stricts.append(s) or real_strict(s))

    @tool
    def book(room: str, nights: int = 1) -> str:
        """Book a room."""
        return room

    model, schema = book.params_model, book.json_schema
    for _ in range(5):
        book.validate({"room": "101"})
        book.to_openai_tool()
        book.to_openai_tool(strict=True)
        Tool.serialize_tools([book])
        asyncio.run(book.acall({"room": "102"}))
    assert len(built) == 1 and len(stricts) == 1
    assert book.params_model is model and book.json_schema is schema
    assert book.strict_json_schema is book.strict_json_schema


# ----------------------------------------------------------------------------- guidance for the system prompt

def test_guidance_collects_best_practices_and_injected_text():
    text = tool_guidance([add, weather, WebSearch(), ApiCall("https://x")], context={"user": "Ada"})
    assert text == ("# How to use the tools\n\n"
                    "## get_weather\nAsk for the city if it is missing.\n\n"
                    "## web_search\nUse precise keywords; search at most twice.\n\n"
                    "## api_call\nThe API lives at https://x; the user is Ada.")


def test_guidance_is_empty_without_advice_and_builders_see_the_context():
    seen = []

    @tool(prompt_injection_builder=lambda context: seen.append(context) or "")
    def quiet(x: int) -> int:
        """Quiet."""
        return x

    assert tool_guidance([add, quiet], context="ctx") == "" and seen == ["ctx"]
    assert tool_guidance([]) == ""


# ----------------------------------------------------------------------------- validate, bind, call

def test_validate_is_lax_and_uses_the_defaults():
    model = add.validate({"a": "3", "b": None})
    assert (model.a, model.b) == (3, 1)
    assert weather.validate({"location": {"latitude": "39.9", "longitude": 116.4}}).location.latitude == 39.9


@pytest.mark.parametrize("arguments, error_type", [
    ({"a": "3.5"}, "int_parsing"),  # no silent truncation of a fractional string ...
    ({"a": 3.5}, "int_from_float"),  # ... nor of a float
    ({}, "missing"),
    ({"a": 1, "c": 2}, "extra_forbidden"),  # a misspelt name is reported, not ignored
    ({"a": None}, "int_type"),  # null for a required parameter is an error
    ("not a dict", "model_type"),
    (None, "model_type"),
])
def test_validate_reports_bad_arguments_as_pydantic_errors(arguments, error_type):
    with pytest.raises(ValidationError) as caught:
        add.validate(arguments)
    assert caught.value.errors()[0]["type"] == error_type
    assert caught.value.title == "add"  # the message names the tool


def test_numbers_as_strings_become_numbers():
    @tool
    def price(amount: float, quantity: int) -> float:
        """Total price."""
        return amount * quantity
    assert asyncio.run(price.acall({"amount": "3.5", "quantity": "2"})) == 7.0


def test_media_parameters_arrive_as_objects():
    t = tool(describe_image)
    assert asyncio.run(t.acall({"image": "photos/cat.png", "extra": ["https://x/y.png"], "caption": "hi"})) == \
        "ImgPath:cat.png, ['ImgUrl'], Text"
    assert describe_image(ImgPath("a.png")) == "ImgPath:a.png, [], Text"  # still a plain function too


def test_bind_passes_positional_only_parameters_positionally():
    @tool
    def scale(value: float, /, factor: float = 2.0, *, clamp: bool = False) -> float:
        """Scale a value."""
        return value * factor

    args, kwargs = scale.bind(scale.validate({"value": 3, "factor": "1.5"}))
    assert (args, kwargs) == ([3.0], {"factor": 1.5, "clamp": False})
    assert asyncio.run(scale.acall({"value": 2})) == 4.0


def test_bind_keeps_nested_models_and_handles_names_that_shadow_pydantic():
    @tool
    def run_query(schema: str, json: bool = False, copy: int = 0) -> str:
        """Run a query in a schema."""
        return f"{schema}:{json}:{copy}"
    args, kwargs = run_query.bind(run_query.validate({"schema": "public", "json": True}))
    assert kwargs == {"schema": "public", "json": True, "copy": 0}
    _, kwargs = weather.bind(weather.validate({"location": {"latitude": 1, "longitude": 2}}))
    assert isinstance(kwargs["location"], Location)


def test_acall_runs_sync_tools_in_a_thread_and_awaits_async_ones():
    threads = {}

    @tool
    def sync_tool(x: int) -> int:
        """Sync."""
        threads["sync"] = threading.current_thread()
        return x

    @tool
    async def async_tool(x: int) -> int:
        """Async."""
        threads["async"] = threading.current_thread()
        await asyncio.sleep(0)
        return x

    async def main() -> list[int]:
        return await asyncio.gather(sync_tool.acall({"x": 1}), async_tool.acall({"x": 2}))

    assert asyncio.run(main()) == [1, 2]
    assert threads["sync"] is not threading.main_thread() and threads["async"] is threading.main_thread()


def test_acall_validates_before_running():
    calls = []

    @tool
    def record(n: int) -> int:
        """Record."""
        calls.append(n)
        return n
    with pytest.raises(ArgumentsError, match="n: got \"many\""):
        asyncio.run(record.acall({"n": "many"}))
    assert calls == []


def test_acall_repairs_what_the_executor_repairs():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert asyncio.run(add.acall("{'a': '一百二十三', 'b': 4,}")) == 127


def test_chinese_docstring_examples_decorate_and_run():
    @tool(name="calculate", description="执行数学计算")
    async def calculate(expression: str) -> float:
        """返回计算结果（浮点数）"""
        return float(eval(expression, {"__builtins__": {}}))  # noqa: S307 (a test of decoration; numbers only)

    @tool(name="analyze_data", description="分析数据集")
    async def analyze_data(data: list[dict[str, Any]], analysis_type: str, include_charts: bool = False) -> dict[str, Any]:
        """对数据集进行统计分析"""
        return {"type": analysis_type, "record_count": len(data)}

    assert asyncio.run(calculate.acall({"expression": "25 * 4 + 18"})) == 118.0
    assert asyncio.run(analyze_data.acall({"data": [{"a": 1}, {"b": 2}], "analysis_type": "summary"})) == \
        {"type": "summary", "record_count": 2}
    assert [s["function"]["name"] for s in Tool.serialize_tools([calculate, analyze_data, weather])] == \
        ["calculate", "analyze_data", "get_weather"]


def test_the_examples_in_the_modules_docstrings_run():
    assert doctest.testmod(tools_module, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def test_copies_of_a_tool_share_the_cached_model():
    clone = copy.copy(add)
    assert clone.params_model is add.params_model and clone(1) == 2
