"""Request checks: refuse what the real Chat Completions API refuses, with its status and words.

`parse(raw)` turns the body into a dict; `check(body, personas)` validates it and returns the
persona that will answer. Any refusal is an `ApiError` (see `errors.py` for the wording sources).

The order follows what the real API is seen to do: `model`, then `messages`, then unknown
top-level arguments, then the schema (types, enums, ranges, required fields), then the model
lookup (404), then the checks the model engine makes (tool-call pairing, images for text-only
models). The first problem found is reported, as the API does. Images are only for user
messages: one in a `tool` (or any other) message is refused with the messages, for every
persona. With a provider's wording flag (`practice@deepseek`, see `providers.py`) that
provider's JSON reader goes first: DeepSeek refuses a content part it cannot read before
anything else (after the top-level types) is looked at; it also takes its own `thinking`
parameter, and in thinking mode refuses, last, a tool-calling turn sent back without its
`reasoning_content` (`providers.missing_reasoning`). `response_format` is checked with
the messages: its type, the word 'json' for `json_object`, and a `json_schema` the API would
use (a name, an object root, and, when strict, every object closed and fully required).

Concessions: nested objects are not checked for unknown keys (the API is strict there too, but
SDK-produced messages often carry harmless extras); custom tools and `allowed_tools` are not
modelled in depth; `null` is accepted for every optional parameter.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from . import errors, providers
from .errors import ApiError
from .personas import Persona

ROLES = ["system", "assistant", "user", "function", "tool", "developer"]  # the API's own order
NAME_PATTERN = "^[a-zA-Z0-9_-]+$"             # as the API words it in its error message
_NAME = re.compile(r"[a-zA-Z0-9_-]+")       # used with fullmatch: `$` would accept a trailing newline
MAX_NAME = 64
MAX_TOOLS = 128                             # the API's limit on `tools` (errors.array_too_long)
_PARTS = {  # content part types each role accepts
    "user": ["text", "image_url", "input_audio", "file"],
    "assistant": ["text", "refusal"],
}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_STRING = ("a string", lambda v: isinstance(v, str))
_OBJECT = ("an object", lambda v: isinstance(v, dict))
_OBJECTS = ("an array of objects", lambda v: isinstance(v, list))
_DECIMAL = ("a decimal", _is_number)
_INTEGER = ("an integer", _is_int)
_BOOLEAN = ("a boolean", lambda v: isinstance(v, bool))
_ROLE = ("one of 'system', 'assistant', 'user', 'function', 'tool', or 'developer'", lambda v: isinstance(v, str))

# Every top-level parameter of CreateChatCompletionRequest (openai-openapi 2.3.0) and its type.
# Wordings "a decimal", "an integer", "a boolean", "an array of objects" and the tool_choice one
# are recorded from the real API; "one of a string or array of strings" (stop) is ours.
PARAMS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "model": _STRING, "messages": _OBJECTS, "tools": _OBJECTS, "functions": _OBJECTS,
    "temperature": _DECIMAL, "top_p": _DECIMAL, "presence_penalty": _DECIMAL, "frequency_penalty": _DECIMAL,
    "n": _INTEGER, "max_tokens": _INTEGER, "max_completion_tokens": _INTEGER, "seed": _INTEGER,
    "top_logprobs": _INTEGER,
    "stream": _BOOLEAN, "logprobs": _BOOLEAN, "store": _BOOLEAN, "parallel_tool_calls": _BOOLEAN,
    "user": _STRING, "safety_identifier": _STRING, "prompt_cache_key": _STRING, "service_tier": _STRING,
    "reasoning_effort": _STRING, "verbosity": _STRING, "prompt_cache_retention": _STRING,
    "stream_options": _OBJECT, "response_format": _OBJECT, "metadata": _OBJECT, "logit_bias": _OBJECT,
    "audio": _OBJECT, "prediction": _OBJECT, "web_search_options": _OBJECT, "moderation": _OBJECT,
    "prompt_cache_options": _OBJECT,
    "modalities": ("an array of strings", lambda v: isinstance(v, list)),
    "stop": ("one of a string or array of strings", lambda v: isinstance(v, (str, list))),
    "tool_choice": ("one of one of 'none', 'auto', or 'required' or object", lambda v: isinstance(v, (str, dict))),
    "function_call": ("one of one of 'none' or 'auto' or object", lambda v: isinstance(v, (str, dict))),
}
# (minimum, maximum) per numeric parameter, from the spec.
RANGES: dict[str, tuple[float | None, float | None]] = {
    "temperature": (0, 2), "top_p": (0, 1), "presence_penalty": (-2, 2), "frequency_penalty": (-2, 2),
    "n": (1, 128), "max_tokens": (1, None), "max_completion_tokens": (1, None), "top_logprobs": (0, 20),
}


def parse(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, or the API's "could not parse" error.

    `NaN`/`Infinity` (which Python would accept) and bodies nested too deep are rejected too.
    A valid JSON value that is not an object gets the same answer (not established).
    """
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_not_json, parse_float=_finite)
    except (ValueError, RecursionError):
        raise errors.invalid_json() from None
    if not isinstance(body, dict):
        raise errors.invalid_json()
    return body


