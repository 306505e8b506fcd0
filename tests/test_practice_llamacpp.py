"""`practice@llamacpp`: llama.cpp's OpenAI server (llama-cpp-python, chatml-function-calling) with a small model,
as recorded against gemma-3-270m (practice_model/llamacpp.py, and its row in quirks.py). What the default suite
knows of the real model the README's "A real model, offline" starts: what it refuses, when it calls a tool, and
how its answers look on the wire, and that the framework gets through it.
"""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from openai import InternalServerError, OpenAI
from test_practice_quirks import TWO_CALLS, WEATHER, body_of, chunks_of, post

from mini_framework import Agent, tool
from mini_framework.replies import read_reply
from mini_framework.streaming.assembler import assemble
from practice_model import PracticeServer

FORCE = {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}
MODEL = "practice@llamacpp"


@pytest.fixture(scope="module")
def server() -> Iterator[PracticeServer]:
    with PracticeServer() as practice:
        yield practice


def history(content: object, *, with_content: bool = True) -> list[dict]:
    assistant = {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]}
    if with_content:
        assistant["content"] = content
    return [*TWO_CALLS, assistant, {"role": "tool", "tool_call_id": "call_1", "content": '{"temperature": 22}'}]


def test_content_null_or_absent_beside_tool_calls_is_a_500_and_empty_text_is_taken(server):
    for messages in (history(None), history(None, with_content=False)):
        status, raw = post(server, {"model": MODEL, "messages": messages, "tools": [WEATHER]})
        error = json.loads(raw)["error"]
        assert status == 500 and error["type"] == "internal_server_error" and error["message"], raw
    status, _ = post(server, {"model": MODEL, "messages": history(""), "tools": [WEATHER]})
    assert status == 200
    status, _ = post(server, {"model": "practice", "messages": history(None), "tools": [WEATHER]})
    assert status == 200  # OpenAI's shape: without the flag, null is fine


def test_required_is_a_500_and_auto_gets_words_not_a_call(server):
    status, raw = post(server, {"model": MODEL, "messages": TWO_CALLS, "tools": [WEATHER], "tool_choice": "required"})
    assert status == 500 and json.loads(raw)["error"]["message"] == ""
    for extra in ({}, {"tool_choice": "auto"}):
        message = body_of(server, MODEL, TWO_CALLS, **extra)["choices"][0]["message"]
        assert message["content"] == "" and not message.get("tool_calls"), extra
    plain = body_of(server, "practice", TWO_CALLS)["choices"][0]["message"]
    assert len(plain["tool_calls"]) == 2  # the unflagged persona calls both cities


def test_a_forced_call_comes_once_in_llamacpps_shape(server):
    body = body_of(server, MODEL, TWO_CALLS, **FORCE)
    choice = body["choices"][0]
    message = choice["message"]
    [call] = message["tool_calls"]
    assert choice["finish_reason"] == "tool_calls" and message["content"] is None
    assert call["id"] == f"call__0_get_weather_cmpl-{body['id'].removeprefix('chatcmpl-')}"
    assert call["function"] == {"name": "get_weather", "arguments": '{ "city" : "北京" } '}
    assert message["function_call"] == call["function"]  # the legacy field beside it
    assert json.loads(call["function"]["arguments"]) == {"city": "北京"}


def test_a_forced_streamed_call_repeats_its_id_and_name_and_sends_no_usage(server):
    chunks = chunks_of(server, MODEL, TWO_CALLS, **FORCE)
    calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls") or []]
    assert len(calls) > 1 and len({c["id"] for c in calls}) == 1 and {c["function"]["name"] for c in calls} == {"get_weather"}
    assert all(chunk["choices"] for chunk in chunks)  # include_usage was asked for: llama.cpp sends none
    stored = read_reply(assemble(chunks)).message
    assert json.loads(stored["tool_calls"][0]["function"]["arguments"]) == {"city": "北京"}


def test_the_cut_flag_has_no_effect_here(server):
    message = body_of(server, MODEL + "@cut", TWO_CALLS, **FORCE)["choices"][0]
    assert message["finish_reason"] == "tool_calls"  # its grammar writes the arguments whole


@tool
def get_weather(city: str) -> str:
    """Weather of a city.

    Args:
        city: the city, e.g. 北京
    """
    return json.dumps({"city": city, "temperature": 22}, ensure_ascii=False)


def test_the_agent_gets_through_a_forced_first_call_and_answers(server):
    client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    forced = Agent(client, MODEL, [get_weather], max_iterations=2, **FORCE)
    result = forced.run("北京现在天气怎么样？")  # forced every time: llama.cpp would call again and again
    assert result.capped and all(r.call.name == "get_weather" for r in result.tool_results)
    assert all(m.get("content") == "" for m in result.messages if m.get("tool_calls"))  # sent back as "": no 500
    free = Agent(client, MODEL, [get_weather]).run("北京现在天气怎么样？")
    assert free.text == "" and not free.tool_results  # "auto": the small model answers in words


def test_the_raw_sdk_message_sent_back_as_it_came_is_the_500(server):
    client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    first = client.chat.completions.create(model=MODEL, messages=TWO_CALLS, tools=[WEATHER], **FORCE)
    message = first.choices[0].message
    assert message.content is None
    call = message.tool_calls[0]
    again = [*TWO_CALLS, message.model_dump(exclude_none=True),
             {"role": "tool", "tool_call_id": call.id, "content": "22"}]
    with pytest.raises(InternalServerError):
        client.chat.completions.create(model=MODEL, messages=again, tools=[WEATHER])
    again[1] = {**again[1], "content": ""}
    assert client.chat.completions.create(model=MODEL, messages=again, tools=[WEATHER]).choices[0].message.content == ""
