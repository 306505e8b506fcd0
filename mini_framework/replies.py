"""Reading a model's reply: the assistant message to keep, the tool calls to run, the tokens it cost.

    reply = read_reply(response, taken_ids=set())
    reply.message      {"role": "assistant", "content": ..., "tool_calls": [...]}: safe to send back
    reply.calls        [ToolCall(id, name, arguments), ...]: the same calls, to run
    reply.repairs      what had to be fixed, e.g. "tool_calls[1] had no id: gave it 'call_2_1'"

A provider's reply is input like any other, and some are malformed: a `tool_calls` entry that is
null or a string, `function` given as a string, arguments sent as an object instead of a JSON
string, a missing, empty or repeated call id, no `choices` at all, `usage` that is not a number.
The rule here: whatever can be repaired without guessing is repaired *before* anything runs, so
the stored message and the tool messages answering it always pair up (a follow-up request with a
null or repeated id is a 400 from the API, after the tools have already run). What cannot be
repaired raises `ProviderError`, whose message quotes what the provider sent.

The stored message carries `content: ""` (not null) beside tool calls: OpenAI, DeepSeek, vLLM, Ollama and
llama.cpp's server all take "" back, and the last two refuse null (a 400 or a 500). Some gateways in front of
Anthropic-style APIs refuse "" instead ("text content blocks must be non-empty"): for those, a
`before_request` hook (hooks.py) can send None where the text is "".

Concessions: one choice per reply (`n=1`); text content given as a list of parts is kept as a
list; provider extras other than DeepSeek's `reasoning_content` are dropped from the stored message.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from .text import json_object, quote
from .tools import NAME_PATTERN

__all__ = ["ModelReply", "ProviderError", "ToolCall", "read_reply"]

MAX_QUOTED = 300  # characters of the provider's reply quoted in an error message
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_-]+")


class ProviderError(RuntimeError):
    """The provider's reply cannot be used as it is; the message says what it sent.

    >>> str(ProviderError("the reply has no choices", {"choices": []}))
    'the reply has no choices; the provider sent {"choices": []}'
    """

    def __init__(self, problem: str, sent: Any = None) -> None:
        super().__init__(f"{problem}; the provider sent {quote(sent, MAX_QUOTED)}")
        self.problem = problem


@dataclass(frozen=True)
class ToolCall:
    """One call a model asked for."""

    id: str  # the tool_call_id the answer must carry
    name: str  # the function name the model chose (maybe one that does not exist)
    arguments: Any  # JSON text as read by `read_reply`; given by hand it may be a dict

    @classmethod
    def of(cls, call: Any) -> ToolCall:
        """From an SDK object or a dict in the Chat Completions shape (`id` kept as sent, "" if none).

        >>> ToolCall.of({"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}})
        ToolCall(id='call_1', name='f', arguments='{}')
        """
        if isinstance(call, ToolCall):
            return call
        entry = _as_dict(call, "a tool call")
        name, arguments, _ = _function_of(entry, "the tool call")
        raw_id = entry.get("id")
        return cls(raw_id if isinstance(raw_id, str) else "", name, arguments)

    def to_message_part(self) -> dict[str, Any]:
        """This call as an entry of an assistant message's `tool_calls`."""
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class ModelReply:
    """A reply, read and repaired: what to store, what to run, what it cost."""

    message: dict[str, Any]  # the assistant message to append to the conversation
    calls: list[ToolCall]  # its tool calls: unique non-empty ids, arguments as JSON text
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    repairs: list[str] = field(default_factory=list)  # what was wrong with the reply and how it was fixed
    cached_tokens: int = 0  # of prompt_tokens, served from the provider's prompt cache


def read_reply(response: Any, taken_ids: set[str] | frozenset[str] = frozenset(), round_number: int = 0) -> ModelReply:
    """The first choice of a Chat Completions response (an SDK object or a dict), repaired.

    `taken_ids` are the call ids already in the conversation; a new call never reuses one.

    >>> reply = read_reply({"choices": [{"message": {"role": "assistant", "tool_calls": [
    ...     {"id": "", "function": {"name": "f", "arguments": {"x": 1}}}]}}]}, round_number=2)
    >>> reply.calls
    [ToolCall(id='call_2_0', name='f', arguments='{"x": 1}')]
    >>> reply.repairs
    ['tool_calls[0]: arguments sent as an object: sent as JSON text', "tool_calls[0] had no id: gave it 'call_2_0'"]
    """
    repairs: list[str] = []
    choices = _field(response, "choices")
    if not isinstance(choices, (list, tuple)) or not choices:
        raise ProviderError("the reply has no choices", response)
    choice = _field(choices[0], "message") if choices[0] is not None else None
    if choice is None:
        raise ProviderError("the reply's first choice has no message", choices[0])
    message = _as_dict(choice, "a message")
    calls = _read_calls(message.get("tool_calls"), set(taken_ids), round_number, repairs)
    content = _content_text(message.get("content"), repairs)
    stored: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:  # "" beside calls, not null: llama.cpp's server and some Ollama models refuse null there
        stored["content"] = content or ""
        stored["tool_calls"] = [c.to_message_part() for c in calls]
    if isinstance(message.get("reasoning_content"), str) and message["reasoning_content"]:
        stored["reasoning_content"] = message["reasoning_content"]  # DeepSeek wants it back during a tool loop
    usage = _field(response, "usage")
    prompt = _count(_field(usage, "prompt_tokens"), "prompt_tokens", repairs)
    completion = _count(_field(usage, "completion_tokens"), "completion_tokens", repairs)
    cached = _field(_field(usage, "prompt_tokens_details"), "cached_tokens")
    if cached is None:  # DeepSeek's name for it: https://api-docs.deepseek.com/guides/kv_cache
        cached = _field(usage, "prompt_cache_hit_tokens")
    cached = min(_count(cached, "prompt_tokens_details.cached_tokens", repairs), prompt)
    finish = _field(choices[0], "finish_reason")
    return ModelReply(stored, calls, prompt, completion, finish if isinstance(finish, str) else None, repairs,
                      cached)


# ----------------------------------------------------------------------------- the parts


def _content_text(content: Any, repairs: list[str]) -> str | None:
    """The assistant's text as the API takes it back: a string or None (text parts joined, others dropped)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        repairs.append("content was a list of parts: kept its text")
        return "\n".join(texts) or None
    repairs.append(f"content was {type(content).__name__}: turned into text")
    return quote(content, limit=100_000)


def _field(obj: Any, name: str) -> Any:
    """`obj.name` or `obj[name]`, None when absent (SDK objects and dicts alike)."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _as_dict(obj: Any, what: str) -> dict[str, Any]:
    """An SDK object or a dict as a dict; a JSON string holding an object is accepted too."""
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, str):
        parsed = json_object(obj)
        if parsed is not None:
            return parsed
    elif hasattr(obj, "model_dump"):
        try:
            dumped = obj.model_dump(warnings=False)
        except Exception:
            dumped = None
        if isinstance(dumped, dict):
            return dumped
    kind = type(obj).__name__
    article = "an" if kind[:1] in "aeiou" else "a"
    raise ProviderError(f"{what} is not an object (it is {article} {kind})", obj)


def _read_calls(raw: Any, taken: set[str], round_number: int, repairs: list[str]) -> list[ToolCall]:
    """The `tool_calls` of a message as ToolCalls with unique, non-empty ids."""
    if raw is None:
        return []
    if isinstance(raw, dict) or hasattr(raw, "model_dump"):
        raw = [raw]
        repairs.append("tool_calls was a single object: read as a list of one")
    if not isinstance(raw, (list, tuple)):
        raise ProviderError(f"tool_calls is not a list (it is {type(raw).__name__})", raw)
    calls = []
    for index, entry in enumerate(raw):
        where = f"tool_calls[{index}]"
        if entry is None:
            repairs.append(f"{where} was null: left out")
            continue
        fields = _as_dict(entry, where)
        if isinstance(entry, str):
            repairs.append(f"{where} was a JSON string: read as the object it holds")
        name, arguments, note = _function_of(fields, where)
        if note:
            repairs.append(note)
        call_id = fields.get("id")
        if not isinstance(call_id, str) or not call_id.strip() or call_id in taken:
            fresh = _fresh_id(round_number, index, taken)
            problem = "no id" if not isinstance(call_id, str) or not call_id.strip() else f"the id {call_id!r} again"
            repairs.append(f"{where} had {problem}: gave it {fresh!r}")
            call_id = fresh
        taken.add(call_id)
        calls.append(ToolCall(call_id, name, arguments))
    return calls


def _function_of(entry: dict[str, Any], where: str) -> tuple[str, str, str]:
    """(name, arguments as JSON text, a repair note or '') from one entry of `tool_calls`."""
    function = entry.get("function")
    note = ""
    if function is None and ("name" in entry or "arguments" in entry):
        function, note = entry, f"{where}: name and arguments outside 'function': read from the entry"
    elif isinstance(function, str):
        parsed = json_object(function)
        if parsed is not None:
            function, note = parsed, f"{where}: function was a JSON string: read as the object it holds"
        else:
            function = {"name": function, "arguments": entry.get("arguments")}
            note = f"{where}: function was a string: read as the function's name"
    elif function is not None and not isinstance(function, dict):
        function = _as_dict(function, f"{where}.function")
    function = function or {}
    raw_name = function.get("name")
    name = valid_name(raw_name)
    if name != raw_name:
        note = note or f"{where}: the name {quote(raw_name, 70)} is not one the API accepts: sent back as {name!r}"
    arguments, arguments_note = _arguments_text(function.get("arguments"), where)
    return name, arguments, note or arguments_note


def valid_name(name: Any) -> str:
    """A function name the API accepts back (1-64 of a-z A-Z 0-9 _ -), made from whatever was sent.

    A name the API would refuse in the follow-up request cannot be stored as sent; this one is
    answered as an unknown tool (so the model hears the real names), unless it was only padding.

    >>> valid_name("get_weather\\n"), valid_name("functions.get weather"), valid_name(None)
    ('get_weather', 'functions_get_weather', 'unnamed_tool')
    """
    text = name.strip() if isinstance(name, str) else "" if name is None else str(name).strip()
    if NAME_PATTERN.fullmatch(text):
        return text
    cleaned = _NOT_NAME.sub("_", text).strip("_")[:64]
    return cleaned or "unnamed_tool"


def _arguments_text(arguments: Any, where: str) -> tuple[str, str]:
    """Arguments as the JSON text the API expects back, and a note if they were not text."""
    if isinstance(arguments, str):
        return arguments, ""
    if arguments is None:
        return "{}", ""
    try:
        text = json.dumps(arguments, ensure_ascii=False)
    except RecursionError:
        raise ProviderError(f"{where}: the arguments are nested too deeply to read", "(not shown)") from None
    except (TypeError, ValueError):
        raise ProviderError(f"{where}: the arguments are not JSON", arguments) from None
    kind = "an object" if isinstance(arguments, dict) else f"a {type(arguments).__name__}"
    return text, f"{where}: arguments sent as {kind}: sent as JSON text"


def _fresh_id(round_number: int, index: int, taken: set[str]) -> str:
    """An id no earlier call has: call_<round>_<index>, with a suffix if even that is taken."""
    candidate, suffix = f"call_{round_number}_{index}", 1
    while candidate in taken:
        suffix += 1
        candidate = f"call_{round_number}_{index}_{suffix}"
    return candidate


def _count(value: Any, name: str, repairs: list[str]) -> int:
    """A token count as an int; anything that is not a number counts 0 (and is noted)."""
    if value is None:
        return 0
    unusable = isinstance(value, bool) or not isinstance(value, (int, float))
    if unusable or (isinstance(value, float) and not math.isfinite(value)) or not 0 <= value < 10**15:
        repairs.append(f"usage.{name} was {quote(value, 40)}: counted as 0")
        return 0
    return int(value)
