"""Provider quirk flags of the practice model (practice_model/quirks.py): each one's deviation is on the
wire, breaks the naive reading the lesson shows, and `streaming.Assembler` (default QUIRKS) puts back the message the
unflagged model sends without streaming.

How messages are compared: both sides go through `replies.read_reply` (the message an agent stores). Ids are
compared too, except where the flag is about ids: `@kimi` (compared with `@kimi`'s own non-streamed ids) and `@vllm`
(the stream has none: `read_reply` numbers them, so ids are left out of that comparison). Under `@ollama` the
arguments are compared as JSON values: an object has no spelling, and the assembler writes it back with its own.
"""
from __future__ import annotations

import copy
import http.client
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from course.sse import read_sse
from mini_framework import Agent, tool
from mini_framework.replies import read_reply
from mini_framework.streaming.assembler import Assembler, StreamError, assemble, complete
from practice_model import PracticeServer, providers, quirks

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
TWO_CALLS = [{"role": "user", "content": "北京和上海天气怎么样？"}]
TEXT = [{"role": "user", "content": "你好，请用一句话介绍你自己。"}]
PROVIDERS = list(providers.QUIRKS)
SAME_ANSWER = [q for q in PROVIDERS if q != "llamacpp"]  # @llamacpp also changes what is answered (its own tests)


@pytest.fixture(scope="module")
def server() -> Iterator[PracticeServer]:
    with PracticeServer() as practice:
        yield practice


def post(server: PracticeServer, body: dict[str, Any]) -> tuple[int, bytes]:
    """POST a chat request over http.client; the status and the raw body, read in small blocks."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body, ensure_ascii=False).encode(),
                     {"Content-Type": "application/json"})
        response = conn.getresponse()
        blocks = iter(lambda: response.read(97), b"")  # an odd block size: events and characters split anywhere
        return response.status, b"".join(blocks)
    finally:
        conn.close()


def chunks_of(server: PracticeServer, model: str, messages: list[dict[str, Any]], **extra: Any) -> list[dict]:
    """The raw chunks of a streamed answer, read with course.sse.read_sse."""
    status, raw = post(server, {"model": model, "messages": messages, "tools": [WEATHER], "stream": True,
                                "stream_options": {"include_usage": True}, **extra})
    assert status == 200, raw[:300]
    return list(read_sse([raw[i:i + 61] for i in range(0, len(raw), 61)]))


def body_of(server: PracticeServer, model: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The non-streamed answer."""
    status, raw = post(server, {"model": model, "messages": messages, "tools": [WEATHER], **extra})
    assert status == 200, raw[:300]
    return json.loads(raw)


def deltas(chunks: list[dict]) -> list[dict]:
    return [c["choices"][0]["delta"] for c in chunks if c["choices"]]


def call_deltas(chunks: list[dict]) -> list[dict]:
    return [call for delta in deltas(chunks) for call in delta.get("tool_calls") or []]


def finish_of(chunks: list[dict]) -> str | None:
    return next(c["choices"][0]["finish_reason"] for c in reversed(chunks) if c["choices"])


def stored(reply: dict[str, Any]) -> dict[str, Any]:
    """The message an agent keeps of a reply (streamed and assembled, or not)."""
    return read_reply(reply).message


def with_results(server: PracticeServer, model: str = "practice") -> list[dict[str, Any]]:
    """TWO_CALLS, its calls (as the unflagged model made them) and their results: the next reply is text."""
    message = stored(body_of(server, model, TWO_CALLS))
    results = [{"role": "tool", "tool_call_id": c["id"], "content": json.dumps({"temperature": 20 + i, "sky": "晴"})}
               for i, c in enumerate(message["tool_calls"])]
    return [*TWO_CALLS, message, *results]


# ----------------------------------------------------------------------------- naive readings, as the lesson shows


def openai_docs_loop(chunks: list[dict]) -> dict[Any, dict]:
    """The loop of OpenAI's function-calling guide (streaming): the first delta of an index is kept, and every
    delta's arguments are added to it. On dicts, `.get` stands for the SDK's None when a field is absent."""
    final: dict[Any, dict] = {}
    for call in call_deltas(chunks):
        index = call.get("index")
        if index not in final:
            final[index] = copy.deepcopy(call)
        final[index]["function"]["arguments"] += call["function"].get("arguments")
    return final


