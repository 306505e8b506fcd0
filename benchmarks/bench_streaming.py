"""Streaming, measured: `python benchmarks/bench_streaming.py`.

    per chunk   what streaming.Assembler adds to each chunk: feed() over a long stream (a text answer of
                2,000 pieces, then two calls whose 2 x 1,000 argument fragments interleave), finish()
                included, divided by the number of chunks; with the QUIRKS rows and without them, on
                dict chunks and on the OpenAI SDK's chunk objects (built beforehand, as the SDK builds
                them from the wire: their parsing is the SDK's cost, measured on its own)
    server      against the practice server through the OpenAI SDK (127.0.0.1): time to the first
                text delta and to the whole reply with stream=True, the whole reply with stream=False,
                for a long text answer and for a reply of two parallel calls; and a three-request
                conversation (two calls, their results, the answer) streamed vs non-streamed

Numbers are medians (per chunk: of 31 runs over the whole stream, the best run in brackets; server:
of 40 requests each). The practice server plans the whole reply before it writes the first event,
so time to first delta here is its planning plus the round trip, not a model thinking; what the
rest of a streamed reply costs is mostly the SDK's own work per chunk (compare "only iterated" and
"http.client + read_sse"), not the assembler's. On a busy machine the medians move: run it twice.
"""
from __future__ import annotations

import http.client
import json
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, Callable

from timing import median_us

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from openai import OpenAI  # noqa: E402
from openai._models import construct_type  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402

from course.sse import read_sse  # noqa: E402
from mini_framework.replies import read_reply  # noqa: E402
from mini_framework.streaming.assembler import Assembler  # noqa: E402
from practice_model import PracticeServer  # noqa: E402

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "the city, e.g. 北京"}},
                   "required": ["city"]}}}
SAMPLE = "北京今天晴，最高气温 25°C。Tomorrow brings light rain, so take an umbrella. "  # written for this benchmark


def long_stream(pieces: int = 2000, fragments: int = 1000) -> list[dict[str, Any]]:
    """A text answer in `pieces` chunks, then two calls whose fragments interleave, the finish and usage chunks."""
    head = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1, "model": "bench"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    text = (SAMPLE * (pieces // 8 + 1))
    step = len(text) // pieces
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": text[i * step:(i + 1) * step]}) for i in range(pieces)]
    for index in (0, 1):
        chunks.append(chunk({"tool_calls": [{"index": index, "id": f"call_{index}", "type": "function",
                                             "function": {"name": "write_note", "arguments": '{"text": "'}}]}))
    for n in range(fragments):
        for index in (0, 1):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": f"第{n}段 "}}]}))
    for index in (0, 1):
        chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": '"}'}}]}))
    chunks.append(chunk({}, "tool_calls"))
    chunks.append({**head, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5000,
                                                    "total_tokens": 5010}})
    return chunks


def per_chunk(chunks: list[Any], quirks: Any, runs: int = 31) -> str:
    """Median (and best) µs per chunk of feeding the whole stream and finishing it."""
    def run() -> None:
        assembler = Assembler(quirks)
        for c in chunks:
            assembler.feed(c)
        assembler.finish()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e6 / len(chunks))
    return f"{statistics.median(times):6.2f} ({min(times):5.2f})"


