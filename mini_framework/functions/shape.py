"""What an LLM function returns: its return annotation as a JSON schema, and the model's reply checked against it.

    shape = shape_of(list[int], "primes")
    shape.response_format("json_schema")   # {"type": "json_schema", "json_schema": {"name": "primes", ...}}
    shape.read('{"value": [2, 3, 5]}')     # [2, 3, 5], or Invalid saying what is wrong

Any type Pydantic validates works (a model, `list[...]`, `int`, `float`, `bool`, `Literal[...]`, `dict`,
a TypedDict): `TypeAdapter(annotation)` gives both the schema and the validation, so what is asked for
and what is accepted cannot drift apart. `str` (or no annotation) means plain text: no schema at all.

`json_schema` must describe an object, so a type that is not one (a list, a number, a Literal) is
wrapped: `{"value": <its schema>}`, and the reply's `value` is what is validated. The schema sent is
in OpenAI's strict form when the strict feature (mini_framework/strict/) can write one (closed
objects, every field required, optional ones nullable: a null then means "the default"); otherwise
(a free-form `dict`, the folder not copied) it is sent as an ordinary, non-strict schema.

Reading is lenient where leniency cannot change the meaning: a code fence or a trailing comma is
repaired (arguments.repair_json), a bare value is accepted for a wrapped type (`[2, 3]` for
`{"value": [2, 3]}`), and Pydantic's lax mode turns "42" into 42. Anything else is `Invalid`, whose
message lists the problems briefly, for the model to fix.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..arguments import drop_null_defaults, repair_json
from ..hooks import feature
from ..schema import ToolDefinitionError, clean_schema
from ..text import brief

__all__ = ["MODES", "Invalid", "Shape", "shape_of"]

MODES = ("json_schema", "json_object_schema", "json_object", "prompt")  # how the schema reaches the model, best first
MAX_PROBLEMS = 5  # validation errors quoted back to the model


class Invalid(ValueError):
    """A reply that is not the value asked for; the message says why, briefly, for the model."""


@dataclass(frozen=True)
class Shape:
    """One return annotation: its schema (wrapped in {"value": ...} unless it is an object) and its validator."""

    name: str  # the schema's name: ^[a-zA-Z0-9_-]{1,64}$ as the API demands
    adapter: TypeAdapter[Any] | None  # None: plain text
    schema: dict[str, Any]  # what the model is asked for (an object)
    wrapped: bool
    strict: bool

    @property
    def text(self) -> bool:
        return self.adapter is None

    def response_format(self, mode: str) -> dict[str, Any] | None:
        """The `response_format` parameter for a mode ("prompt" and plain text send none)."""
        if self.text or mode == "prompt":
            return None
        if mode == "json_object":
            return {"type": "json_object"}
        if mode == "json_object_schema":  # llama.cpp's JSON mode with a schema: decoding constrained to it
            return {"type": "json_object", "schema": self.schema}
        return {"type": "json_schema", "json_schema": {"name": self.name, "schema": self.schema, "strict": self.strict}}

    def instructions(self, mode: str) -> str | None:
        """The system prompt a mode needs: the schema in words where the provider does not take it."""
        if self.text or mode == "json_schema":
            return None
        wrapped = ' Put the answer under "value".' if self.wrapped else ""
        return (f"Answer with one JSON object and nothing else (no prose, no code fence), matching this JSON "
                f"schema:{wrapped}\n{json.dumps(self.schema, ensure_ascii=False)}")

    def read(self, content: str | None) -> Any:
        """The reply's value, validated; Invalid (saying what is wrong) otherwise.

        >>> shape_of(int, "n").read('{"value": "42"}'), shape_of(int, "n").read("42")
        (42, 42)
        """
        if self.adapter is None:
            if not content:
                raise Invalid("the reply was empty: answer in words")
            return content
        if not content or not content.strip():
            raise Invalid("the reply was empty: answer with the JSON object")
        data = _parse(content)
        if self.wrapped and isinstance(data, dict) and "value" in data:
            data = data["value"]
        elif self.wrapped and isinstance(data, dict):
            raise Invalid('the object has no "value": put the answer under "value"')
        if self.strict:  # a null for an optional field means "not given" (the strict schema made it required)
            data = drop_null_defaults(self._original, data)
        try:
            return self.adapter.validate_python(data)
        except ValidationError as error:
            top = ("value",) if self.wrapped else ()
            problems = [f"{'.'.join(str(p) for p in (*top, *e['loc'])) or 'the answer'}: {e['msg']} (got "
                        f"{brief(e.get('input'), 40)})" for e in error.errors(include_url=False)[:MAX_PROBLEMS]]
            more = error.error_count() - len(problems)
            raise Invalid("; ".join(problems) + (f"; and {more} more" if more > 0 else "")) from None

    @property
    def _original(self) -> dict[str, Any]:
        assert self.adapter is not None
        return self.adapter.json_schema()


def shape_of(annotation: Any, name: str) -> Shape:
    """The shape of a return annotation (`str`, or none, is plain text).

    >>> shape_of(bool, "ok").schema["properties"], shape_of(bool, "ok").wrapped
    ({'value': {'type': 'boolean'}}, True)
    """
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64] or "answer"
    if annotation in (str, None) or annotation is type(None):
        return Shape(name, None, {}, False, False)
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(annotation)
        schema = adapter.json_schema()
    except Exception as exc:
        raise TypeError(f"the return annotation {annotation!r} cannot be described as JSON ({exc}); use a "
                        "Pydantic model, a list, a number, a Literal or a dict") from None
    wrapped = schema.get("type") != "object"
    if wrapped:
        defs = schema.pop("$defs", None)
        schema = {"type": "object", "properties": {"value": schema}, "required": ["value"],
                  **({"$defs": defs} if defs else {})}
    try:
        return Shape(name, adapter, feature("strict").strict_schema(schema), wrapped, True)
    except (ToolDefinitionError, ImportError):  # no strict form (free-form keys), or no strict folder
        return Shape(name, adapter, clean_schema(schema), wrapped, False)


def _parse(content: str) -> Any:
    """The JSON in a reply, repaired where a rule of arguments.REPAIRS fixes it; Invalid if there is none."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        repaired, _ = repair_json(content)
    try:
        return json.loads(repaired)
    except (ValueError, RecursionError):
        raise Invalid(f"the reply is not JSON ({brief(content, 60)}): answer with the JSON object only") from None
