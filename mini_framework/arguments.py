"""The arguments a model sends, made safe: lenient JSON, number words, and errors a model can act on.

A model only *proposes* a call: `function.arguments` is untrusted text, sometimes broken JSON,
sometimes `{"a": "一百二十三", "b": 456}`: a number written out in words. The pipeline, top to bottom:

    parse_arguments(raw)          text -> dict; `repair_json` fixes common breakage and names each fix
    coerce(schema, value)         "一百二十三" -> 123, "是" -> True where the schema wants a number/boolean
    tool.validate(arguments)      the tool's own Pydantic model (lax mode: "42" -> 42)
    explain(error, name, args)    what still fails -> one line per field, then "Fix ... call X again."
    prepare(tool, raw)            all of it: a validated model, or ArgumentsError(message, problems)

Arguments that parse and validate as sent take a fast path (`json.loads` + validate); repair and
coercion run only when that fails, so they never change arguments that were already fine.

Concessions: the repairs are small rules over the text, not a parser: they fix the breakage in
REPAIRS and nothing cleverer (two objects back to back stay an error; text over MAX_REPAIR
characters is not repaired). Closing an unterminated object accepts a cut-off value as sent
("Bei" for "Beijing"); a reply cut off by `max_tokens` says so in `finish_reason == "length"`.
NaN and Infinity, which Python's json accepts, are left for the tool's model to refuse.
"""
from __future__ import annotations

import difflib
import functools
import json
import math
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from pydantic import BaseModel, ValidationError

from .hooks import FeatureMissing, feature
from .schema import follow_ref, is_nullable, structured_branch
from .text import json_object, quote

if TYPE_CHECKING:
    from .tools import Tool

__all__ = ["REPAIRS", "ArgumentsError", "NotAllowed", "Problem", "coerce", "drop_null_defaults", "explain",
           "parse_arguments", "prepare", "prepare_with_repairs", "repair_json"]

