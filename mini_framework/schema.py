"""From a Python function to the JSON schema of its parameters, and the Pydantic model that checks them.

The pipeline, top to bottom (one small function each):

    parse_docstring(func.__doc__)      summary + parameter descriptions (Google, NumPy or Sphinx style)
    check_type(hint)                   refuse, early and with the fix, what JSON cannot carry
    function_schema(func)              one Pydantic model per function (`create_model`), built once
    clean_schema(model_json_schema())  what the model reads: portable, nested models inlined

OpenAI's strict form of a schema is the `strict/` feature's (`strict_schema`).

The *same* model validates the arguments the LLM sends, so the schema it reads and the check its
arguments must pass can never drift apart.

Decisions (and concessions):
- The default schema sticks to what every provider accepts. Nested models are inlined (`$ref`
  resolved): Gemini, also behind its OpenAI-compatible endpoint, answers 400 to `$ref`/`$defs`,
  `additionalProperties`, `examples` and `const` (pydantic-ai#1598, openswarm#24, AstrBot#7572,
  zed#44875), and Ollama-served models cannot follow a `$ref` (mellea#911). So `title`, `examples`
  and `additionalProperties: false` are dropped and `const` becomes a one-value `enum`. Only
  recursive models keep a `$ref` (they cannot be inlined), and `dict[str, V]` keeps its
  `additionalProperties`: prefer a model with named fields for tools that must run on Gemini.
- Unknown arguments are refused (`extra="forbid"`) so a misspelt name is reported, not ignored,
  even though the schema does not say `additionalProperties: false` (strict mode does, everywhere).
- `typing.Any` is allowed and means "any JSON value, passed through as parsed" (useful for
  `dict[str, Any]` payloads); it has no strict-mode form. `object` is refused: it says nothing.
- Pydantic models, dataclasses and TypedDicts are accepted as structured parameters; other classes,
  tuples, sets, bytes, callables, `*args` and `**kwargs` are refused at decoration time.
- `null` for a parameter that has a default but does not accept None means "use the default":
  strict mode makes such parameters nullable, and models send null for "not given" anyway.
- Type hints are resolved in the function's module: with `from __future__ import annotations`,
  types defined inside another function's body cannot be used.
"""
from __future__ import annotations

import datetime
import inspect
import json
import re
import types
import uuid
import warnings
from collections import abc
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo
from typing_extensions import is_typeddict  # knows both TypedDicts; ships with Pydantic


class ToolDefinitionError(TypeError):
    """A function that cannot become a tool; the message names the parameter, the reason and the fix."""


@dataclass
class FunctionSchema:
    """Everything derived from a function's signature, built once at decoration time."""

    name: str  # the tool name (also the Pydantic model's name, so errors say "for get_weather")
    description: str  # the explicit description, else the docstring summary
    hints: dict[str, Any]  # parameter name -> type hint as written, in signature order, `self`/`cls` skipped
    params_model: type[BaseModel]  # validates arguments; the schema below is generated from it
    json_schema: dict[str, Any]  # the `parameters` JSON schema, cleaned (see clean_schema)
    positional_only: tuple[str, ...]  # parameters that must be passed positionally (`def f(x, /)`)


# ----------------------------------------------------------------------------- docstrings

_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments", "other parameters",
             "returns", "return", "yields", "yield", "raises", "examples", "example", "notes", "note",
             "attributes", "see also", "warnings", "warning", "references", "todo"}
_PARAM_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments", "other parameters"}
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\(.*?\))?\s*:\s*(.*)$")  # name (type): description
_NUMPY_ENTRY = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")  # name[, name] : type
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*?\s)?\*{0,2}(\w+)\s*:\s*(.*)$")  # :param [type] name: description


@dataclass
class Docstring:
    """A parsed docstring: the summary (the tool description) and one description per parameter."""

    summary: str  # everything before the first section (Args:, Returns:, :param ..., ...)
    params: dict[str, str]  # parameter name -> description, continuation lines joined


