"""Large requests are answered (or refused as the real API refuses them) with bounded work.

Nothing here measures time: machines are noisy. Instead each test checks that a cap exists by
construction, either by counting the work done, or by showing that the planner's answer to a
huge request is exactly its answer to the request cut down to what the planner reads. Timings
are reported by `python benchmarks/bench_practice.py --large` (a 15,000-parameter request took
58 s before these caps).
"""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from practice_model import PracticeServer, checks, filling, language, pitfalls, planning, schemas, situation
from practice_model.planner import analyse, plan
from practice_model.situation import MAX_CALLS_READ, MAX_RESULT_TEXT, MAX_TOOLS, READ_BUDGET


def tool(name: str, params: dict[str, Any], description: str = "", required: list[str] | None = None) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": params, "required": list(params) if required is None else required}}}


def ask(text: str, tools: list[dict], **extra: Any) -> dict:
    return {"model": "practice", "messages": [{"role": "user", "content": text}], "tools": tools, **extra}


def many_params(n: int) -> dict:
    """The issue's request: one tool with n required string parameters (15,000 of them: 578 KB)."""
    return ask("北京天气怎么样？", [tool("get_weather", {f"p{i}": {"type": "string"} for i in range(n)})])


def count_calls(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count calls of module.name (recursive calls through the module global are counted too)."""
    counter = [0]
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return counter


# -----------------------------------------------------------------------------
# refused as the real API refuses: more than 128 tools


def test_more_than_128_tools_get_the_real_apis_error(server, api):
    tools = [tool(f"t{i}", {"city": {"type": "string"}}) for i in range(129)]
    raw = api.post(server, {**ask("北京天气", tools), "model": "scripted"})
    api.assert_error(raw, 400, "Invalid 'tools': array too long. Expected an array with maximum length 128, but got "
                     "an array with length 129 instead.", param="tools", code="array_above_max_length")
    assert api.post(server, {**ask("北京天气", tools[:128]), "model": "scripted"}).status == 200
    assert checks.MAX_TOOLS == MAX_TOOLS == 128


# -----------------------------------------------------------------------------
# answered: the planner reads a bounded part of any request


def test_15000_parameters_are_answered_from_the_first_max_params():
    huge = many_params(15_000)
    assert len(json.dumps(huge)) > 500_000
    read = analyse(huge).tools[0]
    assert len(read.params) == schemas.MAX_PARAMS
    assert plan(huge) == plan(many_params(schemas.MAX_PARAMS))
    reply = plan(huge).content
    assert reply.startswith("要调用 get_weather，我还需要知道：p0、") and reply.count("、") == filling_listed() - 1
    assert "等" in reply and "p15000" not in reply and len(reply) < 200


def filling_listed() -> int:
    from practice_model.answers import LISTED

    return LISTED


def test_the_server_answers_the_15000_parameter_request(api):
    with PracticeServer() as server:
        refused = api.post(server, many_params(15_000))             # about 150,000 tokens of tools
        raw = api.post(server, {**many_params(15_000), "model": "practice@ctx=1000000"})
    assert refused.status == 400 and refused.json()["error"]["code"] == "context_length_exceeded"
    assert raw.status == 200 and api.response_problems(raw.json()) == []
    assert "get_weather" in raw.json()["choices"][0]["message"]["content"]


def test_bodies_over_the_limit_are_refused_before_any_planning(api):
    with PracticeServer(max_body_bytes=100_000) as server:
        raw = api.post(server, many_params(15_000))
    assert raw.status == 413


def test_the_tools_read_stop_at_max_tools_and_the_read_budget():
    tiny = [tool(f"t{i}", {"city": {"type": "string"}}) for i in range(1000)]
    assert len(analyse(ask("北京天气", tiny)).tools) == MAX_TOOLS
    wordy = [tool(f"get_weather_{i}", {f"city{j}": {"type": "string", "description": "城市 " * 1000}
                                        for j in range(64)}, "查询天气 " * 1000) for i in range(128)]
    tools = analyse(ask("北京天气", wordy)).tools
    assert 0 < len(tools) < 128
    one_param = situation.PARAM_COST + 6 + language.MAX_TEXT
    assert READ_BUDGET <= sum(t.cost for t in tools) <= READ_BUDGET + situation.TOOL_COST + 20 + language.MAX_TEXT + one_param
    cut = copy.deepcopy(wordy[:len(tools)])
    last = cut[-1]["function"]["parameters"]
    last["properties"] = dict(list(last["properties"].items())[:len(tools[-1].params)])
    assert plan(ask("北京天气", wordy)) == plan(ask("北京天气", cut))


def test_long_texts_are_read_up_to_max_text():
    long = "天气 weather " * 100_000
    huge = ask("北京天气", [tool("get_weather", {"city": {"type": "string", "description": long}}, long)])
    read = analyse(huge).tools[0]
    assert len(read.description) == len(read.params[0].description) == language.MAX_TEXT
    cut = ask("北京天气", [tool("get_weather", {"city": {"type": "string", "description": long[:language.MAX_TEXT]}},
                              long[:language.MAX_TEXT])])
    assert plan(huge) == plan(cut)
    question = "北京天气 " + "x" * 1_000_000
    assert analyse(ask(question, [])).request.text == question[:language.MAX_TEXT]


def test_enums_are_read_up_to_max_enum():
    members = [f"v{i}" for i in range(100_000)]
    huge = ask("用 v3 查北京天气", [tool("get_weather", {"city": {"type": "string"}, "mode": {"enum": members}})])
    assert len(analyse(huge).tools[0].params[1].schema["enum"]) == schemas.MAX_ENUM
    cut = ask("用 v3 查北京天气", [tool("get_weather", {"city": {"type": "string"},
                                                     "mode": {"enum": members[:schemas.MAX_ENUM]}})])
    assert plan(huge) == plan(cut) and json.loads(plan(huge).tool_calls[0].arguments)["mode"] == "v3"


def test_a_message_keeps_its_first_max_entities():
    numbers = " ".join(str(i) for i in range(500))
    reading = analyse(ask(f"把这些数加起来：{numbers}", [])).request
    assert len(reading.entities) == language.MAX_ENTITIES
    assert [e.value for e in reading.entities] == list(range(language.MAX_ENTITIES))


def test_only_the_last_calls_of_a_turn_are_read():
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "get_weather",
              "arguments": json.dumps({"city": f"city{i}"})}} for i in range(10_000)]
    answers = [{"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"t": i})} for i in range(10_000)]
    request = {"model": "practice", "tools": [tool("get_weather", {"city": {"type": "string"}})], "messages": [
        {"role": "user", "content": "北京天气"}, {"role": "assistant", "content": None, "tool_calls": calls}, *answers]}
    s = analyse(request)
    assert s.rounds == 1 and len(s.calls) == MAX_CALLS_READ
    assert s.calls[0].arguments == {"city": f"city{10_000 - MAX_CALLS_READ}"} and s.calls[-1].result == {"t": 9_999}
    checks.check_tool_pairing(request["messages"])              # linear: 10,000 ids are paired at once


def test_a_huge_result_is_searched_and_quoted_only_near_its_start():
    text = "nothing to see " * 300_000 + "user_id: 42"
    assert len(pitfalls.flatten({"error": text})) == MAX_RESULT_TEXT
    request = {"model": "practice", "tools": [
        tool("get_user", {"name": {"type": "string"}}, "查询用户"), tool("get_orders", {"user_id": {"type": "integer"}},
                                                                     "查询用户订单")], "messages": [
        {"role": "user", "content": "张三的订单"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "get_user", "arguments": '{"name":"张三"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": text}]}
    reply = plan(request)
    assert not reply.tool_calls                                  # user_id is past MAX_RESULT_TEXT: not found
    assert len(reply.content) < 500
    near = copy.deepcopy(request)
    near["messages"][-1]["content"] = "user_id: 42 " + text
    assert json.loads(plan(near).tool_calls[0].arguments) == {"user_id": 42}


# -----------------------------------------------------------------------------
# counted: the work per request is bounded whatever the schema's shape


def test_resolving_a_ref_bomb_takes_at_most_max_steps(monkeypatch):
    width = 10                                      # followed naively: 10 ** 12 visits
    defs = {f"D{d}": {"anyOf": [{"$ref": f"#/$defs/D{d + 1}"}] * width,
                      "allOf": [{"$ref": f"#/$defs/D{d + 1}"}] * width} for d in range(12)}
    root = {"$defs": defs, "type": "object", "properties": {"city": {"$ref": "#/$defs/D0"}}, "required": ["city"]}
    visits = count_calls(monkeypatch, schemas, "_resolve")
    schemas.resolve({"$ref": "#/$defs/D0"}, root)
    assert schemas.MAX_STEPS <= visits[0] <= 3 * schemas.MAX_STEPS   # a visit past the last step returns at once
    assert plan(ask("北京天气", [{"type": "function", "function": {"name": "get_weather", "parameters": root}}]))


def test_filling_a_tool_tries_at_most_max_fills_values(monkeypatch):
    leaf: dict[str, Any] = {"type": "string", "description": "city"}
    for _ in range(5):                                          # 8 ** 5 required leaves
        leaf = {"type": "object", "properties": {f"k{i}": leaf for i in range(8)}, "required": [f"k{i}" for i in range(8)]}
    fills = count_calls(monkeypatch, filling, "_fill")
    reply = plan(ask("北京和上海天气", [tool("get_weather", {"where": leaf})]))
    assert 0 < fills[0] <= filling.MAX_FILLS and reply.content


def test_each_tool_is_filled_once_per_request_and_chains_are_bounded(monkeypatch):
    # 100 tools that each need an input another one could produce: chaining could explode combinatorially
    tools = [tool(f"get_thing{i}", {f"thing{(i + 1) % 100}_id": {"type": "string"}, f"x{i}": {"type": "string"}},
                  f"查询 thing{i} thing{(i + 1) % 100}") for i in range(100)]
    fills = count_calls(monkeypatch, filling, "_fill_arguments")
    expansions = count_calls(monkeypatch, planning, "_plan_tool")
    reply = plan(ask("查询 thing3", tools))
    assert reply.content or reply.tool_calls
    assert fills[0] <= len(tools) and expansions[0] <= planning.MAX_EXPANSIONS + len(tools)


def test_many_missing_parameters_are_listed_briefly():
    params = {f"param_{i}": {"type": "string", "description": "一段很长的说明。" * 100} for i in range(50)}
    reply = plan(ask("明天天气怎么样？", [tool("get_weather", params, "查询天气")])).content
    assert reply.count("param_") == filling_listed() and "等" in reply and len(reply) < 1500


# -----------------------------------------------------------------------------
# the newer readers: secrets in the rest of the conversation, response_format schemas


def test_secrets_are_read_from_the_latest_max_context_messages_only():
    system = [{"role": "system", "content": f"API key {i}: sk-{i:08d}abcdef"} for i in range(5_000)]
    request = {"model": "practice", "messages": [*system, {"role": "user", "content": "我的账户余额是多少？"}],
               "tools": [tool("get_balance", {"api_key": {"type": "string"}}, "查询账户余额")]}
    s = analyse(request)
    assert len(s.context) == situation.MAX_CONTEXT == 16
    assert plan(request) == plan({**request, "messages": request["messages"][-situation.MAX_CONTEXT - 1:]})
    assert json.loads(plan(request).tool_calls[0].arguments) == {"api_key": f"sk-{5_000 - 16:08d}abcdef"}


def test_a_strict_schema_is_checked_and_filled_within_its_caps(monkeypatch):
    from practice_model import structured

    schema: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "minItems": 50}
    for _ in range(5):
        schema = {"type": "object", "additionalProperties": False, "required": [f"k{i}" for i in range(8)],
                  "properties": {f"k{i}": schema for i in range(8)}}
    request = ask("北京天气，用 JSON 回答", [], response_format={"type": "json_schema", "json_schema": {
        "name": "bomb", "strict": True, "schema": schema}})
    checks.check_response_format(request)                      # 8**5 objects: the check stops at its cap
    resolved = count_calls(monkeypatch, structured, "resolve")
    structured.document(request, "ok")
    assert resolved[0] <= 2 * structured.MAX_NODES + 2                  # each build, and each array's items
