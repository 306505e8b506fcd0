"""Stage 3 of the planner: a tool's arguments, filled by JSON-schema type from the request.

    fill_arguments(tool, s) -> Filling
        variants       one argument dict per call: several when the request names several values
                       of one kind ('北京和上海' -> two calls), or an earlier result listed several ids
        missing        required parameters nothing could fill
        from_request   parameters filled from the request itself (not from earlier results)

Each parameter gets a *kind* (`param_kind`: enum, number, boolean, array, object, email, url,
date, clock, timezone, city, person, code, id, text, ...) from its type, format, name and description,
and the kinds are filled most specific first from a pool of the request's entities, so '从上海飞东京'
gives origin 上海 and destination 东京 and the leftover free text goes to a `query`. A required
parameter the request cannot fill is looked up in earlier results (`values_from_results`:
key `user_id`, or key `id` in the result of a tool whose name says `user`): that is all chaining is.
When there is none either, a default its description states ("Use 'Asia/Shanghai' as local timezone
if no timezone provided", '默认为 celsius') or its schema gives is used (`described_default`), as a
model that reads the description does.

Times, as an MCP time server's schema asks for them: a parameter described as '24-hour format (HH:MM)'
(or of format `time`) is a *clock* and gets the request's time of day as 'HH:MM' ('下午4点半' -> '16:30');
one named or described as a time zone ('IANA timezone name') gets the IANA zone of the place named
for its end (`source_timezone` the place whose time is given, `target_timezone` the one asked about,
`language` reads which is which), never the other end's; a place with no known zone ('Springfield') is
not replaced by the described default: the parameter stays missing, and the user is asked.

An enum only ever gets one of its members, however it is filled (from the request, a fan-out, an
earlier result): 美元 gives 'USD'; a value of the members' kind that is not a member ('人民币' for
[USD, EUR, JPY], '5天' for days in [1, 3, 7]) leaves the parameter out, so a required one is asked
for (`answers` lists the members) rather than sent outside the enum.

Secrets are filled like any other value, as real models fill them: a parameter named `api_key`,
`access_token`, `password` or `id_number` (or described as 密钥, 身份证号, ...) gets the key or ID
number the user wrote, or the system prompt gave (`Situation.context`), so it travels in the
call's arguments, into the request log and the provider's logs. That is the pitfall a lesson
shows, and why such values belong in the tool's code, not in its parameters.

Concessions: optional parameters need evidence in the request (an optional object is never
filled); one fan-out dimension per tool, at most MAX_FANOUT calls; numbers are matched to
parameters by the words around them, not by understanding the sentence. The work is bounded:
at most MAX_FILLS values are tried per tool (nested objects and lists included), the first
MAX_CANDIDATES words of a description are tried as the value it lists, a text result is searched
in its first MAX_RESULT_TEXT characters, and each tool is filled once per request (`once`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any

from .language import (
    OPERATORS,
    VALUE_KINDS,
    VALUE_SURFACES,
    Entity,
    Reading,
    describe,
    salient,
    split_identifier,
    stem,
    tags_of,
)
from .language import read as read_text
from .numerals import parse_number
from .schemas import Param, enum_of, json_type, params_of, read, resolve
from .situation import MAX_RESULT_TEXT, Call, OfferedTool, Situation, error_of, once, scalars
from .zones import zone_of

MAX_FANOUT = 5          # calls of one tool in one reply ("北京、上海、广州…", one per order id)
MAX_FILLS = 256         # values one tool's filling may try (parameters, nested properties, list items)
MAX_CANDIDATES = 64     # words of a description tried as the value it lists ('可选：pending、shipped')
MAX_MEMBER = 64         # characters of an enum member read for its kind (`_unsupported`)

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
    "path": "path", "file": "path", "filename": "path", "filepath": "path", "glob": "path", "folder": "path",
    "timezone": "timezone", "tz": "timezone", "zone": "timezone", "clock": "clock",
}
_FREE_TEXT = set("""query q text expression expr formula content message msg prompt question keyword keywords body
subject title input sql search topic description note notes comment sentence statement instruction task term phrase
summary words""".split())
_NOT_PEOPLE = set("file city product item tool model project company repo branch table database event task".split())
_CREDENTIAL_WORDS = {"password", "passwd", "pwd", "passcode", "secret", "token", "apikey"}
_KEY_OWNERS = {"api", "access", "secret", "private", "auth", "refresh", "bearer", "client", "session"}
_DESCRIPTION_KINDS = [            # when the name says nothing ('a', 'q', 'arg1'), the description may
    ("timezone", ("iana", "time zone", "timezone", "时区")),
    ("id_number", ("身份证", "证件号", "id number", "id card", "passport number")),
    ("credential", ("api key", "密钥", "秘钥", "密码", "口令", "令牌", "password", "access token")),
    ("email", ("email address", "e-mail", "邮箱", "收件人", "邮件地址")), ("url", ("url", "网址", "链接")),
    ("date", ("date", "日期", "yyyy")), ("currency", ("currency", "货币", "币种")), ("language", ("language", "语言")),
    ("city", ("city", "城市", "地点", "location")), ("person", ("姓名", "名字", "用户名", "人名", "person")),
    ("code", ("ticker", "symbol", "代码")), ("id", (" id", "编号", "单号")),
    ("path", ("file name", "filename", "file path", "文件名", "文件路径")),
    ("text", ("内容", "文本", "关键词", "问题", "表达式", "正文", "主题", "标题", "消息", "query", "text", "keyword",
              "expression", "message")),
]
_POOL_KINDS = {"credential": ("credential",), "id_number": ("id_number",),
               "email": ("email",), "url": ("url",), "date": ("date",), "currency": ("currency",),
               "language": ("language",), "unit": ("unit",), "status": ("status",), "city": ("city",),
               "person": ("person",), "code": ("code",), "id": ("code", "number"), "path": ("path", "quoted", "code"),
               "place": ("email", "city", "currency", "language"), "clock": ("clock",)}
_ORDER = ["enum", "credential", "id_number", "email", "url", "path", "date", "clock", "timezone", "currency",
          "language", "unit", "status", "place", "city", "person",
          "code", "id", "number", "boolean", "array", "object", "string", "text"]
_FROM_WORDS = {"from", "origin", "source", "src", "departure", "depart", "start", "base", "出发", "起点", "始发", "源"}
_TO_WORDS = {"to", "destination", "dest", "target", "arrival", "arrive", "end", "目的", "目标", "终点", "到达"}
_NEGATION = re.compile(r"(?i)不要|不用|不需要|无需|别|don't|do not|without|no need")
_SAYING = re.compile(r"(?i)(?:说(?!明(?!天|早|晚))|告诉(?:他|她|他们)|内容是|内容为|正文是|(?<!\d)[:：]|\bsaying\b|"
                     r"\bthat says\b|\bto say\b)\s*(\S.*)$")    # what comes after it is the message
_CLOCK_WORDS = ("hh:mm", "24-hour", "24 hour", "time of day", "24小时制")  # a description of a time of day
_DESCRIBED_DEFAULT = re.compile(
    r"(?i)\buse\s+[`'\"‘“]([^`'\"’”\s]{1,64})[`'\"’”]\s+(?:as\b|if\b|when\b|unless\b|by default)"
    r"|\bdefaults?\s*(?:to|is|:|=)\s*[`'\"‘“]([^`'\"’”\s]{1,64})[`'\"’”]"
    r"|默认(?:值)?(?:为|是|用|使用)\s*[`'\"‘“「]?([^`'\"’”」，。,;；\s]{1,64})")


class _Missing:
    """The marker of a value not found (not None: None is a value, in strict mode)."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()