def parse_docstring(doc: str | None) -> Docstring:
    """Split a Google, NumPy or Sphinx docstring into its summary and parameter descriptions.

    >>> parse_docstring("Add two numbers.\\n\\nArgs:\\n    a (int): the first\\n    b: the second").params
    {'a': 'the first', 'b': 'the second'}
    """
    lines = inspect.cleandoc(doc or "").splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None  # the current section's name; None while reading the summary
    style = ""  # "google", "numpy" or "sphinx"
    current: list[str] = []  # the parameter(s) whose description is being read
    base: int | None = None  # the indentation of entries in the current section
    i = 0
    while i < len(lines):
        line, text = lines[i], lines[i].strip()
        indent = len(line) - len(line.lstrip())
        underline = i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}
        i += 1
        if text.lower() in _SECTIONS and underline:  # NumPy: "Parameters" over "----------"
            section, style, current, base = text.lower(), "numpy", [], None
            i += 1
        elif text.endswith(":") and text[:-1].strip().lower() in _SECTIONS:  # Google: "Args:"
            section, style, current, base = text[:-1].strip().lower(), "google", [], None
        elif m := _SPHINX_PARAM.match(text):  # Sphinx: ":param name: description"
            section, style, current = "params", "sphinx", [m[1]]
            params[m[1]] = m[2].strip()
        elif text.startswith(":") and section in (None, "params") and style in ("", "sphinx"):
            section, style, current = "other", "sphinx", []  # :returns:, :raises X:, :type x: ...
        elif section is None:
            summary.append(line)
        elif not text:
            continue
        elif style == "sphinx":
            for name in current:
                params[name] = f"{params[name]} {text}".strip()
        elif section in _PARAM_SECTIONS:
            base = indent if base is None else base
            if indent < base:  # dedented text ends the section
                section, current = "other", []
            elif indent == base:
                m = (_GOOGLE_ENTRY if style == "google" else _NUMPY_ENTRY).match(text)
                current = [n.strip().lstrip("*") for n in m[1].split(",")] if m else []
                for name in current:
                    params[name] = m[2].strip() if style == "google" and m else ""
            else:
                for name in current:
                    params[name] = f"{params[name]} {text}".strip()
    text = "\n".join(summary).strip()
    return Docstring(re.sub(r"(?<!\n)\n(?!\n)", " ", text), params)


# ----------------------------------------------------------------------------- type checks

_SCALARS = {str, int, float, bool, type(None), Path, datetime.date, datetime.datetime, datetime.time, uuid.UUID}
_REFUSED = {
    tuple: "JSON has no tuples; use list[T], or a Pydantic model with named fields",
    set: "JSON has no sets; use list[T] (and de-duplicate inside the function)",
    frozenset: "JSON has no sets; use list[T] (and de-duplicate inside the function)",
    bytes: "JSON cannot carry raw bytes; take a str (the text, a file path, or base64) instead",
    bytearray: "JSON cannot carry raw bytes; take a str (the text, a file path, or base64) instead",
    object: "`object` says nothing about the value; use a concrete type, or typing.Any for any JSON value",
}
_SUPPORTED = ("str, int, float, bool, list[T], dict[str, V], Optional[T], Literal[...], an Enum, "
              "a Pydantic model, a dataclass, a TypedDict, or a type that describes itself to Pydantic "
              "(Text, ImgPath, ImgUrl)")


def _describes_itself(hint: Any) -> bool:
    """A class (not a model) that says how Pydantic checks it: one value, e.g. ImgPath, ImgUrl, Text."""
    return isinstance(hint, type) and not issubclass(hint, BaseModel) and "__get_pydantic_core_schema__" in dir(hint)


def check_type(hint: Any, where: str, _seen: set[type] | None = None) -> None:
    """Raise ToolDefinitionError unless a model can send a value of type `hint` as JSON.

    >>> check_type(list[tuple[int, int]], "parameter 'points'")
    Traceback (most recent call last):
    ...
    mini_framework.schema.ToolDefinitionError: parameter 'points': tuple[int, int] is not supported:
      JSON has no tuples; use list[T], or a Pydantic model with named fields
    """
    seen = set() if _seen is None else _seen
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        return check_type(args[0], where, seen)
    if hint is Any or hint in _SCALARS or hint in (list, dict) or _describes_itself(hint):
        return
    if origin in (Union, types.UnionType, list):
        for arg in args:
            check_type(arg, where, seen)
        return
    if origin is Literal:
        if not all(isinstance(a, (str, int, float, bool, Enum, type(None))) for a in args):
            raise ToolDefinitionError(f"{where}: Literal values must be str, int, float, bool or None")
        return
    if origin is dict:
        if args and args[0] is not str:
            raise ToolDefinitionError(f"{where}: {_name(hint)} is not supported: JSON object keys are strings; "
                                      "use dict[str, V]")
        return check_type(args[1], where, seen) if args else None
    if (origin or hint) in _REFUSED:
        raise ToolDefinitionError(f"{where}: {_name(hint)} is not supported: {_REFUSED[origin or hint]}")
    if hint is abc.Callable or origin is abc.Callable:
        raise ToolDefinitionError(f"{where}: {_name(hint)} is not supported: a model cannot send a function; "
                                  "take a str or Literal['add', 'sub', ...] naming the operation instead")
    if isinstance(hint, type) and issubclass(hint, Enum):
        return
    if isinstance(hint, type) and (issubclass(hint, BaseModel) or is_dataclass(hint) or is_typeddict(hint)):
        if hint not in seen:
            seen.add(hint)
            for field, sub in _field_types(hint).items():
                check_type(sub, f"{where}, field '{hint.__name__}.{field}'", seen)
        return
    raise ToolDefinitionError(f"{where}: {_name(hint)} is not supported as a tool parameter; use {_SUPPORTED}")


