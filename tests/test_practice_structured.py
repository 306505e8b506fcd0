"""`response_format`: refused with the real API's 400s where it refuses, otherwise answered with JSON that
validates against the schema (checked with `jsonschema`), built from the tool results and the request."""
from __future__ import annotations

import json
import time
from typing import Any, Literal

import jsonschema
import pytest
from openai import OpenAI
from pydantic import BaseModel

from practice_model import PracticeServer, Reply
from practice_model.checks import check_response_format
from practice_model.personas import DEFAULT_PERSONAS
from practice_model.planner import plan
from practice_model.structured import document, structured

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "查询指定城市当前的天气",
           "parameters": {"type": "object", "required": ["city"], "properties": {
               "city": {"type": "string", "description": "城市名称"}}}}}
READING = {"北京": {"temperature": 22, "condition": "晴", "wind": "东北风3级"},
           "上海": {"temperature": 25, "condition": "多云", "wind": "东南风2级"}}


def strict(name: str, properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A strict json_schema response_format over these properties (all required, object closed)."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": {
        "type": "object", "additionalProperties": False, "required": list(properties), "properties": properties,
        **extra}}}


def chat(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "practice", "messages": [{"role": "user", "content": text}], **extra}


def answered(question: str, response_format: dict, tools: list | None = None) -> tuple[dict, list]:
    """Run the practice persona with weather results until it answers; return the parsed JSON and the rounds."""
    respond = structured(plan)
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    rounds = []
    for _ in range(4):
        request = {"model": "practice", "messages": messages, "response_format": response_format,
                   **({"tools": tools} if tools else {})}
        reply = respond(request)
        if not reply.tool_calls:
            return json.loads(reply.content or ""), rounds
        rounds.append([(c.name, json.loads(c.arguments)) for c in reply.tool_calls])
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{len(rounds)}_{i}", "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(reply.tool_calls)]})
        for i, c in enumerate(reply.tool_calls):
            city = json.loads(c.arguments)["city"]
            messages.append({"role": "tool", "tool_call_id": f"c{len(rounds)}_{i}",
                             "content": json.dumps(READING.get(city, {"error": "没有数据"}), ensure_ascii=False)})
    raise AssertionError("no answer")


# -----------------------------------------------------------------------------
# the real API's refusals


TYPES = "Invalid value: 'xml'. Supported values are: 'json_object', 'json_schema', and 'text'."
NO_JSON_WORD = "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."
OPEN_ROOT = "Invalid schema for response_format 'w': In context=(), 'additionalProperties' is required to be " \
            "supplied and to be false."
OPEN_NESTED = ("Invalid schema for response_format 'w': In context=('properties', 'place'), 'additionalProperties' "
               "is required to be supplied and to be false.")
NOT_ALL_REQUIRED = ("Invalid schema for response_format 'w': In context=('properties', 'days', 'items'), 'required' "
                    "is required to be supplied and to be an array including every key in properties. Missing 'high'.")
ARRAY_ROOT = "Invalid schema for response_format 'w': schema must be a JSON Schema of 'type: \"object\"', got " \
             "'type: \"array\"'."