def concatenating_loop(chunks: list[dict]) -> list[dict]:
    """The loop of Kimi's own tool-call guide (streaming): per index, id, name and arguments are each added up."""
    calls: list[dict] = []
    for call in call_deltas(chunks):
        while len(calls) <= call["index"]:
            calls.append({"id": "", "name": "", "arguments": ""})
        if call.get("id"):
            calls[call["index"]]["id"] += call["id"]
        if (call.get("function") or {}).get("name"):
            calls[call["index"]]["name"] += call["function"]["name"]
        if (call.get("function") or {}).get("arguments"):
            calls[call["index"]]["arguments"] += call["function"]["arguments"]
    return calls


# ----------------------------------------------------------------------------- the flags and the model name


def test_every_flag_has_a_row_with_sources_and_the_docs_name_them_all():
    assert tuple(quirks.QUIRKS) == providers.QUIRKS + providers.MODES
    readme = open("README.md", encoding="utf-8").read()
    for flag, row in quirks.QUIRKS.items():
        assert row.sources and all(s.startswith("https://") for s in row.sources), flag
        assert f"`@{flag}`" in readme and f"@{flag}" in quirks.__doc__, flag
        assert all(source in readme for source in row.sources[:1]), flag


@pytest.mark.parametrize("model", ["practice@ollama@kimi", "practice@thinking", "practice@deepseek@ollama",
                                   "practice@cut@cut", "practice@ollama@ollama", "practice@openai@thinking"])
def test_conflicting_or_repeated_flags_are_an_unknown_model(server, model):
    status, raw = post(server, {"model": model, "messages": TEXT})
    assert status == 404 and json.loads(raw)["error"]["code"] == "model_not_found"


@pytest.mark.parametrize("model", ["practice@ollama@ctx=4096", "practice@ctx=4096@gemini@cut",
                                   "practice@deepseek@thinking@cut@ctx=8192", "practice-sloppy@dashscope"])
def test_flags_combine_with_the_window_and_each_other_where_that_makes_sense(server, model):
    assert body_of(server, model, TWO_CALLS)["model"] == model


def test_the_flags_change_no_id_that_is_not_their_point(server):
    plain = [c["id"] for c in body_of(server, "practice", TWO_CALLS)["choices"][0]["message"]["tool_calls"]]
    for flag in ["ollama", "gemini", "dashscope", "vllm", "poolside", "glm", "cut"]:
        flagged = body_of(server, f"practice@{flag}", TWO_CALLS)["choices"][0]["message"]["tool_calls"]
        assert [c["id"] for c in flagged] == plain, flag


# ----------------------------------------------------------------------------- each flag on the wire


def test_ollama_whole_calls_without_index_arguments_as_objects(server):
    chunks = chunks_of(server, "practice@ollama", TWO_CALLS)
    calls = call_deltas(chunks)
    assert [c["function"]["arguments"] for c in calls] == [{"city": "北京"}, {"city": "上海"}]  # objects, whole
    assert all("index" not in c for c in calls)
    assert all(d.get("role") == "assistant" for d in deltas(chunks) if d)
    assert all(d["content"] == "" for d in deltas(chunks) if d.get("tool_calls"))
    body = body_of(server, "practice@ollama", TWO_CALLS)["choices"][0]["message"]
    assert body["content"] == "" and body["tool_calls"][0]["function"]["arguments"] == {"city": "北京"}
    with pytest.raises(TypeError):  # the object is added to itself: dict += dict
        openai_docs_loop(chunks)
    with pytest.raises(KeyError):   # no index to put the call at
        concatenating_loop(chunks)


def test_gemini_no_index_split_arguments_and_stop(server):
    chunks = chunks_of(server, "practice@gemini", TWO_CALLS)
    calls = call_deltas(chunks)
    assert all("index" not in c for c in calls)
    headers = [c for c in calls if c["id"]]
    assert [h["function"]["arguments"] for h in headers] == ['{"', '{"']  # the header brings the first fragment
    assert all(c == {"function": {"arguments": c["function"]["arguments"]}, "id": "", "type": ""}
               for c in calls if not c["id"])
    assert finish_of(chunks) == "stop"
    assert body_of(server, "practice@gemini", TWO_CALLS)["choices"][0]["finish_reason"] == "tool_calls"
    naive = openai_docs_loop(chunks)
    assert list(naive) == [None]  # both calls under one missing index, glued into one string
    assert naive[None]["function"]["arguments"] == '{"{"city":"北京"}{"city":"上海"}'


