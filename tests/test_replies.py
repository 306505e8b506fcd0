"""Malformed replies: each is either repaired before anything runs, or a ProviderError naming what was sent."""
from __future__ import annotations

import json
import re
import threading

import pytest
from openai import OpenAI

from mini_framework import Agent, ProviderError, read_reply, tool
from practice_model import shared_server


@tool
def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city, e.g. 北京
    """
    return json.dumps({"北京": {"temperature": 22}, "上海": {"temperature": 25}}.get(city, {}), ensure_ascii=False)


def response(*tool_calls, content=None, usage=None) -> dict:
    message = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = list(tool_calls) if tool_calls != (None,) else None
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}
    if usage is not None:
        body["usage"] = usage
    return body


def weather_call(call_id, city="北京", arguments=None):
    args = json.dumps({"city": city}, ensure_ascii=False) if arguments is None else arguments
    return {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": args}}


def deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


REPAIRED = {
    "null entry": (response(None, weather_call("c1")), ["c1"]),
    "string entry": (response(json.dumps(weather_call("c1")), weather_call("c2", "上海")), ["c1", "c2"]),
    "function as a name": (response({"id": "c1", "function": "get_weather", "arguments": '{"city": "北京"}'}), ["c1"]),
    "function as JSON text": (response({"id": "c1", "function": json.dumps({"name": "get_weather",
                                                                          "arguments": '{"city":"北京"}'})}), ["c1"]),
    "flat entry": (response({"id": "c1", "name": "get_weather", "arguments": {"city": "北京"}}), ["c1"]),
    "arguments as object": (response(weather_call("c1", arguments={"city": "北京"})), ["c1"]),
    "null id": (response(weather_call(None), weather_call(None, "上海")), ["call_1_0", "call_1_1"]),
    "empty id": (response(weather_call(""), weather_call("  ", "上海")), ["call_1_0", "call_1_1"]),
    "duplicate ids": (response(weather_call("c1"), weather_call("c1", "上海")), ["c1", "call_1_1"]),
    "a single call, not a list": (response(weather_call("c1")) | {}, ["c1"]),
}
REPAIRED["a single call, not a list"][0]["choices"][0]["message"]["tool_calls"] = weather_call("c1")


@pytest.mark.parametrize("body,ids", REPAIRED.values(), ids=REPAIRED.keys())
def test_repairable_replies_are_repaired_with_unique_ids_and_text_arguments(body, ids):
    reply = read_reply(body, round_number=1)
    assert [c.id for c in reply.calls] == ids and all(c.name == "get_weather" for c in reply.calls)
    assert all(isinstance(c.arguments, str) and json.loads(c.arguments)["city"] for c in reply.calls)
    stored = reply.message["tool_calls"]
    assert [c["id"] for c in stored] == ids and all(isinstance(c["function"]["arguments"], str) for c in stored)


def test_ids_already_in_the_conversation_are_not_reused():
    reply = read_reply(response(weather_call("call_1")), taken_ids={"call_1"}, round_number=2)
    assert reply.calls[0].id == "call_2_0" and "the id 'call_1' again" in reply.repairs[0]


UNUSABLE = {
    "no choices": ({"choices": []}, "no choices"),
    "choices missing": ({"id": "x"}, "no choices"),
    "no message": ({"choices": [{"index": 0}]}, "no message"),
    "tool_calls a number": (response() | {"choices": [{"message": {"tool_calls": 7}}]}, "not a list"),
    "entry garbage text": (response("not a call"), "tool_calls[0] is not an object (it is a str)"),
    "entry a number": (response(42), "tool_calls[0] is not an object (it is an int)"),
    "arguments nested 100k deep": (response(weather_call("c1", arguments=deep(100_000))), "nested too deeply"),
}


@pytest.mark.parametrize("body,problem", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_unusable_replies_are_a_clear_error_that_quotes_them(body, problem):
    with pytest.raises(ProviderError, match=re.escape(problem)) as error:
        read_reply(body)
    assert "the provider sent" in str(error.value) and len(str(error.value)) < 600


@pytest.mark.parametrize("usage", [{"prompt_tokens": "many", "completion_tokens": None},
                                   {"prompt_tokens": [1], "completion_tokens": -3}, "lots", 17])
def test_usage_that_is_not_a_number_counts_zero(usage):
    reply = read_reply(response(content="hi", usage=usage))
    assert (reply.prompt_tokens, reply.completion_tokens) == (0, 0)


class FirstReplyFrom:
    """A client whose first reply is `body` (as a raw dict); later requests go to the practice model,
    which checks that every tool message answers a call of the stored assistant message."""

    def __init__(self, body):
        self.body, self.real = body, OpenAI(base_url=shared_server().base_url, api_key="practice", max_retries=0)
        self.chat = self.completions = self
        self.requests = 0

    def create(self, **params):
        self.requests += 1
        if self.requests == 1:
            return self.body
        return self.real.chat.completions.create(**params)


@pytest.mark.parametrize("body,ids", REPAIRED.values(), ids=REPAIRED.keys())
def test_a_repaired_reply_pairs_up_so_the_follow_up_request_is_accepted(body, ids):
    result = Agent(FirstReplyFrom(body), "practice", [get_weather]).run("北京和上海天气怎么样？")
    first_round = result.tool_results[:len(ids)]
    assert [r.call.id for r in first_round] == ids and all(r.ok for r in result.tool_results)
    assert result.text and "22" in result.text  # the practice model answered: no 400 for the pairing


@pytest.mark.parametrize("body,problem", UNUSABLE.values(), ids=UNUSABLE.keys())
def test_an_unusable_reply_stops_the_run_with_the_documented_error_and_runs_nothing(body, problem):
    ran = []

    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        ran.append(city)
        return "晴"

    with pytest.raises(ProviderError, match=re.escape(problem)):
        Agent(FirstReplyFrom(body), "practice", [get_weather]).run("北京天气？")
    assert ran == []


def test_a_reply_the_sdk_cannot_parse_for_depth_is_a_provider_error():
    class TooDeep:
        chat = completions = None

        def create(self, **params):
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON object")

    client = TooDeep()
    client.chat = client.completions = client
    with pytest.raises(ProviderError, match="nested too deeply"):
        Agent(client, "m", [get_weather]).run("q")


def test_reading_a_hostile_reply_never_hangs():
    body = response(*[weather_call(None, arguments=deep(50)) for _ in range(2000)])
    done = threading.Event()
    threading.Thread(target=lambda: (read_reply(body), done.set()), daemon=True).start()
    assert done.wait(10)


def test_a_reply_with_only_calls_is_stored_with_empty_text_not_null():
    # llama.cpp's server answers 500 to an assistant message with tool_calls and content null (or no content);
    # Ollama refuses null with a 400. OpenAI, DeepSeek and vLLM take "" as well.
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    for content in (None, "", []):
        stored = read_reply({"choices": [{"message": {"role": "assistant", "content": content,
                                                      "tool_calls": [call]}}]}).message
        assert stored["content"] == "" and stored["tool_calls"][0]["id"] == "call_1"
    said = read_reply({"choices": [{"message": {"role": "assistant", "content": "Let me check.", "tool_calls": [call]}}]})
    assert said.message["content"] == "Let me check."
    silent = read_reply({"choices": [{"message": {"role": "assistant", "content": None}}]})
    assert silent.message["content"] is None  # no calls: what was sent (an empty answer stays empty)
