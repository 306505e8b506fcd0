"""From a persona's `Reply` to the bytes OpenAI would send: `chat.completion` and its stream.

Everything here is a pure function of the request body and the reply, so the same request
always gives byte-identical output (nbval compares notebook outputs):

- ids are derived from a hash of the canonicalised request (`stream` options excluded, so a
  streamed and a non-streamed call of the same conversation share their ids);
- `created` is a constant; `system_fingerprint` is a constant of the real `fp_` shape;
- usage is an *estimate*: CJK characters (ideographs, kana, hangul, full-width forms: `cjk.WIDE`)
  count one token each, other text one token per four characters, plus a few tokens per
  message; tool definitions count towards the prompt. Of the prompt, `cached_tokens` is what the
  prompt cache served: the one number that depends on earlier requests (the server puts it in
  `Facts`; see `caching.py`). With the `@deepseek` flag the usage takes DeepSeek's shape (`usage`).

The stream follows the real API's order, checked against recorded gpt-4o streams: a first
chunk with `role`, `content` and `refusal: null` (carrying the first tool call's header when the
reply starts with a call), content deltas, per call a header then argument fragments that carry
only `index` and `function.arguments`, a `delta: {}` chunk with `finish_reason`, an optional
usage chunk with `choices: []`, then `[DONE]`. Concessions: no `obfuscation` field, no
`logprobs` (always null), `stop` applies to text only, and `n > 1` streams its choices one after
the other rather than interleaved.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .cjk import WIDE
from .reply import PlannedCall, Reply

CREATED = 1767225600  # 2026-01-01T00:00:00Z, fixed so notebook outputs never change
SYSTEM_FINGERPRINT = "fp_" + hashlib.sha256(b"practice-model/1").hexdigest()[:10]
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_WIDE = re.compile(f"[{WIDE}]")     # one token each (see cjk.py for which characters and why)
# Streaming pieces: a word, one or two CJK characters, or a short run of punctuation, each with
# the whitespace before it. The last alternative guarantees every character lands somewhere.
_PIECE = re.compile(r"\s*(?:[A-Za-z0-9_]{1,10}|[^\x00-\x7f\s]{1,2}|[!-/:-@\[-`{-~]{1,3}|.)|\s+", re.DOTALL)


# ---------------------------------------------------------------------------------------------
# Deterministic ids.


def canonical_json(value: Any) -> str:
    """One spelling per JSON value: keys sorted, compact, ASCII (the practice model's identity of a value).

    >>> canonical_json({"b": 1.0, "a": [None, "x"]})
    '{"a":[null,"x"],"b":1.0}'
    """
    return json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"), default=str)


def canonical(request: dict[str, Any]) -> str:
    """The request as canonical JSON, without the streaming switches (the seed of every id)."""
    return canonical_json({k: v for k, v in request.items() if k not in ("stream", "stream_options")})


def base62(seed: str, length: int) -> str:
    """`length` base62 characters derived from `seed`.

    >>> base62("x", 5) == base62("x", 5), len(base62("x", 24))
    (True, 24)
    """
    n = int.from_bytes(hashlib.sha256(seed.encode("utf-8", "replace")).digest(), "big")
    out = []
    for _ in range(length):
        n, r = divmod(n, 62)
        out.append(_BASE62[r])
    return "".join(out)


def completion_id(seed: str) -> str:
    """`chatcmpl-` + 29 characters, like `chatcmpl-BLGOkzXc864uH3CZxRW9stxqzlpOl`."""
    return "chatcmpl-" + base62(seed, 29)


def call_id(seed: str, choice: int, index: int) -> str:
    """`call_` + 24 characters, like `call_TvKBsG2K5gy1PIv9YX7PHOlb`."""
    return "call_" + base62(f"{seed}|call|{choice}|{index}", 24)


def request_id(seed: str) -> str:
    """The `x-request-id` header: `req_` + 32 hex characters."""
    return "req_" + hashlib.sha256(f"{seed}|request".encode("utf-8", "replace")).hexdigest()[:32]


# ---------------------------------------------------------------------------------------------
# Token estimates.


def estimate_tokens(text: str) -> int:
    """CJK characters count one token each, other characters one token per four.

    >>> estimate_tokens("北京"), estimate_tokens("hello world"), estimate_tokens("")
    (2, 3, 0)
    """
    cjk = 0 if text.isascii() else len(_WIDE.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


def _content_tokens(content: Any) -> int:
    """Tokens of a message's content: text, or parts (an image counts 85, like a low-detail one)."""
    if isinstance(content, str):
        return estimate_tokens(content)
    if not isinstance(content, list):
        return 0
    total = 0
    for part in content:
        if isinstance(part, dict):
            text = part.get("text") if isinstance(part.get("text"), str) else part.get("refusal")
            total += estimate_tokens(text) if isinstance(text, str) else 85
    return total


def prompt_tokens(request: dict[str, Any]) -> int:
    """Estimated prompt tokens: 4 per message plus its text and calls, the tools' JSON, and 3."""
    total = 3
    for message in request.get("messages") or []:
        total += 4 + _content_tokens(message.get("content"))
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            total += 3 + estimate_tokens(str(fn.get("name", ""))) + estimate_tokens(str(fn.get("arguments", "")))
    return total + tool_tokens(request)


def tools_text(request: dict[str, Any]) -> str:
    """The tool definitions as the estimate reads them: compact JSON ('' without tools)."""
    tools = request.get("tools")
    return json.dumps(tools, ensure_ascii=False, separators=(",", ":")) if tools else ""


def tool_tokens(request: dict[str, Any]) -> int:
    """Estimated tokens of the tool definitions (part of `prompt_tokens`; the "functions" of a 400)."""
    return estimate_tokens(tools_text(request))


def _call_tokens(call: PlannedCall) -> int:
    """Estimated completion tokens of one tool call."""
    return 3 + estimate_tokens(call.name) + estimate_tokens(call.arguments)


def truncate(text: str, tokens: int) -> str:
    """The longest prefix of `text` whose estimate fits in `tokens`.

    >>> truncate("abcdefghij", 2), truncate("北京上海", 3)
    ('abcdefgh', '北京上')
    """
    cjk = other = 0
    for i, ch in enumerate(text):
        cjk, other = (cjk + 1, other) if _WIDE.match(ch) else (cjk, other + 1)
        if cjk + (other + 3) // 4 > tokens:
            return text[:i]
    return text


# ---------------------------------------------------------------------------------------------
# Shaping a reply to the request's limits.


@dataclass(frozen=True)
class Facts:
    """What the answer's wire form depends on, read from the request body before any persona sees it.

    A persona gets the parsed body itself; whatever it does to it, the ids, usage and limits of
    the answer were already fixed here (and copying a body of megabytes costs more than reading it).
    """

    seed: str
    """`canonical(request)`: what every id is derived from."""
    model: str
    """The `model` echoed back."""
    n: int
    """Choices to send (`n`, 1 when absent)."""
    stops: tuple[str, ...]
    """`stop` sequences (text only)."""
    limit: int | None
    """`max_completion_tokens` or `max_tokens`."""
    prompt_tokens: int
    """The estimated prompt size."""
    with_usage: bool
    """Whether a stream ends with a usage chunk (`stream_options.include_usage`)."""
    cached_tokens: int = 0
    """Of `prompt_tokens`, those the prompt cache served (`caching.py`; the server sets it)."""
    wording: str = "openai"
    """Whose API the answer imitates where providers differ (`providers.WORDINGS`; the server sets it from the
    model name's flag): with 'deepseek' the usage carries DeepSeek's cache fields (`usage`)."""


def facts(request: dict[str, Any]) -> Facts:
    """Read a (validated) request body's Facts.

    >>> f = facts({"model": "m", "messages": [{"role": "user", "content": "北京"}], "stop": "x", "n": 2})
    >>> f.model, f.n, f.stops, f.limit, f.prompt_tokens, f.with_usage
    ('m', 2, ('x',), None, 9, False)
    """
    stops = request.get("stop")
    stops = [stops] if isinstance(stops, str) else [s for s in stops or [] if isinstance(s, str) and s]
    limit = request.get("max_completion_tokens") or request.get("max_tokens")
    options = request.get("stream_options")
    return Facts(canonical(request), str(request.get("model")), _choices(request), tuple(stops),
                 limit if isinstance(limit, int) and not isinstance(limit, bool) else None, prompt_tokens(request),
                 isinstance(options, dict) and options.get("include_usage") is True)


@dataclass(frozen=True)
class Shaped:
    """What one choice says, after `stop` and `max_tokens` were applied."""

    content: str | None
    calls: tuple[PlannedCall, ...]
    finish_reason: str

    @property
    def completion_tokens(self) -> int:
        """Estimated tokens of this choice."""
        return estimate_tokens(self.content or "") + sum(_call_tokens(c) for c in self.calls)


def shape(request: Facts, reply: Reply) -> Shaped:
    """Apply `stop` (text only) and `max_completion_tokens`/`max_tokens` to a reply."""
    content, calls, finish = reply.content, reply.tool_calls, reply.finish_reason
    if content is None and not calls:
        content = ""
    cuts = [content.find(s) for s in request.stops if content and s and s in content]
    if cuts:
        content, calls, finish = (content or "")[: min(cuts)], (), "stop"
    if request.limit is None:
        return Shaped(content, calls, finish)
    budget = request.limit
    if content and estimate_tokens(content) > budget:
        return Shaped(truncate(content, budget), (), "length")
    budget -= estimate_tokens(content or "")
    kept: list[PlannedCall] = []
    for call in calls:
        if _call_tokens(call) > budget:
            room = max(0, budget - 3 - estimate_tokens(call.name))
            return Shaped(content, (*kept, PlannedCall(call.name, truncate(call.arguments, room))), "length")
        budget -= _call_tokens(call)
        kept.append(call)
    return Shaped(content, tuple(kept), finish)


def usage(request: Facts, shaped: Shaped) -> dict[str, Any]:
    """The `usage` object; completion tokens are billed for every one of the `n` choices.

    DeepSeek (`wording` 'deepseek') reports its context cache in two fields of its own instead of
    OpenAI's `prompt_tokens_details.cached_tokens`: `prompt_cache_hit_tokens`, the prompt's tokens
    served from the cache, and `prompt_cache_miss_tokens`, the rest; both count tokens and add up
    to `prompt_tokens` (https://api-docs.deepseek.com/guides/kv_cache,
    https://api-docs.deepseek.com/api/create-chat-completion). The body recorded in
    https://github.com/BerriAI/litellm/issues/5017 has these five fields and no others, and code
    that reads only OpenAI's field finds no cache at all on DeepSeek
    (https://github.com/NousResearch/hermes-agent/pull/65678, 2026). Some bodies recorded in 2025
    also carried `prompt_tokens_details` with the same number; the practice model sends the
    documented shape, so a reader of both shapes (the framework's `replies.py`) can be shown.

    >>> shaped = Shaped("ok", (), "stop")
    >>> usage(Facts("", "practice@deepseek", 1, (), None, 2048, False, 1024, "deepseek"), shaped)
    {'prompt_tokens': 2048, 'completion_tokens': 1, 'total_tokens': 2049, 'prompt_cache_hit_tokens': 1024, \
'prompt_cache_miss_tokens': 1024}
    """
    prompt, completion = request.prompt_tokens, shaped.completion_tokens * request.n
    if request.wording == "deepseek":
        hit = request.cached_tokens
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                "prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": prompt - hit}
    return {
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": request.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
    }