def _not_json(name: str) -> Any:
    """`NaN`, `Infinity`: Python accepts them, JSON does not."""
    raise ValueError(name)


def _finite(text: str) -> float:
    """A JSON number that fits a float (`1e999` does not)."""
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(text)
    return value


def check(body: dict[str, Any], personas: dict[str, Persona], raw: bytes = b"") -> Persona:
    """Validate a parsed body (`raw`: the bytes it was parsed from); return the persona that answers it, or raise
    `ApiError`.

    The model name may carry a wording flag (`practice@deepseek`, see `providers.py`): it is stripped before the
    persona is looked up, and chooses whose words the refusals below use.
    """
    if body.get("model") in (None, ""):
        raise errors.missing_model()
    if "messages" not in body:
        raise errors.missing("messages")
    name, wording = providers.split_model(body["model"]) if isinstance(body["model"], str) else ("", None)
    unknown = [k for k in body if k not in PARAMS and not (k == "thinking" and wording == "deepseek")]
    if unknown:
        raise errors.unrecognized_arguments(unknown)
    check_parameters(body)
    persona = personas.get(name) if wording is not None else None
    if persona is not None and wording == "deepseek":     # its JSON reader refuses before any other check
        unreadable = providers.unreadable_part(body["messages"], persona.vision)
        if unreadable:
            raise providers.unknown_variant(raw, *unreadable)
    check_messages(body["messages"])
    check_response_format(body)
    names = check_tools(body.get("tools"))
    check_tool_choice(body, names)
    if persona is None:
        raise errors.model_not_found(body["model"])
    check_tool_pairing(body["messages"])
    if not persona.vision:
        check_no_images(body["messages"])
    flags = providers.parse_model(body["model"])
    if flags and providers.thinking(flags, body) and providers.missing_reasoning(body["messages"]) is not None:
        raise providers.reasoning_not_passed_back()
    return persona


def check_parameters(body: dict[str, Any]) -> None:
    """Top-level types and numeric ranges (`null` is fine for optional ones)."""
    for name, value in body.items():
        if name not in PARAMS:
            continue  # a provider's own parameter, let through with its flag (`thinking` with `@deepseek`)
        expected, ok = PARAMS[name]
        if (value is not None or name == "messages") and not ok(value):
            raise errors.invalid_type(name, expected, value)
        low, high = RANGES.get(name, (None, None))
        integer = PARAMS[name] is _INTEGER
        if low is not None and _is_number(value) and value < low:
            raise errors.out_of_range(name, value, low, above=False, integer=integer)
        if high is not None and _is_number(value) and value > high:
            raise errors.out_of_range(name, value, high, above=True, integer=integer)
    if body.get("stream_options") is not None and body.get("stream") is not True:
        raise errors.only_with("stream_options", "stream", value_prefix=False)


def _require(obj: dict[str, Any], key: str, at: str, expected: tuple[str, Callable[[Any], bool]]) -> Any:
    """`obj[key]`, or the API's missing / invalid-type error for `at.key`."""
    if key not in obj:
        raise errors.missing(f"{at}.{key}")
    if not expected[1](obj[key]):
        raise errors.invalid_type(f"{at}.{key}", expected[0], obj[key])
    return obj[key]