NESTED_OPEN = {"place": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
DAYS = {"days": {"type": "array", "items": {"type": "object", "additionalProperties": False, "required": ["low"],
                                             "properties": {"low": {"type": "number"}, "high": {"type": "number"}}}}}


@pytest.mark.parametrize("response_format,text,param,code,message", [
    ({"type": "xml"}, "hi", "response_format.type", "invalid_value", TYPES),
    ({}, "hi", "response_format.type", "missing_required_parameter", "Missing required parameter: 'response_format.type'."),
    ({"type": "json_object"}, "北京天气", "messages", None, NO_JSON_WORD),
    ({"type": "json_schema"}, "hi", "response_format.json_schema", "missing_required_parameter",
     "Missing required parameter: 'response_format.json_schema'."),
    ({"type": "json_schema", "json_schema": {"schema": {}}}, "hi", "response_format.json_schema.name",
     "missing_required_parameter", "Missing required parameter: 'response_format.json_schema.name'."),
    ({"type": "json_schema", "json_schema": {"name": "w", "strict": True, "schema": {
        "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}}, "hi", "response_format", None,
     OPEN_ROOT),
    (strict("w", NESTED_OPEN), "hi", "response_format", None, OPEN_NESTED),
    (strict("w", DAYS), "hi", "response_format", None, NOT_ALL_REQUIRED),
    ({"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "array", "items": {"type": "string"}}}},
     "hi", "response_format", None, ARRAY_ROOT),
])
def test_a_response_format_the_api_refuses_gets_its_400(server, api, response_format, text, param, code, message):
    raw = api.post(server, {"model": "scripted", "messages": [{"role": "user", "content": text}],
                            "response_format": response_format})
    api.assert_error(raw, 400, message, param=param, code=code)


def test_what_the_api_accepts_is_accepted(server, api):
    for response_format in [{"type": "text"}, {"type": "json_object"},
                            {"type": "json_schema", "json_schema": {"name": "loose", "schema": {       # not strict:
                                "type": "object", "properties": {"a": {"type": "string"}}}}},      # open is fine
                            strict("w", {"a": {"type": "string"}})]:
        raw = api.post(server, {"model": "scripted", "messages": [{"role": "user", "content": "JSON please"}],
                                "response_format": response_format})
        assert raw.status == 200, raw.body


def test_checking_and_building_are_bounded_whatever_the_schema():
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(3000):
        deep = {"type": "object", "additionalProperties": False, "required": ["x"], "properties": {"x": deep}}
    wide = strict("wide", {f"p{i}": {"type": "array", "items": {"type": "string"}, "minItems": 1000}
                           for i in range(5000)})
    start = time.perf_counter()
    for response_format in [{"type": "json_schema", "json_schema": {"name": "deep", "strict": True, "schema": deep}},
                            wide]:
        request = chat("json", response_format=response_format)
        check_response_format(request)
        assert json.loads(document(request, "ok"))
    assert time.perf_counter() - start < 30  # a hang detector, not a benchmark: unbounded work would take minutes


# -----------------------------------------------------------------------------
# documents that validate against the schema


class Weather(BaseModel):
    city: str
    temperature: float
    condition: str
    summary: str


class Comparison(BaseModel):
    cities: list[str]
    warmer: Literal["北京", "上海"]
    verdict: Literal["warm", "cold", "unknown"]


class Day(BaseModel):
    city: str
    temperature: int
    wind: str | None


class Report(BaseModel):
    days: list[Day]
    answer: str
    confident: bool


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The strict response_format the OpenAI SDK sends for a Pydantic model."""
    from openai.lib._parsing._completions import type_to_response_format_param

    return dict(type_to_response_format_param(model))   # type: ignore[arg-type]


def test_the_answer_is_a_document_built_from_the_tool_results():
    data, rounds = answered("北京天气怎么样？请用 JSON 回答", schema_of(Weather), [WEATHER])
    assert rounds == [[("get_weather", {"city": "北京"})]]                  # tool calls are not affected
    assert data == {"city": "北京", "temperature": 22, "condition": "晴", "summary": "北京：温度 22，天气 晴，风力 东北风3级。"}


def test_arrays_of_objects_get_one_item_per_result_and_nulls_where_allowed():
    data, rounds = answered("北京和上海的天气，JSON", schema_of(Report), [WEATHER])
    assert [name for name, _ in rounds[0]] == ["get_weather", "get_weather"]
    assert data["days"] == [{"city": "北京", "temperature": 22, "wind": "东北风3级"},
                            {"city": "上海", "temperature": 25, "wind": "东南风2级"}]
    assert data["answer"].startswith("结果如下") and data["confident"] is False


def test_without_results_values_come_from_the_request_and_the_enum():
    data, _ = answered("北京和上海哪个更暖和？用 json", schema_of(Comparison))
    assert data == {"cities": ["北京", "上海"], "warmer": "北京", "verdict": "warm"}


@pytest.mark.parametrize("question,model,tools", [
    ("北京天气怎么样？JSON", Weather, [WEATHER]), ("北京和上海的天气，JSON", Report, [WEATHER]),
    ("What's the weather in Paris? JSON", Report, [WEATHER]), ("讲个笑话 json", Comparison, None),
    ("hi json", Weather, None), ("北京和上海哪个更暖和？json", Comparison, [WEATHER]),
])
def test_every_document_validates_against_its_schema(question, model, tools):
    response_format = schema_of(model)
    data, _ = answered(question, response_format, tools)
    jsonschema.validate(data, response_format["json_schema"]["schema"])
    model.model_validate(data)


def test_hand_written_schemas_with_refs_bounds_and_nullables_validate():
    schema = {"type": "object", "additionalProperties": False,
              "required": ["place", "temperature", "level", "tags", "note", "code"],
              "$defs": {"Place": {"type": "object", "additionalProperties": False, "required": ["city", "country"],
                                  "properties": {"city": {"type": "string"}, "country": {"type": ["string", "null"]}}}},
              "properties": {"place": {"$ref": "#/$defs/Place"},
                             "temperature": {"type": "integer", "minimum": 30, "maximum": 40},
                             "level": {"type": "string", "enum": ["low", "high"]},
                             "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 3},
                             "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                             "code": {"type": "string", "const": "W1", "minLength": 2}}}
    response_format = {"type": "json_schema", "json_schema": {"name": "w", "strict": True, "schema": schema}}
    data, _ = answered("上海天气 json", response_format, [WEATHER])
    jsonschema.validate(data, schema)
    assert data["place"] == {"city": "上海", "country": None} and data["temperature"] == 30 and data["code"] == "W1"


def test_json_object_gives_the_facts_as_one_object():
    data, _ = answered("北京天气怎么样？用 JSON 回答", {"type": "json_object"}, [WEATHER])
    assert data == {"city": "北京", "temperature": 22, "condition": "晴", "wind": "东北风3级"}
    several, _ = answered("北京和上海的天气 JSON", {"type": "json_object"}, [WEATHER])
    assert several == {"results": [{"city": "北京", **READING["北京"]}, {"city": "上海", **READING["上海"]}]}
    plain, _ = answered("hello, answer in JSON", {"type": "json_object"})
    assert list(plain) == ["answer"] and plain["answer"].startswith("I'm the offline practice model")


def test_the_same_request_gives_the_same_document():
    request = chat("北京和上海哪个更暖和？json", response_format=schema_of(Comparison))
    assert structured(plan)(request) == structured(plan)(json.loads(json.dumps(request)))


# -----------------------------------------------------------------------------
# on the wire, with the SDK


def test_the_sdk_parses_the_answer_into_the_model():
    with PracticeServer() as practice, OpenAI(base_url=practice.base_url, api_key="practice") as client:
        parsed = client.chat.completions.parse(model="practice", response_format=Comparison,
                                               messages=[{"role": "user", "content": "北京和上海哪个更暖和？"}])
        streamed = client.chat.completions.create(model="practice", stream=True, response_format=schema_of(Comparison),
                                                  messages=[{"role": "user", "content": "北京和上海哪个更暖和？"}])
        text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
    assert parsed.choices[0].message.parsed == Comparison(cities=["北京", "上海"], warmer="北京", verdict="warm")
    assert json.loads(text) == json.loads(parsed.choices[0].message.content or "")


def test_every_built_in_persona_answers_in_json():
    for name in ["practice", "practice-loop", "practice-sloppy", "practice-hallucinate"]:
        responder = DEFAULT_PERSONAS[name].build()
        reply = responder(chat("hi, in json", response_format={"type": "json_object"}))
        assert isinstance(reply, Reply) and list(json.loads(reply.content or "")) == ["answer"], name


def test_a_bug_while_shaping_keeps_the_answer(monkeypatch, caplog):
    from practice_model import structured as module

    def boom(request, text):
        raise KeyError("bug")

    monkeypatch.setattr(module, "document", boom)
    reply = structured(plan)(chat("hi json", response_format={"type": "json_object"}))
    assert json.loads(reply.content or "") == {"answer": plan(chat("hi json")).content}
    assert any("could not shape" in r.getMessage() for r in caplog.records)


# -----------------------------------------------------------------------------
# json_schema alongside tools, over the wire, with the framework's Agent (what @llm_function(tools=...) sends)


@pytest.mark.parametrize("model", ["practice", "practice-sloppy", "practice-hallucinate", "practice@ollama"])
@pytest.mark.parametrize("stream", [False, True])
def test_with_tools_offered_the_calls_pass_through_and_the_final_answer_validates(model, stream):
    from mini_framework import Agent, tool

    @tool
    def get_weather(city: str) -> dict:
        """查询指定城市当前的天气"""
        return {"city": city, **READING.get(city, {"temperature": 18, "condition": "晴", "wind": "无风"})}

    with PracticeServer() as practice, OpenAI(base_url=practice.base_url, api_key="practice") as client:
        agent = Agent(client, model, [get_weather], response_format=schema_of(Report), stream=stream)
        result = agent.run("北京和上海现在的天气怎么样？")
    assert {r.call.name for r in result.tool_results if r.ok} == {"get_weather"}  # the calls ran, then the answer
    replies = [m for m in result.messages if m["role"] == "assistant"]
    assert all(m.get("tool_calls") for m in replies[:-1]) and not replies[-1].get("tool_calls")
    report = Report.model_validate_json(result.text or "")
    assert {d.city: d.temperature for d in report.days} == {"北京": 22, "上海": 25}


def test_a_correction_turn_reads_the_request_and_the_calls_before_it():
    first = [{"role": "user", "content": "北京天气怎么样？"},
             {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
                 "name": "get_weather", "arguments": '{"city": "北京"}'}}]},
             {"role": "tool", "tool_call_id": "c1", "content": json.dumps(READING["北京"], ensure_ascii=False)},
             {"role": "assistant", "content": "北京：22 度"},
             {"role": "user", "content": "Your answer could not be used: not JSON. Answer again, with only the JSON."}]
    request = {"model": "practice", "messages": first, "tools": [WEATHER], "response_format": schema_of(Weather)}
    reply = structured(plan)(request)
    assert not reply.tool_calls
    assert Weather.model_validate_json(reply.content or "").temperature == 22
    number = chat("Write 一百二十三 as digits.")["messages"] + [
        {"role": "assistant", "content": '{"value": "many"}'},
        {"role": "user", "content": 'value: Input should be a valid integer (got "many"). Answer again.'}]
    wrapped = strict("n", {"value": {"type": "integer"}})
    assert json.loads(document({"messages": number, "response_format": wrapped}, "")) == {"value": 123}
    follow_up = chat("北京天气 json")["messages"] + [{"role": "assistant", "content": "晴"},
                                                  {"role": "user", "content": "上海呢？json"}]
    city = strict("c", {"city": {"type": "string"}})
    assert json.loads(document({"messages": follow_up, "response_format": city}, "")) == {"city": "上海"}


def test_json_object_follows_a_schema_written_in_the_system_prompt():
    schema = {"type": "object", "properties": {"value": {"type": "integer"}}, "required": ["value"]}
    messages = [{"role": "system", "content": f"Answer with one JSON object matching this JSON schema:\n"
                                              f"{json.dumps(schema)}"},
                {"role": "user", "content": "Write 一百二十三 as digits."}]
    assert json.loads(document({"messages": messages, "response_format": {"type": "json_object"}}, "")) == {
        "value": 123}
    messages[0]["content"] = "Answer in JSON. Example: {not a schema} {\"a\": 1}"
    assert list(json.loads(document({"messages": messages, "response_format": {"type": "json_object"}}, "x"))) == [
        "answer"]
