"""Streams for lesson 11: the chunks of a streamed reply as providers really send them, and a judge.

    print_stream(stream)        print each chunk as it arrives (text pieces inline); the chunks, as dicts
    as_sent(stream)             the SDK's chunk objects as plain dicts, exactly the JSON that arrived
    interleave(chunks)          the same reply, its calls' argument fragments alternating
    by_arrival(chunks)          lesson 11's naive reader: a new call at each id, fragments to the latest call
    TWO_CITIES                  the practice model's stream of two calls (北京, 上海), for when a model sends none
    RECORDED                    one stream per provider quirk, rebuilt from a public record of its shape
    THINKING                    a DeepSeek thinking-mode stream: reasoning_content deltas, then a call
    outcome(read, case)         "✓", or "✗ ..." saying what a way of reading a stream made of a case
    print_table(rows, headers)  columns aligned by display width (a CJK character is two columns)

Each recorded stream keeps the shape a public issue thread or a provider's documentation shows
(which fields, which are null, where the index or the id is missing, which finish_reason), with
the lesson's own call in it: get_weather for 北京 and 上海. The source is on each case, and the
framework's `streaming.QUIRKS` row that repairs it carries the same link.

Concessions: one choice per chunk; only the fields the lesson talks about are kept in each chunk
(`id`, `object`, `created`, `model`, `choices`), as the records show them.
"""
from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

__all__ = ["RECORDED", "THINKING", "TWO_CITIES", "Recorded", "as_sent", "by_arrival", "interleave", "outcome",
           "print_stream", "print_table", "width"]


def as_sent(stream: Iterable[Any]) -> list[dict[str, Any]]:
    """The chunks of an SDK stream as dicts with only the fields that came over the wire (model_dump(exclude_unset))."""
    return [c.model_dump(exclude_unset=True) if hasattr(c, "model_dump") else c for c in stream]