def _object(value: Any, at: str) -> dict[str, Any]:
    """`value` if it is a JSON object, else `Invalid type for 'at': expected an object`."""
    if not isinstance(value, dict):
        raise errors.invalid_type(at, "an object", value)
    return value


def check_function_name(name: str, at: str) -> None:
    """Function names: 1 to 64 characters from a-z, A-Z, 0-9, '_' and '-' (the core's `check_name` rule).

    >>> check_function_name("get_weather\\n", "tools[0].function.name")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    practice_model.errors.ApiError: 400 Invalid 'tools[0].function.name': string does not match pattern. ...
    """
    if not _NAME.fullmatch(name):
        raise errors.pattern_mismatch(at, NAME_PATTERN)
    if len(name) > MAX_NAME:
        raise errors.string_too_long(at, MAX_NAME, len(name))


def check_messages(messages: list[Any]) -> None:
    """Each message: an object with a known role and the fields that role requires."""
    if not messages:
        raise errors.empty_array("messages")
    for i, raw in enumerate(messages):
        at = f"messages[{i}]"
        message = _object(raw, at)
        role = _require(message, "role", at, _ROLE)
        if role not in ROLES:
            raise errors.invalid_value(f"{at}.role", role, ROLES)
        if message.get("content") is not None or role not in ("assistant", "function"):
            check_content(message, role, at)  # assistant (and function) content may be absent or null
        if message.get("name") is not None and not isinstance(message["name"], str):
            raise errors.invalid_type(f"{at}.name", "a string", message["name"])
        if role == "tool":
            _require(message, "tool_call_id", at, _STRING)
        if role == "assistant" and message.get("tool_calls") is not None:
            check_tool_calls(message["tool_calls"], f"{at}.tool_calls")


def check_content(message: dict[str, Any], role: str, at: str) -> None:
    """`content`: a string, or a non-empty array of parts the role accepts."""
    content = _require(message, "content", at, ("one of a string or array of objects",
                                                lambda v: isinstance(v, (str, list))))
    if isinstance(content, str):
        return
    if not content:
        raise errors.empty_array(f"{at}.content")
    allowed = _PARTS.get(role, ["text"])
    for j, raw in enumerate(content):
        where = f"{at}.content[{j}]"
        part = _object(raw, where)
        kind = _require(part, "type", where, _STRING)
        if kind == "image_url" and role != "user":          # a tool that "returns" an image, most often
            raise errors.image_outside_user_message(at, role)
        if kind not in allowed:
            raise errors.invalid_value(f"{where}.type", kind, allowed)  # supported lists: not established
        if kind in ("text", "refusal"):
            _require(part, kind, where, _STRING)
        elif kind == "image_url":
            image = _require(part, "image_url", where, _OBJECT)
            _require(image, "url", f"{where}.image_url", _STRING)
        else:
            _require(part, kind, where, _OBJECT)


def check_tool_calls(calls: Any, at: str) -> None:
    """An assistant's `tool_calls`: objects with `id`, `type: function`, name and string arguments."""
    if not isinstance(calls, list):
        raise errors.invalid_type(at, "an array of objects", calls)
    if not calls:
        raise errors.empty_array(at)
    for k, raw in enumerate(calls):
        where = f"{at}[{k}]"
        call = _object(raw, where)
        _require(call, "id", where, _STRING)
        if _require(call, "type", where, _STRING) != "function":
            raise errors.invalid_value(f"{where}.type", call["type"], ["function"])
        function = _require(call, "function", where, _OBJECT)
        check_function_name(_require(function, "name", f"{where}.function", _STRING), f"{where}.function.name")
        _require(function, "arguments", f"{where}.function", _STRING)


