"""The misbehaving personas: the lessons' pitfalls, on demand and deterministic, so a lesson can show
each failure and then the fix.

    practice-sloppy       wrong types and broken JSON in the first call of each tool (lesson 04);
                          fixed once an error names the field, repeated after a vague one
    practice-hallucinate  first calls a tool that does not exist (get_current_weather, calculate_discount;
                          lesson 05); recovers once an error lists the real tools, gives up after 3 inventions
    practice-loop         calls the same tool with the same arguments again and again (lesson 06), until a
                          tool message says to stop repeating or the request has no tools to call
    practice-flaky        per conversation: a 429, then a 500, then the answer; both carry
                          `retry-after-ms: 20`, so the OpenAI SDK's default retries absorb them in
                          tens of milliseconds (lesson 08)

Each one is the planner (`planner.py`) with one twist: it decides *what* to call exactly as
`practice` does, then bends the call, and reads the tool messages for the cue that makes a real
model change course. All are pure functions of the request (flaky also counts attempts).

Concessions: cues are recognised by wording (a few English and Chinese phrases), not understood;
sloppy recognises its own earlier calls by re-deriving them, so a call it did not make is taken at
face value; nested objects and arrays are never corrupted.
"""
from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from . import errors
from .answers import compose_answer
from .filling import fill_arguments, param_kind
from .language import FINAL, STOP_REPEATING, VALUE_SURFACES, has_cjk, split_identifier
from .numbers import spell_number
from .numerals import parse_number
from .personas import Attempts, Responder
from .planner import APOLOGY, plan, respond
from .planning import call_key
from .reply import PlannedCall, Reply
from .situation import MAX_RESULT_TEXT, Call, OfferedTool, Situation, analyse, error_of, offered_tool

log = logging.getLogger("practice_model")

MAX_INVENTIONS = 3          # made-up tool names before practice-hallucinate gives up
RETRY_AFTER = 0.02          # seconds practice-flaky asks the client to wait after its 429 and its 500

# -----------------------------------------------------------------------------
# reading tool messages: what a real model would notice in them

JSON_WORDS = re.compile(r"(?i)json|pars(?:e|ing)|syntax|malformed|decode|expecting (?:value|property name|',' "
                        r"delimiter)|unterminated|line \d+ column \d+|解析|语法|格式")
# what makes a model read a tool message as "that did not work": the usual words, in English and Chinese,
# and the request to fix something and call again however it is phrased
ERROR_WORDS = re.compile(r"(?i)\w*(?:error|exception)\b|\b(?:invalid|failed|traceback|cannot|unable|wrong|incorrect"
                         r"|mistaken|problems?|not valid|fix|correct (?:it|them|these|the)|try again|call \w+ again)\b"
                         r"|错误|无效|失败|异常|有误|不正确|不对|出错|问题|修正|修改|重新调用|再次调用|再调用")
_FIELD_WORDS = r"(?:field|parameter|param|argument|arg|key|property|字段|参数)"


def flatten(result: Any) -> str:
    """All the text of a tool result, each key and string on its own line (the first MAX_RESULT_TEXT characters).

    >>> print(flatten({"status": "error", "errors": [{"field": "a"}]}))
    status
    error
    errors
    field
    a
    """
    lines: list[str] = []
    size = 0

    def walk(node: Any) -> None:
        nonlocal size
        if size > MAX_RESULT_TEXT:
            return                                        # enough read: cues are near the start
        if isinstance(node, dict) and node:
            for k, v in node.items():
                lines.append(str(k))
                size += len(lines[-1]) + 1
                walk(v)
        elif isinstance(node, list) and node:
            for v in node:
                walk(v)
        else:
            lines.append("" if node is None or isinstance(node, (dict, list)) else str(node)[:MAX_RESULT_TEXT + 1])
            size += len(lines[-1]) + 1

    walk(result)
    return "\n".join(lines)[:MAX_RESULT_TEXT]


