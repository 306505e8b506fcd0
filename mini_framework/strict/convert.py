"""OpenAI strict mode's form of a tool's parameters schema: closed objects, every property required, nullable.

    strict_schema(schema)   a copy strict mode accepts, or a ToolDefinitionError naming what it cannot say

`@tool(strict=True)` and `Tool.to_openai_tool(strict=True)` use it; a schema with `allOf`, free-form keys or
"any JSON value" has no strict form and is refused at decoration time, with the fix.
"""
from __future__ import annotations

from typing import Any

from ..schema import ToolDefinitionError, clean_schema, is_nullable, ordered

# OpenAI's Structured Outputs subset ("Supported schemas" in the Structured Outputs guide): these
# keywords are accepted; anything else is dropped (Pydantic still enforces it when validating) or,
# where dropping would change the meaning, refused below.
STRICT_KEYWORDS = {"type", "description", "properties", "required", "additionalProperties", "items", "anyOf",
                   "enum", "const", "$ref", "$defs", "pattern", "format", "multipleOf", "minimum", "maximum",
                   "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"}
STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
_STRICT_REFUSED = {"allOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas",
                   "patternProperties", "prefixItems"}


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` that OpenAI's strict mode accepts: closed objects, every property required,
    optional ones nullable, `$ref`s inlined, no defaults or unsupported keywords.

    >>> strict_schema({"type": "object", "properties": {"n": {"type": "integer", "default": 5}}})
    {'type': 'object', 'properties': {'n': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}}, 'required': ['n'],
     'additionalProperties': False}
    """
    schema = clean_schema(schema)
    if schema.get("type") != "object":
        raise ToolDefinitionError(f"strict mode: the parameters schema must be an object, not {schema.get('type')!r}")
    out = _strict(schema, "")
    if "$defs" in schema:
        out["$defs"] = {key: _strict(sub, f"$defs.{key}") for key, sub in schema["$defs"].items()}
    return out


def _strict(node: dict[str, Any], path: str) -> dict[str, Any]:
    """One schema node (and everything under it) rewritten for strict mode; `path` names it in errors."""
    where = f"parameter '{path}'" if path else "the parameters object"
    if refused := sorted(_STRICT_REFUSED & node.keys()):
        raise ToolDefinitionError(f"strict mode: {where} uses {refused[0]!r}, which strict mode does not support; "
                                  "simplify the type or use strict=False")
    if "$ref" in node:
        return {"$ref": node["$ref"]}  # a recursive model; strict mode does not allow keywords beside $ref
    out = {k: v for k, v in node.items() if k in STRICT_KEYWORDS}
    if "oneOf" in node:  # Pydantic's discriminated unions: the branches exclude each other anyway
        out["anyOf"] = node["oneOf"]
    if out.get("format") not in STRICT_FORMATS:
        out.pop("format", None)
    if not out.keys() & {"type", "anyOf", "enum", "const"}:
        raise ToolDefinitionError(f"strict mode: {where} accepts any JSON value (typing.Any, or a bare list/dict); "
                                  "strict mode needs a concrete type: give one, or use strict=False")
    if "items" in out:
        out["items"] = _strict(out["items"], f"{path}[]")
    if "anyOf" in out:
        out["anyOf"] = [_strict(branch, path) for branch in out["anyOf"]]
    if out.get("type") == "object":
        if out.get("additionalProperties", False) is not False:
            raise ToolDefinitionError(f"strict mode: {where} is a dict with free-form keys (dict[str, V]); strict mode "
                                      "needs every key declared: use a Pydantic model with named fields, a list of "
                                      "{key, value} objects, or strict=False")
        required = set(out.get("required", ()))
        props = out.get("properties", {})
        out["properties"] = {name: _strict_property(sub, name in required, f"{path}.{name}".lstrip("."))
                             for name, sub in props.items()}
        out["required"] = list(props)
        out["additionalProperties"] = False
    return ordered(out)


def _strict_property(sub: dict[str, Any], required: bool, path: str) -> dict[str, Any]:
    """One property for strict mode: optional ones become required-but-nullable (null = the default)."""
    strict = _strict(sub, path)
    if required or is_nullable(strict):
        return strict
    description = strict.pop("description", None)
    nullable: dict[str, Any] = {"anyOf": [strict, {"type": "null"}]}
    return {**nullable, "description": description} if description else nullable