def check_tools(tools: Any) -> list[str]:
    """`tools`: at most MAX_TOOLS function definitions with valid names; returns the names."""
    if tools is None:
        return []
    if not tools:
        raise errors.empty_array("tools")
    if len(tools) > MAX_TOOLS:
        raise errors.array_too_long("tools", MAX_TOOLS, len(tools))
    names = []
    for i, raw in enumerate(tools):
        at = f"tools[{i}]"
        tool = _object(raw, at)
        kind = _require(tool, "type", at, _STRING)
        if kind not in ("function", "custom"):
            raise errors.invalid_value(f"{at}.type", kind, ["function", "custom"])
        if kind == "custom":  # a real tool type the practice model does not implement (our wording)
            raise ApiError(400, "The practice model supports only tools of type 'function'.", param=f"{at}.type")
        function = _require(tool, "function", at, _OBJECT)
        name = _require(function, "name", f"{at}.function", _STRING)
        check_function_name(name, f"{at}.function.name")
        for key, expected in (("description", _STRING), ("parameters", _OBJECT), ("strict", _BOOLEAN)):
            if function.get(key) is not None and not expected[1](function[key]):
                raise errors.invalid_type(f"{at}.function.{key}", expected[0], function[key])
        names.append(name)
    return names  # duplicate names are accepted, as the real API accepts them


def check_tool_choice(body: dict[str, Any], names: list[str]) -> None:
    """`tool_choice` and `parallel_tool_calls` need `tools`; a named choice must exist."""
    choice = body.get("tool_choice")
    if choice is not None:
        if not names:
            raise errors.only_with("tool_choice", "tools", value_prefix=True)
        if isinstance(choice, str):
            if choice not in ("none", "auto", "required"):
                raise errors.invalid_value("tool_choice", choice, ["none", "auto", "required"])
        elif choice.get("type") != "allowed_tools":
            if "function" not in choice:
                raise errors.missing("tool_choice.function")
            function = _object(choice["function"], "tool_choice.function")
            name = _require(function, "name", "tool_choice.function", _STRING)
            if name not in names:
                raise errors.tool_choice_not_found(name)
    if body.get("parallel_tool_calls") is not None and not names:
        raise errors.only_with("parallel_tool_calls", "tools", value_prefix=True)


def check_tool_pairing(messages: list[dict[str, Any]]) -> None:
    """Every `tool_calls` id is answered by the tool messages right after it, and nothing else is.

    >>> check_tool_pairing([{"role": "user", "content": "hi"}, {"role": "tool", "content": "x",
    ...                     "tool_call_id": "call_1"}])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    practice_model.errors.ApiError: 400 Invalid parameter: messages with role 'tool' must be a response ...
    """
    ids: list[str] = []                 # the latest assistant message's call ids, in order
    waiting: Counter[str] = Counter()   # how many of each are still unanswered (linear, however many calls)
    owner = -1
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            if waiting[message["tool_call_id"]] <= 0:
                raise errors.orphan_tool_message(i)
            waiting[message["tool_call_id"]] -= 1
            continue
        if waiting.total() > 0:
            raise errors.unanswered_tool_calls(owner, _unanswered(ids, waiting))
        if message["role"] == "assistant" and message.get("tool_calls"):
            ids, owner = [call["id"] for call in message["tool_calls"]], i
            waiting = Counter(ids)
    if waiting.total() > 0:
        raise errors.unanswered_tool_calls(owner, _unanswered(ids, waiting))


def _unanswered(ids: list[str], waiting: Counter[str]) -> list[str]:
    """The ids still waiting, in call order (an id answered k times drops its first k occurrences).

    >>> _unanswered(["a", "b", "a"], Counter({"a": 1, "b": 0}))
    ['a']
    """
    answered = Counter(ids) - waiting
    seen: Counter[str] = Counter()
    out = []
    for call_id in ids:
        seen[call_id] += 1
        if seen[call_id] > answered[call_id]:
            out.append(call_id)
    return out


def check_no_images(messages: list[dict[str, Any]]) -> None:
    """Text-only personas refuse `image_url` parts, as text-only OpenAI models do."""
    for i, message in enumerate(messages):
        content = message.get("content")
        for j, part in enumerate(content if isinstance(content, list) else []):
            if part.get("type") == "image_url":
                raise errors.image_not_supported(i, j)