def test_dashscope_empty_ids_no_names_and_a_closing_empty_function(server):
    chunks = chunks_of(server, "practice@dashscope", TWO_CALLS)
    calls = call_deltas(chunks)
    fragments = [c for c in calls if c["id"] == "" and c["function"]]
    assert fragments and all(c["type"] == "function" and "name" not in c["function"] for c in fragments)
    assert [c for c in calls if c["function"] == {}] == [
        {"function": {}, "index": 0, "id": "", "type": "function"}, {"function": {}, "index": 1, "id": "", "type": "function"}]
    assert all(c["usage"] is None for c in chunks if c["choices"]) and deltas(chunks)[-1] == {"content": None}
    with pytest.raises(TypeError):  # the arguments of `function: {}` are None
        openai_docs_loop(chunks)


def test_kimi_ids_and_null_fields(server):
    chunks = chunks_of(server, "practice@kimi", TWO_CALLS)
    calls = call_deltas(chunks)
    assert [c["id"] for c in calls if c["id"]] == ["functions.get_weather:0", "functions.get_weather:1"]
    assert all(c["id"] is None and c["type"] is None and c["function"]["name"] is None for c in calls if not c["id"])
    body = body_of(server, "practice@kimi", TWO_CALLS)["choices"][0]["message"]
    assert [c["id"] for c in body["tool_calls"]] == ["functions.get_weather:0", "functions.get_weather:1"]
    later = body_of(server, "practice@kimi", [*with_results(server, "practice@kimi"),
                                               {"role": "user", "content": "那广州呢？"}])
    assert [c["id"] for c in later["choices"][0]["message"]["tool_calls"]] == ["functions.get_weather:2"]
    with pytest.raises(TypeError):  # the header's arguments are null
        openai_docs_loop(chunks)


def test_vllm_streams_calls_without_ids(server):
    chunks = chunks_of(server, "practice@vllm", TWO_CALLS)
    assert all("id" not in c for c in call_deltas(chunks))
    assert all(c["id"].startswith("call_") for c in body_of(server, "practice@vllm", TWO_CALLS)
               ["choices"][0]["message"]["tool_calls"])
    assert [c["id"] for c in concatenating_loop(chunks)] == ["", ""]  # sent back, "" pairs with no tool message


def test_poolside_a_new_id_on_every_later_chunk(server):
    chunks = chunks_of(server, "practice@poolside", TWO_CALLS)
    ids = [c["id"] for c in call_deltas(chunks)]
    assert len(set(ids)) == len(ids) > 2
    glued = concatenating_loop(chunks)[0]["id"]
    assert glued.count("call_") > 2  # every id of the call added up into one


def test_glm_whole_calls_with_empty_content(server):
    chunks = chunks_of(server, "practice@glm", TWO_CALLS)
    with_calls = [d for d in deltas(chunks) if d.get("tool_calls")]
    assert [d["tool_calls"][0]["function"]["arguments"] for d in with_calls] == ['{"city":"北京"}', '{"city":"上海"}']
    assert all(d["content"] == "" for d in with_calls) and deltas(chunks)[-1] == {"content": ""}
    naive = openai_docs_loop(chunks)
    assert naive[0]["function"]["arguments"] == '{"city":"北京"}{"city":"北京"}'  # the whole call added to itself
    assert naive[0].get("content") is None and with_calls[0]["content"] is not None


def test_cut_stops_inside_the_last_calls_arguments(server):
    for model in ["practice@cut", "practice@ollama@cut", "practice@gemini@cut"]:
        chunks = chunks_of(server, model, TWO_CALLS)
        assert finish_of(chunks) == "length", model
        reply = assemble(chunks)
        arguments = [c["function"]["arguments"] for c in reply["choices"][0]["message"]["tool_calls"]]
        assert arguments[0] == '{"city": "北京"}' if "ollama" in model else arguments[0] == '{"city":"北京"}'
        assert not complete(arguments[-1]) and arguments[-1] == '{"city'
        assert reply["choices"][0]["finish_reason"] == "length"
    body = body_of(server, "practice@cut", TWO_CALLS)
    assert body["choices"][0]["finish_reason"] == "length"
    plain = body_of(server, "practice", TWO_CALLS)
    assert body["usage"]["completion_tokens"] < plain["usage"]["completion_tokens"]
    naive = openai_docs_loop(chunks_of(server, "practice@cut", TWO_CALLS))
    with pytest.raises(json.JSONDecodeError):
        json.loads(naive[1]["function"]["arguments"])
    text = body_of(server, "practice@cut", TEXT)["choices"][0]
    assert text["finish_reason"] == "stop"  # a reply without calls is sent whole