def bench_per_chunk() -> None:
    chunks = long_stream()
    objects = [construct_type(type_=ChatCompletionChunk, value=c) for c in chunks]
    reply = Assembler()
    for c in chunks:
        reply.feed(c)
    assert len(reply.finish()["choices"][0]["message"]["tool_calls"]) == 2
    text_only = [c for c in chunks if c["choices"] and "content" in c["choices"][0]["delta"]]
    fragments = [c for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
    print(f"per chunk, µs: median (best) of 31 runs; {len(chunks):,} chunks: {len(text_only):,} text, "
          f"{len(fragments):,} tool call deltas")
    for label, stream in (("dict chunks", chunks), ("SDK chunk objects", objects)):
        print(f"  {label:<20} with QUIRKS {per_chunk(stream, None)}   without rows {per_chunk(stream, ())}")
    print(f"  dicts, text only     with QUIRKS {per_chunk(text_only, None)}   tool call deltas only "
          f"{per_chunk(fragments, None)}")
    sdk_us = median_us(lambda: [construct_type(type_=ChatCompletionChunk, value=c) for c in chunks[:500]], 15) / 500
    parse_us = median_us(lambda: [json.loads(json.dumps(c)) for c in chunks[:500]], 15) / 500
    print(f"  for scale: the SDK building one chunk object {sdk_us:.2f} µs; json.dumps + json.loads of one "
          f"chunk {parse_us:.2f} µs")


def timed(fn: Callable[[], tuple[float | None, float]], runs: int = 40) -> tuple[float | None, float]:
    """Median seconds to the first text delta (None if none) and to the whole reply, over `runs` calls of `fn`."""
    for _ in range(3):
        fn()
    results = [fn() for _ in range(runs)]
    firsts = [f for f, _ in results if f is not None]
    return (statistics.median(firsts) if firsts else None), statistics.median(t for _, t in results)


def sdk_streamed(client: OpenAI, params: dict[str, Any]) -> tuple[float | None, float]:
    """stream=True through the SDK, each chunk fed to an Assembler, the reply read."""
    start, first = time.perf_counter(), None
    assembler = Assembler()
    for c in client.chat.completions.create(**params, stream=True, stream_options={"include_usage": True}):
        if assembler.feed(c) and first is None:
            first = time.perf_counter() - start
    read_reply(assembler.finish())
    return first, time.perf_counter() - start


def sdk_iterated(client: OpenAI, params: dict[str, Any]) -> tuple[float | None, float]:
    """stream=True through the SDK, the chunks only iterated (what the SDK alone costs)."""
    start = time.perf_counter()
    for _ in client.chat.completions.create(**params, stream=True, stream_options={"include_usage": True}):
        pass
    return None, time.perf_counter() - start


def raw_streamed(port: int, params: dict[str, Any]) -> tuple[float | None, float]:
    """stream=True over http.client, the bytes through read_sse into an Assembler (no SDK objects)."""
    start, first = time.perf_counter(), None
    connection = http.client.HTTPConnection("127.0.0.1", port)
    body = json.dumps({**params, "stream": True, "stream_options": {"include_usage": True}})
    connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response, assembler = connection.getresponse(), Assembler()
    for c in read_sse(iter(lambda: response.read1(65536), b"")):
        if assembler.feed(c) and first is None:
            first = time.perf_counter() - start
    read_reply(assembler.finish())
    connection.close()
    return first, time.perf_counter() - start


def sdk_plain(client: OpenAI, params: dict[str, Any]) -> tuple[float | None, float]:
    """stream=False through the SDK, the reply read."""
    start = time.perf_counter()
    read_reply(client.chat.completions.create(**params))
    return None, time.perf_counter() - start


def conversation(client: OpenAI, question: list[dict[str, Any]], stream: bool) -> tuple[float | None, float]:
    """Calls, their results, the answer: each request streamed and assembled, or not."""
    start, messages = time.perf_counter(), list(question)
    for round_number in range(1, 5):
        params = {"model": "practice", "messages": messages, "tools": [WEATHER]}
        if stream:
            assembler = Assembler()
            for c in client.chat.completions.create(**params, stream=True):
                assembler.feed(c)
            reply = read_reply(assembler.finish(), round_number=round_number)
        else:
            reply = read_reply(client.chat.completions.create(**params), round_number=round_number)
        messages.append(reply.message)
        if not reply.calls:
            break
        messages += [{"role": "tool", "tool_call_id": c.id, "content": '{"temperature": 22}'} for c in reply.calls]
    return None, time.perf_counter() - start


def ms(seconds: float | None) -> str:
    return "     -" if seconds is None else f"{seconds * 1e3:6.2f}"


def bench_server() -> None:
    with PracticeServer() as server:
        client = OpenAI(base_url=server.base_url, api_key="practice")
        question = [{"role": "user", "content": "北京和上海的天气怎么样？"}]
        calls = read_reply(client.chat.completions.create(model="practice", messages=question, tools=[WEATHER]))
        results = [{"role": "tool", "tool_call_id": c.id, "content": json.dumps(
            {"temperature": 22, "sky": "晴", "advice": SAMPLE * 6}, ensure_ascii=False)} for c in calls.calls]
        print("\npractice server on 127.0.0.1, median ms of 40 requests")
        for label, messages in (("a text answer", [*question, calls.message, *results]),
                                ("two parallel calls", question)):
            params = {"model": "practice", "messages": messages, "tools": [WEATHER]}
            chunks = sum(1 for _ in client.chat.completions.create(**params, stream=True))
            print(f"  {label} ({chunks} chunks)       first text delta   whole reply")
            for how, fn in (("SDK, stream=True, assembled", partial(sdk_streamed, client, params)),
                            ("SDK, stream=True, only iterated", partial(sdk_iterated, client, params)),
                            ("http.client + read_sse, assembled", partial(raw_streamed, server.port, params)),
                            ("SDK, stream=False", partial(sdk_plain, client, params))):
                first, whole = timed(fn)
                print(f"    {how:<34} {ms(first)}             {ms(whole)}")
        _, streamed = timed(lambda: conversation(client, question, True))
        _, plain = timed(lambda: conversation(client, question, False))
        print(f"  a conversation (two calls, their results, the answer: 2 requests)   streamed {ms(streamed)}   "
              f"non-streamed {ms(plain)}")


if __name__ == "__main__":
    bench_per_chunk()
    bench_server()