def _choices(request: dict[str, Any]) -> int:
    """The `n` parameter (1 when absent or null)."""
    n = request.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1


# ---------------------------------------------------------------------------------------------
# The non-streaming body.


def completion(request: Facts | dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The `chat.completion` body for a reply (to a request body or its Facts), keys in the real API's order."""
    request = request if isinstance(request, Facts) else facts(request)
    seed, shaped, n = request.seed, shape(request, reply), request.n
    choices = []
    for index in range(n):
        message: dict[str, Any] = {"role": "assistant", "content": shaped.content}
        if shaped.calls:
            message["tool_calls"] = [
                {"id": call_id(seed, index, i), "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for i, c in enumerate(shaped.calls)
            ]
        message.update(refusal=None, annotations=[])
        choices.append({"index": index, "message": message, "logprobs": None, "finish_reason": shaped.finish_reason})
    return {
        "id": completion_id(seed), "object": "chat.completion", "created": CREATED, "model": request.model,
        "choices": choices, "usage": usage(request, shaped),
        "service_tier": "default", "system_fingerprint": SYSTEM_FINGERPRINT,
    }


# ---------------------------------------------------------------------------------------------
# The stream.


def pieces(text: str) -> list[str]:
    """Split text the way a model streams it: words, CJK pairs, punctuation.

    >>> pieces('{"city":"北京"}')
    ['{"', 'city', '":"', '北京', '"}']
    >>> "".join(pieces("Hello, world!")) == "Hello, world!"
    True
    """
    return _PIECE.findall(text)


def _deltas(seed: str, index: int, shaped: Shaped) -> Iterator[dict[str, Any]]:
    """The deltas of one choice, first chunk to last, without the finish chunk."""
    first: dict[str, Any] = {"role": "assistant"}
    calls = list(enumerate(shaped.calls))
    if shaped.content is None and calls:
        i, call = calls[0]
        first.update(content=None, tool_calls=[_header(seed, index, i, call)], refusal=None)
        yield first
        yield from _fragments(i, call)
        calls = calls[1:]
    else:
        first.update(content="", refusal=None)
        yield first
        for piece in pieces(shaped.content or ""):
            yield {"content": piece}
    for i, call in calls:
        yield {"tool_calls": [_header(seed, index, i, call)]}
        yield from _fragments(i, call)


def _header(seed: str, choice: int, i: int, call: PlannedCall) -> dict[str, Any]:
    """The delta that opens a tool call: index, id, type, name and empty arguments."""
    return {"index": i, "id": call_id(seed, choice, i), "type": "function",
            "function": {"name": call.name, "arguments": ""}}


def _fragments(i: int, call: PlannedCall) -> Iterator[dict[str, Any]]:
    """Argument fragments carrying only `index` and `function.arguments`."""
    for piece in pieces(call.arguments):
        yield {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}


def stream(request: Facts | dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    """Every `chat.completion.chunk` of the streamed answer (to a request body or its Facts), in order (without
    `[DONE]`)."""
    request = request if isinstance(request, Facts) else facts(request)
    seed, shaped, n, with_usage = request.seed, shape(request, reply), request.n, request.with_usage
    head = {"id": completion_id(seed), "object": "chat.completion.chunk", "created": CREATED,
            "model": request.model, "service_tier": "default", "system_fingerprint": SYSTEM_FINGERPRINT}

    def chunk(index: int, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        out = {**head, "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]}
        return {**out, "usage": None} if with_usage else out

    chunks = []
    for index in range(n):
        chunks += [chunk(index, delta, None) for delta in _deltas(seed, index, shaped)]
        chunks.append(chunk(index, {}, shaped.finish_reason))
    if with_usage:
        chunks.append({**head, "choices": [], "usage": usage(request, shaped)})
    return chunks


def dumps(obj: Any, pretty: bool = False) -> bytes:
    """JSON bytes as the API sends them: UTF-8, non-ASCII unescaped, lone surrogates replaced.

    Whole bodies are pretty-printed with two spaces (as api.openai.com does); stream chunks are compact.
    """
    text = json.dumps(obj, ensure_ascii=False, indent=2) if pretty else json.dumps(obj, ensure_ascii=False,
                                                                                    separators=(",", ":"))
    return text.encode("utf-8", "replace")


def sse(chunk: dict[str, Any] | None) -> bytes:
    """One server-sent event; `None` is the final `data: [DONE]`."""
    return b"data: " + (b"[DONE]" if chunk is None else dumps(chunk)) + b"\n\n"
