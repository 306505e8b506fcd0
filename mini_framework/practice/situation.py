"""Stage 1 of the planner: the situation, read from a Chat Completions request body.

    analyse(request) -> Situation
        request    the latest user message that is a request (not images a tool produced), read by
                   `language.read`: its language, entities, topics and features
        tools      the function tools offered (narrowed by `allowed_tools`), as `OfferedTool`s
        calls      the calls made since that message, each with its parsed result
        previous   the calls of the turn before (for a follow-up such as '那上海呢？')
        choice     `tool_choice`, normalised; `parallel_tool_calls`

Everything later in the pipeline decides from a Situation alone; nothing here looks at the
clock or at anything outside the request. Reading results lives here too (`error_of`,
`scalars`): what a call returned is part of what has been done.

Concessions: only function tools are read (custom tools are refused by the server before this);
a result that is not JSON is kept as its stripped text; an unanswered call has result None.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .language import Reading, describe, read, split_identifier
from .schemas import Param, params_of, resolve

TRUNCATE = 300          # characters of a long text result quoted in an error or an answer


@dataclass(frozen=True)
class OfferedTool:
    """A function tool offered in the request, with the features it is scored on.

    Named so as not to be mistaken for the framework's `Tool` (a Python function with a schema):
    this one is only what the model was shown.
    """

    name: str
    """The function name."""
    description: str
    """The function description ('' when absent)."""
    root: dict
    """The `parameters` schema as sent (for resolving `$ref` in nested properties)."""
    params: tuple[Param, ...]
    """Top-level parameters in schema order."""
    name_features: frozenset[str]
    """Features of the name alone (they count double)."""
    features: frozenset[str]
    """Features of the name, description, parameter names, descriptions and enum values."""


@dataclass(frozen=True)
class Call:
    """A tool call made since the latest user message, with its result."""

    name: str
    """The function name that was called."""
    arguments: dict
    """The parsed arguments ({} when they were not a JSON object)."""
    result: Any
    """The parsed JSON result, the raw text when it is not JSON, None when unanswered."""
    arguments_text: str = ""
    """The arguments exactly as sent (the misbehaving personas recognise their own calls by it)."""


@dataclass(frozen=True)
class Choice:
    """The request's `tool_choice`, normalised."""

    mode: str = "auto"
    """'auto', 'none', 'required' or 'named'."""
    name: str = ""
    """The forced function name when mode is 'named'."""


@dataclass(frozen=True)
class Situation:
    """Everything the planner decides from; built by `analyse`."""

    request: Reading
    """The latest user message, read: language, entities, tags, features."""
    tools: tuple[OfferedTool, ...]
    """The tools the model may call (already narrowed by `allowed_tools`)."""
    calls: tuple[Call, ...] = ()
    """Calls made after the latest user message, in order, with their results."""
    rounds: int = 0
    """Assistant messages with tool calls after the latest user message."""
    previous: tuple[Call, ...] = ()
    """Calls of the turn before (for a follow-up such as '那上海呢？')."""
    choice: Choice = field(default_factory=Choice)
    """The normalised `tool_choice`."""
    parallel: bool = True
    """`parallel_tool_calls`: False means at most one call per reply."""

    @property
    def zh(self) -> bool:
        """Whether to answer in Chinese (the latest user message contains Chinese)."""
        return self.request.language == "zh"


def message_text(message: Any) -> str:
    """The text of a message: a string, or the text parts of a list.

    >>> message_text({'content': [{'type': 'text', 'text': 'hi'}]})
    'hi'
    """
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _has_image(message: dict) -> bool:
    """Whether a message carries image parts."""
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and "image" in str(p.get("type")) for p in content)


