"""JSON Schema as the practice planner reads it: one set of helpers for every tool's `parameters`.

    resolve(schema, root)      follow `$ref` (into `$defs` or anywhere under the root), reduce
                               `anyOf`/`oneOf` to the first non-null branch, merge `allOf`
    json_type(schema)          'string', 'integer', 'object', ... (guessed when `type` is absent)
    params_of(schema, root)    the properties of an object schema as `Param`s, each resolved
    read(schema)               a resolved schema as the planner keeps it: enum and description clipped

Tools arrive in whatever shape their authors' libraries emit (Pydantic's `$defs` and
`anyOf: [X, {"type": "null"}]`, hand-written schemas with no `type`), so every part of the
planner that looks at a schema goes through these functions, never at the raw dict.

Everything here is bounded, whatever the request: at most MAX_PARAMS properties of an object
are read, MAX_ENUM members of an enum, `language.MAX_TEXT` characters of a description, and
one `resolve` takes at most MAX_STEPS steps (a schema whose `$ref`s and `allOf`s fan out would
otherwise take exponential time).

Concessions: a `$ref` is a JSON pointer into the same document only (no URLs, no `~0`/`~1`
escapes); of several non-null `anyOf` branches the first wins (the planner fills one value, not
a union); `allOf` branches are merged shallowly; past MAX_DEPTH or MAX_STEPS a schema resolves to
{}; properties, members and text past the caps are not seen at all.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any, TypeVar

from .language import MAX_TEXT

T = TypeVar("T")

MAX_DEPTH = 8           # nested `$ref`/`anyOf`/`allOf` levels followed before giving up (cycles end here)
MAX_STEPS = 64          # schemas visited by one `resolve` (a fan-out of `$ref`s ends here)
MAX_PARAMS = 64         # properties read per object schema (top-level parameters, nested objects)
MAX_ENUM = 64           # enum members read per schema


@dataclass(frozen=True)
class Param:
    """One property of an object schema (a tool's parameter), its schema already resolved."""

    name: str
    """The property name."""
    schema: dict
    """The property schema with `$ref` followed and `anyOf: [X, null]` reduced to X."""
    required: bool
    """Whether it is listed in `required`."""
    description: str
    """The property description ('' when absent)."""


def value_of(obj: Any, key: str, kind: type[T], default: T) -> T:
    """`obj[key]` when `obj` is a dict and that value is a `kind`, else `default` (requests are untrusted JSON).

    >>> value_of({"a": [1]}, "a", list, []), value_of({"a": "x"}, "a", list, []), value_of(None, "a", str, "")
    ([1], [], '')
    """
    value = obj.get(key) if isinstance(obj, dict) else None
    return value if isinstance(value, kind) else default


def enum_of(schema: Any) -> list[Any]:
    """The members of a schema's `enum` ([] when there is none).

    >>> enum_of({"enum": ["a", "b"]}), enum_of({"type": "string"})
    (['a', 'b'], [])
    """
    return value_of(schema, "enum", list, [])


def resolve(schema: Any, root: Any) -> dict:
    """A schema with `$ref` followed, `anyOf`/`oneOf` reduced to the first non-null branch, `allOf` merged.

    A branch `{"type": "null"}` (or a type list with "null") leaves `"nullable": True` behind.

    >>> resolve({"anyOf": [{"$ref": "#/$defs/U"}, {"type": "null"}]}, {"$defs": {"U": {"type": "string"}}})
    {'type': 'string', 'nullable': True}
    """
    return _resolve(schema, root, 0, [MAX_STEPS])


def _resolve(schema: Any, root: Any, depth: int, steps: list[int]) -> dict:
    """`resolve` at a depth, with the steps left (shared by every branch of one `resolve`)."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH or steps[0] <= 0:
        return {}
    steps[0] -= 1
    if isinstance(schema.get("$ref"), str):
        target: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return _resolve({**(target if isinstance(target, dict) else {}), **rest}, root, depth + 1, steps)
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            rest = {k: v for k, v in schema.items() if k != key}
            useful = [b for b in branches if isinstance(b, dict) and b.get("type") != "null"]
            if len(useful) < len(branches):
                rest["nullable"] = True
            merged: dict = {}
            for branch in (useful if key == "allOf" else useful[:1]):
                if steps[0] <= 0:
                    break
                merged.update(_resolve(branch, root, depth + 1, steps))
            return _resolve({**merged, **rest}, root, depth + 1, steps)
    if isinstance(schema.get("type"), list):
        kinds = [t for t in schema["type"] if t != "null"]
        return {**schema, "type": kinds[0] if kinds else "string", "nullable": "null" in schema["type"]}
    return schema


def json_type(schema: dict) -> str:
    """The JSON type of a resolved schema, guessed when absent.

    >>> json_type({'enum': [1, 2]}), json_type({'properties': {}}), json_type({})
    ('integer', 'object', 'string')
    """
    if isinstance(schema.get("type"), str):
        return schema["type"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        first = schema["enum"][0]
        return {bool: "boolean", int: "integer", float: "number"}.get(type(first), "string")
    return "object" if "properties" in schema else "array" if "items" in schema else "string"


def read(schema: dict) -> dict:
    """A resolved schema as the planner keeps it: at most MAX_ENUM enum members, MAX_TEXT characters of description.

    >>> read({"enum": list(range(100)), "description": "x" * 5000}) == {"enum": list(range(MAX_ENUM)),
    ...                                                                "description": "x" * MAX_TEXT}
    True
    """
    enum, description = schema.get("enum"), schema.get("description")
    if not (isinstance(enum, list) and len(enum) > MAX_ENUM) and not (
            isinstance(description, str) and len(description) > MAX_TEXT):
        return schema
    clipped = dict(schema)
    if isinstance(enum, list):
        clipped["enum"] = enum[:MAX_ENUM]
    if isinstance(description, str):
        clipped["description"] = description[:MAX_TEXT]
    return clipped


def iter_params(schema: dict, root: Any) -> Iterator[Param]:
    """The properties of a resolved object schema, in schema order, each resolved and `read`; at most MAX_PARAMS."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return
    listed = value_of(schema, "required", list, [])
    try:
        required = set(listed)                                  # C speed, even for a huge list
    except TypeError:                                           # an unhashable entry: skip what is not a name
        required = {name for name in listed if isinstance(name, str)}
    for name, raw in islice(properties.items(), MAX_PARAMS):
        resolved = read(resolve(raw, root))
        yield Param(str(name), resolved, name in required, value_of(resolved, "description", str, ""))


def params_of(schema: dict, root: Any) -> tuple[Param, ...]:
    """The properties of a resolved object schema, in schema order, each resolved against `root`.

    >>> root = {"$defs": {"C": {"type": "string", "description": "city"}}, "required": ["city"],
    ...         "properties": {"city": {"$ref": "#/$defs/C"}, "days": {"type": "integer"}}}
    >>> [(p.name, p.required, p.description) for p in params_of(root, root)]
    [('city', True, 'city'), ('days', False, '')]
    """
    return tuple(iter_params(schema, root))