def _field_types(cls: type) -> dict[str, Any]:
    """The declared field types of a Pydantic model, dataclass or TypedDict."""
    if issubclass(cls, BaseModel):
        return {name: f.annotation for name, f in cls.model_fields.items()}
    hints = get_type_hints(cls)
    return {f.name: hints[f.name] for f in fields(cls)} if is_dataclass(cls) else hints


def _name(hint: Any) -> str:
    """A readable name for a type hint: `tuple[int, int]`, `bytes`, `Callable[[int], int]`."""
    return hint.__name__ if isinstance(hint, type) and not get_args(hint) else repr(hint).replace("typing.", "")


# ----------------------------------------------------------------------------- signature -> model

def function_schema(func: Callable[..., Any], name: str, description: str | None = None) -> FunctionSchema:
    """Build the Pydantic model and the JSON schema of `func`'s parameters (once; cache the result).

    >>> def add(a: int, b: int = 2):
    ...     '''Add two numbers.'''
    >>> function_schema(add, "add").json_schema
    {'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer', 'default': 2}},
     'required': ['a']}
    """
    label = f"{getattr(func, '__qualname__', name)}()"
    try:
        hints = get_type_hints(func, include_extras=True)
    except Exception as exc:  # NameError for an unknown forward reference, TypeError for bad hints
        raise ToolDefinitionError(f"{label}: cannot resolve the type hints ({exc}); define the types at "
                                  "module level, or drop `from __future__ import annotations`") from exc
    doc = parse_docstring(func.__doc__)
    specs: dict[str, Any] = {}  # name -> (hint, FieldInfo) for create_model
    written: dict[str, Any] = {}  # name -> the type hint as the author wrote it
    positional_only: list[str] = []
    for index, param in enumerate(inspect.signature(func).parameters.values()):
        where = f"{label}: parameter '{param.name}'"
        if index == 0 and param.name in ("self", "cls"):
            continue
        if param.kind is param.VAR_POSITIONAL:
            raise ToolDefinitionError(f"{where}: *{param.name} is not supported: a model sends one JSON object of "
                                      f"named arguments; take a list instead, e.g. `{param.name}: "
                                      f"list[{_name(hints.get(param.name, str))}]`")
        if param.kind is param.VAR_KEYWORD:
            raise ToolDefinitionError(f"{where}: **{param.name} is not supported: it hides the parameter names from "
                                      "the model; declare each parameter, or take one Pydantic model or dict[str, V]")
        if param.name.startswith("_"):
            raise ToolDefinitionError(f"{where}: names starting with '_' cannot be tool parameters; rename it")
        if param.name not in hints:
            raise ToolDefinitionError(f"{where} has no type hint; add one, e.g. `{param.name}: str`, "
                                      "so the model knows what to send")
        hint = hints[param.name]
        check_type(hint, where)
        has_default = param.default is not param.empty
        field = param.default if isinstance(param.default, FieldInfo) else Field(param.default if has_default else ...)
        described = _explicit_description(hint, field) or doc.params.get(param.name)
        if described and not field.description:  # Pydantic ignores plain strings in Annotated, so add a Field
            hint = Annotated[hint, Field(description=described)]
        specs[param.name] = (hint, field)
        written[param.name] = hints[param.name]
        if param.kind is param.POSITIONAL_ONLY:
            positional_only.append(param.name)
    model = _create_model(name, specs, label)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "default is not JSON serializable": Pydantic omits it, as we want
        schema = clean_schema(model.model_json_schema())
    summary = description if description is not None else doc.summary
    return FunctionSchema(name, summary, written, model, schema, tuple(positional_only))


def _explicit_description(hint: Any, field: FieldInfo) -> str | None:
    """A description given in the code (Field or Annotated metadata), which beats the docstring's."""
    if field.description:
        return field.description
    for meta in reversed(get_args(hint)[1:] if get_origin(hint) is Annotated else ()):
        if isinstance(meta, FieldInfo) and meta.description:
            return meta.description
        if isinstance(meta, str):
            return meta
    return None


def _create_model(name: str, specs: dict[str, Any], label: str) -> type[BaseModel]:
    """`pydantic.create_model`, with our config and Pydantic's own complaints turned into ours."""
    config = ConfigDict(extra="forbid", protected_namespaces=())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a parameter named `json` or `schema` shadows a BaseModel method
            return create_model(name, __config__=config, **specs)
    except Exception as exc:
        raise ToolDefinitionError(f"{label}: Pydantic cannot build a model for these parameters: {exc}") from exc


