"""Structured output: a final answer shaped by the request's `response_format`, as the real API shapes it.

    structured(responder)          the responder, with every final text answer turned into JSON when the
                                   request asks for `json_object` or `json_schema` (tool calls pass through)
    document(request, text)        that JSON text, built from the tool results, the request and the text answer

`checks.check_response_format` refuses what the API refuses first (an unknown type, `json_object`
without the word 'json' in the messages, a strict schema with an open object, ...), so what
arrives here is usable. Then, deterministically:

- `json_object`: the facts as an object. One reported call gives its arguments and its result
  in one object ({"city": "北京", "temperature": 22, ...}); several give {"results": [...]}; no
  call gives {"answer": <the text answer>}.
- `json_schema`: a document that validates against the schema. Each property is filled from the
  first source that has a value of the right type: a key of that name (or label: `temp_c` is a
  temperature) in the reported calls' arguments and results; an entity of the property's kind in
  the request (a city for `city`, a number for `amount`); the text answer for a property that asks
  for one (`answer`, `summary`, `reply`, ... or described so); an enum member the request or the
  answer names (else the first); else null where the schema allows it, else a neutral value ("",
  0, false, [], {}). An array of objects gets one item per reported call. `const`, `minimum`/
  `maximum`, `minItems`/`maxItems` and `minLength`/`maxLength` are respected.
- `json_object` with a JSON schema written in a system message (a client whose provider takes only
  json_object puts it there), or given beside it (`{"type": "json_object", "schema": ...}`, llama.cpp's
  JSON mode): a document for that schema, as for `json_schema`.
- A latest user message that no call answered (a correction: "that was not valid JSON, answer
  again") reads the request before it too: its calls are what the answer reports, and its entities
  fill what the latest message does not name, as a model reading the whole conversation does.

The misbehaving personas get this too (`personas` wraps every built-in responder), so a lesson
can combine structured output with any of them.

Concessions: a `pattern` or `format` is not enforced (a value found for it is used as it is); of
`anyOf` branches the first non-null one is built; a document is built from at most MAX_NODES
schemas, MAX_ITEMS items per array (unless minItems asks for more), MAX_NESTING levels and the
first MAX_PROPERTIES properties of each object: past those caps it gets neutral values or stops,
so a schema beyond them may not be met (the work per request stays bounded, whatever the schema).
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from .answers import reported_calls
from .filling import param_kind
from .language import stem
from .phrasing import as_number, key_label, number
from .reply import Reply
from .schemas import Param, enum_of, json_type, resolve, value_of
from .situation import Call, Entity, Situation, analyse, error_of, is_tool_output, message_text, scalars

log = logging.getLogger("practice_model")

MAX_NODES = 2048        # schemas a document is built from (past it: neutral values)
MAX_ITEMS = 16          # items built per array (more only when minItems asks, within MAX_NODES)
MAX_PROPERTIES = 256    # properties filled per object
MAX_PROMPTED = 65_536  # characters of a system message searched for a schema (json_object)
MAX_PROMPTED_TRIES = 64  # braces tried there
MAX_NESTING = 10        # levels of nested objects and arrays built (the API's own limit for strict schemas)
_TEXT_KEYS = {"answer", "reply", "response", "summary", "text", "message", "content", "explanation", "reasoning",
              "final_answer", "output", "result_text", "comment", "note", "notes", "advice", "回答", "答案", "总结"}
_TEXT_WORDS = re.compile(r"(?i)\b(?:answer|reply|response|summary|explanation|in words|sentence)\b|"
                         r"回答|答复|总结|说明|解释")
_KIND_ENTITIES = {"city": ("city",), "person": ("person",), "email": ("email",), "url": ("url",), "date": ("date",),
                  "code": ("code",), "currency": ("currency",), "language": ("language",), "unit": ("unit",),
                  "status": ("status",), "credential": ("credential",), "id_number": ("id_number",)}


def _unwrap(result: Any) -> Any:
    """The payload of a success envelope: {'status': 'success', 'data': X} -> X."""
    if isinstance(result, dict) and str(result.get("status", "")).lower() in ("success", "ok") and len(result) <= 3:
        for key in ("data", "result"):
            if key in result:
                return result[key]
    return result


def fact(call: Call) -> dict[str, Any]:
    """One reported call as one object: its plain arguments, then its result (or its error).

    >>> fact(Call("get_weather", {"city": "北京"}, {"temperature": 22}))
    {'city': '北京', 'temperature': 22}
    """
    out = {k: v for k, v in call.arguments.items() if not isinstance(v, (dict, list))}
    error = error_of(call)
    result = _unwrap(call.result)
    if error is not None:
        out["error"] = error
    elif isinstance(result, dict):
        out.update(result)
    elif result is not None:
        out["result"] = result
    return out


def _norm(key: str) -> str:
    """A key compared loosely: 'userId', 'user_id' -> 'userid'."""
    return re.sub(r"[^a-z0-9]", "", key.lower())


class _Builder:
    """Builds one document for one schema, from one situation; counts the schemas it visits."""

    def __init__(self, s: Situation, facts: list[dict[str, Any]], text: str, root: dict,
                 earlier: tuple[Entity, ...] = ()) -> None:
        self.s, self.facts, self.text, self.root = s, facts, text, root
        self.entities = [(0, e) for e in s.request.entities] + [(1, e) for e in earlier]  # the latest request's first
        self.nodes = MAX_NODES
        self.used: set[tuple[int, int]] = set()     # request entities already put somewhere (by message, position)

    # -- finding values ------------------------------------------------------------------------

    def found(self, key: str, facts: list[dict[str, Any]]) -> list[Any]:
        """Values under a key of this name (or the same label: temp_c ~ temperature) in the facts, in order."""
        want, label = _norm(key), key_label(key, False)[0].lower()
        out = []
        for f in facts:
            for path, value, _ in scalars(f):
                if path and (_norm(path[-1]) in (want, want + "s") or key_label(path[-1], False)[0].lower() == label):
                    out.append(value)
        return out

    def from_request(self, key: str, schema: dict) -> Any:
        """An entity of the property's kind from the request (each used once), or None."""
        kind = param_kind(Param(key, schema, True, value_of(schema, "description", str, "")))
        kinds = _KIND_ENTITIES.get(kind) or (("number",) if kind == "number" else ())
        for source, e in self.entities:
            if e.kind in kinds and (source, e.start) not in self.used:
                self.used.add((source, e.start))
                return e.value
        return None

    def wants_text(self, key: str, schema: dict) -> bool:
        """Whether a string property asks for the answer in words."""
        return key.lower() in _TEXT_KEYS or bool(_TEXT_WORDS.search(value_of(schema, "description", str, "")))

    # -- building ------------------------------------------------------------------------------

    def build(self, raw: Any, key: str, facts: list[dict[str, Any]], depth: int) -> Any:
        """A value for one schema (a property named `key`, or '' at the root)."""
        schema = resolve(raw, self.root)
        self.nodes -= 1
        nullable = bool(schema.get("nullable"))
        if "const" in schema:
            return schema["const"]
        kind = json_type(schema)
        if self.nodes <= 0 or depth > MAX_NESTING:
            return None if nullable else _neutral(kind, schema)
        if kind == "object":
            return self.build_object(schema, facts, depth)
        if kind == "array":
            return self.build_array(schema, key, facts, depth)
        value = self.value(schema, kind, key, facts)
        if value is None:
            return None if nullable else _neutral(kind, schema)
        return _fit(value, kind, schema)

    def build_object(self, schema: dict, facts: list[dict[str, Any]], depth: int) -> dict[str, Any]:
        """Every property of an object schema (all of them: a strict schema requires all)."""
        properties = value_of(schema, "properties", dict, {})
        if not properties:
            return _free(self.s, facts, self.text) if depth == 0 else {}
        return {str(k): self.build(v, str(k), facts, depth + 1) for k, v in list(properties.items())[:MAX_PROPERTIES]}

    def build_array(self, schema: dict, key: str, facts: list[dict[str, Any]], depth: int) -> list[Any]:
        """One item per fact for object items; the values found (or entities of the kind) for scalar items."""
        items = resolve(schema.get("items"), self.root)
        kind = json_type(items)
        low = max(0, int(as_number(schema.get("minItems")) or 0))
        high = int(as_number(schema.get("maxItems")) or MAX_ITEMS)
        if kind == "object":
            out = [self.build(schema.get("items"), key, [f], depth + 1) for f in facts[:min(high, MAX_ITEMS)]]
        else:
            singular = stem(key) if key.isascii() else key
            values = [v for v in self.found(singular, facts) if _fits(v, kind)]
            while not self.found(singular, facts) and len(values) < min(high, MAX_ITEMS):
                value = self.from_request(singular, items)     # none in the results: the request's, in order
                if value is None:
                    break
                values.append(value)
            enum = enum_of(items)
            out = [_fit(v, kind, items) for v in values if not enum or v in enum]
        out = out[:min(high, MAX_ITEMS)]
        while len(out) < low and self.nodes > 0:
            out.append(self.build(schema.get("items"), key, facts[:1], depth + 1))
        return out

    def value(self, schema: dict, kind: str, key: str, facts: list[dict[str, Any]]) -> Any:
        """A scalar for a property: from the facts, the request, the text answer, the enum."""
        enum = enum_of(schema)
        candidates = [v for v in self.found(key, facts) if _fits(v, kind)] if key else []
        if enum:
            lowered = {str(m).lower(): m for m in enum}
            for v in candidates:
                if str(v).lower() in lowered:
                    return lowered[str(v).lower()]
            haystack = f"{self.s.request.text}\n{self.text}".lower()
            return next((m for m in enum if str(m).lower() in haystack), enum[0])
        if candidates:
            return candidates[0]
        if kind == "string" and self.wants_text(key, schema):
            return self.text
        if key:
            found = self.from_request(key, schema)
            if found is not None and _fits(found, kind):
                return found
        if kind == "string" and not key:
            return self.text
        return None