_SLUG = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*")  # "build-log", "web_clipping": an id, not a word or a path


def param_kind(p: Param) -> str:
    """What a parameter wants: 'enum', 'number', 'boolean', 'array', 'object', 'city', 'email', 'text', ...

    >>> param_kind(Param("user_name", {"type": "string"}, True, ""))
    'person'
    """
    kind = json_type(p.schema)
    if isinstance(p.schema.get("enum"), list) and p.schema["enum"]:
        return "enum"
    if kind in ("integer", "number", "boolean", "array", "object"):
        return "number" if kind == "integer" else kind
    fmt = str(p.schema.get("format", ""))
    if fmt in ("email", "uri", "url", "date", "date-time", "time"):
        return {"uri": "url", "date-time": "date", "time": "clock"}.get(fmt, fmt)
    low = p.description.lower()
    if any(cue in low for cue in _CLOCK_WORDS) and "yyyy" not in low and "date" not in split_identifier(p.name):
        return "clock"                                    # 'Time to convert in 24-hour format (HH:MM)'

    raw = split_identifier(p.name)
    if raw and (raw[-1] in _CREDENTIAL_WORDS or raw[-1] == "key" and len(raw) > 1 and raw[-2] in _KEY_OWNERS):
        return "credential"                               # api_key, access_token, password, client_secret
    if "ssn" in raw or any(a in ("id", "identity", "passport", "national") and b in ("number", "card", "no", "id")
                           for a, b in pairwise(raw)):
        return "id_number"                                # id_number, id_card, passport_number, national_id
    words = [stem(w) if w not in _NAME_KINDS else w for w in raw]
    for i in range(len(words) - 1, -1, -1):
        w = words[i]
        if w in _FREE_TEXT:
            return "text"
        found = _NAME_KINDS.get(w)
        if found == "person" and w == "name" and i:
            earlier = [_NAME_KINDS.get(x, "") for x in words[:i]]
            if "city" in earlier:
                return "city"
            if "path" in earlier:
                return "path"                                 # file_name
            if _NOT_PEOPLE & set(words[:i]):
                return "string"
        if found and found != "place":
            return found
    desc = f" {p.description.lower()}"
    for kind_name, phrases in _DESCRIPTION_KINDS:
        if any(ph in desc for ph in phrases):
            return kind_name
    return "place" if any(_NAME_KINDS.get(w) == "place" for w in words) else "string"