RESPONSE_FORMATS = ["json_object", "json_schema", "text"]   # as the API lists them in its error
MAX_SCHEMA_NODES = 4096         # schemas looked at when checking a strict `json_schema` (the rest is not checked)


def check_response_format(body: dict[str, Any]) -> None:
    """`response_format`: a known type; 'json' said somewhere for `json_object`; a usable `json_schema`.

    A strict schema must close every object (`additionalProperties: false`) and require every property,
    as the API demands of strict schemas; its root must be an object whatever `strict` says.
    """
    fmt = body.get("response_format")
    if fmt is None:
        return
    kind = _require(fmt, "type", "response_format", _STRING)
    if kind not in RESPONSE_FORMATS:
        raise errors.invalid_value("response_format.type", kind, RESPONSE_FORMATS)
    if kind == "json_object" and not any("json" in _text_of(m).lower() for m in body["messages"]):
        raise errors.json_word_missing()
    if kind != "json_schema":
        return
    spec = _require(fmt, "json_schema", "response_format", _OBJECT)
    name = _require(spec, "name", "response_format.json_schema", _STRING)
    if not _NAME.fullmatch(name):
        raise errors.pattern_mismatch("response_format.json_schema.name", NAME_PATTERN)
    if len(name) > MAX_NAME:
        raise errors.string_too_long("response_format.json_schema.name", MAX_NAME, len(name))
    for key, expected in (("schema", _OBJECT), ("strict", _BOOLEAN), ("description", _STRING)):
        if spec.get(key) is not None and not expected[1](spec[key]):
            raise errors.invalid_type(f"response_format.json_schema.{key}", expected[0], spec[key])
    schema = spec.get("schema")
    if not isinstance(schema, dict):
        return
    if isinstance(schema.get("type"), str) and schema["type"] != "object":
        raise errors.invalid_schema(name, f"schema must be a JSON Schema of 'type: \"object\"', got "
                                          f"'type: \"{schema['type']}\"'.")
    if spec.get("strict") is True:
        _check_strict(schema, name)


def _text_of(message: Any) -> str:
    """A message's text: its string content, or its text parts joined."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return " ".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) else ""


def _check_strict(schema: dict[str, Any], name: str) -> None:
    """Every object closed and fully required, depth-first from the root (at most MAX_SCHEMA_NODES schemas).

    >>> _check_strict({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, "x")
    Traceback (most recent call last):
    ...
    practice_model.errors.ApiError: 400 Invalid schema for response_format 'x': In context=(), \
'additionalProperties' is required to be supplied and to be false.
    """
    stack: list[tuple[Any, tuple[Any, ...]]] = [(schema, ())]
    seen = 0
    while stack and seen < MAX_SCHEMA_NODES:
        node, context = stack.pop()
        seen += 1
        if not isinstance(node, dict):
            continue
        properties = node.get("properties")
        if node.get("type") == "object" or isinstance(properties, dict):
            if node.get("additionalProperties") is not False:
                raise errors.invalid_schema(name, f"In context={context!r}, 'additionalProperties' is required to be "
                                                  "supplied and to be false.")
            listed = node["required"] if isinstance(node.get("required"), list) else []
            missing = [k for k in (properties or {}) if k not in listed]
            if missing:
                raise errors.invalid_schema(name, f"In context={context!r}, 'required' is required to be supplied "
                                                  f"and to be an array including every key in properties. Missing "
                                                  f"'{missing[0]}'.")
        children: list[tuple[Any, tuple[Any, ...]]] = []
        for key, value in (properties or {}).items() if isinstance(properties, dict) else ():
            children.append((value, (*context, "properties", key)))
        if isinstance(node.get("items"), dict):
            children.append((node["items"], (*context, "items")))
        for key in ("anyOf", "allOf", "oneOf"):
            branches = node.get(key)
            for i, branch in enumerate(branches if isinstance(branches, list) else []):
                children.append((branch, (*context, key, i)))
        for key in ("$defs", "definitions"):
            for def_name, value in (node.get(key) or {}).items() if isinstance(node.get(key), dict) else ():
                children.append((value, (*context, key, def_name)))
        stack.extend(reversed(children))
