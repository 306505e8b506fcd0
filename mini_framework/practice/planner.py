"""The practice model's brain: a deterministic planner over ANY tools, in 中文 and English.

    plan(request) -> Reply          the `practice` persona: a Chat Completions body in, a Reply out

It is a pipeline of small pure functions, so the misbehaving personas can reuse the parts:

    analyse(request)          -> Situation   the latest user request (read by `language.read`), its
                                             tools, the calls made since it and their parsed results
    rank_tools(situation)     -> [(score, Tool)]   word / bigram / concept overlap with each tool
    fill_arguments(tool, s)   -> Filling     arguments by JSON-schema type, from the request first and
                                             from earlier results second; one variant per entity
    next_calls(situation)     -> [(name, arguments)]   what to call now; [] = time to answer
    compose_answer(situation) -> str         the text: from the results, or an honest "no tool fits"
    respond(situation)        -> Reply       `tool_choice` and `parallel_tool_calls` applied

Chaining is one rule: a required argument missing from the request is looked up in earlier
results (key `user_id`, or key `id` in the result of a tool whose name says `user`); when it is
not there yet, the tools that could *produce* it are planned first. A call (same name, same
arguments) is never repeated after the latest user message, so every run ends.

Concessions: no real language understanding (see `language.py`); one fan-out dimension per tool;
optional object parameters are never filled; answers list results (intermediate steps of a chain
left out) and at most compare one number, they do not reason about them.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..numerals import parse_number
from .language import (COMPARE, LOWER_IS_ASKED, OPERATORS, VALUE_KINDS, VALUE_SURFACES, Entity, Reading,
                       describe, is_greeting, is_thanks, read, salient, split_identifier, stem, tags_of)
from .reply import PlannedCall, Reply

MAX_ROUNDS = 8          # tool-call rounds after one user message before the planner insists on answering
MAX_FANOUT = 5          # calls of one tool in one reply ("北京、上海、广州…", one per order id)
MAX_CALLS = 8           # calls in one reply, all tools together
RELEVANCE_RATIO = 0.5   # a tool is relevant when it scores at least this share of the best score
OUTRANKED = 0.75        # below this share of another tool's score, a tool using the same values is left out
TRUNCATE = 300          # characters of a long text result quoted in an answer

# -----------------------------------------------------------------------------
# 1. the situation: what was asked, which tools exist, what has been done


@dataclass(frozen=True)
class Param:
    """One top-level parameter of a tool, its schema already resolved."""

    name: str
    """The property name."""
    schema: dict
    """The property schema with `$ref` followed and `anyOf: [X, null]` reduced to X."""
    required: bool
    """Whether it is listed in `required`."""
    description: str
    """The property description ('' when absent)."""


@dataclass(frozen=True)
class Tool:
    """A function tool from the request, with the features it is scored on."""

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
    tools: tuple[Tool, ...]
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


def _parse_json(text: Any) -> Any:
    """JSON if the text is JSON, else the text itself.

    >>> _parse_json('{"a": 1}')
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
    results = {m.get("tool_call_id"): _parse_json(message_text(m))
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
            args = _parse_json(fn.get("arguments"))
            text = fn.get("arguments") if isinstance(fn.get("arguments"), str) else ""
            calls.append(Call(str(fn.get("name") or ""), args if isinstance(args, dict) else {},
                              results.get(tc.get("id")), text))
    return tuple(calls), rounds


def resolve(schema: Any, root: Any, depth: int = 0) -> dict:
    """A schema with `$ref` followed, `anyOf`/`oneOf` reduced to the first non-null branch, `allOf` merged.

    A branch `{"type": "null"}` (or a type list with "null") leaves `"nullable": True` behind.

    >>> resolve({"anyOf": [{"$ref": "#/$defs/U"}, {"type": "null"}]}, {"$defs": {"U": {"type": "string"}}})
    {'type': 'string', 'nullable': True}
    """
    if not isinstance(schema, dict) or depth > 8:
        return {}
    if isinstance(schema.get("$ref"), str):
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return resolve({**(target if isinstance(target, dict) else {}), **rest}, root, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            rest = {k: v for k, v in schema.items() if k != key}
            useful = [resolve(b, root, depth + 1) for b in branches if isinstance(b, dict) and b.get("type") != "null"]
            if len(useful) < len(branches):
                rest["nullable"] = True
            merged: dict = {}
            for branch in (useful if key == "allOf" else useful[:1]):
                merged.update(branch)
            return resolve({**merged, **rest}, root, depth + 1)
    if isinstance(schema.get("type"), list):
        kinds = [t for t in schema["type"] if t != "null"]
        return {**schema, "type": kinds[0] if kinds else "string", "nullable": "null" in schema["type"]}
    return schema


def _type(schema: dict) -> str:
    """The JSON type of a resolved schema, guessed when absent.

    >>> _type({'enum': [1, 2]})
    'integer'
    """
    if isinstance(schema.get("type"), str):
        return schema["type"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        first = schema["enum"][0]
        return {bool: "boolean", int: "integer", float: "number"}.get(type(first), "string")
    return "object" if "properties" in schema else "array" if "items" in schema else "string"


def _tool(entry: Any) -> Tool | None:
    """A Tool from one `tools` entry ({"type": "function", "function": {...}} or the flat form)."""
    if not isinstance(entry, dict):
        return None
    fn = entry.get("function") if isinstance(entry.get("function"), dict) else entry
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    description = fn.get("description") if isinstance(fn.get("description"), str) else ""
    root = fn.get("parameters") if isinstance(fn.get("parameters"), dict) else {}
    top = resolve(root, root)
    props = top.get("properties") if isinstance(top.get("properties"), dict) else {}
    required = top.get("required") if isinstance(top.get("required"), list) else []
    params = []
    for pname, raw in props.items():
        schema = resolve(raw, root)
        desc = schema.get("description") if isinstance(schema.get("description"), str) else ""
        params.append(Param(str(pname), schema, pname in required, desc))
    name_features = describe(" ".join(split_identifier(name)))
    features = set(name_features) | describe(description)
    for p in params:
        enum = p.schema.get("enum") if isinstance(p.schema.get("enum"), list) else []
        features |= describe(" ".join(split_identifier(p.name))) | describe(p.description)
        features |= describe(" ".join(str(v) for v in enum))
    return Tool(name, description, root, tuple(params), name_features, frozenset(features))


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
    tools = [t for t in map(_tool, request.get("tools") or [] if isinstance(request.get("tools"), list) else []) if t]
    choice, allowed = _choice(request.get("tool_choice"))
    if allowed is not None:
        tools = [t for t in tools if t.name in allowed]
    text = message_text(messages[latest]) if latest >= 0 else ""
    return Situation(read(text), tuple(tools), calls, rounds, previous, choice,
                     request.get("parallel_tool_calls") is not False)


# -----------------------------------------------------------------------------
# 2. which tools are relevant


_BROAD = {"#calculate", "#search", "#detail", "#location", "#send", "#time"}   # concepts too broad to decide alone


def _weight(feature: str) -> int:
    """Concepts weigh most (broad ones least), values next, plain words and bigrams least."""
    return 1 if feature in _BROAD else 3 if feature[:1] == "#" else 2 if feature[:1] == "=" else 1


def score(tool: Tool, reading: Reading) -> int:
    """How strongly a request points at a tool: shared features, the tool's name counting double."""
    shared = reading.features & tool.features
    return sum(_weight(f) for f in shared) + sum(_weight(f) for f in shared & tool.name_features)


def rank_tools(s: Situation) -> list[tuple[int, Tool]]:
    """Every tool with its score, best first (ties keep the request's order)."""
    scored = [(score(t, s.request), i, t) for i, t in enumerate(s.tools)]
    return [(sc, t) for sc, _, t in sorted(scored, key=lambda x: (-x[0], x[1]))]


def relevant_tools(s: Situation) -> list[Tool]:
    """The tools scoring above zero and close to the best."""
    ranked = rank_tools(s)
    best = ranked[0][0] if ranked else 0
    return [t for sc, t in ranked if sc > 0 and sc >= RELEVANCE_RATIO * best]


# -----------------------------------------------------------------------------
# 3. arguments by JSON-schema type

_NAME_KINDS = {
    "email": "email", "mail": "email", "recipient": "email", "recipients": "email", "cc": "email", "bcc": "email",
    "url": "url", "link": "url", "uri": "url", "website": "url",
    "date": "date", "day": "date", "when": "date", "deadline": "date", "time": "date", "datetime": "date",
    "currency": "currency", "language": "language", "lang": "language", "locale": "language",
    "unit": "unit", "status": "status", "state": "status",
    "city": "city", "location": "city", "place": "city", "origin": "city", "destination": "city",
    "departure": "city", "arrival": "city", "town": "city", "region": "city",
    "name": "person", "user": "person", "username": "person", "person": "person", "customer": "person",
    "who": "person", "author": "person", "contact": "person", "assignee": "person", "owner": "person",
    "symbol": "code", "ticker": "code", "code": "code", "sku": "code", "isbn": "code", "id": "id", "uuid": "id",
    "to": "place", "from": "place", "source": "place", "target": "place",
}
_FREE_TEXT = set("""query q text expression expr formula content message msg prompt question keyword keywords body
subject title input sql search topic description note notes comment sentence statement instruction task term phrase
summary words""".split())
_NOT_PEOPLE = set("file city product item tool model project company repo branch table database event task".split())
_DESCRIPTION_KINDS = [            # when the name says nothing ('a', 'q', 'arg1'), the description may
    ("email", ("email address", "e-mail", "邮箱", "收件人", "邮件地址")), ("url", ("url", "网址", "链接")),
    ("date", ("date", "日期", "yyyy")), ("currency", ("currency", "货币", "币种")), ("language", ("language", "语言")),
    ("city", ("city", "城市", "地点", "location")), ("person", ("姓名", "名字", "用户名", "人名", "person")),
    ("code", ("ticker", "symbol", "代码")), ("id", (" id", "编号", "单号")),
    ("text", ("内容", "文本", "关键词", "问题", "表达式", "正文", "主题", "标题", "消息", "query", "text", "keyword",
              "expression", "message")),
]
_POOL_KINDS = {"email": ("email",), "url": ("url",), "date": ("date",), "currency": ("currency",),
               "language": ("language",), "unit": ("unit",), "status": ("status",), "city": ("city",),
               "person": ("person",), "code": ("code",), "id": ("code", "number"),
               "place": ("email", "city", "currency", "language")}
_ORDER = ["enum", "email", "url", "date", "currency", "language", "unit", "status", "place", "city", "person",
          "code", "id", "number", "boolean", "array", "object", "string", "text"]
_FROM_WORDS = {"from", "origin", "source", "src", "departure", "depart", "start", "base", "出发", "起点", "始发", "源"}
_TO_WORDS = {"to", "destination", "dest", "target", "arrival", "arrive", "end", "目的", "目标", "终点", "到达"}
_NEGATION = re.compile(r"(?i)不要|不用|不需要|无需|别|don't|do not|without|no need")
_SAYING = re.compile(r"(?i)(?:说(?!明(?!天|早|晚))|告诉(?:他|她|他们)|内容是|内容为|正文是|(?<!\d)[:：]|\bsaying\b|"
                     r"\bthat says\b|\bto say\b)\s*(\S.*)$")    # what comes after it is the message
_MISSING = object()


def param_kind(p: Param) -> str:
    """What a parameter wants: 'enum', 'number', 'boolean', 'array', 'object', 'city', 'email', 'text', ...

    >>> param_kind(Param("user_name", {"type": "string"}, True, ""))
    'person'
    """
    kind = _type(p.schema)
    if isinstance(p.schema.get("enum"), list) and p.schema["enum"]:
        return "enum"
    if kind in ("integer", "number", "boolean", "array", "object"):
        return "number" if kind == "integer" else kind
    fmt = str(p.schema.get("format", ""))
    if fmt in ("email", "uri", "url", "date", "date-time"):
        return {"uri": "url", "date-time": "date"}.get(fmt, fmt)
    words = [stem(w) if w not in _NAME_KINDS else w for w in split_identifier(p.name)]
    for i in range(len(words) - 1, -1, -1):
        w = words[i]
        if w in _FREE_TEXT:
            return "text"
        found = _NAME_KINDS.get(w)
        if found == "person" and w == "name" and i:
            earlier = [_NAME_KINDS.get(x, "") for x in words[:i]]
            if "city" in earlier:
                return "city"
            if _NOT_PEOPLE & set(words[:i]):
                return "string"
        if found and found != "place":
            return found
    desc = f" {p.description.lower()}"
    for kind_name, phrases in _DESCRIPTION_KINDS:
        if any(ph in desc for ph in phrases):
            return kind_name
    return "place" if any(_NAME_KINDS.get(w) == "place" for w in words) else "string"


def _role(p: Param) -> str:
    """'from' / 'to' when the parameter's name or description says which end it is."""
    words = set(split_identifier(p.name)) | {w for w in _FROM_WORDS | _TO_WORDS if not w.isascii()
                                             and w in p.description}
    return "from" if words & _FROM_WORDS else "to" if words & _TO_WORDS else ""


def _param_features(p: Param) -> frozenset[str]:
    """Features of a parameter's name and description."""
    return describe(" ".join(split_identifier(p.name))) | describe(p.description)


class _Pool:
    """The entities of the request that the call being built has not used yet."""

    def __init__(self, entities: tuple[Entity, ...]) -> None:
        self.free = list(entities)
        self.used: list[Entity] = []

    def take(self, kinds: tuple[str, ...] | None, role: str = "", accept: Any = None) -> Entity | None:
        """The best free entity of these kinds (None: any kind): the one whose role matches, else the first other."""
        options = [e for e in self.free if (kinds is None or e.kind in kinds) and (accept is None or accept(e))]
        if not options:
            return None
        same = [e for e in options if role and e.role == role]
        other = [e for e in options if not role or e.role != ("to" if role == "from" else "from")]
        pick = (same or other or options)[0]
        self.free.remove(pick)
        self.used.append(pick)
        return pick


def _affinity(e: Entity, p: Param, reading: Reading) -> bool:
    """Whether the words right around a number point at this parameter ('3天' -> days, 'order 1001' -> order_id)."""
    text = reading.text
    near = describe(text[max(0, e.start - 6):e.start] + " " + text[e.end:e.end + 6])
    unit = text[e.end:e.end + 1]
    words = {f for f in _param_features(p) if f[:1] not in "#="}
    return bool({f for f in near if f[:1] not in "#="} & words) or (
        bool(unit.strip()) and not unit.isascii() and unit not in "个，。、？！" and unit in p.description)


def _numeric_ok(e: Entity, p: Param, reading: Reading) -> bool:
    """Numbers go to numeric params; ids only take digits with a cue ('订单1001') or 4+ digits."""
    if param_kind(p) != "id" and split_identifier(p.name)[-1:] != ("id",):
        return True
    digits = e.text.lstrip("-").replace(",", "")
    return digits.isdigit() and (len(digits) >= 4 or _affinity(e, p, reading))


def _convert(value: Any, p: Param) -> Any:
    """A value shaped for the parameter's type: '1001' -> 1001 for an integer, 1001 -> '1001' for a string."""
    kind = _type(p.schema)
    if kind in ("integer", "number") and isinstance(value, str):
        number = parse_number(value)
        value = number if number is not None else value
    if kind == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if kind == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _spellings(e: Entity) -> set[str]:
    """Every way an entity may be written, lowercased: USD -> {'usd', 'dollar', '美元', ...}."""
    return {str(e.value).lower(), e.text.lower(), *(x.lower() for x in VALUE_SURFACES.get(str(e.value), ()))}


def _enum_rank(value: Any, reading: Reading, shared: frozenset[str] = frozenset()) -> int:
    """How clearly the request names an enum member: 3 literally, 2 by a value synonym, 1 by topic, 0 not.

    `shared` are the tags every member has ('#weather' for celsius and fahrenheit): they tell nothing.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return 3 if any(e.value == value for e in reading.of_kind("number")) else 0
    low, text = str(value).lower(), reading.text.lower()
    if len(low) > 1 and low.isascii() and re.search(rf"(?<![a-z0-9]){re.escape(low)}(?![a-z0-9])", text):
        return 3
    if len(low) > 1 and not low.isascii() and low in text:
        return 3
    tags = (tags_of(str(value)) - shared) & reading.tags
    return 2 if any(t[0] == "=" for t in tags) else 1 if tags else 0


def _enum_value(p: Param, pool: _Pool, reading: Reading) -> Any:
    """The enum member the request points at (an entity, a literal mention, a synonym); if required, the first."""
    options = p.schema["enum"]
    lowered = {str(v).lower(): v for v in options}
    hit = pool.take(None, _role(p), lambda e: bool(_spellings(e) & lowered.keys()))
    if hit:
        return next(lowered[n] for n in sorted(_spellings(hit)) if n in lowered)
    shared = frozenset.intersection(*(tags_of(str(v)) for v in options))
    ranks = [_enum_rank(v, reading, shared) for v in options]
    if max(ranks) > 0:
        return options[ranks.index(max(ranks))]
    if not p.required or p.schema.get("nullable"):
        return _MISSING                                    # no evidence: leave it out (or null in strict mode)
    return p.schema.get("default", options[0])


def _described_values(p: Param) -> list[str]:
    """Candidate values listed in a description: '状态：pending（未发货）、shipped' -> ['pending', '未发货', ...]."""
    return [w for w in re.split(r"[\s/、,，;；:：()（）|“”\"'`\[\]。.]+|或者|或|\bor\b", p.description) if w]


def _value_kind(p: Param, kind: str, pool: _Pool) -> Any:
    """A currency, unit, status or language: as the description lists it ('未发货'), else its code ('pending')."""
    hit = pool.take((kind,), _role(p))
    if hit is None:
        return _MISSING
    return next((c for c in _described_values(p) if f"={hit.value}" in tags_of(c)), hit.value)


def _arithmetic(reading: Reading) -> str:
    """The arithmetic in a request as an expression: '35减8' -> '35 - 8', '(1+2)*3' stays."""
    span = re.search(r"[\d(（][\d\s.+\-*/×÷()（）^%]*[\d)）]", reading.text)
    if span and re.search(r"\d\s*[+\-*/×÷^%]\s*[\d(（]", span.group()):
        return span.group().translate(str.maketrans("×÷（）", "*/()")).strip()
    symbols = {"#add": "+", "#subtract": "-", "#multiply": "*", "#divide": "/"}
    numbers, parts = reading.of_kind("number"), []
    for left, right in zip(numbers, numbers[1:]):
        op = OPERATORS.get(reading.text[left.end:right.start].strip().lower())
        if not op:
            break
        parts += [str(left.value), symbols[op]]
    return " ".join(parts + [str(numbers[len(parts) // 2].value)]) if parts else ""


def _text_value(p: Param, pool: _Pool, reading: Reading, evidence_only: bool) -> Any:
    """Free text: a quoted string (the one whose cue word names the param first), else the salient request."""
    quoted = [e for e in pool.free if e.kind == "quoted"]
    words = {f for f in _param_features(p) if f[:1] != "="}
    for e in quoted:
        if words & describe(reading.text[max(0, e.start - 10):e.start]):
            pool.free.remove(e)
            pool.used.append(e)
            return e.value
    if quoted:
        return pool.take(("quoted",)).value
    if evidence_only:
        return _MISSING
    if {"expression", "expr", "formula"} & set(split_identifier(p.name)) or "表达式" in p.description:
        expression = _arithmetic(reading)
        if expression:
            return expression
    chars = list(reading.text)
    for e in pool.used + [e for e in pool.free if e.kind in ("email", "url")]:
        if e.kind in ("email", "url", "person", "city", "code", "date"):
            chars[e.start:e.end] = " " * (e.end - e.start)
    text = "".join(chars)
    said = _SAYING.search(text)                           # '…，说明天开会' / '… saying we moved'
    return re.sub(r"\s+", " ", salient(said.group(1) if said else text)).strip() or _MISSING


def _bool_value(p: Param, tool: Tool, reading: Reading) -> Any:
    """True when the request mentions what the flag is about (and is not negated); else missing."""
    own = {f for f in _param_features(p) if f[:1] != "="} - tool.name_features - describe(tool.description)
    own -= {"include", "use", "enable", "show", "flag", "whether", "是否", "包含"}
    if own & reading.features:
        return not _NEGATION.search(reading.text)
    return _MISSING


def _fill(p: Param, kind: str, pool: _Pool, tool: Tool, reading: Reading, root: Any, depth: int = 0) -> Any:
    """One parameter's value from the request, or _MISSING. Optional params need evidence."""
    optional = not p.required
    if kind == "enum":
        return _enum_value(p, pool, reading)
    if kind == "boolean":
        return _bool_value(p, tool, reading)
    if kind == "number":
        numbers = [e for e in pool.free if e.kind == "number" and _numeric_ok(e, p, reading)]
        near = [e for e in numbers if _affinity(e, p, reading)]
        pick = (near or ([] if optional else numbers))[:1]
        if pick:
            pool.free.remove(pick[0])
            pool.used.append(pick[0])
            return _convert(pick[0].value, p)
        return _MISSING
    if kind == "array":
        return _array_value(p, pool, tool, reading, root, depth)
    if kind == "object":
        return _MISSING if optional else _object_value(p.schema, pool, tool, reading, root, depth)
    if kind in ("currency", "language", "unit", "status"):
        return _value_kind(p, kind, pool)
    if kind == "text":
        return _text_value(p, pool, reading, optional)
    if kind in _POOL_KINDS:
        accept = (lambda e: e.kind != "number" or _numeric_ok(e, p, reading)) if kind == "id" else None
        hit = pool.take(_POOL_KINDS[kind], _role(p), accept)
        return _convert(hit.text if hit.kind == "number" else hit.value, p) if hit else _MISSING
    # a string the name says nothing about: a value its description lists, else a quoted string or a code
    for candidate in _described_values(p):
        if describe(candidate) and candidate not in split_identifier(p.name) and _enum_rank(candidate, reading) == 3:
            return candidate
    hit = pool.take(("quoted", "code"))
    return hit.value if hit else _MISSING


def _array_value(p: Param, pool: _Pool, tool: Tool, reading: Reading, root: Any, depth: int) -> Any:
    """Lists: every enum member, number or entity of the item kind; one object for object items."""
    items = resolve(p.schema.get("items"), root)
    item = Param(p.name, items, True, f"{p.description} {items.get('description', '')}")
    kind = param_kind(item)
    if kind == "enum":
        found = [v for v in items["enum"] if _enum_rank(v, reading) >= 2
                 or any(str(v).lower() in _spellings(e) for e in pool.free)]
        return found or _MISSING
    if kind == "object":
        value = _object_value(items, pool, tool, reading, root, depth)
        return _MISSING if value is _MISSING else [value]
    values = []
    while len(values) < 50:                                # take entities of the item kind until none is left
        before = len(pool.used)
        value = _fill(item, kind, pool, tool, reading, root, depth) if kind != "text" else _text_value(
            item, pool, reading, True)
        if value is _MISSING or len(pool.used) == before:
            break
        values.append(value)
    if not values and kind == "text" and p.required:
        values = [_text_value(item, pool, reading, False)]
    return [v for v in values if v is not _MISSING] or _MISSING


def _object_value(schema: dict, pool: _Pool, tool: Tool, reading: Reading, root: Any, depth: int) -> Any:
    """A nested object filled property by property; missing when a required property cannot be filled."""
    if depth > 4 or not isinstance(schema.get("properties"), dict):
        return _MISSING
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    params = [Param(str(k), resolve(v, root), k in required, str(resolve(v, root).get("description", "")))
              for k, v in schema["properties"].items()]
    out: dict = {}
    for p in sorted(params, key=lambda q: (not q.required, _ORDER.index(param_kind(q)))):
        value = _fill(p, param_kind(p), pool, tool, reading, root, depth + 1)
        if value is not _MISSING:
            out[p.name] = value
        elif p.required and p.schema.get("nullable"):
            out[p.name] = None
        elif p.required:
            return _MISSING
    return {p.name: out[p.name] for p in params if p.name in out} or _MISSING


def _scalars(value: Any) -> list[tuple[tuple[str, ...], Any, Any]]:
    """Every scalar inside a JSON value as (path of keys, value, containing object), in document order.

    >>> _scalars({"user": {"id": 7}, "tags": ["a"]})[0]
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


def _norm(key: str) -> str:
    """Keys compared loosely: 'userId', 'user_id', 'User-ID' -> 'userid'."""
    return re.sub(r"[^a-z0-9]", "", key.lower())


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


def values_from_results(p: Param, s: Situation, consumer: str = "") -> list[Any]:
    """Values for a required param found in earlier results: key `p`, or `id` for `X_id` in an X tool's result.

    The most recent result that has any wins (the consumer's own results do not count); a list of
    objects gives one value per object, narrowed to the objects that match the request's values
    ('还没发货' keeps the pending orders).
    """
    key = _norm(p.name)
    words = split_identifier(p.name)
    owner = stem(words[-2]) if len(words) > 1 and words[-1] == "id" else ""
    for call in reversed(s.calls):
        if error_of(call) is not None or call.result is None or call.name == consumer:
            continue
        scalars = _scalars(call.result)
        hits = [h for h in scalars if h[0] and _norm(h[0][-1]) in (key, key + "s")]
        if not hits and owner:                  # user_id <- "id" in get_user's result or under a "user" key
            by_tool = owner in {stem(w) for w in split_identifier(call.name)}
            hits = [h for h in scalars if h[0] and _norm(h[0][-1]) == "id"
                    and (by_tool or any(owner in _norm(k) for k in h[0][:-1]))]
        shallowest = min((len(h[0]) for h in hits), default=0)
        found = [(v, parent) for path, v, parent in hits if len(path) == shallowest]
        if not found and isinstance(call.result, str):
            m = re.search(rf"(?i)\b{re.escape(p.name)}\b\W{{0,3}}([A-Za-z0-9_-]+)", call.result)
            found = [(m.group(1), None)] if m else []
        if found:
            wanted = {t for t in s.request.tags if t in VALUE_KINDS}
            close = [(v, parent) for v, parent in found if wanted and isinstance(parent, dict) and any(
                tags_of(str(x)) & wanted for x in parent.values() if isinstance(x, str))]
            values: list[Any] = []
            for v, _ in (close or found):
                if v is not None and _convert(v, p) not in values:
                    values.append(_convert(v, p))
            return values[:MAX_FANOUT]
    return []


@dataclass(frozen=True)
class Filling:
    """The arguments a tool would be called with."""

    variants: tuple[dict, ...]
    """One argument dict per call (several when the request names several cities, ids, ...)."""
    missing: tuple[str, ...]
    """Required parameters that could not be filled."""
    from_request: tuple[str, ...]
    """Parameters filled from the request itself (not from earlier results)."""


def fill_arguments(tool: Tool, s: Situation) -> Filling:
    """Fill a tool's arguments from the request, then from earlier results; fan out over extra entities.

    >>> t = _tool({"function": {"name": "get_weather", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}})
    >>> fill_arguments(t, analyse({"messages": [{"role": "user", "content": "北京和上海天气"}]})).variants
    ({'city': '北京'}, {'city': '上海'})
    """
    pool = _Pool(s.request.entities)
    args: dict[str, Any] = {}
    used: dict[str, Entity] = {}
    missing, from_results = [], {}
    kinds = {p.name: param_kind(p) for p in tool.params}
    for p in sorted(tool.params, key=lambda q: (not q.required, _ORDER.index(kinds[q.name]))):
        before = len(pool.used)
        value = _fill(p, kinds[p.name], pool, tool, s.request, tool.root)
        if value is not _MISSING:
            args[p.name] = value
            if len(pool.used) == before + 1:
                used[p.name] = pool.used[-1]
        elif p.required:
            found = values_from_results(p, s, tool.name)
            if found:
                args[p.name], from_results[p.name] = found[0], found
            elif p.schema.get("nullable"):
                args[p.name] = None                          # strict mode: 'required' but may be null
            else:
                missing.append(p.name)
    ordered = {p.name: args[p.name] for p in tool.params if p.name in args}
    variants = [ordered]
    for name, entity in used.items():                       # one call per extra entity of the same kind
        same_kind = [n for n, e in used.items() if e.kind == entity.kind]
        p = next(q for q in tool.params if q.name == name)
        extra = [e for e in pool.free if e.kind == entity.kind and (e.kind != "number" or _numeric_ok(e, p, s.request))]
        if len(same_kind) == 1 and extra and kinds[name] not in ("array", "text"):
            variants += [{**ordered, name: _convert(e.text if e.kind == "number" and kinds[name] == "id" else e.value,
                                                    p)} for e in extra]
            break
    else:
        for name, values in from_results.items():           # one call per id found in a list result
            if len(values) > 1:
                variants = [{**ordered, name: v} for v in values]
                break
    return Filling(tuple(variants[:MAX_FANOUT]), tuple(missing),
                   tuple(n for n in ordered if n not in from_results))


# -----------------------------------------------------------------------------
# 4. what to call next


def call_key(name: str, arguments: Any) -> str:
    """Identity of a call: same name and same arguments.

    >>> call_key('f', {'b': 1, 'a': 2})
    'f {"a": 2, "b": 1}'
    """
    return f"{name} {json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)}"


def producers(p: Param, consumer: Tool, s: Situation) -> list[Tool]:
    """Tools that could produce a missing input: `user_id` -> the tools whose name or text says 'user'."""
    words = [w for w in split_identifier(p.name) if w not in ("id", "ids", "name", "key", "no")]
    words = words or list(split_identifier(p.name))
    target = describe(" ".join(words))
    scored = []
    for t in s.tools:
        if t.name == consumer.name or any(q.name == p.name and q.required for q in t.params):
            continue
        points = 2 * len(target & t.name_features) + len(target & t.features) + (3 if p.name in t.description else 0)
        if points:
            scored.append((points, t))
    best = max((sc for sc, _ in scored), default=0)
    return [t for sc, t in scored if sc == best]


def _plan_tool(tool: Tool, s: Situation, done: set[str], visiting: frozenset[str]) -> list[tuple[str, dict]]:
    """Calls for a tool, or for the tools that would produce its missing inputs."""
    if tool.name in visiting or len(visiting) > 3:
        return []
    filling = fill_arguments(tool, s)
    if not filling.missing:
        return [(tool.name, a) for a in filling.variants if call_key(tool.name, a) not in done]
    out: list[tuple[str, dict]] = []
    for name in filling.missing:
        p = next(q for q in tool.params if q.name == name)
        for producer in producers(p, tool, s):
            out += _plan_tool(producer, s, done, visiting | {tool.name})
    return out


def _follow_up(s: Situation, done: set[str]) -> list[tuple[str, dict]]:
    """'那上海呢？' / 'And London?': a tool of the previous turn that takes the new entity, with it swapped in."""
    for last in reversed(s.previous if s.request.entities else ()):
        tool = next((t for t in s.tools if t.name == last.name), None)
        filling = fill_arguments(tool, s) if tool else None
        if tool is None or not filling or not filling.from_request:
            continue
        changed = [{**last.arguments, **{k: v for k, v in a.items() if k in filling.from_request}}
                   for a in filling.variants]
        return [(tool.name, a) for a in changed if call_key(tool.name, a) not in done and a != last.arguments]
    return []


def next_calls(s: Situation) -> list[tuple[str, dict]]:
    """The calls to make now under tool_choice 'auto'; [] means it is time to answer.

    >>> s = analyse({"messages": [{"role": "user", "content": "北京天气"}], "tools": [{"type": "function",
    ...     "function": {"name": "get_weather", "description": "查询天气", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})
    >>> next_calls(s)
    [('get_weather', {'city': '北京'})]
    """
    if s.rounds >= MAX_ROUNDS:
        return []
    done = {call_key(c.name, c.arguments) for c in s.calls}
    relevant = relevant_tools(s)
    planned = [c for t in relevant for c in _plan_tool(t, s, done, frozenset())] if relevant else _follow_up(s, done)
    scores = {t.name: sc for sc, t in rank_tools(s)}

    def outranks(other: str, name: str) -> bool:            # clearly the better fit, not just first
        return scores.get(name, 0) < OUTRANKED * scores.get(other, 0)

    unique: dict[str, tuple[str, dict]] = {}
    covered: dict[str, str] = {}                            # argument value -> the (better) tool that uses it
    for call in s.calls:                                    # what was already done counts too
        for v in call.arguments.values():
            if not isinstance(v, (dict, list)):
                covered.setdefault(json.dumps(v, ensure_ascii=False), call.name)
    for name, args in planned:                              # best-scoring tools first
        values = {json.dumps(v, ensure_ascii=False) for v in args.values() if not isinstance(v, (dict, list))}
        if values and all(v in covered and covered[v] != name and outranks(covered[v], name) for v in values):
            continue                    # a clearly better tool does this with the same values (discount vs multiply)
        for v in values:
            covered.setdefault(v, name)
        unique.setdefault(call_key(name, args), (name, args))
    return list(unique.values())[:MAX_CALLS]


def invented(p: Param, s: Situation) -> Any:
    """What a model forced to call a tool puts in a required argument it has no value for.

    Real models make something up rather than break the schema; so does this one, visibly: the
    salient words of the request for a string, 0 for a number, the first member of an enum.

    >>> invented(Param("city", {"type": "string"}, True, ""), analyse({"messages": [{"role": "user", "content": "Tell me a joke"}]}))
    'a joke'
    """
    kind = _type(p.schema)
    if isinstance(p.schema.get("enum"), list) and p.schema["enum"]:
        return p.schema["enum"][0]
    return {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(
        kind, salient(s.request.text) or p.name)


def forced_calls(s: Situation, name: str) -> list[tuple[str, dict]]:
    """Calls of exactly this tool, arguments filled as well as possible (invented where the request has
    nothing); repeated if already done."""
    tool = next((t for t in s.tools if t.name == name), None)
    if tool is None:
        return [(name, {})]
    done = {call_key(c.name, c.arguments) for c in s.calls}
    filling = fill_arguments(tool, s)
    made_up = {p.name: invented(p, s) for p in tool.params if p.name in filling.missing}
    variants = [{p.name: {**a, **made_up}[p.name] for p in tool.params if p.name in {**a, **made_up}}
                for a in filling.variants]
    fresh = [a for a in variants if call_key(name, a) not in done]
    return [(name, a) for a in (fresh or variants[:1])]


def respond(s: Situation) -> Reply:
    """The planner's decision for a Situation: tool calls, or a text answer."""
    if s.choice.mode == "none" or not s.tools:
        return Reply(content=compose_answer(s))
    if s.choice.mode == "named":
        calls = forced_calls(s, s.choice.name)
    else:
        calls = next_calls(s)
        if not calls and s.choice.mode == "required":
            calls = forced_calls(s, rank_tools(s)[0][1].name)
    if calls:
        return Reply(tool_calls=tuple(PlannedCall.of(n, a) for n, a in (calls if s.parallel else calls[:1])))
    return Reply(content=compose_answer(s))


def plan(request: dict) -> Reply:
    """The `practice` persona: a request body in, a Reply out; never raises.

    >>> plan({"messages": [{"role": "user", "content": "你好"}]}).content[:3]
    '你好！'
    """
    try:
        return respond(analyse(request))
    except Exception:                                         # a bug must not take the server down
        return Reply(content="抱歉，练习模型内部出错了。Sorry, the practice model hit an internal error.")


# -----------------------------------------------------------------------------
# 5. answers: from the results, in the user's language

_LABELS_ZH = {"temperature": "温度", "temp": "温度", "condition": "天气", "weather": "天气", "humidity": "湿度",
              "wind": "风力", "status": "状态", "price": "价格", "total": "合计", "amount": "金额", "name": "名称",
              "user_id": "用户ID", "order_id": "订单号", "items": "商品", "item": "商品", "product": "商品",
              "quantity": "数量", "qty": "数量", "count": "数量", "date": "日期", "city": "城市", "result": "结果",
              "message": "消息", "unit": "单位", "description": "描述", "email": "邮箱", "phone": "电话",
              "address": "地址", "currency": "货币", "rate": "汇率", "symbol": "代码", "title": "标题",
              "orders": "订单", "created_at": "创建时间", "time": "时间", "value": "数值", "change": "涨跌"}


def _key_label(key: str, zh: bool) -> str:
    """A result key as a label: 'temperature' -> '温度' in Chinese, 'order_id' -> 'order id' in English."""
    return _LABELS_ZH.get(key.lower(), key) if zh else key.replace("_", " ")


def _unwrap(result: Any) -> Any:
    """The payload of a success envelope: {'status': 'success', 'data': X} -> X."""
    if isinstance(result, dict) and str(result.get("status", "")).lower() in ("success", "ok") and len(result) <= 3:
        for key in ("data", "result"):
            if key in result:
                return result[key]
    return result


def render(value: Any, zh: bool, depth: int = 0) -> str:
    """A JSON value as a short readable phrase: objects as 'label value' pairs, lists as enumerations.

    >>> render({"temperature": 22, "condition": "晴"}, zh=True)
    '温度 22，天气 晴'
    """
    sep = "，" if zh else ", "
    if value is None:
        return "无" if zh else "none"
    if isinstance(value, bool):
        return ("是" if value else "否") if zh else ("yes" if value else "no")
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        flat = " ".join(value.split())
        text = flat if len(flat) <= TRUNCATE else flat[:TRUNCATE] + "…"
        return (f"“{text}”" if zh else f'"{text}"') if depth == 0 else text
    if isinstance(value, dict):
        if not value:
            return "（空）" if zh else "(empty)"
        if depth >= 3:
            return json.dumps(value, ensure_ascii=False)[:TRUNCATE]
        pairs = sep.join(f"{_key_label(str(k), zh)} {render(v, zh, depth + 1)}" for k, v in list(value.items())[:12])
        return (f"（{pairs}）" if zh else f"({pairs})") if depth >= 2 else pairs
    if isinstance(value, list):
        if not value:
            return "没有结果（空列表）" if zh else "no results (empty list)"
        nested = any(isinstance(v, (dict, list)) for v in value)
        joiner = ("；" if zh else "; ") if nested else ("、" if zh else ", ")
        items = [render(v, zh, max(depth, 1) + (1 if depth else 0)) for v in value[:8]]
        return joiner.join(items) + (("……" if zh else " …") if len(value) > 8 else "")
    return render(str(value), zh, depth)


def _short(value: Any) -> str:
    """An argument value for a label: strings bare and cut at 40 characters, others as JSON."""
    if isinstance(value, (dict, list)) and len(json.dumps(value, ensure_ascii=False)) > 40:
        return "{…}" if isinstance(value, dict) else "[…]"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:40] + "…"


def call_text(name: str, arguments: dict) -> str:
    """A call as a learner would write it.

    >>> call_text('add', {'a': 1, 'b': 2})
    'add(a=1, b=2)'
    """
    return f"{name}({', '.join(f'{k}={_short(v)}' for k, v in arguments.items())})"


def _label(call: Call, shown: list[Call]) -> str:
    """What a result is about: the entity ('北京') or, when that is unclear, the call itself."""
    scalars = {k: v for k, v in call.arguments.items() if not isinstance(v, (dict, list))}
    siblings = [c for c in shown if c.name == call.name]
    if len(siblings) > 1:
        differing = [k for k, v in scalars.items() if any(c.arguments.get(k) != v for c in siblings)]
        if differing:
            return "，".join(_short(scalars[k]) for k in differing)
    if len(call.arguments) == 1 and len(scalars) == 1:
        ((key, value),) = scalars.items()
        if isinstance(value, str) and len(value) <= 40:
            return value
    return call_text(call.name, call.arguments)


def _consumed(call: Call, later: list[Call], request_text: str) -> bool:
    """Whether a later call took an argument out of this call's result (so it was an intermediate step)."""
    if error_of(call) is not None:
        return False
    inside = {json.dumps(v, ensure_ascii=False) for _, v, _ in _scalars(call.result)}
    for other in later:
        for v in other.arguments.values():
            if not isinstance(v, (dict, list, bool)) and str(v) not in request_text:
                if json.dumps(v, ensure_ascii=False) in inside or json.dumps(str(v), ensure_ascii=False) in inside:
                    return True
    return False


def _comparison(s: Situation, shown: list[Call]) -> str:
    """'上海的温度更高（25）。' when the user asked which one is warmer / cheaper / ..."""
    if not COMPARE.search(s.request.text):
        return ""
    rows = [(c, _unwrap(c.result)) for c in shown if error_of(c) is None]
    rows = [(c, r) for c, r in rows if isinstance(r, dict)]

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if len(rows) < 2:
        return ""
    common = [k for k, v in rows[0][1].items() if number(v) and all(number(r.get(k)) for _, r in rows)]
    if not common:
        return ""
    key = next((k for k in common if tags_of(k) & s.request.tags), common[0])
    low = bool(LOWER_IS_ASKED.search(s.request.text))
    target = (min if low else max)(r[key] for _, r in rows)
    winners = [_label(c, shown) for c, r in rows if r[key] == target]
    if s.zh:
        degree = ("更" if len(rows) == 2 else "最") + ("低" if low else "高")
        return f"{'、'.join(winners)}的{_key_label(key, True)}{degree}（{render(target, True)}）。"
    degree = ("lower" if low else "higher") if len(rows) == 2 else ("lowest" if low else "highest")
    verb = "has" if len(winners) == 1 else "have"
    return f"{' and '.join(winners)} {verb} the {degree} {_key_label(key, False)} ({render(target, False)})."


def answer_from_results(s: Situation) -> str:
    """The final answer: every result that was not just a stepping stone, labelled, errors reported."""
    calls = list(s.calls)
    shown = [c for i, c in enumerate(calls) if not _consumed(c, calls[i + 1:], s.request.text)] or calls
    lines = []
    for c in shown:
        label, err = _label(c, shown), error_of(c)
        if err is not None and not s.zh:
            lines.append(f"I couldn't {' '.join(split_identifier(c.name))} ({label}): {err}")
            continue
        if c.result is None:
            body = "没有收到结果" if s.zh else "no result came back"
        elif err is not None:
            body = f"调用 {c.name} 失败：{err}"
        else:
            result = _unwrap(c.result)
            if isinstance(result, dict) and len(result) > 1 and label in c.arguments.values():
                result = {k: v for k, v in result.items() if v != label}      # the label already says it
            body = render(result, s.zh)
        if label == call_text(c.name, c.arguments) and err is None and not isinstance(_unwrap(c.result), (dict, list)):
            lines.append(f"{label} 的结果是 {body}" if s.zh else f"{label} returned {body}")  # a computation
        else:
            lines.append(f"{label}：{body}" if s.zh else f"{label}: {body}")
    if len(lines) == 1:
        text = lines[0] if lines[0][-1:] in "。.！!？?" else lines[0] + ("。" if s.zh else ".")
    else:
        text = ("结果如下：\n" if s.zh else "Here is what I found:\n") + "\n".join(f"- {line}" for line in lines)
    compare = _comparison(s, shown)
    return f"{text}\n{compare}" if compare else text


def _missing_inputs(s: Situation) -> tuple[Tool, list[Param]] | None:
    """The best relevant tool that cannot be called for lack of inputs, and what it lacks."""
    for tool in relevant_tools(s):
        missing = fill_arguments(tool, s).missing
        if missing:
            return tool, [p for p in tool.params if p.name in missing]
    return None


def compose_answer(s: Situation) -> str:
    """The text reply: from the results if there are any, else a greeting, a question or an honest 'no tool fits'."""
    if s.calls:
        return answer_from_results(s)
    zh, names = s.zh, ("、" if s.zh else ", ").join(t.name for t in s.tools[:8])
    note = ""
    if s.choice.mode == "none" and s.tools:
        note = ('这次请求的 tool_choice 是 "none"，所以我不调用工具。' if zh
                else 'tool_choice is "none" in this request, so I will not call a tool. ')
        would = next_calls(s)
        if would:
            listed = "、".join(call_text(n, a) for n, a in would) if zh else ", ".join(call_text(n, a) for n, a in would)
            return note + (f"如果可以调用，我会调用 {listed}。" if zh else f"Otherwise I would call {listed}.")
    if is_thanks(s.request.text):
        return note + ("不客气！还有什么需要我用工具查的吗？" if zh else "You're welcome! Anything else I can look up with the tools?")
    if is_greeting(s.request.text):
        if zh:
            return note + "你好！我是离线练习模型（practice model），回答是确定的，不需要 API key。" + (
                f"这次我可以使用这些工具：{names}。想让我做什么？" if s.tools else "这次请求没有提供工具，我只能简单聊几句。")
        return note + "Hello! I'm the offline practice model: deterministic, free, no API key needed. " + (
            f"The tools I can use this time: {names}. What would you like to do?" if s.tools
            else "This request has no tools, so all I can do is chat a little.")
    blocked = _missing_inputs(s) if s.choice.mode != "none" else None
    if blocked:
        tool, params = blocked
        wanted = ("、" if zh else ", ").join(
            (f"{p.name}（{p.description}）" if zh else f"{p.name} ({p.description})") if p.description else p.name
            for p in params)
        return (f"要调用 {tool.name}，我还需要知道：{wanted}。请补充后再问我一次。" if zh
                else f"To use {tool.name} I still need: {wanted}. Tell me and ask again.")
    more = ("等" if zh else ", …") if len(s.tools) > 8 else ""
    if zh:
        tools = f"这次的工具（{names}{more}）都不适合这个请求。" if s.tools else "这次请求没有提供任何工具。"
        return (note + "我是离线练习模型（practice model），只会通过调用工具来回答，" + tools +
                "想和真正的大模型对话，请在 .env 里设置 LLM_BASE_URL（以及 LLM_API_KEY、LLM_MODEL）。")
    tools = f"none of the tools in this request ({names}{more}) fits." if s.tools else "this request has no tools."
    return (note + "I'm the offline practice model: I can only answer by calling tools, and " + tools +
            " To talk to a real model, set LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL) in .env.")