# ----------------------------------------------------------------------------- JSON schema clean-up

_DATA_KEYWORDS = ("default", "enum", "const", "examples", "required")  # their values are data, not schemas
_DROPPED = ("title", "$defs", "discriminator", "examples")  # noise, inlined, OpenAPI-only, rejected by Gemini
_KEY_ORDER = {k: i for i, k in enumerate(("type", "description", "properties", "required", "items", "anyOf", "enum"))}


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Pydantic's JSON schema, made portable: `$ref`s inlined (`$defs` kept only for recursion), no `title`,
    `examples` or `additionalProperties: false`, and `const` written as a one-value `enum`.

    >>> point = {"title": "P", "type": "object", "properties": {"x": {"title": "X", "type": "number"}}}
    >>> clean_schema({"$defs": {"P": point}, "title": "M", "type": "object",
    ...               "properties": {"p": {"$ref": "#/$defs/P"}}})
    {'type': 'object', 'properties': {'p': {'type': 'object', 'properties': {'x': {'type': 'number'}}}}}
    """
    defs: dict[str, Any] = schema.get("$defs", {})
    recursive = _recursive(defs)  # these cannot be inlined
    out = _inline(schema, defs, recursive)
    if recursive:
        out["$defs"] = {key: _inline(defs[key], defs, recursive) for key in sorted(recursive)}
    return out


def _recursive(defs: dict[str, Any]) -> set[str]:
    """The definitions that use themselves, directly or through others."""
    uses = {key: set(re.findall(r'"#/\$defs/([^"]+)"', json.dumps(sub))) for key, sub in defs.items()}
    while True:  # close `uses` transitively
        grown = {key: found.union(*(uses.get(k, set()) for k in found)) for key, found in uses.items()}
        if grown == uses:
            return {key for key, found in uses.items() if key in found}
        uses = grown


def _inline(node: Any, defs: dict[str, Any], keep: set[str]) -> Any:
    """`node` with local `$ref`s replaced by their definitions, except those in `keep` (recursive ones)."""
    if isinstance(node, list):
        return [_inline(item, defs, keep) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref", "")
    if ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") not in keep:
        siblings = _inline({k: v for k, v in node.items() if k != "$ref"}, defs, keep)
        return ordered({**_inline(follow_ref(node, defs), defs, keep), **siblings})
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or (key == "additionalProperties" and value is False):
            continue
        if key == "const":  # Literal["x"]: the same meaning, in a keyword every provider knows
            out["enum"] = [value]
        elif key == "properties":
            out[key] = {name: _inline(sub, defs, keep) for name, sub in value.items()}
        else:
            out[key] = value if key in _DATA_KEYWORDS else _inline(value, defs, keep)
    return ordered(out)


def ordered(node: dict[str, Any]) -> dict[str, Any]:
    """The same schema with `type` and `description` first, so printed schemas read top-down.

    >>> ordered({"enum": [1, 2], "type": "integer"})
    {'type': 'integer', 'enum': [1, 2]}
    """
    return dict(sorted(node.items(), key=lambda kv: _KEY_ORDER.get(kv[0], len(_KEY_ORDER))))


def is_nullable(schema: dict[str, Any]) -> bool:
    """True if `null` is a valid value for `schema`.

    >>> is_nullable({"anyOf": [{"type": "integer"}, {"type": "null"}]}), is_nullable({"type": "integer"})
    (True, False)
    """
    kind = schema.get("type")
    return (kind == "null" or (isinstance(kind, list) and "null" in kind) or None in schema.get("enum", [0])
            or any(is_nullable(s) for s in schema.get("anyOf", ())) or not schema.keys() - {"description", "default"})


def follow_ref(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """`node`, or the definition its local `$ref` points to ({} if it points nowhere).

    >>> follow_ref({"$ref": "#/$defs/P"}, {"P": {"type": "object"}})
    {'type': 'object'}
    """
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    target = defs.get(ref.removeprefix("#/$defs/"))
    return target if isinstance(target, dict) else {}


def structured_branch(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema that describes a value's structure: `$ref` followed, and for an optional object or
    list (`X | None`) its X branch; `node` itself when there is no single such branch.

    >>> structured_branch({"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]}, {"P": {"properties": {}}})
    {'properties': {}}
    """
    node = follow_ref(node, defs)
    branches = [b for b in node.get("anyOf", ()) if isinstance(b, dict) and b.keys() & {"properties", "items", "$ref"}]
    if len(branches) == 1:
        return structured_branch(branches[0], defs)
    return node