def names_field(field: str, text: str) -> bool:
    """Whether an error message points at a field: quoted, on its own line, before ':', after 'field'.

    >>> names_field("a", "- a: got '一百二十三'; expected a number"), names_field("a", "invalid arguments")
    (True, False)
    """
    if field not in text:
        return False                                      # every pattern needs it literally: no regex to compile
    f = re.escape(field)
    patterns = [rf"['\"`“‘]{f}['\"`”’]", rf"(?m)^[\s\-*•]*{f}\s*(?:[:=：].*)?$", rf"{_FIELD_WORDS}\s*[:：]?\s*{f}\b",
                rf"(?<![A-Za-z0-9_.]){f}\s*(?:[:=：]|{_FIELD_WORDS})"]
    if len(field) >= 3:                                   # 'city' alone is a name; 'a' alone is a word
        patterns.append(rf"(?<![A-Za-z0-9_]){f}(?![A-Za-z0-9_])")
    return any(re.search(p, text) for p in patterns)


def failed(call: Call) -> bool:
    """Whether a call's result reads as an error (an envelope, or error words in plain text)."""
    return error_of(call) is not None or bool(ERROR_WORDS.search(flatten(call.result)))


def distinct(calls: tuple[Call, ...]) -> tuple[Call, ...]:
    """The calls with repeats folded: each (name, arguments) once, where it first appeared, with its latest
    result (a result is never replaced by a later refusal such as "you already called this")."""
    def refused(c: Call) -> bool:
        return failed(c) or bool(STOP_REPEATING.search(flatten(c.result)))

    folded: dict[str, Call] = {}
    for c in calls:
        key = call_key(c.name, c.arguments)
        if key not in folded or not refused(c) or refused(folded[key]):
            folded[key] = c
    return tuple(folded.values())


# -----------------------------------------------------------------------------
# practice-sloppy: number words where numbers belong ({"a": "一百二十三", "b": 456}), and worse

BREAKAGES = ("trailing comma", "single quotes", "code fence", "missing brace")
_BOOLEANS = {"是": True, "否": False, "yes": True, "no": False}


def breakage(name: str, text: str) -> str:
    """How this tool's JSON gets broken: fixed per tool name, swapped where it would not break (or round-trip)."""
    kind = BREAKAGES[zlib.crc32(name.encode()) % len(BREAKAGES)]
    if text == "{}":
        return "code fence"
    return "trailing comma" if kind == "single quotes" and "'" in text else kind


def break_json(text: str, kind: str) -> str:
    """Compact JSON broken one way.

    >>> [break_json('{"a":1}', k) for k in BREAKAGES]
    ['{"a":1,}', "{'a':1}", '```json\\n{"a":1}\\n```', '{"a":1']
    """
    return {"trailing comma": text[:-1] + ",}", "single quotes": text.replace('"', "'"),
            "code fence": f"```json\n{text}\n```", "missing brace": text[:-1]}[kind]


def unbreak(text: str) -> list[dict]:
    """The objects the text becomes with each breakage undone (sloppy's own calls re-derive from one of them).

    >>> unbreak("{'a':1}")
    [{'a': 1}]
    """
    out = []
    for candidate in (text, re.sub(r",}$", "}", text), text.replace("'", '"'), text + "}",
                      text.removeprefix("```json\n").removesuffix("\n```")):
        try:
            parsed = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict) and parsed not in out:
            out.append(parsed)
    return out


def misspell(value: Any, zh: bool, members: list) -> Any:
    """An enum member as a model misremembers it: translated for a Chinese request, else re-cased.

    >>> misspell("celsius", True, ["celsius", "fahrenheit"]), misspell("celsius", False, ["celsius"])
    ('摄氏度', 'Celsius')
    """
    if not isinstance(value, str):
        return str(value)                                 # 2 -> "2"
    surfaces = next((v for k, v in VALUE_SURFACES.items() if k.lower() == value.lower()), ())
    chinese = sorted((w for w in surfaces if has_cjk(w)), key=len, reverse=True)
    english = [k for k, v in VALUE_SURFACES.items() if value in v]
    options = (chinese if zh else []) + english + [value.capitalize() if value.islower() else value.lower(),
                                                   value.upper(), value + " "]
    return next((o for o in options if o != value and o not in members), f"{value}?")


def _number_words(value: float, zh: bool) -> str:
    """123 -> '一百二十三' / 'one hundred twenty-three' (digits when the number is too big to spell)."""
    try:
        return spell_number(value, "zh" if zh else "en")
    except ValueError:
        return json.dumps(value)