def test_the_same_request_is_cut_at_the_same_place_every_time(server):
    assert chunks_of(server, "practice@cut", TWO_CALLS) == chunks_of(server, "practice@cut", TWO_CALLS)


# ----------------------------------------------------------------------------- DeepSeek's thinking mode


def test_thinking_streams_reasoning_first_and_counts_it(server):
    chunks = chunks_of(server, "practice@deepseek@thinking", TWO_CALLS)
    first, *rest = deltas(chunks)
    assert first == {"role": "assistant", "content": None, "reasoning_content": ""}
    thoughts = [d for d in rest if "reasoning_content" in d]
    assert thoughts and all(d["content"] is None for d in thoughts) and rest[:len(thoughts)] == thoughts
    usage = chunks[-1]["usage"]
    plain = chunks_of(server, "practice@deepseek", TWO_CALLS)[-1]["usage"]
    reasoning = usage["completion_tokens_details"]["reasoning_tokens"]
    assert reasoning > 0 and usage["completion_tokens"] == plain["completion_tokens"] + reasoning
    assert "prompt_cache_hit_tokens" in usage  # DeepSeek's usage shape
    body = body_of(server, "practice@deepseek@thinking", TWO_CALLS)["choices"][0]["message"]
    assert list(body)[:3] == ["role", "content", "reasoning_content"] and body["content"] == ""
    assert "".join(d["reasoning_content"] for d in thoughts) == body["reasoning_content"]


@pytest.mark.parametrize("model, extra", [("practice@deepseek@thinking", {}),
                                          ("practice@deepseek", {"thinking": {"type": "enabled"}})])
def test_thinking_mode_refuses_a_tool_turn_sent_back_without_its_reasoning(server, model, extra):
    message = stored(body_of(server, model, TWO_CALLS, **extra))
    assert message["reasoning_content"]  # read_reply keeps it, so an agent sends it back
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "晴"} for c in message["tool_calls"]]
    kept = body_of(server, model, [*TWO_CALLS, message, *results], **extra)
    assert kept["choices"][0]["finish_reason"] == "stop"
    dropped = {k: v for k, v in message.items() if k != "reasoning_content"}  # a loop that keeps content and calls
    status, raw = post(server, {"model": model, "messages": [*TWO_CALLS, dropped, *results], "tools": [WEATHER], **extra})
    assert status == 400 and json.loads(raw) == {"error": {
        "message": "The `reasoning_content` in the thinking mode must be passed back to the API.",
        "type": "invalid_request_error", "param": None, "code": "invalid_request_error"}}
    client = OpenAI(base_url=server.base_url, api_key="practice", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="must be passed back"):
        client.chat.completions.create(model=model, messages=[*TWO_CALLS, dropped, *results], tools=[WEATHER],
                                       extra_body=extra or None)


def test_thinking_off_or_without_deepseek_leaves_reasoning_out(server):
    for model, extra in [("practice@deepseek@thinking", {"thinking": {"type": "disabled"}}), ("practice@deepseek", {})]:
        message = body_of(server, model, TWO_CALLS, **extra)["choices"][0]["message"]
        assert "reasoning_content" not in message, model
    status, _ = post(server, {"model": "practice", "messages": TEXT, "thinking": {"type": "enabled"}})
    assert status == 400  # OpenAI has no such parameter


# ----------------------------------------------------------------------------- the assembler puts each one back


def comparable(message: dict[str, Any], flag: str) -> dict[str, Any]:
    """A stored message as the comparison sees it (see the module docstring)."""
    out = copy.deepcopy(message)
    for call in out.get("tool_calls") or []:
        if flag == "vllm":
            del call["id"]
        if flag == "ollama":
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return out


@pytest.mark.parametrize("flag", SAME_ANSWER)
def test_the_assembler_gives_the_unflagged_non_streamed_message(server, flag):
    for messages in (TWO_CALLS, TEXT, with_results(server)):
        assembler = Assembler()
        for chunk in chunks_of(server, f"practice@{flag}", messages):
            assembler.feed(chunk)
        streamed = assembler.finish()
        expected = body_of(server, "practice@kimi" if flag == "kimi" else "practice", messages)
        assert comparable(stored(streamed), flag) == comparable(stored(expected), flag), (flag, messages[-1])
        assert streamed["choices"][0]["finish_reason"] == expected["choices"][0]["finish_reason"]
        assert streamed["usage"] == expected["usage"]