def param_role(p: Param) -> str:
    """'from' / 'to' when the parameter's name or description says which end it is.

    >>> [param_role(Param(n, {}, True, d)) for n, d in [("from_currency", ""), ("x", "目标货币"), ("amount", "")]]
    ['from', 'to', '']
    """
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
        self.fills = MAX_FILLS
        """Values this filling may still try (`_fill` spends one each)."""
        self.unknown: set[str] = set()
        """Parameters for which the request names a value this model cannot map (a city with no known time
        zone): no described default stands in for it (a careful model asks rather than assume its own city)."""

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


def _numeric_ok(e: Entity, p: Param, kind: str, reading: Reading) -> bool:
    """Numbers go to numeric params (of this kind); ids only take digits with a cue ('订单1001') or 4+ digits."""
    if kind != "id" and split_identifier(p.name)[-1:] != ("id",):
        return True
    digits = e.text.lstrip("-").replace(",", "")
    return digits.isdigit() and (len(digits) >= 4 or _affinity(e, p, reading))


def _convert(value: Any, p: Param) -> Any:
    """A value shaped for the parameter's type: '1001' -> 1001 for an integer, 1001 -> '1001' for a string."""
    kind = json_type(p.schema)
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


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _whole_word(word: str, text: str) -> bool:
    """Whether `word` occurs in `text` with no ASCII letter or digit right before or after it (no regex to compile).

    >>> _whole_word("usd", "100 usd to eur"), _whole_word("usd", "usda"), _whole_word("c", "c++")
    (True, False, True)
    """
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or text[start - 1] not in _ALNUM) and (end == len(text) or text[end] not in _ALNUM):
            return True
        start = text.find(word, start + 1)
    return False


