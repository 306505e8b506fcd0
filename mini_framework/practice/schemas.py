"""JSON Schema as the practice planner reads it: one set of helpers for every tool's `parameters`.

    resolve(schema, root)      follow `$ref` (into `$defs` or anywhere under the root), reduce
                               `anyOf`/`oneOf` to the first non-null branch, merge `allOf`
    json_type(schema)          'string', 'integer', 'object', ... (guessed when `type` is absent)
    params_of(schema, root)    the properties of an object schema as `Param`s, each resolved

Tools arrive in whatever shape their authors' libraries emit (Pydantic's `$defs` and
`anyOf: [X, {"type": "null"}]`, hand-written schemas with no `type`), so every part of the
planner that looks at a schema goes through these three functions, never at the raw dict.

Concessions: a `$ref` is a JSON pointer into the same document only (no URLs, no `~0`/`~1`
escapes); of several non-null `anyOf` branches the first wins (the planner fills one value, not
a union); `allOf` branches are merged shallowly; references deeper than `MAX_DEPTH` resolve to {}.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 8           # nested `$ref`/`anyOf`/`allOf` steps followed before giving up (cycles end here)


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


def resolve(schema: Any, root: Any, depth: int = 0) -> dict:
    """A schema with `$ref` followed, `anyOf`/`oneOf` reduced to the first non-null branch, `allOf` merged.

    A branch `{"type": "null"}` (or a type list with "null") leaves `"nullable": True` behind.

    >>> resolve({"anyOf": [{"$ref": "#/$defs/U"}, {"type": "null"}]}, {"$defs": {"U": {"type": "string"}}})
    {'type': 'string', 'nullable': True}
    """
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
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


def params_of(schema: dict, root: Any) -> tuple[Param, ...]:
    """The properties of a resolved object schema, in schema order, each resolved against `root`.

    >>> root = {"$defs": {"C": {"type": "string", "description": "city"}}, "required": ["city"],
    ...         "properties": {"city": {"$ref": "#/$defs/C"}, "days": {"type": "integer"}}}
    >>> [(p.name, p.required, p.description) for p in params_of(root, root)]
    [('city', True, 'city'), ('days', False, '')]
    """
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ()
    required = schema.get("required") if isinstance(schema.get("required"), list) else []
    params = []
    for name, raw in properties.items():
        resolved = resolve(raw, root)
        description = resolved.get("description") if isinstance(resolved.get("description"), str) else ""
        params.append(Param(str(name), resolved, name in required, description))
    return tuple(params)