MAX_REPAIR = 100_000  # longer broken text is reported, not repaired (each repair is a pass over the text)
MAX_PROBLEMS = 8  # lines in one message; the rest are counted
MAX_ERRORS = 100  # Pydantic errors read into Problems (a list of 10,000 bad items has 10,000)
MAX_SHOWN = 60  # characters of a received value or a field name shown back to the model


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the arguments."""

    field: str  # "location.latitude", "items[2].qty"; "" for the arguments as a whole
    kind: str  # "invalid", "missing", "unknown" (no such field), "rejected" (by a validator) or "json"
    received: str  # the value sent, as short JSON; "" when missing
    expected: str  # in words: "a whole number"; for "unknown", the fields that exist
    hint: str = ""  # "did you mean 'city'?"

    def line(self) -> str:
        """This problem as one line of the message, e.g. '- days: got "many"; expected a whole number'."""
        if self.kind == "missing":
            return f"- {self.field}: missing; expected {self.expected}"
        if self.kind == "unknown":
            hint = f" ({self.hint})" if self.hint else ""
            return f"- {self.field}: unknown field{hint}; the fields are: {self.expected}"
        if self.kind == "rejected":  # a validator's own sentence
            return f"- {self.field}: got {self.received}; {self.expected}"
        return f"- {self.field}: got {self.received}; expected {self.expected}"


class NotAllowed(ValueError):
    """Raise this in a validator for a value refused on principle, not by mistake (a recipient outside an
    allow-list): the model is told not to try other values to get round it, but to tell the user.

    >>> str(NotAllowed("x@evil.example is not an allowed recipient"))
    'x@evil.example is not an allowed recipient'
    """


class ArgumentsError(ValueError):
    """Arguments that cannot be used: `str(error)` is written for the model, `problems` for code."""

    def __init__(self, message: str, problems: list[Problem]) -> None:
        super().__init__(message)
        self.problems = problems


# ----------------------------------------------------------------------------- lenient JSON

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"?'  # a double-quoted JSON string, or one left open at the end
# a single-quoted one, where a ' is an apostrophe unless , : } ] or the end follow: 'it's', 'rock 'n' roll'
_SINGLE = r"'(?P<single>(?:[^'\\]|\\.?|'(?!\s*(?:[,:}\]]|$)))*)(?:'|$)"


def _outside_strings(pattern: str) -> Callable[[Callable[[re.Match[str]], str]], Callable[[str], str]]:
    """Make a repair from a replacement for `pattern`, applied only outside double-quoted strings."""
    rx, probe = re.compile(rf"(?P<string>{_STRING})|{pattern}", re.S), re.compile(pattern, re.S)

    def decorate(replace: Callable[[re.Match[str]], str]) -> Callable[[str], str]:
        def repair(text: str) -> str:
            return rx.sub(lambda m: m["string"] or replace(m), text) if probe.search(text) else text
        return functools.wraps(replace)(repair)
    return decorate


def _code_fence(text: str) -> str:
    """The inside of a markdown code fence.

    >>> _code_fence('Here you go: ```json {"a": 1} ```')
    '{"a": 1}'
    """
    start = text.find("```")
    if start < 0 or "{" in text[:start]:
        return text
    body = re.sub(r"^[\w-]*", "", text[start + 3:], count=1)  # the language tag
    return body[:body.rfind("```")].strip() if "```" in body else body.strip()


_BRACKETS = re.compile(rf"{_STRING}|{_SINGLE}|[{{｛\[［]|[}}｝\]］]", re.S)


def _surrounding_prose(text: str) -> str:
    """The object inside prose, from the first { to the } that closes it (or to the end, if none does).

    >>> _surrounding_prose('Sure! {"a": "}"} Hope this helps.')
    '{"a": "}"}'
    """
    start = min((i for i in (text.find("{"), text.find("｛")) if i >= 0), default=-1)
    depth = 0
    for m in _BRACKETS.finditer(text, start) if start >= 0 else ():
        depth += (m[0] in "{｛[［") - (m[0] in "}｝]］")
        if depth == 0:  # a second object after this one is not prose: leave it to the error message
            return text if re.search("[{｛]", text[m.end():]) else text[start:m.end()]
    return text[max(start, 0):]


@_outside_strings(r"“(?P<quoted>[^“”\"]*)”|(?P<mark>[｛｝［］：，])")
def _full_width(m: re.Match[str]) -> str:
    """Chinese punctuation where JSON syntax belongs (an input method's doing).

    >>> _full_width('｛“city”：“北京，上海”，"days"：3｝')
    '{"city":"北京，上海","days":3}'
    """
    if m["quoted"] is not None:
        return json.dumps(m["quoted"], ensure_ascii=False)
    return m["mark"].translate(str.maketrans("｛｝［］：，", "{}[]:,"))


@_outside_strings(r"(?P<pair>\{\{|\}\})")
def _halve_braces(m: re.Match[str]) -> str:
    """{{ -> { and }} -> }, outside strings."""
    return m["pair"][0]


def _doubled_braces(text: str) -> str:
    """Braces doubled by a prompt template, the outer ones or all of them.

    >>> _doubled_braces('{{"a": {{"b": "{{x}}"}}}}')
    '{"a": {"b": "{{x}}"}}'
    """
    if not (text.startswith("{{") and text.endswith("}}")):
        return text
    return _halve_braces(text[1:-1]) if "{{" in text[1:-1] else text[1:-1]


@_outside_strings(_SINGLE)
def _single_quotes(m: re.Match[str]) -> str:
    r"""'...' strings as "...", with the quotes inside escaped.

    >>> print(_single_quotes('''{'text': 'it's "ok"', "b": "it's"}'''))
    {"text": "it's \"ok\"", "b": "it's"}
    """
    escapes = {"\\'": "'", '"': '\\"', "\\": ""}  # \' needs no escape in JSON, " does, a lone \ goes
    return '"' + re.sub(r'\\.?|"', lambda e: escapes.get(e[0], e[0]), m["single"]) + '"'


@_outside_strings(r"\b(?P<literal>True|False|None)\b")
def _python_literals(m: re.Match[str]) -> str:
    """Python's True/False/None as JSON's true/false/null.

    >>> _python_literals('{"ok": True, "note": "True"}')
    '{"ok": true, "note": "True"}'
    """
    return {"True": "true", "False": "false", "None": "null"}[m["literal"]]


@_outside_strings(r"(?P<before>[{,]\s*)(?P<key>[^\W\d]\w*)(?=\s*:)")
def _unquoted_keys(m: re.Match[str]) -> str:
    """Keys as bare words, JavaScript style.

    >>> _unquoted_keys('{city: "北京", "note": "{a: 1}"}')
    '{"city": "北京", "note": "{a: 1}"}'
    """
    return f'{m["before"]}"{m["key"]}"'


@_outside_strings(r",(?P<end>\s*[}\]])")
def _trailing_commas(m: re.Match[str]) -> str:
    """A comma before a closing } or ] (not inside strings).

    >>> _trailing_commas('{"a": [1, 2,], "b": ",}",}')
    '{"a": [1, 2], "b": ",}"}'
    """
    return m["end"]


_TOKENS = re.compile(r'(?P<string>"[^"\\]*(?:\\.[^"\\]*)*)(?P<closed>"?)|[{}\[\]]', re.S)
_DANGLING_KEY = re.compile(r'(?:,|(?<=\{))\s*"[^"\\]*(?:\\.[^"\\]*)*"\s*:?\s*$', re.S)


def _unterminated(text: str) -> str:
    """Close what a cut-off object left open: the string, then arrays and objects; a key with no value goes.

    >>> _unterminated('{"a": [1, "b'), _unterminated('{"a": 1, "b":')
    ('{"a": [1, "b"]}', '{"a": 1}')
    """
    closers, open_string = [], False
    if not text.startswith("{"):
        return text
    for m in _TOKENS.finditer(text):
        if m["string"] is not None:
            open_string = not m["closed"]
        elif m[0] in "{[":
            closers.append("}" if m[0] == "{" else "]")
        elif closers and closers[-1] == m[0]:
            closers.pop()
        else:
            return text  # a mismatched bracket is not a cut-off: leave it
    if open_string:
        if (len(text) - len(text.rstrip("\\"))) % 2:  # a dangling escape: drop it before closing the string
            text = text[:-1]
        text += '"'
    text = text.rstrip().rstrip(",")
    if closers and closers[-1] == "}":
        text = _DANGLING_KEY.sub("", text).rstrip().rstrip(",")
    return text + "".join(reversed(closers))


# Tried in this order, each only while the text still fails to parse: unwrap, fix tokens, close.
REPAIRS: list[tuple[str, Callable[[str], str]]] = [
    ("code fence", _code_fence), ("surrounding prose", _surrounding_prose),
    ("full-width punctuation", _full_width), ("doubled braces", _doubled_braces), ("single quotes", _single_quotes),
    ("Python literals", _python_literals), ("unquoted keys", _unquoted_keys), ("trailing commas", _trailing_commas),
    ("unterminated", _unterminated),
]


def _parses(text: str) -> bool:
    """True if `text` is valid JSON."""
    try:
        json.loads(text)
        return True
    except (ValueError, RecursionError):
        return False


def repair_json(text: str) -> tuple[str, list[str]]:
    """Apply REPAIRS in order until `text` parses; return it and the names of the repairs that changed it.

    >>> repair_json("{'city': '北京', 'hot': True,}")
    ('{"city": "北京", "hot": true}', ['single quotes', 'Python literals', 'trailing commas'])
    """
    text = text.strip()
    applied: list[str] = []
    if len(text) > MAX_REPAIR:
        return text, applied
    for name, fix in REPAIRS:
        if _parses(text):
            break
        fixed = fix(text)
        if fixed != text:
            text = fixed
            applied.append(name)
    return text, applied


def parse_arguments(raw: Any, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """`function.arguments` as a dict, parsed leniently; else ArgumentsError saying what to send.
    The tool's `schema`, if given, makes the example in that message fit the tool.

    >>> parse_arguments('```json\\n{"city": "北京",}\\n```'), parse_arguments(""), parse_arguments(None)
    ({'city': '北京'}, {}, {})
    >>> try:
    ...     parse_arguments("[1, 2]")
    ... except ArgumentsError as e:
    ...     print(e)
    The arguments are not a JSON object: got a JSON array, [1, 2]. Send one JSON object, e.g. {"city": "..."}.
    """
    return _parse(raw, schema)[0]


def _parse(raw: Any, schema: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """`parse_arguments`, also returning the names of the repairs it made."""
    repairs: list[str] = []
    value = raw
    if isinstance(raw, str):
        value, repairs = _load(raw, schema)
    if isinstance(value, str) and value.strip().startswith(("{", "｛", "```")):
        value, inner = _load(value, schema)  # double-encoded: a JSON string holding the object
        repairs = [*repairs, "double-encoded", *inner]
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}, repairs  # a tool without parameters: None, "", "null"
    if not isinstance(value, dict):
        kinds = {list: "a JSON array", str: "a JSON string", bool: "a boolean"}
        kind = kinds.get(type(value), "a number")
        raise _not_json(f"not a JSON object: got {kind}, {quote(value)}", quote(value), schema)
    return value, repairs


def _load(text: str, schema: dict[str, Any] | None) -> tuple[Any, list[str]]:
    """JSON text parsed, repaired if it must be (with the repairs' names); if hopeless, ArgumentsError
    with the position and a snippet."""
    if not text.strip():
        return None, []
    try:
        return json.loads(text), []
    except RecursionError:
        raise _not_json("nested too deeply", "", schema) from None
    except ValueError as exc:
        error = exc
    repaired, repairs = repair_json(text)
    try:
        return json.loads(repaired), repairs
    except (ValueError, RecursionError):
        pos = getattr(error, "pos", 0)
        near = (text[max(pos - 30, 0):pos] + "⟨here⟩" + text[pos:pos + 30]).replace("\n", " ")
        reason = f"not valid JSON: {getattr(error, 'msg', error)} at character {pos}, near `{near}`"
        raise _not_json(reason, json.dumps(near, ensure_ascii=False), schema) from None


def _not_json(reason: str, received: str, schema: dict[str, Any] | None) -> ArgumentsError:
    """The error for arguments that are not one JSON object, with an example built from the tool's schema."""
    props = (schema or {"properties": {"city": {"type": "string"}}}).get("properties", {})
    names = [n for n in (schema or {}).get("required", ()) if n in props][:4] or list(props)[:2]
    example = json.dumps({name: _sample(props[name]) for name in names}, ensure_ascii=False)
    return ArgumentsError(f"The arguments are {reason}. Send one JSON object, e.g. {example}.",
                          [Problem("", "json", received, "one JSON object")])


def _sample(node: dict[str, Any]) -> Any:
    """A placeholder value for a schema: {"type": "integer"} -> 1, an enum -> its first value."""
    branches = [b for b in node.get("anyOf", ()) if b.get("type") != "null"]
    if branches or node.get("enum"):
        return _sample(branches[0]) if branches else node["enum"][0]
    samples = {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}
    return samples.get(node.get("type", "object"), "...")


# ----------------------------------------------------------------------------- coercion

_BOOLEANS = {"是": True, "是的": True, "对": True, "对的": True, "真": True, "确定": True, "好": True, "好的": True,
             "需要": True, "否": False, "不是": False, "不对": False, "假": False, "不": False, "不要": False,
             "不需要": False}  # what Pydantic's lax bool lacks ("true", "yes", "on", "1" it reads itself)


def coerce(schema: dict[str, Any], value: Any, _defs: dict[str, Any] | None = None, _depth: int = 0) -> Any:
    """`value` with number words and 是/否 turned into what `schema` expects; pure, never raises on any value.

    >>> coerce({"type": "object", "properties": {"a": {"type": "integer"}, "ok": {"type": "boolean"}}},
    ...        {"a": "一百二十三", "ok": "是", "other": "12"})
    {'a': 123, 'ok': True, 'other': '12'}
    """
    defs = _defs if _defs is not None else schema.get("$defs", {})
    schema = follow_ref(schema, defs)  # a recursive model
    if _depth > 64:  # deeper than any real tool's arguments: leave the rest to validation
        return value
    if branches := schema.get("anyOf") or schema.get("oneOf"):
        if isinstance(value, str) and any(b.get("type") == "string" for b in branches):
            return value  # a string is fine as it is
        for branch in branches:  # the first branch that makes something of the value
            if (coerced := coerce(branch, value, defs, _depth + 1)) is not value:
                return coerced
        return value
    declared = schema.get("type")
    kinds: list[Any] = declared if isinstance(declared, list) else [declared]
    extra = schema.get("additionalProperties")
    if not isinstance(extra, dict):
        extra = None
    if isinstance(value, dict) and ("properties" in schema or extra is not None):
        coerced_object = {}
        for key, item in value.items():
            sub_schema = schema.get("properties", {}).get(key, extra)
            if sub_schema:
                item = coerce(sub_schema, item, defs, _depth + 1)
            coerced_object[key] = item
        return coerced_object
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [coerce(schema["items"], v, defs, _depth + 1) for v in value]
    if "integer" in kinds or "number" in kinds:
        return _number(value, whole="number" not in kinds)
    if "boolean" in kinds and isinstance(value, str):
        return _BOOLEANS.get(value.strip(), value)
    return value


def _number(value: Any, whole: bool) -> Any:
    """A number slot's value: '两千零五' -> 2005, 3.0 -> 3; a fraction stays as sent where `whole`.

    >>> [_number(v, whole=True) for v in ("1.2万", " 42 ", "twelve", 3.0, "三点五", 3.5, "12abc")]
    [12000, 42, 12, 3, '三点五', 3.5, '12abc']
    """
    if isinstance(value, str) and len(value) <= 100:  # number words are short; long text is not one
        parsed = _number_words(value)
        if parsed is None or not math.isfinite(parsed) or (whole and parsed != int(parsed)):
            return value
        value = parsed
    return int(value) if whole and isinstance(value, float) and value.is_integer() else value


def drop_null_defaults(schema: dict[str, Any], data: Any, defs: dict[str, Any] | None = None) -> Any:
    """`data` without the nulls that mean "not given": optional properties whose schema does not allow null.

    >>> drop_null_defaults({"type": "object", "properties": {"n": {"type": "integer", "default": 5}}}, {"n": None})
    {}
    """
    if defs is None:
        defs = schema.get("$defs", {})
    schema = follow_ref(schema, defs)  # a recursive model
    if isinstance(data, dict) and "properties" in schema:
        props, required = schema["properties"], schema.get("required", ())
        kept = {}
        for key, value in data.items():
            if key not in props:
                kept[key] = value  # unknown: left for validation to report
            elif value is None and key not in required and not is_nullable(props[key]):
                continue  # "not given": the default applies
            else:
                kept[key] = drop_null_defaults(props[key], value, defs)
        return kept
    if isinstance(data, list) and isinstance(schema.get("items"), dict):
        return [drop_null_defaults(schema["items"], item, defs) for item in data]
    branch = structured_branch(schema, defs)
    if branch is not schema and data is not None:
        return drop_null_defaults(branch, data, defs)
    return data


# ----------------------------------------------------------------------------- messages for the model

_WORDS = {"int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
          "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
          "bool_parsing": "true or false", "string_type": "a string", "list_type": "a list (JSON array)",
          "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
          "dataclass_type": "an object", "none_required": "null"}  # Pydantic error type -> what to send
_TYPES = {"integer": "a whole number", "number": "a number", "string": "a string", "boolean": "true or false",
          "array": "a list (JSON array)", "object": "an object"}  # JSON schema type -> the same words


def explain(error: ValidationError, tool_name: str, arguments: Any, schema: dict[str, Any] | None = None) -> str:
    """The tool message for arguments that failed validation: one line per problem, then what to do.
    The tool's `schema`, if given, adds what a missing field expects and the names of the real fields.

    >>> from pydantic import create_model
    >>> Add = create_model("add", a=(int, ...), __config__={"extra": "forbid"})
    >>> try:
    ...     Add.model_validate({"a": "many", "b": 2})
    ... except ValidationError as e:
    ...     print(explain(e, "add", {"a": "many", "b": 2}, Add.model_json_schema()))
    Invalid arguments for add:
    - a: got "many"; expected a whole number
    - b: unknown field; the fields are: a
    Fix these arguments and call add again.
    """
    return _report(error, tool_name, arguments, schema or {})[0]


def _report(error: ValidationError, tool_name: str, arguments: Any,
            schema: dict[str, Any]) -> tuple[str, list[Problem]]:
    """The message (a header, at most MAX_PROBLEMS lines, what to do) and the problems behind it."""
    problems = _problems(error.errors(include_url=False)[:MAX_ERRORS], arguments, schema)
    hidden = len(problems) - MAX_PROBLEMS + max(error.error_count() - MAX_ERRORS, 0)
    lines = [p.line() for p in problems[:MAX_PROBLEMS]]
    if hidden > 0:
        lines.append(f"- ... and {hidden} more")
    tail = f"Fix these arguments and call {tool_name} again."
    if any(isinstance((e.get("ctx") or {}).get("error"), NotAllowed) for e in error.errors(include_url=False)):
        tail = f"This is not allowed, so don't call {tool_name} again with other values to get round it: tell the user."
    return "\n".join([f"Invalid arguments for {tool_name}:", *lines, tail]), problems


def _problems(errors: list[Any], arguments: Any, schema: dict[str, Any]) -> list[Problem]:
    """Pydantic's errors as Problems, one per field (a union's branches merged: "a whole number or a string")."""
    found: dict[tuple[str, str], Problem] = {}
    missing = [_path(e["loc"], arguments, True) for e in errors if e["type"] == "missing"]
    for e in errors:
        keys = _path(e["loc"], arguments, e["type"] == "missing")
        field = _dotted(keys)[:MAX_SHOWN] or "arguments"
        node = _schema_at(schema, keys)
        if e["type"] == "missing":
            problem = Problem(field, "missing", "", _expected(node) or "a value")
        elif e["type"] == "extra_forbidden":
            problem = _unknown_field(field, keys, missing, schema, quote(e["input"]))
        else:  # in our words, else in Pydantic's or a validator's own ("String should have at most 5 characters")
            words = _words(e, node)
            if words:
                problem = Problem(field, "invalid", quote(e["input"]), words)
            else:
                said = re.sub(r"^(Value error|Assertion failed), ", "", e["msg"])[:200]
                problem = Problem(field, "rejected", quote(e["input"]), said)
        before = found.setdefault((field, problem.kind), problem)
        if before is not problem:  # another branch of a union: "a whole number or a string"
            alternatives = before.expected.split(" or ")
            if problem.expected not in alternatives:
                found[field, problem.kind] = replace(before, expected=f"{before.expected} or {problem.expected}")
    return list(found.values())


def _unknown_field(field: str, keys: tuple[int | str, ...], missing: list[tuple[int | str, ...]],
                   schema: dict[str, Any], received: str) -> Problem:
    """A field the tool does not have, with the real names (declared, and missing ones) and the closest."""
    names = list(_schema_at(schema, keys[:-1]).get("properties", {}))
    for path in missing:
        if path[:-1] == keys[:-1] and path[-1] not in names:
            names.append(str(path[-1]))
    close = difflib.get_close_matches(str(keys[-1]), names, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'?" if close else ""
    return Problem(field, "unknown", received, ", ".join(names[:20]) or "none", hint)


def _path(loc: tuple[int | str, ...], data: Any, missing: bool) -> tuple[int | str, ...]:
    """The parts of a Pydantic `loc` that are keys in the data (a union's branch tags, like 'int', dropped)."""
    keys: list[int | str] = []
    for i, part in enumerate(loc):
        if isinstance(part, int) and isinstance(data, list) and 0 <= part < len(data):
            keys.append(part)
            data = data[part]
        elif isinstance(data, dict) and (part in data or (missing and i == len(loc) - 1)):
            keys.append(part)
            data = data.get(part)
    return tuple(keys)


def _dotted(keys: tuple[int | str, ...]) -> str:
    """A path as the model would write it: ('items', 2, 'qty') -> 'items[2].qty'."""
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys).lstrip(".")


def _schema_at(schema: dict[str, Any], keys: tuple[int | str, ...]) -> dict[str, Any]:
    """The part of `schema` that describes the value at `keys`; {} where the schema does not say."""
    defs = schema.get("$defs", {})
    node: Any = schema
    for key in keys:
        node = structured_branch(node, defs)
        if isinstance(key, int):
            node = node.get("items")
        else:
            node = node.get("properties", {}).get(key, node.get("additionalProperties"))
        if not isinstance(node, dict):
            return {}
    if "$ref" in node:
        return structured_branch(node, defs)
    return node


def _expected(node: dict[str, Any]) -> str:
    """What a schema asks for, in words: {"type": "integer"} -> 'a whole number'; '' if it does not say."""
    if node.get("enum"):
        return "one of " + " | ".join(f"'{v}'" if isinstance(v, str) else json.dumps(v) for v in node["enum"])
    if branches := [b for b in node.get("anyOf", ()) if b.get("type") != "null"]:
        return " or ".join(w for w in map(_expected, branches) if w)
    return _TYPES.get(node.get("type"), "")  # type: ignore[arg-type]


def _words(error: Any, node: dict[str, Any]) -> str:
    """What a value should have been, in words a model can act on; '' if only Pydantic's sentence says it."""
    if error["type"] in ("literal_error", "enum"):
        words = _expected(node)
        return words if words.startswith("one of") else f"one of {error.get('ctx', {}).get('expected', '')}"
    rest = error["msg"].removeprefix("Input should be ")  # "Input should be greater than 0"
    if error["type"] in _WORDS or rest == error["msg"]:
        return _WORDS.get(error["type"], "")
    return rest if rest.startswith(("a ", "an ")) else f"a value {rest}"


# ----------------------------------------------------------------------------- the entry point

def prepare(tool: Tool, raw: Any) -> BaseModel:
    """The validated arguments for `tool` from what the model sent, or ArgumentsError with a message for it.

    >>> from mini_framework.tools import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> prepare(add, '{"a": "一百二十三", "b": 456}')
    add(a=123, b=456)
    >>> prepare(add, "{'a': 'many'}")
    Traceback (most recent call last):
    ...
    mini_framework.arguments.ArgumentsError: Invalid arguments for add:
    - a: got "many"; expected a whole number
    - b: missing; expected a whole number
    Fix these arguments and call add again.
    """
    return prepare_with_repairs(tool, raw)[0]


def prepare_with_repairs(tool: Tool, raw: Any) -> tuple[BaseModel, list[str]]:
    """`prepare`, also saying what was repaired on the way: JSON fixes by name, then coerced fields.

    >>> from mini_framework.tools import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> prepare_with_repairs(add, "{'a': '一百二十三', 'b': 4,}")[1]
    ['single quotes', 'trailing commas', 'coerced a: "一百二十三" -> 123']
    """
    data: Any = json_object(raw) if isinstance(raw, str) else raw
    if isinstance(data, dict):
        try:
            return tool.validate(data), []  # the fast path: arguments fine as sent
        except (ValueError, RecursionError):  # ValidationError is a ValueError too
            pass
    schema = tool.json_schema
    repairs: list[str] = []
    try:
        if isinstance(data, dict):
            parsed = data
        else:
            parsed, repairs = _parse(raw, schema)
        data = coerce(schema, parsed)
        repairs += [f"coerced {key}: {quote(parsed[key])} -> {quote(data[key])}"
                    for key in parsed if data.get(key) is not parsed[key]]
        return tool.validate(data), repairs
    except ValidationError as exc:
        raise ArgumentsError(*_report(exc, tool.name, data, schema)) from None
    except RecursionError:  # a recursive model nested hundreds deep
        raise _not_json("nested too deeply", "", schema) from None


def _number_words(text: str) -> Any:
    """`text` as a number by the numerals feature ("一百二十三" -> 123), or None (also when it is not copied)."""
    try:
        return feature("numerals").parse_number(text)
    except FeatureMissing:
        return float(text) if _DIGITS.fullmatch(text.strip()) else None


_DIGITS = re.compile(r"[+-]?\d+(\.\d+)?")
