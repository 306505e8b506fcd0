"""Streamed replies put back together (mini_framework/streaming.py): by index, through every provider quirk,
split anywhere, and identical to the non-streamed reply of the same request."""
from __future__ import annotations

import asyncio
import http.server
import itertools
import json
import random
import threading
import time

import pytest
from openai import AsyncOpenAI, OpenAI
from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk

from course.sse import read_sse
from mini_framework.replies import ProviderError, read_reply
from mini_framework.streaming.assembler import QUIRKS, Assembler, Piece, StreamError, assemble, complete
from practice_model import PracticeServer

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "the city, e.g. 北京"}},
                   "required": ["city"]}}}


# ----------------------------------------------------------------------------- building streams


def chunk(delta=None, finish=None, **extra) -> dict:
    """A chat.completion.chunk with one choice."""
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {} if delta is None else delta, "logprobs": None, "finish_reason": finish}],
            **extra}


def calls(*deltas) -> dict:
    """A chunk carrying tool call deltas."""
    return chunk({"tool_calls": list(deltas)})


def header(index, call_id, name="get_weather", arguments=""):
    return {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def fragment(index, arguments):
    return {"index": index, "function": {"arguments": arguments}}


def sdk(chunks) -> list:
    """The same chunks as the OpenAI SDK's objects (built as the SDK builds them from the wire: unvalidated)."""
    return [construct_type(type_=ChatCompletionChunk, value=c) for c in chunks]


def message_of(reply: dict) -> dict:
    return reply["choices"][0]["message"]


def arguments_of(reply: dict) -> list[str]:
    return [c["function"]["arguments"] for c in message_of(reply).get("tool_calls", [])]


@pytest.fixture(params=["dicts", "sdk objects"])
def form(request):
    """Run a test with dict chunks and with the SDK's chunk objects."""
    return (lambda chunks: chunks) if request.param == "dicts" else sdk


def growth(run, small: int, large: int, attempts: int = 3) -> float:
    """How much longer `run(large)` takes than `run(small)`: about large/small if linear, its square if quadratic.

    The best of three runs each, taken in turns and timed in this thread's CPU time (time.thread_time), so
    other work on the machine counts as little as it can; measured again, up to `attempts` times, while the
    ratio looks quadratic (noise can make a linear run look slow once; a quadratic one is slow every time).
    """
    def timed(size: int) -> float:
        start = time.thread_time()
        run(size)
        return time.thread_time() - start

    run(small)  # warm up
    ratio = float("inf")
    for _ in range(attempts):
        smalls, larges = zip(*((timed(small), timed(large)) for _ in range(3)))
        ratio = min(larges) / max(min(smalls), 1e-9)
        if ratio < 1.6 * large / small:
            break
    return ratio


# ----------------------------------------------------------------------------- the OpenAI shape


def test_text_deltas_come_out_as_they_arrive_and_the_reply_is_the_non_streamed_one(form):
    assembler = Assembler()
    stream = form([chunk({"role": "assistant", "content": "", "refusal": None}), chunk({"content": "北京"}),
                   chunk({"content": "今天晴。"}), chunk({}, "stop"),
                   {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
                    "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}}])
    assert [assembler.feed(c) for c in stream] == ["", "北京", "今天晴。", "", ""]
    reply = assembler.finish()
    assert reply["object"] == "chat.completion" and reply["id"] == "chatcmpl-1" and reply["model"] == "m"
    assert reply["choices"] == [{"index": 0, "message": {"role": "assistant", "content": "北京今天晴。"}, "finish_reason": "stop"}]
    read = read_reply(reply)
    assert (read.prompt_tokens, read.completion_tokens, read.finish_reason, read.repairs) == (9, 4, "stop", [])


def test_interleaved_calls_are_assembled_by_index_not_by_arrival(form):
    stream = form([chunk({"role": "assistant", "content": None}),
                   calls(header(0, "call_a")), calls(header(1, "call_b")),
                   calls(fragment(1, '{"city"')), calls(fragment(0, '{"ci')), calls(fragment(0, 'ty": "北')),
                   calls(fragment(1, ': "上海"}')), calls(fragment(0, '京"}')), chunk({}, "tool_calls")])
    reply = assemble(stream)
    assert message_of(reply) == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}]}
    assert reply["choices"][0]["finish_reason"] == "tool_calls"


def test_text_and_calls_in_one_reply(form):
    reply = assemble(form([chunk({"content": "Let me check."}), calls(header(0, "c1", arguments='{"city": "Paris"}')),
                           chunk({}, "tool_calls")]))
    assert message_of(reply)["content"] == "Let me check." and arguments_of(reply) == ['{"city": "Paris"}']


def test_an_argument_fragment_before_its_header_still_lands_in_its_call(form):
    stream = form([calls(fragment(1, '{"city": ')), calls(header(0, "c0", arguments='{"city": "北京"}')),
                   calls(header(1, "c1")), calls(fragment(1, '"上海"}')), chunk({}, "tool_calls")])
    reply = assemble(stream)
    assert [c["id"] for c in message_of(reply)["tool_calls"]] == ["c0", "c1"]
    assert arguments_of(reply) == ['{"city": "北京"}', '{"city": "上海"}']


def test_unknown_fields_are_ignored(form):
    stream = form([chunk({"role": "assistant", "content": "", "obfuscation": "x1"}, system_fingerprint="fp", provider="p"),
                   calls({**header(0, "c1"), "extra_content": {"google": {"thought_signature": "sig"}}}),
                   calls({**fragment(0, '{"city": "北京"}'), "weird": [1, 2]}),
                   chunk({}, "tool_calls", stop_reason=151338, token_ids=None)])
    reply = assemble(stream)
    assert arguments_of(reply) == ['{"city": "北京"}'] and read_reply(reply).repairs == []


def test_choices_other_than_the_first_are_left_out():
    first = chunk({"content": "one"})
    other = {**chunk({"content": "two"}), "choices": [{"index": 1, "delta": {"content": "two"}, "finish_reason": None}]}
    assert message_of(assemble([first, other, chunk({}, "stop")]))["content"] == "one"


def test_a_null_delta_or_a_finish_chunk_without_one_is_read_as_empty():
    stream = [chunk({"content": "hi"}), {"choices": [{"index": 0, "delta": None, "finish_reason": None}]},
              {"choices": [{"index": 0, "finish_reason": "stop"}]}]
    reply = assemble(stream)
    assert message_of(reply)["content"] == "hi" and reply["choices"][0]["finish_reason"] == "stop"


def test_the_assembler_does_not_change_the_callers_chunks():
    stream = [calls({"id": "c1", "function": {"name": "f", "arguments": {"x": 1}}}), chunk({}, "stop")]
    before = json.dumps(stream)
    assemble(stream)
    assert json.dumps(stream) == before


# ----------------------------------------------------------------------------- cut off, truncated, broken


def test_finish_reason_length_inside_arguments_keeps_length_so_the_calls_never_run(form):
    stream = form([calls(header(0, "c1")), calls(fragment(0, '{"city": "北')), chunk({}, "length")])
    reply = assemble(stream)
    read = read_reply(reply)
    assert read.finish_reason == "length"  # agent.py answers every call of a "length" reply with TRUNCATED
    assert [c.arguments for c in read.calls] == ['{"city": "北']


@pytest.mark.parametrize("finish", [None, "tool_calls", "stop"])
def test_a_call_cut_mid_value_makes_the_reply_length_whatever_the_stream_said(finish):
    stream = [calls(header(0, "c1", arguments='{"city": "北京"}')), calls(header(1, "c2")),
              calls(fragment(1, '{"path": "a.txt", "content": "half of it'))]
    if finish:
        stream.append(chunk({}, finish))
    assembler = Assembler()
    for c in stream:
        assembler.feed(c)
    reply = assembler.finish()
    assert reply["choices"][0]["finish_reason"] == "length"
    assert any("get_weather (index 1)" in r and '"length"' in r for r in assembler.repairs), assembler.repairs


def test_a_stream_that_ends_without_finish_reason():
    complete_call = Assembler()
    for c in [calls(header(0, "c1", arguments='{"city": "北京"}'))]:
        complete_call.feed(c)
    assert complete_call.finish()["choices"][0]["finish_reason"] == "tool_calls"
    assert complete_call.repairs == ['the stream ended without a finish_reason: its calls are complete, read as "tool_calls"']

    bare_header = Assembler()
    bare_header.feed(calls(header(0, "c1")))  # the connection dropped right after the header
    assert bare_header.finish()["choices"][0]["finish_reason"] == "length"

    text_only = Assembler()
    text_only.feed(chunk({"content": "北京今天"}))
    reply = text_only.finish()
    assert reply["choices"][0]["finish_reason"] is None and message_of(reply)["content"] == "北京今天"
    assert text_only.repairs == ["the stream ended without a finish_reason"]


def test_a_call_without_arguments_is_complete_when_the_stream_finished():
    reply = assemble([calls(header(0, "c1", name="now")), chunk({}, "tool_calls")])
    assert reply["choices"][0]["finish_reason"] == "tool_calls" and arguments_of(reply) == [""]


@pytest.mark.parametrize("text,expected", [
    ('{"city": "北京"}', True), ('{"city": "北京"', False), ('{"city": "北', False), ('{"a": [1, {"b": 2}]}', True),
    ('{"a": [1, {"b": 2}', False), ('{"q": "a \\" }"}', True), ('{"q": "a \\" }', False), ('{"q": "\\\\"}', True),
    ('{"q": "\\\\', False), ('{"q": "}{][\\u4eac"}', True), ("", True), ("   ", True), ('{"a": 1}}', True),
    ('{"city": "北京"}{"city": "北京"}', True), ("{'city': '北京'}", True), ('"abc', False), ("12", True),
])
def test_complete_is_a_scan_of_brackets_and_strings(text, expected):
    assert complete(text) is expected


def test_an_error_chunk_raises_with_what_the_provider_sent():
    with pytest.raises(StreamError, match="the stream carried an error.*overloaded"):
        Assembler().feed({"error": {"message": "overloaded", "type": "server_error"}})


@pytest.mark.parametrize("bad,match", [
    (calls(7), "a tool call delta is not an object"),
    (calls({"index": 0, "function": 42}), "function is not an object"),
    (chunk({"tool_calls": "call it"}), "delta.tool_calls is not a list"),
    ({"choices": {"index": 0}}, "choices are not a list"),
])
def test_a_chunk_that_cannot_be_read_raises_a_provider_error(bad, match):
    with pytest.raises(ProviderError, match=match):
        Assembler().feed(bad)


def test_without_the_quirk_rows_a_missing_index_or_object_arguments_is_a_clear_error():
    with pytest.raises(StreamError, match="has no index"):
        Assembler(quirks=()).feed(calls({"id": "c1", "function": {"name": "f", "arguments": "{}"}}))
    with pytest.raises(StreamError, match="arguments are not text"):
        Assembler(quirks=()).feed(calls({"index": 0, "id": "c1", "function": {"name": "f", "arguments": {"x": 1}}}))


def test_a_null_tool_call_entry_is_left_out():
    reply = assemble([calls(None, header(0, "c1", arguments="{}")), chunk({}, "tool_calls")])
    assert [c["id"] for c in message_of(reply)["tool_calls"]] == ["c1"]


# ----------------------------------------------------------------------------- the quirk rows, from recorded shapes

ROW_TESTS: dict[str, list[str]] = {}


def row(name):
    """Mark a test as covering the QUIRKS row `name` (test_every_quirk_row_has_a_test checks them all)."""
    def mark(test):
        ROW_TESTS.setdefault(name, []).append(test.__name__)
        return test
    return mark


@row("arguments sent as an object")
def test_arguments_sent_as_an_object_become_json_text(form):
    # TGI: "'arguments': {'format': 'celsius', 'location': 'New York'}" (huggingface/text-generation-inference#2461)
    stream = form([calls({"index": 0, "id": "0", "type": "function",
                          "function": {"name": "get_current_weather", "arguments": {"format": "celsius", "location": "北京"}}}),
                   chunk({}, "tool_calls")])
    assembler = Assembler()
    for c in stream:
        assembler.feed(c)
    reply = assembler.finish()
    assert arguments_of(reply) == ['{"format": "celsius", "location": "北京"}']
    assert assembler.repairs == ["tool_calls[0]: arguments sent as an object: sent as JSON text"]


@row("no index on tool call deltas")
def test_ollama_calls_without_index_each_open_a_call(form):
    # ollama/ollama#7881: each call whole in one delta, no index
    stream = form([chunk({"role": "assistant", "content": ""}),
                   calls({"id": "call_ypgg1j0n", "type": "function",
                          "function": {"name": "get_current_weather", "arguments": '{"location":"Boston, MA"}'}}),
                   calls({"id": "call_8xk2mq0z", "type": "function",
                          "function": {"name": "get_current_weather", "arguments": '{"location":"北京"}'}}),
                   chunk({}, "tool_calls")])
    reply = assemble(stream)
    assert [c["id"] for c in message_of(reply)["tool_calls"]] == ["call_ypgg1j0n", "call_8xk2mq0z"]
    assert arguments_of(reply) == ['{"location":"Boston, MA"}', '{"location":"北京"}']


@row("no index on tool call deltas")
def test_gemini_indexless_fragments_continue_the_last_call(form):
    # open-webui/computer#224 and AstrBotDevs/AstrBot#6661: no index, arguments split across deltas whose id is ""
    stream = form([calls({"id": "function-call-1", "type": "function", "function": {"name": "get_weather", "arguments": '{"loc'},
                          "extra_content": {"google": {"thought_signature": "c2ln"}}}),
                   calls({"id": "", "type": "", "function": {"arguments": 'ation":"Sydney"}'}}),
                   calls({"id": "function-call-2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}),
                   chunk({}, "stop")])
    reply = assemble(stream)
    assert [(c["id"], c["function"]["name"]) for c in message_of(reply)["tool_calls"]] == [
        ("function-call-1", "get_weather"), ("function-call-2", "get_time")]
    assert arguments_of(reply) == ['{"location":"Sydney"}', "{}"]


@row("no index on tool call deltas")
def test_indexless_calls_without_ids_split_by_name_after_a_complete_call():
    stream = [calls({"function": {"name": "f", "arguments": '{"a": '}}), calls({"function": {"arguments": "1}"}}),
              calls({"function": {"name": "g", "arguments": '{"b": 2}'}}), chunk({}, "tool_calls")]
    reply = assemble(stream)
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message_of(reply)["tool_calls"]] == [
        ("f", '{"a": 1}'), ("g", '{"b": 2}')]
    assert "id" not in message_of(reply)["tool_calls"][0]  # read_reply gives it one
    assert [c.id for c in read_reply(reply, round_number=3).calls] == ["call_3_0", "call_3_1"]


@row("a new id at an index in use")
def test_ollama_reusing_index_0_for_every_call(form):
    # ollama/ollama#15457: all tool call chunks have index 0, each a whole call with its own id
    stream = form([calls({"id": "abc123", "index": 0, "type": "function",
                          "function": {"name": "file_write", "arguments": '{"filePath":"hello.py","content":"print(\\"hello\\")"}'}}),
                   calls({"id": "def456", "index": 0, "type": "function",
                          "function": {"name": "file_write", "arguments": '{"filePath":"world.py","content":"print(\\"world\\")"}'}}),
                   chunk({}, "tool_calls")])
    assembler = Assembler()
    for c in stream:
        assembler.feed(c)
    reply = assembler.finish()
    assert [c["id"] for c in message_of(reply)["tool_calls"]] == ["abc123", "def456"]
    assert [json.loads(a)["filePath"] for a in arguments_of(reply)] == ["hello.py", "world.py"]
    assert assembler.repairs == ["tool_calls index 0 was used again for a new call (id 'def456'): placed at index 1"]


@row("a new id at an index in use")
def test_a_new_id_on_every_later_chunk_keeps_the_first(form):
    # poolsideai/pool#9: the header carries one id, every later chunk of the same call another
    stream = form([calls({"index": 0, "id": "call_first", "type": "function", "function": {"name": "read", "arguments": ""}}),
                   calls({"index": 0, "id": "call_other", "function": {"arguments": '{"path": '}}),
                   calls({"index": 0, "id": "call_other", "function": {"arguments": '"README.md"}'}}),
                   chunk({}, "tool_calls")])
    assembler = Assembler()
    for c in stream:
        assembler.feed(c)
    reply = assembler.finish()
    assert message_of(reply)["tool_calls"] == [{"id": "call_first", "type": "function",
                                                "function": {"name": "read", "arguments": '{"path": "README.md"}'}}]
    assert assembler.repairs == ["tool_calls[0] came with a new id on a later chunk: kept its first id 'call_first'"]


@row("a new id at an index in use")
def test_vllm_harmony_id_and_name_on_every_fragment_stay_one_call():
    # vllm-project/vllm#23522 (review): id=make_tool_call_id(), the name and a fragment on every chunk
    stream = [calls({"index": 0, "id": f"chatcmpl-tool-{n}", "type": "function",
                     "function": {"name": "get_weather", "arguments": piece}})
              for n, piece in enumerate(['{"ci', 'ty": ', '"北京"', "}"])] + [chunk({}, "tool_calls")]
    reply = assemble(stream)
    assert message_of(reply)["tool_calls"] == [{"id": "chatcmpl-tool-0", "type": "function",
                                                "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]


@row("a new id at an index in use")
def test_a_bare_header_with_a_new_id_after_a_complete_call_opens_no_empty_call():
    stream = [calls(header(0, "id-1", arguments='{"city": "北京"}')), calls(header(0, "id-2")), chunk({}, "tool_calls")]
    assert message_of(assemble(stream))["tool_calls"] == [
        {"id": "id-1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]


@row("the arguments so far in every fragment")
def test_cumulative_fragments_keep_the_last(form):
    # NousResearch/hermes-agent#35718: "resend the full arguments-so-far in every stream chunk"
    stream = form([calls(header(0, "c1")), calls(fragment(0, '{"pattern": "TODO')),
                   calls(fragment(0, '{"pattern": "TODO", "path": ')), calls(fragment(0, '{"pattern": "TODO", "path": "src"}')),
                   chunk({}, "tool_calls")])
    reply = assemble(stream)
    assert arguments_of(reply) == ['{"pattern": "TODO", "path": "src"}'] and reply["choices"][0]["finish_reason"] == "tool_calls"


@row("the arguments so far in every fragment")
def test_complete_values_in_every_chunk_are_not_doubled():
    # NousResearch/hermes-agent#5384 (codex-lb): the name and the whole arguments in every delta
    stream = [calls({"index": 0, "id": "c1", "function": {"name": "apply_learnings", "arguments": '{"task":"debug"}'}}),
              calls({"index": 0, "function": {"name": "apply_learnings", "arguments": '{"task":"debug"}'}}),
              chunk({}, "tool_calls")]
    reply = assemble(stream)
    assert message_of(reply)["tool_calls"][0]["function"] == {"name": "apply_learnings", "arguments": '{"task":"debug"}'}


@row("the arguments so far in every fragment")
def test_a_normal_stream_whose_fragments_happen_to_extend_each_other_is_left_alone():
    # The ambiguity hermes-agent#35860 reverted over: '{"a":' then '{"a":1}}' is a valid nested object, not a resend.
    reply = assemble([calls(header(0, "c1")), calls(fragment(0, '{"a":')), calls(fragment(0, '{"a":1}}')), chunk({}, "tool_calls")])
    assert arguments_of(reply) == ['{"a":{"a":1}}']


@row("the whole arguments repeated at the end")
def test_the_whole_arguments_repeated_after_the_fragments_are_dropped(form):
    # elizaOS/eliza#16973: fragments, then the re-serialised arguments in the consolidated chunk
    stream = form([calls(header(0, "c1", name="bash")), calls(fragment(0, '{"command": ')), calls(fragment(0, '"ls -la"}')),
                   calls(fragment(0, '{"command":"ls -la"}')), chunk({}, "tool_calls")])
    assembler = Assembler()
    for c in stream:
        assembler.feed(c)
    assert arguments_of(assembler.finish()) == ['{"command": "ls -la"}']
    assert assembler.repairs == ["tool_calls[0]: the arguments came twice: kept one"]


@row("the whole arguments repeated at the end")
def test_a_different_object_after_a_complete_one_is_not_a_repeat():
    reply = assemble([calls(header(0, "c1")), calls(fragment(0, '{"a": 1}')), calls(fragment(0, '{"a": 2}')), chunk({}, "tool_calls")])
    assert arguments_of(reply) == ['{"a": 1}{"a": 2}']  # malformed: arguments.py answers it, nothing guessed here


@row("finish_reason \"stop\" with tool calls")
@pytest.mark.parametrize("finish", ["stop", "end_turn"])
def test_stop_with_tool_calls_is_read_as_tool_calls(form, finish):
    # googleapis/python-genai#2868 (Gemini, streaming): the tool call delta, then finish_reason "stop"
    stream = form([calls({"index": 0, "id": "function-call-1", "type": "function",
                          "function": {"name": "get_weather", "arguments": '{"location":"Sydney"}'}}),
                   chunk({}, finish)])
    assert assemble(stream)["choices"][0]["finish_reason"] == "tool_calls"
    assert assemble(form([chunk({"content": "hi"}), chunk({}, finish)]))["choices"][0]["finish_reason"] == finish


@row("name, arguments, id or type null or empty on later chunks")
def test_dashscope_empty_ids_and_empty_function_objects(form):
    # qwen-max on DashScope (itsvse.com record): later deltas carry "id": "", "function": {} or only arguments
    stream = form([
        {"choices": [{"delta": {"content": None, "tool_calls": [{"function": {"name": "get_current_time", "arguments": ""}, "index": 0,
                      "id": "call_deb0063d315441b18b50d8", "type": "function"}], "role": "assistant"}, "finish_reason": None, "index": 0,
                      "logprobs": None}], "object": "chat.completion.chunk", "usage": None, "created": 1743037194, "model": "qwen-max",
         "id": "chatcmpl-c4e2a989"},
        {"choices": [{"delta": {"content": None, "tool_calls": [{"function": {"arguments": "{}"}, "index": 0, "id": "", "type": "function"}]},
                      "finish_reason": None, "index": 0, "logprobs": None}], "object": "chat.completion.chunk", "usage": None},
        {"choices": [{"delta": {"content": None, "tool_calls": [{"function": {}, "index": 0, "id": "", "type": "function"}]},
                      "finish_reason": None, "index": 0, "logprobs": None}], "object": "chat.completion.chunk", "usage": None},
        {"choices": [{"delta": {"content": None}, "finish_reason": "tool_calls", "index": 0, "logprobs": None}], "object": "chat.completion.chunk"}])
    assert message_of(assemble(stream))["tool_calls"] == [{"id": "call_deb0063d315441b18b50d8", "type": "function",
                                                           "function": {"name": "get_current_time", "arguments": "{}"}}]


@row("name, arguments, id or type null or empty on later chunks")
@row("usage on every chunk")
def test_null_id_type_name_and_a_running_usage_on_every_chunk(form):
    # Younis-Ahmed/qwen-ai-provider#7 (Qwen2.5 on SiliconFlow): "id":null,"type":null, no name; usage on each chunk
    def qwen(delta, finish=None, completion=1):
        return {"id": "0197e439198cd34d34fa957ba43a9ced", "object": "chat.completion.chunk", "created": 1751880636,
                "model": "Qwen/Qwen2.5-7B-Instruct", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                "system_fingerprint": "", "usage": {"prompt_tokens": 294, "completion_tokens": completion, "total_tokens": 294 + completion}}
    stream = form([
        qwen({"content": None, "reasoning_content": None, "tool_calls": [
            {"index": 0, "id": "0197e4391a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
        qwen({"content": None, "reasoning_content": None, "tool_calls": [
            {"index": 0, "id": None, "type": None, "function": {"arguments": ' {"'}}]}, completion=3),
        qwen({"content": None, "reasoning_content": None, "tool_calls": [
            {"index": 0, "id": None, "type": None, "function": {"name": None, "arguments": 'city": "北京"}'}}]}, completion=9),
        qwen({"content": None, "reasoning_content": None}, "tool_calls", completion=11)])
    reply = assemble(stream)
    assert message_of(reply) == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "0197e4391a", "type": "function", "function": {"name": "get_weather", "arguments": ' {"city": "北京"}'}}]}
    assert reply["usage"] == {"prompt_tokens": 294, "completion_tokens": 11, "total_tokens": 305}


@row("the header repeated on later chunks")
def test_a_name_repeated_on_every_chunk_is_not_concatenated(form):
    # ggml-org/llama.cpp#13800: the function name was "repeated over and over" on each delta
    stream = form([calls({"index": 0, "id": "abc", "type": "function", "function": {"name": "get_current_weather", "arguments": ""}})] +
                  [calls({"index": 0, "function": {"name": "get_current_weather", "arguments": p}}) for p in ['{"location', '": "Paris"}']] +
                  [chunk({}, "tool_calls")])
    assert message_of(assemble(stream))["tool_calls"][0]["function"] == {"name": "get_current_weather", "arguments": '{"location": "Paris"}'}


@row("the header repeated on later chunks")
def test_glm5_last_fragment_with_the_header_again_and_the_finish_reason(form):
    # vllm-project/vllm-ascend#8327: the last chunk carries the id and name again, the last fragment and finish_reason
    last = chunk({"tool_calls": [{"index": 0, "id": "chatcmpl-tool-9e3c", "type": "function",
                                  "function": {"name": "kubectl", "arguments": '"}'}}]}, "tool_calls")
    stream = form([calls(header(0, "chatcmpl-tool-9e3c", name="kubectl")), calls(fragment(0, '{"command": "kubectl get pods')), last])
    assert message_of(assemble(stream))["tool_calls"] == [{"id": "chatcmpl-tool-9e3c", "type": "function",
                                                           "function": {"name": "kubectl", "arguments": '{"command": "kubectl get pods"}'}}]


@row("no tool call ids")
def test_calls_without_ids_get_them_from_read_reply(form):
    # vllm-project/vllm#18412: tool_calls.id missing in streamed responses
    stream = form([calls({"index": 0, "type": "function", "function": {"name": "get_weather", "arguments": ""}}),
                   calls(fragment(0, '{"city": "北京"}')),
                   calls({"index": 1, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}),
                   chunk({}, "tool_calls")])
    read = read_reply(assemble(stream), taken_ids={"call_2_0"}, round_number=2)
    assert [c.id for c in read.calls] == ["call_2_0_2", "call_2_1"] and len(read.repairs) == 2


@row("ids like functions.get_weather:0")
def test_kimi_ids_are_kept_exactly(form):
    # vllm-project/vllm#46344 (Kimi K2 streamed): header id 'functions.get_current_weather:0', then fragments with id None
    stream = form([calls({"index": 0, "id": "functions.get_current_weather:0", "type": "function",
                          "function": {"name": "get_current_weather", "arguments": None}})] +
                  [calls({"index": 0, "id": None, "type": None, "function": {"arguments": p, "name": None}})
                   for p in [' {"', "city", '":', ' "', "Ber", 'lin"}']] +
                  [calls({"index": 1, "id": "functions.get_forecast:1", "type": "function",
                          "function": {"name": "get_forecast", "arguments": '{"city": "Berlin", "days": 5}'}}),
                   chunk({}, "tool_calls")])
    read = read_reply(assemble(stream))
    assert [c.id for c in read.calls] == ["functions.get_current_weather:0", "functions.get_forecast:1"]
    assert read.message["tool_calls"][0]["id"] == "functions.get_current_weather:0" and read.repairs == []


@row("a whole call in one chunk")
@row("content \"\" instead of null beside tool calls")
def test_glm_whole_call_in_one_chunk_with_empty_content(form):
    # GoogleCloudPlatform/kubectl-ai#559 (GLM-4.6 on vLLM): content "" beside the whole call, then content "" with the finish
    stream = form([
        {"id": "chatcmpl-2bdf", "object": "chat.completion.chunk", "created": 1759514500, "model": "zai-org/GLM-4.6",
         "choices": [{"index": 0, "delta": {"content": "", "tool_calls": [{"id": "chatcmpl-tool-9e3c", "type": "function", "index": 0,
                      "function": {"name": "kubectl", "arguments": '{"command": "kubectl get deployments --all-namespaces", "modifies_resource": "no"}'}}]},
                      "logprobs": None, "finish_reason": None, "token_ids": None}]},
        {"id": "chatcmpl-2bdf", "object": "chat.completion.chunk", "created": 1759514500, "model": "zai-org/GLM-4.6",
         "choices": [{"index": 0, "delta": {"content": ""}, "logprobs": None, "finish_reason": "tool_calls", "stop_reason": 151338, "token_ids": None}]}])
    message = message_of(assemble(stream))
    assert message["content"] is None and json.loads(message["tool_calls"][0]["function"]["arguments"])["modifies_resource"] == "no"


@row("content \"\" instead of null beside tool calls")
def test_an_empty_answer_without_calls_stays_an_empty_string():
    assert message_of(assemble([chunk({"role": "assistant", "content": ""}), chunk({}, "stop")]))["content"] == ""
    assert message_of(assemble([chunk({"role": "assistant"}), chunk({}, "stop")]))["content"] is None


@row("reasoning_content deltas")
def test_reasoning_content_is_kept_on_the_message(form):
    # api-docs.deepseek.com/guides/thinking_mode: reasoning_content deltas before content (and before tool calls)
    stream = form([chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
                   chunk({"content": None, "reasoning_content": "The user asks"}), chunk({"content": None, "reasoning_content": " about 北京."}),
                   calls(header(0, "call_00_x", arguments='{"city": "北京"}')), chunk({}, "tool_calls")])
    assembler = Assembler()
    assert [assembler.feed(c) for c in stream] == [""] * 5  # reasoning is not the answer's text
    read = read_reply(assembler.finish())
    assert read.message["reasoning_content"] == "The user asks about 北京." and read.message["content"] == ""


@row("a chunk with no choices")
def test_azure_content_filter_chunk_and_the_usage_chunk(form):
    # AbanteAI/archive-old-cli-mentat#429: the first chunk has empty choices, empty id and model, prompt_filter_results
    azure = {"id": "", "choices": [], "created": 0, "model": "", "object": "", "system_fingerprint": None,
             "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}}}]}
    usage = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
             "usage": {"prompt_tokens": 20, "completion_tokens": 2, "total_tokens": 22, "prompt_tokens_details": {"cached_tokens": 16}}}
    reply = assemble(form([azure, chunk({"content": "hi"}), chunk({}, "stop"), usage]))
    assert (reply["id"], reply["model"]) == ("chatcmpl-1", "m") and message_of(reply)["content"] == "hi"
    read = read_reply(reply)
    assert (read.prompt_tokens, read.completion_tokens, read.cached_tokens) == (20, 2, 16)


def test_every_quirk_row_has_a_test():
    assert sorted(ROW_TESTS) == sorted(q.name for q in QUIRKS)
    assert all(q.source.startswith("https://") for q in QUIRKS)


def test_each_repair_row_can_be_turned_off_to_see_what_it_is_for():
    reused = [calls(header(0, "a", arguments="{}")), calls(header(0, "b", arguments='{"x": 1}')), chunk({}, "tool_calls")]
    without = [q for q in QUIRKS if q.name != "a new id at an index in use"]
    assert arguments_of(assemble(reused, quirks=without)) == ['{}{"x": 1}']  # the naive reading garbles two calls
    assert arguments_of(assemble(reused)) == ["{}", '{"x": 1}']


# ----------------------------------------------------------------------------- raw server-sent events


def sse(chunks, done=True, ensure_ascii=False) -> bytes:
    events = [f"data: {json.dumps(c, ensure_ascii=ensure_ascii)}\n\n" for c in chunks] + (["data: [DONE]\n\n"] if done else [])
    return "".join(events).encode("utf-8")


def test_read_sse_reads_chunks_up_to_done_and_skips_comments():
    raw = b": OPENROUTER PROCESSING\n\n" + sse([chunk({"content": "北京"}), chunk({}, "stop")]) + b"data: {\"after\": 1}\n\n"
    assert [c["choices"][0]["delta"] for c in read_sse([raw])] == [{"content": "北京"}, {}]


def test_read_sse_with_crlf_lines_split_between_cr_and_lf():
    raw = sse([chunk({"content": "a"}), chunk({"content": "b"})]).replace(b"\n", b"\r\n")
    for at in range(len(raw)):
        assert [c["choices"][0]["delta"]["content"] for c in read_sse([raw[:at], raw[at:]])] == ["a", "b"]


def test_read_sse_joins_multi_line_data_and_drops_an_event_cut_off_by_the_end():
    raw = b'data: {"choices":\ndata: []}\n\ndata: {"choices": [{"index": 0, "delta": {"content": "cut'
    assert list(read_sse([raw])) == [{"choices": []}]


@pytest.mark.parametrize("raw,match", [
    (b"data: {\"choices\": [\n\n", "not JSON.*choices"),
    (b"data: <html>502 Bad Gateway</html>\n\n", "not JSON.*502 Bad Gateway"),
    (b"data: [1, 2]\n\n", "not a JSON object"),
    (b'data: {"error": {"message": "Rate limit reached", "type": "requests"}}\n\n', "carried an error.*Rate limit"),
    (b"data: \xff\xfe\n\n", "not UTF-8"),
])
def test_read_sse_refuses_what_is_not_a_chunk(raw, match):
    with pytest.raises(StreamError, match=match):
        list(read_sse([sse([chunk({"content": "ok"})], done=False), raw]))


def test_read_sse_stays_linear_on_one_long_line_in_small_reads():
    def read(size: int) -> None:
        raw = b'data: {"x": "' + b"a" * size + b'"}\n\ndata: [DONE]\n\n'  # one line, no break until its end
        assert [len(c["x"]) for c in read_sse(raw[i:i + 16] for i in range(0, len(raw), 16))] == [size]

    assert growth(read, 128_000, 256_000) < 3.2  # about 2; splitting the whole line again at each read is about 4


def test_read_sse_a_line_break_split_after_its_cr_across_many_reads():
    raw = sse([chunk({"content": "a"}), chunk({"content": "b"})]).replace(b"\n", b"\r\n")
    assert [c["choices"][0]["delta"]["content"] for c in read_sse([bytes([b]) for b in raw])] == ["a", "b"]
    assert [c["choices"][0]["delta"]["content"] for c in read_sse(["", *raw.decode(), ""])] == ["a", "b"]


class BadLineHandler(http.server.BaseHTTPRequestHandler):
    """Streams one good chunk, then a data line that is not JSON."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = sse([chunk({"content": "ok"})], done=False) + b"data: {not json\n\ndata: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_what_the_openai_sdk_does_with_a_data_line_that_is_not_json():
    httpd = http.server.HTTPServer(("127.0.0.1", 0), BadLineHandler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        client = OpenAI(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", api_key="x", max_retries=0)
        assembler, seen = Assembler(), []
        with pytest.raises(json.JSONDecodeError):  # a ValueError out of `for chunk in stream`, after the good chunks
            for c in client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True):
                seen.append(assembler.feed(c))
        assert seen == ["ok"]
    finally:
        httpd.shutdown()
        httpd.server_close()


# ----------------------------------------------------------------------------- fuzz: split anywhere

CHINESE = json.dumps({"city": "北京", "note": "一百二十三"}, ensure_ascii=False)
ESCAPED = json.dumps({"city": "北京", "note": "一百二十三", "emoji": "😀"})  # \u5317\u4eac..., a surrogate pair too


def splits(text: str, points) -> list[str]:
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def two_call_stream(first: list[str], second: list[str], rng: random.Random | None = None, text: str = "") -> list[dict]:
    """Headers for calls 0 and 1, then their fragments interleaved (in order within each call)."""
    stream = [chunk({"role": "assistant", "content": None})]
    if text:
        stream.append(chunk({"content": text}))
    stream += [calls(header(0, "call_0")), calls(header(1, "call_1"))]
    tagged = [(0, p) for p in first] + [(1, p) for p in second]
    if rng is None:  # alternate
        order = [x for pair in itertools.zip_longest([(0, p) for p in first], [(1, p) for p in second]) for x in pair if x]
    else:
        lanes = [[(0, p) for p in first], [(1, p) for p in second]]
        order = []
        while lanes[0] or lanes[1]:
            lane = lanes[rng.randrange(2)] if lanes[0] and lanes[1] else (lanes[0] or lanes[1])
            order.append(lane.pop(0))
        assert sorted(order) == sorted(tagged)
    stream += [calls(fragment(i, p)) for i, p in order]
    return stream + [chunk({}, "tool_calls")]


def assert_assembled(stream, first=CHINESE, second=ESCAPED, text=None):
    reply = assemble(stream)
    assert arguments_of(reply) == [first, second]
    assert reply["choices"][0]["finish_reason"] == "tool_calls"
    if text is not None:
        assert message_of(reply)["content"] == text
    assert json.loads(arguments_of(reply)[1]) == json.loads(ESCAPED)


def test_fuzz_every_split_point_of_both_calls():
    for a, b in itertools.product(range(len(CHINESE) + 1), range(len(ESCAPED) + 1)):
        assert_assembled(two_call_stream(splits(CHINESE, [a]), splits(ESCAPED, [b])))


@pytest.mark.parametrize("which", ["chinese", "escaped"])
def test_fuzz_every_three_piece_split(which):
    text = CHINESE if which == "chinese" else ESCAPED
    for a, b in itertools.combinations(range(1, len(text)), 2):
        pieces = splits(text, [a, b])
        if which == "chinese":
            assert_assembled(two_call_stream(pieces, splits(ESCAPED, [7, 19])))
        else:
            assert_assembled(two_call_stream(splits(CHINESE, [7, 19]), pieces))


@pytest.mark.parametrize("seed", range(8))
def test_fuzz_random_multi_splits_and_interleavings(seed):
    rng = random.Random(seed)
    for _ in range(300):
        first = splits(CHINESE, sorted(rng.sample(range(1, len(CHINESE)), rng.randint(1, 12))))
        second = splits(ESCAPED, sorted(rng.sample(range(1, len(ESCAPED)), rng.randint(1, 30))))
        assert_assembled(two_call_stream(first, second, rng, text="查一下。"), text="查一下。")


def test_fuzz_sdk_objects_random_splits():
    rng = random.Random(99)
    for _ in range(100):
        first = splits(CHINESE, sorted(rng.sample(range(1, len(CHINESE)), rng.randint(1, 8))))
        second = splits(ESCAPED, sorted(rng.sample(range(1, len(ESCAPED)), rng.randint(1, 8))))
        assert_assembled(sdk(two_call_stream(first, second, rng)))


@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_fuzz_the_raw_event_stream_split_at_every_byte(ensure_ascii):
    stream = two_call_stream(splits(CHINESE, [5, 12, 20]), splits(ESCAPED, [3, 30, 31, 50]), text="北京😀")
    raw = sse(stream, ensure_ascii=ensure_ascii)
    for at in range(len(raw) + 1):
        assert_assembled(read_sse([raw[:at], raw[at:]]), text="北京😀")
    rng = random.Random(7)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(raw)), rng.randint(2, 40)))
        assert_assembled(read_sse(splits(raw, cuts)), text="北京😀")


def test_fuzz_indexless_calls_split_anywhere():
    rng = random.Random(3)
    for _ in range(200):
        stream = [calls({"id": "call_0", "function": {"name": "get_weather", "arguments": ""}})]
        stream += [calls({"function": {"arguments": p}}) for p in splits(CHINESE, sorted(rng.sample(range(1, len(CHINESE)), 5)))]
        stream += [calls({"id": "call_1", "function": {"name": "get_weather", "arguments": ""}})]
        stream += [calls({"id": "", "function": {"arguments": p}}) for p in splits(ESCAPED, sorted(rng.sample(range(1, len(ESCAPED)), 9)))]
        assert_assembled(stream + [chunk({}, "stop")])


def test_pieces_copy_the_callers_dicts_before_rows_edit_them():
    delta = {"index": 0, "function": {"arguments": {"x": 1}}}
    piece = Piece.of({"delta": {"tool_calls": [delta]}})
    piece.calls[0]["function"]["arguments"] = "{}"
    assert delta["function"]["arguments"] == {"x": 1}


# ----------------------------------------------------------------------------- against the practice server

CONVERSATIONS = {
    "one city": "北京现在天气怎么样？",
    "two cities in parallel": "北京和上海的天气怎么样？",
    "english": "What's the weather in Paris?",
    "no tool needed": "你好，请介绍一下你自己。",
}


def streamed_reply(client, **params):
    assembler, deltas = Assembler(), []
    for c in client.chat.completions.create(**params, stream=True, stream_options={"include_usage": True}):
        deltas.append(assembler.feed(c))
    return assembler, deltas


@pytest.fixture(scope="module")
def practice():
    with PracticeServer() as server:
        yield server


@pytest.mark.parametrize("question", CONVERSATIONS.values(), ids=CONVERSATIONS.keys())
def test_streamed_and_non_streamed_replies_are_identical_round_after_round(practice, question):
    client = OpenAI(base_url=practice.base_url, api_key="practice")
    messages = [{"role": "user", "content": question}]
    for round_number in range(1, 5):
        params = {"model": "practice", "messages": messages, "tools": [WEATHER_TOOL]}
        plain = read_reply(client.chat.completions.create(**params), round_number=round_number)
        assembler, deltas = streamed_reply(client, **params)
        streamed = read_reply(assembler.finish(), round_number=round_number)
        assert streamed.message == plain.message and streamed.calls == plain.calls
        assert (streamed.finish_reason, streamed.prompt_tokens, streamed.completion_tokens) == (
            plain.finish_reason, plain.prompt_tokens, plain.completion_tokens)
        assert streamed.repairs == plain.repairs == [] and assembler.repairs == []
        assert "".join(deltas) == (plain.message["content"] or "")
        messages.append(plain.message)
        if not plain.calls:
            return
        messages += [{"role": "tool", "tool_call_id": c.id, "content": json.dumps({"temperature": 22, "sky": "晴"}, ensure_ascii=False)}
                     for c in plain.calls]
    pytest.fail("the conversation did not end with an answer")


@pytest.mark.parametrize("last", ["text", "one call", "two calls", "mixed"])
def test_the_scripted_personas_replies_are_identical_streamed(server, last):
    client = OpenAI(base_url=server.base_url, api_key="practice")
    params = {"model": "scripted", "messages": [{"role": "user", "content": last}], "tools": [WEATHER_TOOL]}
    plain = read_reply(client.chat.completions.create(**params))
    assembler, _ = streamed_reply(client, **params)
    assert read_reply(assembler.finish()).message == plain.message


def test_async_for_with_async_openai(practice):
    async def run():
        client = AsyncOpenAI(base_url=practice.base_url, api_key="practice")
        params = {"model": "practice", "messages": [{"role": "user", "content": "北京和上海的天气怎么样？"}], "tools": [WEATHER_TOOL]}
        assembler = Assembler()
        async for c in await client.chat.completions.create(**params, stream=True):
            assembler.feed(c)
        plain = await client.chat.completions.create(**params)
        await client.close()
        return read_reply(assembler.finish()), read_reply(plain)
    streamed, plain = asyncio.run(run())
    assert streamed.message == plain.message and len(streamed.calls) == 2


@pytest.mark.parametrize("max_tokens", [3, 6, 9])
def test_a_reply_cut_by_max_tokens_inside_the_arguments_is_length(practice, max_tokens):
    client = OpenAI(base_url=practice.base_url, api_key="practice")
    params = {"model": "practice", "messages": [{"role": "user", "content": "北京和上海的天气怎么样？"}],
              "tools": [WEATHER_TOOL], "max_tokens": max_tokens}
    plain = read_reply(client.chat.completions.create(**params))
    assembler, _ = streamed_reply(client, **params)
    streamed = read_reply(assembler.finish())
    assert streamed.finish_reason == plain.finish_reason == "length" and streamed.message == plain.message


# ----------------------------------------------------------------------------- hostile streams: linear time


def feed_all(stream) -> dict:
    assembler = Assembler()
    for c in stream:
        assembler.feed(c)
    return assembler.finish()


def many_fragments(count: int, shape: str) -> list[dict]:
    """One call in `count` fragments: index-less with the name repeated on each (the header quirk on top of the
    index-less one), or at index 0 with a new id and the name on each (vLLM's harmony path)."""
    if shape == "no index":
        head = {"id": "call_0", "type": "function", "function": {"name": "write", "arguments": '{"text": "'}}
        body = [{"function": {"name": "write", "arguments": "ab "}} for _ in range(count)]
        tail = {"function": {"arguments": '"}'}}
    else:
        head = header(0, "id-0", "write", '{"text": "')
        body = [{"index": 0, "id": f"id-{n + 1}", "function": {"name": "write", "arguments": "ab "}} for n in range(count)]
        tail = fragment(0, '"}')
    return [calls(head), *(calls(d) for d in body), calls(tail), chunk({}, "tool_calls")]


@pytest.mark.parametrize("shape", ["no index", "a new id on each"])
def test_many_fragments_are_scanned_once_and_joined_only_at_the_end(monkeypatch, shape):
    from mini_framework.streaming import assembler as module

    scanned, joined = [], []
    real_scan, real_join = module.scan, module.Slot.arguments.fget

    def counting_scan(text, state=(0, False, False)):
        scanned.append(len(text))
        return real_scan(text, state)

    def counting_join(slot):
        joined.append(len(slot.parts))
        return real_join(slot)

    monkeypatch.setattr(module, "scan", counting_scan)
    monkeypatch.setattr(module.Slot, "arguments", property(counting_join))
    reply = feed_all(many_fragments(5_000, shape))
    arguments = arguments_of(reply)
    assert arguments == ['{"text": "' + "ab " * 5_000 + '"}']
    assert sum(scanned) <= 3 * len(arguments[0])  # each fragment as it comes, the whole once at the end
    assert len(joined) <= 10  # by finish() and the rows at the end, not once a chunk


@pytest.mark.parametrize("shape", ["no index", "a new id on each"])
def test_many_fragments_take_linear_time(shape):
    streams = {n: many_fragments(n, shape) for n in (10_000, 20_000)}
    assert growth(lambda n: feed_all(streams[n]), 10_000, 20_000) < 3.2  # about 2; a quadratic reading is about 4


def test_many_indexless_calls_take_linear_time():
    def stream(count: int) -> list[dict]:
        return [*(calls({"id": f"call_{n}", "function": {"name": "f", "arguments": "{}"}}) for n in range(count)),
                chunk({}, "tool_calls")]

    streams = {n: stream(n) for n in (5_000, 10_000)}

    def run(n: int) -> None:
        assembler = Assembler(max_calls=None)
        for c in streams[n]:
            assembler.feed(c)
        assert len(message_of(assembler.finish())["tool_calls"]) == n

    assert growth(run, 5_000, 10_000) < 3.2


# ----------------------------------------------------------------------------- hostile streams: caps


def test_the_caps_have_documented_defaults():
    assembler = Assembler()
    assert (assembler.max_bytes, assembler.max_calls, assembler.deadline_seconds) == (8 * 2**20, 128, 600.0)


@pytest.mark.parametrize("stream", [
    [chunk({"content": "北京" * 10}), chunk({"content": "晴"})],  # 60 + 3 bytes of UTF-8
    [calls(header(0, "c1", arguments='{"city": "')), calls(fragment(0, "北京" * 10 + '"}'))],
    [chunk({"content": "北京" * 6}), calls(header(0, "c1", arguments='{"city": "北京北京北京"}'))],  # 36 + 30
    [chunk({"reasoning_content": "想" * 30}), chunk({"content": "晴"})],
], ids=["text", "arguments", "text and arguments", "reasoning and text"])
def test_a_reply_over_max_bytes_raises_naming_the_limit(stream):
    assembler = Assembler(max_bytes=60)
    with pytest.raises(StreamError, match="max_bytes=60"):
        for c in stream:
            assembler.feed(c)


def test_max_bytes_counts_utf8_bytes_and_allows_exactly_the_limit():
    assembler = Assembler(max_bytes=6)
    assert assembler.feed(chunk({"content": "北京"})) == "北京"  # 6 bytes
    with pytest.raises(StreamError, match="max_bytes=6"):
        assembler.feed(chunk({"content": "!"}))


@pytest.mark.parametrize("indexed", [True, False])
def test_a_reply_with_more_than_max_calls_raises_naming_the_limit(indexed):
    def delta(n):
        return header(n, f"c{n}", arguments="{}") if indexed else {"id": f"c{n}", "function": {"name": "f", "arguments": "{}"}}

    assembler = Assembler(max_calls=3)
    for n in range(3):
        assembler.feed(calls(delta(n)))
    with pytest.raises(StreamError, match="more than max_calls=3"):
        assembler.feed(calls(delta(3)))


def test_a_stream_past_its_deadline_raises_at_the_next_chunk():
    assembler = Assembler(deadline_seconds=0.01)
    time.sleep(0.05)
    with pytest.raises(StreamError, match="deadline_seconds=0.01"):
        assembler.feed(chunk({"content": "晚了"}))


def test_caps_of_none_are_off():
    assembler = Assembler(max_bytes=None, max_calls=None, deadline_seconds=None)
    for n in range(200):
        assembler.feed(calls(header(n, f"c{n}", arguments="{}")))
    assert len(message_of(assembler.finish())["tool_calls"]) == 200


@pytest.mark.parametrize("options,error,match", [
    ({"max_bytes": 0}, ValueError, "max_bytes must be a positive whole number or None, not 0"),
    ({"max_calls": -1}, ValueError, "max_calls must be a positive whole number or None, not -1"),
    ({"max_calls": 2.5}, TypeError, "max_calls must be a positive whole number or None, not 2.5"),
    ({"max_bytes": True}, TypeError, "max_bytes must be a positive whole number or None, not True"),
    ({"deadline_seconds": 0}, ValueError, "deadline_seconds must be a positive number of seconds or None, not 0"),
    ({"deadline_seconds": "600"}, TypeError, "deadline_seconds must be a positive number of seconds or None"),
    ({"deadline_seconds": float("nan")}, ValueError, "deadline_seconds must be a positive number"),
])
def test_bad_caps_are_refused(options, error, match):
    with pytest.raises(error, match=match):
        Assembler(**options)