def _enum_rank(value: Any, reading: Reading, shared: frozenset[str] = frozenset(),
               tags: frozenset[str] | None = None) -> int:
    """How clearly the request names an enum member: 3 literally, 2 by a value synonym, 1 by topic, 0 not.

    `shared` are the tags every member has ('#weather' for celsius and fahrenheit): they tell nothing.
    `tags` are the member's own tags when the caller has them already.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return 3 if any(e.value == value for e in reading.of_kind("number")) else 0
    low, text = str(value).lower(), reading.text.lower()
    if len(low) > 1 and low.isascii() and _whole_word(low, text):
        return 3
    if len(low) > 1 and not low.isascii() and low in text:
        return 3
    found = ((tags_of(str(value)) if tags is None else tags) - shared) & reading.tags
    return 2 if any(t[0] == "=" for t in found) else 1 if found else 0


def _member(e: Entity, options: list[Any]) -> Any:
    """The enum member an entity stands for (itself, in any case, or a synonym: 美元 -> 'USD'), else _MISSING."""
    lowered = {str(v).lower(): v for v in options}
    return next((lowered[n] for n in sorted(_spellings(e)) if n in lowered), _MISSING)


def is_member(value: Any, options: list[Any]) -> bool:
    """Whether a value is one of an enum's members (True is not 1, 2.0 is 2).

    >>> is_member("USD", ["USD", "EUR"]), is_member("CNY", ["USD", "EUR"]), is_member(True, [1, 2]), is_member(2.0, [2])
    (True, False, False, True)
    """
    return any(value == m and isinstance(value, bool) == isinstance(m, bool) for m in options)


@lru_cache(maxsize=4096)
def _kinds_of(member: str) -> frozenset[str]:
    """The kinds of entity an enum member is, read as a request would be ('currency' for 'USD', 'city' for '北京')."""
    return frozenset(e.kind for e in read_text(member).entities
                     if e.start == 0 and e.end == len(member) and e.kind != "quoted")


def _unsupported(p: Param, pool: _Pool, reading: Reading) -> bool:
    """Whether the request names a value of the enum's kind that is not a member ('英镑' for [USD, EUR, JPY]).

    Then no member fits: a careful model leaves the parameter out (or asks) rather than send another value.
    A number counts only when the words around it point at this parameter ('5天' for `days`).
    """
    options = p.schema["enum"]
    opposite = {"from": "to", "to": "from"}.get(param_role(p), "")
    others = [e for e in pool.free if (not opposite or e.role != opposite) and _member(e, options) is _MISSING
              and (e.kind != "number" or _affinity(e, p, reading))]
    if not others:
        return False                                        # the usual case: nothing to read the members for
    kinds = frozenset().union(*(_kinds_of(str(v)[:MAX_MEMBER]) for v in options))
    return any(e.kind in kinds for e in others)


def _enum_value(p: Param, pool: _Pool, reading: Reading) -> Any:
    """The enum member the request points at (an entity, a literal mention, a synonym); never a value outside it.

    When the request names a value of the members' kind that is not one of them, none fits: missing. With no
    evidence at all, a required one gets its default (a member) or the first member.
    """
    options = p.schema["enum"]
    hit = pool.take(None, param_role(p), lambda e: _member(e, options) is not _MISSING)
    if hit:
        return _member(hit, options)
    if _unsupported(p, pool, reading):
        return _MISSING
    taken = [_member(e, options) for e in pool.used]          # named already, for another parameter
    tags = [tags_of(str(v)) for v in options]
    shared = frozenset.intersection(*tags)
    ranks = [0 if is_member(v, taken) else _enum_rank(v, reading, shared, t) for v, t in zip(options, tags)]
    if max(ranks) > 0:
        return options[ranks.index(max(ranks))]
    if not p.required or p.schema.get("nullable"):
        return _MISSING                                    # no evidence: leave it out (or null in strict mode)
    default = p.schema.get("default", _MISSING)
    return default if is_member(default, options) else options[0]


def _described_values(p: Param) -> list[str]:
    """Candidate values listed in a description (the first MAX_CANDIDATES words).

    >>> _described_values(Param("status", {}, False, "状态：pending（未发货）、shipped"))
    ['状态', 'pending', '未发货', 'shipped']
    """
    words = re.split(r"[\s/、,，;；:：()（）|“”\"'`\[\]。.]+|或者|或|\bor\b", p.description)
    return [w for w in words if w][:MAX_CANDIDATES]


def _value_kind(p: Param, kind: str, pool: _Pool) -> Any:
    """A currency, unit, status or language: as the description lists it ('未发货'), else its code ('pending')."""
    hit = pool.take((kind,), param_role(p))
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
    for left, right in pairwise(numbers):
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
        taken = pool.take(("quoted",))
        return taken.value if taken else _MISSING
    if evidence_only:
        return _MISSING
    if {"expression", "expr", "formula"} & set(split_identifier(p.name)) or "表达式" in p.description:
        expression = _arithmetic(reading)
        if expression:
            return expression
    if p.name == "task" and "whole task" in p.description.lower():  # a sub-agent's task (as_tool): all of it
        return re.sub(r"\s+", " ", salient(reading.text)).strip() or _MISSING
    chars = list(reading.text)
    for e in pool.used + [e for e in pool.free if e.kind in ("email", "url")]:
        if e.kind in ("email", "url", "person", "city", "code", "date", "clock", "path"):
            chars[e.start:e.end] = " " * (e.end - e.start)
    text = "".join(chars)
    said = _SAYING.search(text)                           # '…，说明天开会' / '… saying we moved'
    return re.sub(r"\s+", " ", salient(said.group(1) if said else text)).strip() or _MISSING


def _bool_value(p: Param, tool: OfferedTool, reading: Reading) -> Any:
    """True when the request mentions what the flag is about (and is not negated); else missing."""
    own = {f for f in _param_features(p) if f[:1] != "="} - tool.name_features - describe(tool.description)
    own -= {"include", "use", "enable", "show", "flag", "whether", "是否", "包含"}
    if own & reading.features:
        return not _NEGATION.search(reading.text)
    return _MISSING


def _fill(p: Param, kind: str, pool: _Pool, tool: OfferedTool, reading: Reading, root: Any, depth: int = 0) -> Any:
    """One parameter's value from the request, or _MISSING. Optional params need evidence."""
    if pool.fills <= 0:
        return _MISSING                                     # this tool has had its share of work
    pool.fills -= 1
    optional = not p.required
    if kind == "enum":
        return _enum_value(p, pool, reading)
    if kind == "boolean":
        return _bool_value(p, tool, reading)
    if kind == "number":
        numbers = [e for e in pool.free if e.kind == "number" and _numeric_ok(e, p, kind, reading)]
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
    if kind == "timezone":
        return _zone_value(p, pool)
    if kind == "clock":
        hit = pool.take(("clock",))
        seconds = p.schema.get("format") == "time" or "hh:mm:ss" in p.description.lower()   # RFC 3339's full-time
        return _MISSING if hit is None else hit.value + (":00" if seconds else "")
    if kind == "text":
        return _text_value(p, pool, reading, optional)
    if kind in _POOL_KINDS:
        accept = (lambda e: e.kind != "number" or _numeric_ok(e, p, kind, reading)) if kind == "id" else None
        if kind == "path":
            accept = _path_accepted(p)
        hit = pool.take(_POOL_KINDS[kind], param_role(p), accept)
        if hit is None and kind == "id":  # a slug in quotes after the id's own word: 'the note "build-log"'
            hit = pool.take(("quoted",), param_role(p), lambda e: _quoted_id(e, p, reading))
        return _convert(hit.text if hit.kind == "number" else hit.value, p) if hit else _MISSING
    # a string the name says nothing about: a value its description lists, else a quoted string or a code
    for candidate in _described_values(p):
        if describe(candidate) and candidate not in split_identifier(p.name) and _enum_rank(candidate, reading) == 3:
            return candidate
    hit = pool.take(("quoted", "code"))
    return hit.value if hit else _MISSING