def corrupt(tool: OfferedTool, arguments: dict, zh: bool) -> dict:
    """The arguments with every scalar mistyped: number words, then numeric strings, [string], enum typo, '是'.

    >>> t = offered_tool({"function": {"name": "add", "parameters": {"properties": {"a": {"type": "number"},
    ...     "b": {"type": "number"}, "city": {"type": "string"}}}}})
    >>> corrupt(t, {"a": 123, "b": 456, "city": "北京"}, zh=True)
    {'a': '一百二十三', 'b': '456', 'city': ['北京']}
    """
    out, numbers = dict(arguments), 0
    for p in tool.params:
        value, kind = arguments.get(p.name), param_kind(p)
        if value is None:
            continue
        if kind == "enum":
            out[p.name] = misspell(value, zh, p.schema["enum"])
        elif kind == "boolean" and isinstance(value, bool):
            out[p.name] = ("是" if value else "否") if zh else ("yes" if value else "no")
        elif kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
            out[p.name] = _number_words(value, zh) if numbers == 0 else json.dumps(value)
            numbers += 1
        elif kind not in ("array", "object", "number", "boolean") and isinstance(value, str):
            out[p.name] = [value]
    return out


def restore(tool: OfferedTool, arguments: dict, zh: bool) -> dict:
    """The inverse of `corrupt`: what the sloppy arguments meant (values not in sloppy form are kept)."""
    out = dict(arguments)
    for p in tool.params:
        value, kind = arguments.get(p.name), param_kind(p)
        if kind == "number" and isinstance(value, str) and (number := parse_number(value)) is not None:
            out[p.name] = number
        elif kind == "boolean" and isinstance(value, str) and value in _BOOLEANS:
            out[p.name] = _BOOLEANS[value]
        elif kind == "enum":
            out[p.name] = next((m for m in p.schema["enum"] if misspell(m, zh, p.schema["enum"]) == value), value)
        elif kind not in ("array", "object") and isinstance(value, list) and len(value) == 1:
            out[p.name] = value[0]
    return out


def sloppy_text(tool: OfferedTool, arguments: dict, zh: bool, broken: bool = True) -> str:
    """The arguments text of a sloppy call: mistyped values, and (unless told about it) broken JSON."""
    text = PlannedCall.of(tool.name, corrupt(tool, arguments, zh)).arguments
    return break_json(text, breakage(tool.name, text)) if broken else text


@dataclass(frozen=True)
class Attempt:
    """One of practice-sloppy's own earlier calls, understood."""

    call: Call
    """The call as made, with its result."""
    intended: dict
    """The arguments it meant."""
    broken: bool
    """Whether its JSON was broken too (False: valid JSON, values still mistyped)."""


def recognise(tool: OfferedTool, call: Call, zh: bool) -> Attempt | None:
    """The Attempt behind a call if sloppy made it (its text re-derives exactly), else None."""
    for parsed in unbreak(call.arguments_text):
        intended = restore(tool, parsed, zh)
        for broken in (True, False):
            text = sloppy_text(tool, intended, zh, broken)
            if text == call.arguments_text and text != PlannedCall.of(tool.name, intended).arguments:
                return Attempt(call, intended, broken)
    return None


def retry(tool: OfferedTool, attempt: Attempt, zh: bool) -> PlannedCall:
    """The next try after a failed sloppy call: fixed if the error named a wrong field, JSON fixed if it
    only complained about JSON (all fixed when the JSON was all that was wrong), else the same call again."""
    message = flatten(attempt.call.result)
    wrong = [k for k, v in corrupt(tool, attempt.intended, zh).items() if v != attempt.intended[k]]
    if any(names_field(k, message) for k in wrong):
        return PlannedCall.of(tool.name, attempt.intended)
    if attempt.broken and JSON_WORDS.search(message):
        return PlannedCall(tool.name, sloppy_text(tool, attempt.intended, zh, broken=False))
    return PlannedCall(tool.name, attempt.call.arguments_text)