def _fits(value: Any, kind: str) -> bool:
    """Whether a found value can stand for this JSON type (numbers written as strings count as numbers)."""
    if kind in ("number", "integer"):
        return as_number(value) is not None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "string":
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    return kind == "null" and value is None


def _fit(value: Any, kind: str, schema: dict) -> Any:
    """A value made to fit its schema: the type, then minimum/maximum or minLength/maxLength."""
    if kind in ("number", "integer"):
        amount = as_number(value)
        if amount is None:
            return _neutral(kind, schema)
        low, high = as_number(schema.get("minimum")), as_number(schema.get("maximum"))
        amount = max(amount, low) if low is not None else amount
        amount = min(amount, high) if high is not None else amount
        return int(round(amount)) if kind == "integer" else amount
    if kind == "string":
        text = value if isinstance(value, str) else number(value) if isinstance(value, (int, float)) else str(value)
        high = as_number(schema.get("maxLength"))
        text = text[:int(high)] if high is not None else text
        low = as_number(schema.get("minLength"))
        return text + "-" * max(0, int(low or 0) - len(text))
    return value


def _neutral(kind: str, schema: dict) -> Any:
    """What a property nothing fills gets: the first enum member, or an empty value of its type."""
    enum = enum_of(schema)
    if enum:
        return enum[0]
    if kind in ("number", "integer"):
        return _fit(0, kind, schema)
    if kind == "string":
        return _fit("", kind, schema)
    return {"boolean": False, "array": [], "object": {}, "null": None}.get(kind, "")