def _quoted_id(e: Any, p: Param, reading: Reading) -> bool:
    """Whether a quoted value is this id: it looks like one ("build-log") and the word before it names the
    parameter ('the note "build-log"' for note_id; 'notes for "meeting"' is a search, not an id)."""
    before = re.search(r"(\w+)\W*$", reading.text[:e.start])
    words = {f for f in _param_features(p) if f[:1] not in "#="}
    return bool(_SLUG.fullmatch(str(e.value)) and before and words & describe(before.group(1)))


def _zone_value(p: Param, pool: _Pool) -> Any:
    """An IANA zone for a `timezone` parameter: of the place the request names for this end ('from' for
    `source_timezone`), never of the other end's place; a place the zone table does not know is left alone."""
    role = param_role(p)
    opposite = {"from": "to", "to": "from"}.get(role, "")
    hit = pool.take(("timezone", "city"), role, lambda e: zone_of(e.value) is not None and not (
        opposite and e.role == opposite))
    if hit is None and any(e.kind == "city" and e.role in ("", role) for e in pool.free):
        pool.unknown.add(p.name)                            # 'Springfield': named, but no zone known for it
    return _MISSING if hit is None else zone_of(hit.value)


def described_default(p: Param) -> Any:
    """The value a parameter's description (or schema) says to use when the user gives none, else _MISSING.

    >>> described_default(Param("tz", {}, True, "IANA name. Use 'Asia/Shanghai' as local timezone if none given."))
    'Asia/Shanghai'
    >>> described_default(Param("unit", {}, True, "温度单位，默认为 celsius"))
    'celsius'
    >>> described_default(Param("x", {}, True, ""))
    <missing>
    """
    if "default" in p.schema and p.schema["default"] is not None:
        return p.schema["default"]
    m = _DESCRIBED_DEFAULT.search(p.description)
    return _MISSING if m is None else next(g for g in m.groups() if g)