def sloppy(request: dict) -> Reply:
    """practice-sloppy: the planner's calls, the first call of each tool in the turn sent sloppily."""
    s = analyse(request)
    tools = {t.name: t for t in s.tools}
    done: list[Call] = []                 # what the planner sees: sloppy calls that worked, under their meaning
    shown: dict[str, Call] = {}           # what an answer reports: the latest try of each call
    pending: dict[str, Attempt] = {}      # sloppy calls that failed and may be tried again
    blocked: set[str] = set()             # tools a final error told it to stop calling
    for call in s.calls:
        attempt = recognise(tools[call.name], call, s.zh) if call.name in tools else None
        sent = call.arguments or next(iter(unbreak(call.arguments_text)), {})   # no tools: what it sent
        meant = replace(call, arguments=attempt.intended if attempt else sent)
        key = call_key(meant.name, meant.arguments)
        shown[key] = meant
        pending.pop(key, None)
        if attempt and failed(call) and FINAL.search(flatten(call.result)):
            blocked.add(call.name)
        if attempt and failed(call) and call.name not in blocked:
            pending[key] = attempt
        else:
            done.append(meant)
    planned = [c for c in respond(replace(s, calls=tuple(done))).tool_calls if c.name not in blocked]
    if not planned:                       # report a try that failed as a failure, even if it said so vaguely
        shown.update({k: replace(c, result={"error": flatten(c.result)}) for k, c in shown.items()
                      if failed(c) and error_of(c) is None})
        return Reply(content=compose_answer(replace(s, calls=tuple(shown.values()))))
    called, out = {c.name for c in s.calls}, []
    for c in planned:
        arguments, tool = json.loads(c.arguments), tools.get(c.name)
        attempt = pending.get(call_key(c.name, arguments))
        if tool and attempt:
            c = retry(tool, attempt, s.zh)
        elif tool and c.name not in called:
            c = PlannedCall(c.name, sloppy_text(tool, arguments, s.zh))
        called.add(c.name)
        out.append(c)
    return Reply(tool_calls=tuple(out))


# -----------------------------------------------------------------------------
# practice-hallucinate: an invented calculate_discount, when only get_weather and add_numbers exist

# what a request is about -> the tool a model expects to exist for it (the most specific concept first)
INVENTIONS: list[tuple[tuple[str, ...], str, dict[str, tuple[str, str]]]] = [
    (("#discount",), "calculate_discount", {"price": ("number", "原价 original price"),
                                            "discount": ("number", "折扣 discount rate, e.g. 0.8")}),
    (("#translate",), "translate_text", {"text": ("string", "text to translate"),
                                         "target_language": ("string", "target language 目标语言")}),
    (("#convert",), "convert_currency", {"amount": ("number", "amount"), "from_currency": ("string", "currency"),
                                         "to_currency": ("string", "currency")}),
    (("#weather",), "get_current_weather", {"location": ("string", "city")}),
    (("#stock",), "get_stock_price", {"symbol": ("string", "ticker symbol")}),
    (("#add", "#subtract", "#multiply", "#divide", "#calculate"), "calculator",
     {"expression": ("string", "arithmetic expression")}),
    (("#search",), "search_web", {"query": ("string", "search query")}),
]
_SYNONYMS = {"get": "fetch", "fetch": "get", "query": "get", "lookup": "get", "check": "get", "list": "get",
             "search": "find", "find": "search", "add": "sum", "sum": "add", "calculate": "compute",
             "compute": "calculate", "send": "post", "create": "make", "delete": "remove", "convert": "exchange"}
_GETTERS = ("get", "fetch", "query", "lookup", "check")


def invented_names(name: str, real: bool) -> list[str]:
    """The made-up names a model tries, in order: for a real tool its variants, for an idea the idea first.

    >>> invented_names("get_weather", real=True)[:3]
    ['get_current_weather', 'getWeather', 'fetch_weather']
    >>> invented_names("calculate_discount", real=False)[:3]
    ['calculate_discount', 'calculateDiscount', 'compute_discount']
    """
    words = list(split_identifier(name)) or [name]
    out = [] if real else [name]
    if real and words[0] in _GETTERS and "current" not in words:
        out.append("_".join([words[0], "current", *words[1:]]))
    out.append(words[0] + "".join(w.capitalize() for w in words[1:]))
    if words[0] in _SYNONYMS:
        out.append("_".join([_SYNONYMS[words[0]], *words[1:]]))
    out += [f"{name}_tool", f"do_{name}", f"{name}_v2"]
    return [n for i, n in enumerate(out) if n not in out[:i] and (n != name or not real)]


def idea(s: Situation) -> tuple[str, dict] | None:
    """The tool a model would expect for this request when no real tool covers its main concept."""
    covered = frozenset().union(*(t.features for t in s.tools))
    for tags, name, params in INVENTIONS:
        if s.request.tags & set(tags):
            if covered & set(tags):
                return None
            schema = {"type": "object", "required": list(params), "properties": {
                k: {"type": kind, "description": text} for k, (kind, text) in params.items()}}
            wished = offered_tool({"name": name, "parameters": schema})
            return (name, fill_arguments(wished, s).variants[0]) if wished else None
    return None