def test_kimi_ids_are_the_only_difference_from_the_unflagged_message(server):
    kimi, plain = stored(assemble(chunks_of(server, "practice@kimi", TWO_CALLS))), stored(body_of(server, "practice", TWO_CALLS))
    for a, b in zip(kimi["tool_calls"], plain["tool_calls"]):
        assert {**a, "id": b["id"]} == b and a["id"].startswith("functions.get_weather:")


def test_the_assembler_reads_cut_and_thinking_streams_as_their_non_streamed_replies(server):
    for model in ["practice@cut", "practice@deepseek@thinking", "practice@deepseek@thinking@cut"]:
        streamed, body = assemble(chunks_of(server, model, TWO_CALLS)), body_of(server, model, TWO_CALLS)
        expected = stored(body)
        assert stored(streamed) == expected, model
        assert streamed["choices"][0]["finish_reason"] == body["choices"][0]["finish_reason"], model
    thinking = stored(assemble(chunks_of(server, "practice@deepseek@thinking", TWO_CALLS)))
    plain = stored(body_of(server, "practice@deepseek", TWO_CALLS))
    assert {k: v for k, v in thinking.items() if k != "reasoning_content"} == plain


def test_without_its_rows_the_assembler_refuses_what_it_cannot_place(server):
    # The rows are what make the flagged streams readable: turned off, a clear error, never a wrong call.
    for flag in ["ollama", "gemini"]:
        with pytest.raises(StreamError, match="has no index"):
            assemble(chunks_of(server, f"practice@{flag}", TWO_CALLS), quirks=())


# ----------------------------------------------------------------------------- an agent on a quirky provider


@tool
def get_weather(city: str) -> str:
    """Current weather in a city."""
    return json.dumps({"city": city, "temperature": 22, "sky": "晴"}, ensure_ascii=False)


@pytest.mark.parametrize("flag", ["ollama", "gemini", "dashscope", "glm", "poolside"])
def test_a_streaming_agent_on_a_quirky_provider_gives_the_same_answer(server, flag):
    client = OpenAI(base_url=server.base_url, api_key="practice", max_retries=0)
    question = "北京和上海现在天气怎么样？"
    plain = Agent(client, "practice", [get_weather]).run(question)
    quirky = Agent(client, f"practice@{flag}", [get_weather], stream=True).run(question)
    assert quirky.text == plain.text and plain.text
    assert [r.content for r in quirky.tool_results] == [r.content for r in plain.tool_results]
    if flag != "ollama":
        assert quirky.messages == plain.messages


@pytest.mark.parametrize("flag", ["kimi", "vllm"])
def test_an_agent_sends_back_the_ids_it_was_given_or_gave(server, flag):
    client = OpenAI(base_url=server.base_url, api_key="practice", max_retries=0)
    result = Agent(client, f"practice@{flag}", [get_weather], stream=True).run("北京和上海现在天气怎么样？")
    plain = Agent(client, "practice", [get_weather]).run("北京和上海现在天气怎么样？")
    assert result.text == plain.text
    ids = [c["id"] for m in result.messages if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in result.messages if m.get("role") == "tool"]
    assert ids == answered and all(ids)


def test_a_thinking_agent_keeps_the_reasoning_and_runs_to_the_answer(server):
    client = OpenAI(base_url=server.base_url, api_key="practice", max_retries=0)
    for stream in (False, True):
        result = Agent(client, "practice@deepseek@thinking", [get_weather], stream=stream).run("北京现在天气怎么样？")
        calling = [m for m in result.messages if m.get("tool_calls")]
        assert calling and all(m["reasoning_content"] for m in calling) and result.text


def test_an_agent_answers_a_cut_call_without_running_it_and_the_retry_runs(server):
    client = OpenAI(base_url=server.base_url, api_key="practice", max_retries=0)
    plain = Agent(client, "practice", [get_weather]).run("北京和上海现在天气怎么样？")
    for stream in (False, True):
        result = Agent(client, "practice@cut", [get_weather], stream=stream).run("北京和上海现在天气怎么样？")
        first, *rest = result.tool_results
        assert first.failure == "truncated" and result.tool_results[1].failure == "truncated"
        assert [r.content for r in rest[1:]] == [r.content for r in plain.tool_results]  # both made again, and run
        assert result.text == plain.text