def _path_accepted(p: Param) -> Any:
    """Which entities a path parameter takes: a path; a quoted or code value that looks like one (a '/' or a '.', or
    a bare name); a glob (*, ?, [) only when the parameter takes globs ('path_pattern', 'a glob')."""
    globs = bool({"glob", "pattern"} & set(split_identifier(p.name)) or "glob" in p.description)
    return lambda e: (e.kind == "path" or (isinstance(e.value, str) and not re.search(r"\s", e.value))) and (
        globs or not set("*?[") & set(str(e.value)))


def _array_value(p: Param, pool: _Pool, tool: OfferedTool, reading: Reading, root: Any, depth: int) -> Any:
    """Lists: every enum member, number or entity of the item kind; one object for object items."""
    items = read(resolve(p.schema.get("items"), root))
    item = Param(p.name, items, True, f"{p.description} {items.get('description', '')}")
    kind = param_kind(item)
    if kind == "enum":
        found = [v for v in items["enum"] if _enum_rank(v, reading) >= 2
                 or any(str(v).lower() in _spellings(e) for e in pool.free)]
        return found or _MISSING
    if kind == "object":
        value = _object_value(items, pool, tool, reading, root, depth)
        return _MISSING if value is _MISSING else [value]
    values: list[Any] = []
    while len(values) < 50 and pool.fills > 0:             # take entities of the item kind until none is left
        before = len(pool.used)
        value = _fill(item, kind, pool, tool, reading, root, depth) if kind != "text" else _text_value(
            item, pool, reading, True)
        if value is _MISSING or len(pool.used) == before:
            break
        values.append(value)
    if not values and kind == "text" and p.required:
        values = [_text_value(item, pool, reading, False)]
    return [v for v in values if v is not _MISSING] or _MISSING


def _object_value(schema: dict, pool: _Pool, tool: OfferedTool, reading: Reading, root: Any, depth: int) -> Any:
    """A nested object filled property by property; missing when a required property cannot be filled."""
    if depth > 4 or not isinstance(schema.get("properties"), dict):
        return _MISSING
    params = params_of(schema, root)
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


def _norm(key: str) -> str:
    """Keys compared loosely: 'userId', 'user_id', 'User-ID' -> 'userid'."""
    return re.sub(r"[^a-z0-9]", "", key.lower())


def _scalars_of(call: Call, s: Situation) -> list[tuple[tuple[str, ...], Any, Any]]:
    """`scalars(call.result)`, computed once per situation."""
    return once(s, "scalars", call, lambda: scalars(call.result))


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
        inside = _scalars_of(call, s)
        hits = [h for h in inside if h[0] and _norm(h[0][-1]) in (key, key + "s")]
        if not hits and owner:                  # user_id <- "id" in get_user's result or under a "user" key
            by_tool = owner in {stem(w) for w in split_identifier(call.name)}
            hits = [h for h in inside if h[0] and _norm(h[0][-1]) == "id"
                    and (by_tool or any(owner in _norm(k) for k in h[0][:-1]))]
        shallowest = min((len(h[0]) for h in hits), default=0)
        found = [(v, parent) for path, v, parent in hits if len(path) == shallowest]
        text = call.result[:MAX_RESULT_TEXT] if isinstance(call.result, str) else ""
        if not found and p.name.casefold() in text.casefold():        # compile the regex only when it can match
            m = re.search(rf"(?i)\b{re.escape(p.name)}\b\W{{0,3}}([A-Za-z0-9_-]+)", text)
            found = [(m.group(1), None)] if m else []
        if found:
            wanted = {t for t in s.request.tags if t in VALUE_KINDS}
            close = [(v, parent) for v, parent in found if wanted and isinstance(parent, dict) and any(
                tags_of(str(x)) & wanted for x in parent.values() if isinstance(x, str))]
            options = enum_of(p.schema)
            lowered = {str(m).lower(): m for m in options}
            values: list[Any] = []
            for v, _ in (close or found):
                value = _convert(v, p) if not options else lowered.get(str(v).lower(), _MISSING)
                if v is not None and value is not _MISSING and value not in values:
                    values.append(value)                # an enum takes only its members
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