def _mentions(text: str, names: set[str]) -> bool:
    """Whether a message names any of these tools (as a whole identifier)."""
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", text) for n in names)


def give_up(s: Situation, tried: list[str]) -> str:
    """The honest answer after MAX_INVENTIONS tool names that did not exist."""
    if s.zh:
        return (f"抱歉，我试过的工具（{'、'.join(tried)}）都不存在，错误信息也没有告诉我有哪些工具可用，"
                "所以这个请求我完成不了。请告诉我可以使用哪些工具。")
    return (f"Sorry, I couldn't do this: the tools I tried ({', '.join(tried)}) don't exist, and the errors didn't "
            "say which tools are available. Please tell me which tools I can use.")


def hallucinate(request: dict) -> Reply:
    """practice-hallucinate: an invented tool first; the planner once an error names a real tool."""
    s = analyse(request)
    real = {t.name for t in s.tools}
    invented = [c for c in s.calls if c.name not in real]
    view = replace(s, calls=tuple(c for c in s.calls if c.name in real))
    told = any(_mentions(flatten(c.result), real) for c in invented)
    if told or not s.tools or s.choice.mode in ("none", "named"):
        return respond(view)
    tried = list(dict.fromkeys(c.name for c in invented))
    planned, wish = respond(view), idea(s)
    if wish is None and not planned.tool_calls:
        return planned
    base = wish[0] if wish else planned.tool_calls[0].name
    names = [n for n in invented_names(base, real=wish is None) if n not in real and n not in tried]
    if len(tried) >= MAX_INVENTIONS or not names:
        return Reply(content=give_up(s, tried))
    if wish:
        return Reply(tool_calls=(PlannedCall.of(names[0], wish[1]),))
    return Reply(tool_calls=tuple(PlannedCall(names[0], c.arguments) if c.name == base else c
                                  for c in planned.tool_calls))


# -----------------------------------------------------------------------------
# practice-loop: an agent that re-checks the weather after every result


def loop(request: dict) -> Reply:
    """practice-loop: the turn's first call again and again, until told to stop or given no tools."""
    s = analyse(request)
    told = any(STOP_REPEATING.search(flatten(c.result)) for c in s.calls if c.result is not None)
    if told or not s.tools or s.choice.mode == "none":
        return Reply(content=compose_answer(replace(s, calls=distinct(s.calls))))
    if s.calls:
        return Reply(tool_calls=(PlannedCall(s.calls[0].name, s.calls[0].arguments_text),))
    planned = respond(s)
    return Reply(planned.content, planned.tool_calls[:1])


# -----------------------------------------------------------------------------
# practice-flaky: what the SDK's retries are for


def flaky() -> Responder:
    """practice-flaky, built once per server: attempt 1 of a conversation gets a 429, attempt 2 a 500."""
    attempts = Attempts()

    def respond_flakily(request: dict) -> Reply:
        attempt = attempts.next(request)
        if attempt == 1:
            raise errors.rate_limited(str(request.get("model")), retry_after=RETRY_AFTER)
        if attempt == 2:
            raise errors.server_error(retry_after=RETRY_AFTER)
        return plan(request)

    return respond_flakily


def safe(persona: Callable[[dict], Reply]) -> Responder:
    """A persona that never raises: a bug is logged and becomes an apology, like the planner's (ApiError
    passes through)."""
    def respond_safely(request: dict) -> Reply:
        try:
            return persona(request)
        except errors.ApiError:
            raise
        except Exception:
            log.exception("practice model: persona %s failed; answering with an apology",
                          getattr(persona, "__name__", persona))
            return Reply(content=APOLOGY)
    return respond_safely


# -----------------------------------------------------------------------------
# the table personas.py builds from: persona suffix -> a builder of its responder (called once per server)

def _eager() -> Responder:
    """practice-eager, which lives in its own module (`eager.py`, built on this one)."""
    from .eager import eager

    return safe(eager)


def _gullible() -> Responder:
    """practice-gullible, which lives in its own module (`gullible.py`, built on this one)."""
    from .gullible import gullible

    return safe(gullible)


BUILDERS: dict[str, Callable[[], Responder]] = {
    "sloppy": lambda: safe(sloppy),
    "hallucinate": lambda: safe(hallucinate),
    "loop": lambda: safe(loop),
    "flaky": flaky,
    "eager": _eager,
    "gullible": _gullible,
}