def print_stream(stream: Iterable[Any]) -> list[dict[str, Any]]:
    """Print each chunk of a stream as it arrives: a text delta inline, followed by `|`; any other chunk on a
    line of its own (its delta as compact JSON, its finish_reason), the usage chunk as its token counts.
    Return the chunks as dicts (as_sent)."""
    chunks: list[dict[str, Any]] = []
    inline = False
    for event in stream:
        chunk = as_sent([event])[0]
        chunks.append(chunk)
        for choice in chunk.get("choices") or [None]:
            delta = (choice or {}).get("delta") or {}
            if choice is not None and set(delta) == {"content"} and not choice.get("finish_reason"):
                print(delta["content"], end="|", flush=True)
                inline = True
                continue
            if inline:
                print()
                inline = False
            if choice is None:
                usage = chunk.get("usage") or {}
                print("choices: []  usage:", {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens")})
            else:
                finish = f"  finish_reason: {choice['finish_reason']!r}" if choice.get("finish_reason") else ""
                print("delta", json.dumps(delta, ensure_ascii=False, separators=(",", ":")) + finish)
    if inline:
        print()
    return chunks


def _calls_of(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    choices = chunk.get("choices") or []
    return (choices[0].get("delta") or {}).get("tool_calls") or [] if choices else []


def interleave(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same chunks, reordered as a gateway that merges parallel calls sends them: each call's header
    first, then the argument fragments of the calls taking turns (each call's own fragments in order).

    Chunks without tool calls keep their place before and after the calls. The content of every chunk is
    unchanged, so the reply is the same; only the order in which the fragments arrive differs.

    >>> def c(**delta): return {"choices": [{"index": 0, "delta": {"tool_calls": [delta]}}]}
    >>> h0, h1 = c(index=0, id="a", function={"arguments": ""}), c(index=1, id="b", function={"arguments": ""})
    >>> f = lambda i, t: c(index=i, function={"arguments": t})
    >>> [_calls_of(x)[0]["function"]["arguments"] for x in interleave([h0, f(0, "x"), f(0, "y"), h1, f(1, "z")])]
    ['', '', 'x', 'z', 'y']
    """
    calling = [i for i, c in enumerate(chunks) if _calls_of(c)]
    if not calling:
        return list(chunks)
    first, last = calling[0], calling[-1]
    headers: list[dict[str, Any]] = []
    lanes: dict[Any, list[dict[str, Any]]] = {}
    for chunk in chunks[first:last + 1]:
        deltas = _calls_of(chunk)
        if len(deltas) == 1 and deltas[0].get("id"):
            headers.append(chunk)  # the header of a call (its first fragment, if any, stays in it)
        elif len(deltas) == 1:
            lanes.setdefault(deltas[0].get("index"), []).append(chunk)
        else:
            headers.append(chunk)  # several deltas in one chunk: left as it is
    turns: list[dict[str, Any]] = []
    while any(lanes.values()):
        for lane in lanes.values():
            if lane:
                turns.append(lane.pop(0))
    return chunks[:first] + headers + turns + chunks[last + 1:]


def by_arrival(chunks: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]], Any]:
    """(text, calls, finish_reason) read the naive way of lesson 11: a new call at each id, every fragment added
    to the call that opened last. Wrong on purpose: lesson 11b runs it on providers' streams.

    >>> by_arrival(TWO_CITIES)[1][1]
    {'id': 'call_z1HKOI2pf5VP2X6FVGr6p3nI', 'name': 'get_weather', 'arguments': '{"city":"上海"}'}
    """
    text, calls, finish = "", [], None
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for part in delta.get("tool_calls") or []:
                if part.get("id"):
                    calls.append({"id": part["id"], "name": part["function"]["name"], "arguments": ""})
                calls[-1]["arguments"] += part["function"]["arguments"]
            finish = choice.get("finish_reason") or finish
    return text, calls, finish


# ----------------------------------------------------------------------------- recorded shapes


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, model: str = "m") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": model,
            "choices": [{"index": 0, "delta": {} if delta is None else delta, "finish_reason": finish}]}


def _calls(*deltas: dict[str, Any], model: str = "m") -> dict[str, Any]:
    return _chunk({"tool_calls": list(deltas)}, model=model)


def _two_cities() -> list[dict[str, Any]]:
    """The practice model's stream for "北京和上海现在天气怎么样？" with get_weather (as lesson 11 prints it)."""
    chunks = [_chunk({"content": "", "refusal": None, "role": "assistant"}, model="practice")]
    for index, (call_id, city) in enumerate([("call_hkprtuKh01kQVBFXqHbdWt4m", "北京"),
                                             ("call_z1HKOI2pf5VP2X6FVGr6p3nI", "上海")]):
        chunks.append(_calls({"index": index, "id": call_id, "type": "function",
                              "function": {"name": "get_weather", "arguments": ""}}, model="practice"))
        chunks += [_calls({"index": index, "function": {"arguments": piece}}, model="practice")
                   for piece in ['{"', "city", '":"', city, '"}']]
    chunks.append(_chunk({}, "tool_calls", model="practice"))
    chunks.append({**_chunk(model="practice"), "choices": [],
                   "usage": {"prompt_tokens": 101, "completion_tokens": 22, "total_tokens": 123}})
    chunks[1]["choices"][0]["delta"]["content"] = None
    return chunks


TWO_CITIES = _two_cities()
"""Two calls, one after the other, as the practice model streams them (a stand-in when a model streams none)."""

BEIJING = ("get_weather", {"city": "北京"})
SHANGHAI = ("get_weather", {"city": "上海"})


@dataclass(frozen=True)
class Recorded:
    """A provider's stream: whose, what is odd about it, where that was recorded, the chunks, what they mean."""

    label: str  # a few words for a table
    quirk: str  # the name of the streaming.QUIRKS row that repairs it (or that documents it)
    provider: str
    source: str  # a public record of the shape
    chunks: list[dict[str, Any]]
    calls: list[tuple[str, dict[str, Any]]]  # the calls the stream carries: (name, arguments)
    ids: list[str] = field(default_factory=list)  # ids that must come back exactly as sent ([]: any)


RECORDED: list[Recorded] = [
    Recorded("arguments as an object", "arguments sent as an object", "TGI (also llama.cpp, Ollama's /api/chat)",
             "https://github.com/huggingface/text-generation-inference/issues/2461",
             [_calls({"index": 0, "id": "0", "type": "function",
                      "function": {"name": "get_weather", "arguments": {"city": "北京"}}}),
              _chunk({}, "tool_calls")],
             [BEIJING]),
    Recorded("no index", "no index on tool call deltas", "Ollama before 0.4.7",
             "https://github.com/ollama/ollama/issues/7881",
             [_chunk({"role": "assistant", "content": ""}),
              _calls({"id": "call_ypgg1j0n", "type": "function",
                      "function": {"name": "get_weather", "arguments": '{"city":"北京"}'}}),
              _calls({"id": "call_8xk2mq0z", "type": "function",
                      "function": {"name": "get_weather", "arguments": '{"city":"上海"}'}}),
              _chunk({}, "tool_calls")],
             [BEIJING, SHANGHAI]),
    Recorded("index 0 reused", "a new id at an index in use", "Ollama 0.20 (every call at index 0)",
             "https://github.com/ollama/ollama/issues/15457",
             [_calls({"id": "call_abc123", "index": 0, "type": "function",
                      "function": {"name": "get_weather", "arguments": '{"city":"北京"}'}}),
              _calls({"id": "call_def456", "index": 0, "type": "function",
                      "function": {"name": "get_weather", "arguments": '{"city":"上海"}'}}),
              _chunk({}, "tool_calls")],
             [BEIJING, SHANGHAI]),
    Recorded("null or empty fields", "name, arguments, id or type null or empty on later chunks",
             "DashScope (Qwen), SiliconFlow",
             "https://github.com/Younis-Ahmed/qwen-ai-provider/pull/7",
             [_calls({"function": {"name": "get_weather", "arguments": ""}, "index": 0,
                      "id": "call_deb0063d315441b18b50d8", "type": "function"}, model="qwen-max"),
              _calls({"function": {"name": None, "arguments": '{"city": "北京"}'}, "index": 0, "id": None,
                      "type": None}, model="qwen-max"),
              _calls({"function": {}, "index": 0, "id": "", "type": "function"}, model="qwen-max"),
              _chunk({"content": None}, "tool_calls", model="qwen-max")],
             [BEIJING]),
    Recorded("Kimi's ids", "ids like functions.get_weather:0", "Kimi K2 (Moonshot, vLLM)",
             "https://github.com/vybestack/llxprt-code/issues/712",
             [_calls({"index": 0, "id": "functions.get_weather:0", "type": "function",
                      "function": {"name": "get_weather", "arguments": None}}, model="kimi-k2")]
             + [_calls({"index": 0, "id": None, "type": None, "function": {"arguments": piece, "name": None}},
                       model="kimi-k2") for piece in [' {"', "city", '":', ' "', "北京", '"}']]
             + [_chunk({}, "tool_calls", model="kimi-k2")],
             [("get_weather", {"city": "北京"})], ["functions.get_weather:0"]),
    Recorded("no ids", "no tool call ids", "vLLM (streamed)",
             "https://github.com/vllm-project/vllm/issues/18412",
             [_calls({"index": 0, "type": "function", "function": {"name": "get_weather", "arguments": ""}}),
              _calls({"index": 0, "function": {"arguments": '{"city": "北京"}'}}),
              _calls({"index": 1, "type": "function", "function": {"name": "get_weather",
                                                                   "arguments": '{"city": "上海"}'}}),
              _chunk({}, "tool_calls")],
             [BEIJING, SHANGHAI]),
    Recorded("arguments twice", "the whole arguments repeated at the end", "GLM behind some gateways",
             "https://github.com/anomalyco/opencode/pull/17339",
             [_calls({"index": 0, "id": "call_glm_0", "type": "function",
                      "function": {"name": "get_weather", "arguments": ""}}),
              _calls({"index": 0, "function": {"arguments": '{"city": '}}),
              _calls({"index": 0, "function": {"arguments": '"北京"}'}}),
              _calls({"index": 0, "function": {"arguments": '{"city":"北京"}'}}),
              _chunk({}, "tool_calls")],
             [BEIJING]),
    Recorded("id and name on every fragment", "(none needed: the first id and name are kept)",
             "llama.cpp's server (llama-cpp-python)",
             "https://github.com/abetlen/llama-cpp-python/blob/main/llama_cpp/llama_chat_format.py",
             [_chunk({"role": "assistant", "content": None}, model="gemma-3-270m")]
             + [_calls({"index": 0, "id": "call__0_get_weather_cmpl-7f3a", "type": "function",
                        "function": {"name": "get_weather", "arguments": piece}}, model="gemma-3-270m")
                for piece in ['{ "city" : ', '"北京"', " } "]]
             + [_chunk({}, "tool_calls", model="gemma-3-270m")],
             [BEIJING], ["call__0_get_weather_cmpl-7f3a"]),
    Recorded("\"stop\" with calls", "finish_reason \"stop\" with tool calls",
             "Gemini (OpenAI compatibility, streamed), vLLM",
             "https://github.com/googleapis/python-genai/issues/2868",
             [_calls({"index": 0, "id": "function-call-1", "type": "function",
                      "function": {"name": "get_weather", "arguments": '{"city":"北京"}'}}, model="gemini"),
              _chunk({}, "stop", model="gemini")],
             [BEIJING]),
]
"""One stream per quirk, in the order of the lesson's table."""

THINKING = ([_chunk({"role": "assistant", "content": None, "reasoning_content": ""}, model="deepseek-chat")]
            + [_chunk({"content": None, "reasoning_content": piece}, model="deepseek-chat")
               for piece in ["用户问", "北京的", "天气，", "调用 get_weather", "。"]]
            + [_calls({"index": 0, "id": "call_00_kD9yqB2", "type": "function",
                       "function": {"name": "get_weather", "arguments": ""}}, model="deepseek-chat"),
               _calls({"index": 0, "function": {"arguments": '{"city": "北京"}'}}, model="deepseek-chat"),
               _chunk({}, "tool_calls", model="deepseek-chat")])
"""DeepSeek's thinking mode: reasoning_content beside content, before the call
(https://api-docs.deepseek.com/guides/thinking_mode)."""


# ----------------------------------------------------------------------------- judging a reading


def _loads(text: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _brief(text: Any, most: int = 18) -> str:
    shown = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= most else shown[:most - 1] + "…"


def outcome(read: Callable[[list[dict[str, Any]]], Any], case: Recorded) -> str:
    """What `read(chunks)`, which returns (text, calls, finish_reason), made of a recorded stream: "✓" when it
    found the calls the stream carries (names, arguments, the ids that must come back) and a finish_reason
    that runs them; otherwise "✗" and the first thing that went wrong."""
    try:
        _, calls, finish = read(case.chunks)
    except Exception as error:  # what the reading raised is the outcome
        return f"✗ {type(error).__name__}"
    got = [(c.get("name"), _loads(c.get("arguments"))) for c in calls]
    if got != case.calls:
        return f"✗ {len(calls)} call(s): " + ", ".join(_brief(c.get("arguments")) for c in calls)
    if case.ids and [c.get("id") for c in calls] != case.ids:
        return "✗ ids changed"
    if any(not c.get("id") for c in calls):
        return "✗ a call without an id"
    if finish != "tool_calls":
        return f"✗ {finish!r}: calls not run"
    return "✓"


# ----------------------------------------------------------------------------- printing


def width(text: str) -> int:
    """Columns `text` takes in a notebook or terminal: a CJK character takes two.

    >>> width("北京"), width("ab")
    (4, 2)
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def print_table(rows: Iterable[Iterable[Any]], headers: Iterable[str]) -> None:
    """Print rows as columns aligned by display width.

    >>> print_table([["北京", "✓"], ["Paris", "✗"]], ["city", "ok"])
    city   ok
    北京   ✓
    Paris  ✗
    """
    table = [[str(v) for v in row] for row in [list(headers), *map(list, rows)]]
    widths = [max(width(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(cell + " " * (w - width(cell)) for cell, w in zip(row, widths)).rstrip())