def _free(s: Situation, facts: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """A `json_object` answer: the one fact, {"results": [...]} for several, {"answer": text} for none."""
    if len(facts) == 1 and facts[0]:
        return facts[0]
    if facts:
        return {"results": facts}
    return {"answer": text}


def document(request: dict, text: str) -> str:
    """The JSON text of a final answer under the request's `response_format` (json_object or json_schema).

    >>> request = {"messages": [{"role": "user", "content": "北京天气，用 JSON 回答"}],
    ...            "response_format": {"type": "json_schema", "json_schema": {"name": "w", "strict": True, "schema": {
    ...                "type": "object", "additionalProperties": False, "required": ["city", "summary"],
    ...                "properties": {"city": {"type": "string"}, "summary": {"type": "string"}}}}}}
    >>> document(request, "北京：晴。")
    '{"city": "北京", "summary": "北京：晴。"}'
    """
    s = analyse(request)
    back = _earlier(request, s)
    told = back if back is not None and back.calls else s  # the calls the answer reports
    facts = [fact(c) for c in reported_calls(told)] if told.calls else []
    fmt = value_of(request, "response_format", dict, {})
    schema = value_of(value_of(fmt, "json_schema", dict, {}), "schema", dict, {})
    if fmt.get("type") == "json_object":  # llama.cpp's JSON mode takes a schema beside it; else the prompt's
        schema = value_of(fmt, "schema", dict, {}) or prompted_schema(request)
    if fmt.get("type") in ("json_schema", "json_object") and schema:
        value = _Builder(s, facts, text, schema, back.request.entities if back else ()).build(schema, "", facts, 0)
    else:
        value = _free(s, facts, text)
    return json.dumps(value, ensure_ascii=False)


def _earlier(request: dict, s: Situation) -> Situation | None:
    """The request before the latest user message, when no call answered that message (a correction such as
    "that was not valid JSON, answer again", or "and as JSON?"): a real model reads the whole conversation,
    so its calls and entities still count. None when there is no such request.

    >>> first = {"role": "user", "content": "Write 一百二十三 as digits."}
    >>> again = {"role": "user", "content": "Your answer could not be used. Answer again."}
    >>> [e.value for e in _earlier({"messages": [first, {"role": "assistant", "content": "x"}, again]},
    ...                            analyse({"messages": [again]})).request.entities]
    [123]
    """
    raw = request.get("messages")
    messages = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    requests = [i for i, m in enumerate(messages) if m.get("role") == "user" and not is_tool_output(m)]
    if s.calls or len(requests) < 2:
        return None
    latest = requests[-1]
    return analyse({**request, "messages": messages[:latest]})


def prompted_schema(request: dict) -> dict:
    """A JSON schema written into a system or developer message ("... matching this JSON schema: {...}"), as a
    `json_object` request gives one; {} when there is none. The first object schema found is used.

    >>> prompted_schema({"messages": [{"role": "system", "content": 'Reply in JSON like {"type": "object", '
    ...                                '"properties": {"n": {"type": "integer"}}}'}]})["properties"]
    {'n': {'type': 'integer'}}
    """
    decoder = json.JSONDecoder()
    for m in value_of(request, "messages", list, []):
        if not isinstance(m, dict) or m.get("role") not in ("system", "developer"):
            continue
        text = message_text(m)[:MAX_PROMPTED]
        for start in [i for i, ch in enumerate(text) if ch == "{"][:MAX_PROMPTED_TRIES]:
            try:
                found, _ = decoder.raw_decode(text, start)
            except (ValueError, RecursionError):
                continue
            if isinstance(found, dict) and (found.get("type") == "object" or isinstance(found.get("properties"), dict)):
                return found
    return {}


def structured(responder: Callable[[dict], Reply]) -> Callable[[dict], Reply]:
    """The responder, its final text answers shaped by `response_format` (a bug keeps the text as {"answer"})."""
    def respond(request: dict) -> Reply:
        reply = responder(request)
        fmt = request.get("response_format") if isinstance(request, dict) else None
        if reply.tool_calls or reply.content is None or not isinstance(fmt, dict) or fmt.get("type") not in (
                "json_object", "json_schema"):
            return reply
        try:
            return replace(reply, content=document(request, reply.content))
        except Exception:                                  # a bug must not turn an answer into a crash
            log.exception("practice model: could not shape the answer as %s", fmt.get("type"))
            return replace(reply, content=json.dumps({"answer": reply.content}, ensure_ascii=False))
    respond.__name__ = getattr(responder, "__name__", "respond")
    return respond