def fill_arguments(tool: OfferedTool, s: Situation) -> Filling:
    """Fill a tool's arguments from the request, then from earlier results; fan out over extra entities.

    >>> from practice_model.situation import analyse, offered_tool
    >>> t = offered_tool({"function": {"name": "get_weather", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}})
    >>> fill_arguments(t, analyse({"messages": [{"role": "user", "content": "北京和上海天气"}]})).variants
    ({'city': '北京'}, {'city': '上海'})
    """
    return once(s, "fill", tool, lambda: _fill_arguments(tool, s))


def _fill_arguments(tool: OfferedTool, s: Situation) -> Filling:
    """`fill_arguments`, computed."""
    pool = _Pool(s.request.entities + s.context)
    args: dict[str, Any] = {}
    used: dict[str, Entity] = {}
    missing, from_results, defaulted = [], {}, {}
    kinds = {p.name: param_kind(p) for p in tool.params}
    by_name = {p.name: p for p in reversed(tool.params)}   # the first of duplicate names wins, as in a scan
    for p in sorted(tool.params, key=lambda q: (not q.required, _ORDER.index(kinds[q.name]))):
        before = len(pool.used)
        value = _fill(p, kinds[p.name], pool, tool, s.request, tool.root)
        if kinds[p.name] == "enum" and value is not _MISSING and not is_member(value, p.schema["enum"]):
            value = _MISSING                                # never a value outside the enum, whatever filled it
        if value is not _MISSING:
            args[p.name] = value
            if len(pool.used) == before + 1:
                used[p.name] = pool.used[-1]
        elif p.required:
            found = values_from_results(p, s, tool.name)
            default = _MISSING if found or p.name in pool.unknown else described_default(p)
            if found:
                args[p.name], from_results[p.name] = found[0], found
            elif default is not _MISSING:
                args[p.name] = defaulted[p.name] = _convert(default, p)   # "Use 'Asia/Shanghai' … if none"
            elif p.schema.get("nullable"):
                args[p.name] = None                          # strict mode: 'required' but may be null
            else:
                missing.append(p.name)
    ordered = {p.name: args[p.name] for p in tool.params if p.name in args}
    variants = [ordered]
    for name, entity in used.items():                       # one call per extra entity of the same kind
        same_kind = [n for n, e in used.items() if e.kind == entity.kind]
        p = by_name[name]
        extra = [e for e in pool.free
                 if e.kind == entity.kind and (e.kind != "number" or _numeric_ok(e, p, kinds[name], s.request))]
        if len(same_kind) > 1:              # two ends of one kind: fan out over more of this end only ('东京和纽约')
            extra = [e for e in extra if entity.role and e.role == entity.role] if entity.role else []
            same_kind = [name] if extra else same_kind
        if len(same_kind) == 1 and extra and kinds[name] not in ("array", "text", "credential", "id_number"):
            values = [_member(e, p.schema["enum"]) if kinds[name] == "enum" else (zone_of(e.value) or _MISSING)
                      if kinds[name] == "timezone" else _convert(
                e.text if e.kind == "number" and kinds[name] == "id" else e.value, p) for e in extra]
            values = [v for i, v in enumerate(values)
                      if v is not _MISSING and v != ordered[name] and v not in values[:i]]
            variants += [{**ordered, name: v} for v in values]    # an enum fans out over its members only
            break
    else:
        for name, values in from_results.items():           # one call per id found in a list result
            if len(values) > 1:
                variants = [{**ordered, name: v} for v in values]
                break
    return Filling(tuple(variants[:MAX_FANOUT]), tuple(missing),
                   tuple(n for n in ordered if n not in from_results and n not in defaulted))