def _latest_request(messages: list[dict]) -> int:
    """Index of the latest user message that is a request (not tool images re-sent as 'user'), or -1."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            if i and messages[i - 1].get("role") == "tool" and _has_image(messages[i]):
                continue                            # images a tool produced, injected as a user message
            return i
    return -1


def parse_json(text: Any) -> Any:
    """JSON if the text is JSON, else the text itself.

    >>> parse_json('{"a": 1}')
    {'a': 1}
    """
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text.strip()


def _calls_after(messages: list[dict], start: int) -> tuple[tuple[Call, ...], int]:
    """The calls made after messages[start] paired with their results, and how many rounds they took."""
    results = {m.get("tool_call_id"): parse_json(message_text(m))
               for m in messages[start + 1:] if m.get("role") == "tool"}
    calls, rounds = [], 0
    for m in messages[start + 1:]:
        if m.get("role") != "assistant" or not isinstance(m.get("tool_calls"), list) or not m["tool_calls"]:
            continue
        rounds += 1
        for tc in m["tool_calls"]:
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict):
                continue
            args = parse_json(fn.get("arguments"))
            text = fn.get("arguments") if isinstance(fn.get("arguments"), str) else ""
            calls.append(Call(str(fn.get("name") or ""), args if isinstance(args, dict) else {},
                              results.get(tc.get("id")), text))
    return tuple(calls), rounds


def offered_tool(entry: Any) -> OfferedTool | None:
    """A OfferedTool from one `tools` entry ({"type": "function", "function": {...}} or the flat form)."""
    if not isinstance(entry, dict):
        return None
    fn = entry.get("function") if isinstance(entry.get("function"), dict) else entry
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    description = fn.get("description") if isinstance(fn.get("description"), str) else ""
    root = fn.get("parameters") if isinstance(fn.get("parameters"), dict) else {}
    params = params_of(resolve(root, root), root)
    name_features = describe(" ".join(split_identifier(name)))
    features = set(name_features) | describe(description)
    for p in params:
        enum = p.schema.get("enum") if isinstance(p.schema.get("enum"), list) else []
        features |= describe(" ".join(split_identifier(p.name))) | describe(p.description)
        features |= describe(" ".join(str(v) for v in enum))
    return OfferedTool(name, description, root, params, name_features, frozenset(features))


def _choice(raw: Any) -> tuple[Choice, set[str] | None]:
    """`tool_choice` as a Choice, plus the allowed tool names for the `allowed_tools` form."""
    if raw in ("none", "required"):
        return Choice(raw), None
    if isinstance(raw, dict):
        if raw.get("type") == "allowed_tools":
            inner = raw.get("allowed_tools") if isinstance(raw.get("allowed_tools"), dict) else raw
            names = set()
            for t in inner.get("tools") or []:
                if isinstance(t, dict):
                    fn = t.get("function") if isinstance(t.get("function"), dict) else t
                    names.add(str(fn.get("name")))
            return Choice("required" if inner.get("mode") == "required" else "auto"), names
        fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
        if isinstance(fn.get("name"), str):
            return Choice("named", fn["name"]), None
    return Choice(), None


def analyse(request: dict) -> Situation:
    """Read a Chat Completions request body into a Situation (pure; never looks at the clock).

    >>> s = analyse({"messages": [{"role": "user", "content": "北京天气？"}]})
    >>> s.zh, [e.value for e in s.request.of_kind("city")], s.tools
    (True, ['北京'], ())
    """
    request = request if isinstance(request, dict) else {}
    raw = request.get("messages")
    messages = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    latest = _latest_request(messages)
    calls, rounds = _calls_after(messages, latest) if latest >= 0 else ((), 0)
    before = _latest_request(messages[:latest]) if latest > 0 else -1
    previous = _calls_after(messages[:latest], before)[0] if latest > 0 else ()
    tools = [t for t in map(offered_tool, request.get("tools") or [] if isinstance(request.get("tools"), list) else []) if t]
    choice, allowed = _choice(request.get("tool_choice"))
    if allowed is not None:
        tools = [t for t in tools if t.name in allowed]
    text = message_text(messages[latest]) if latest >= 0 else ""
    return Situation(read(text), tuple(tools), calls, rounds, previous, choice,
                     request.get("parallel_tool_calls") is not False)


def scalars(value: Any) -> list[tuple[tuple[str, ...], Any, Any]]:
    """Every scalar inside a JSON value as (path of keys, value, containing object), in document order.

    >>> scalars({"user": {"id": 7}, "tags": ["a"]})[0]
    (('user', 'id'), 7, {'id': 7})
    """
    out: list[tuple[tuple[str, ...], Any, Any]] = []

    def walk(node: Any, path: tuple[str, ...], parent: Any) -> None:
        if len(path) > 6 or len(out) > 500:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + (str(k),), node)
        elif isinstance(node, list):
            for v in node[:50]:
                walk(v, path, None if isinstance(v, dict) else parent)
        else:
            out.append((path, node, parent))

    walk(value, (), None)
    return out


def error_of(call: Call) -> str | None:
    """The error message a result carries, or None: {'error': ...}, {'status': 'error'}, 'Error: ...'."""
    r = call.result
    if isinstance(r, dict):
        err = r.get("error")
        if err not in (None, False, "", {}):
            return str(err.get("message", err)) if isinstance(err, dict) else str(err)
        if str(r.get("status", "")).lower() in ("error", "failed", "failure", "fail") or r.get("success") is False:
            for key in ("message", "detail", "reason", "msg"):
                if r.get(key):
                    return str(r[key])
            return json.dumps(r, ensure_ascii=False)[:TRUNCATE]
    if isinstance(r, str) and re.match(r"(?i)\s*(error|错误|exception|traceback|failed)", r):
        return r[:TRUNCATE]
    return None
