"""Checks for lesson 03b (strict mode, optional)."""
from __future__ import annotations

import copy
from typing import Any, Callable, Iterator

from .checking import CheckResult, Hints, run_check, solved

FLAT = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "the city"},
        "days": {"type": "integer", "description": "how many days", "default": 1},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
    },
    "required": ["city"],
}
NESTED = {
    "type": "object",
    "properties": {
        "location": {
            "type": "object",
            "properties": {"latitude": {"type": "number"}, "longitude": {"type": "number"},
                           "name": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}},
            "required": ["latitude", "longitude"],
        },
        "stops": {"type": "array", "items": {"type": "object", "properties": {"city": {"type": "string"},
                                                                              "nights": {"type": "integer",
                                                                                         "default": 1}},
                                             "required": ["city"]}},
        "days": {"type": "integer", "default": 1},
    },
    "required": ["location"],
}


def _objects(node: Any, path: str = "$") -> Iterator[tuple[str, dict]]:
    """Every object schema inside `node`, with a readable path."""
    if not isinstance(node, dict):
        return
    if node.get("type") == "object":
        yield path, node
    for name, sub in (node.get("properties") or {}).items():
        yield from _objects(sub, f"{path}.{name}")
    if "items" in node:
        yield from _objects(node["items"], f"{path}[]")
    for branch in node.get("anyOf", []):
        yield from _objects(branch, path)


def _defaults(node: Any, path: str = "$") -> Iterator[str]:
    """The paths of every `default` left anywhere in a schema."""
    if isinstance(node, dict):
        if "default" in node:
            yield path
        for name, sub in (node.get("properties") or {}).items():
            yield from _defaults(sub, f"{path}.{name}")
        if "items" in node:
            yield from _defaults(node["items"], f"{path}[]")
        for branch in node.get("anyOf", []):
            yield from _defaults(branch, path)


def _nullable(prop: dict) -> bool:
    return any(b.get("type") == "null" for b in prop.get("anyOf", [])) or (
        isinstance(prop.get("type"), list) and "null" in prop["type"])


def _types(prop: dict) -> set[str]:
    """The JSON types a schema allows, null aside."""
    kind = prop.get("type")
    return ({kind} if isinstance(kind, str) else set(kind or [])) - {"null"}


def _value_branch(prop: dict) -> dict:
    """The schema of a (possibly nullable) property without its null branch."""
    branches = [b for b in prop.get("anyOf", []) if b.get("type") != "null"]
    return branches[0] if len(branches) == 1 and set(prop) <= {"anyOf", "description"} else prop


def _check_strict(original: dict, strict: dict) -> None:
    for path, node in _objects(strict):
        assert node.get("additionalProperties") is False, (
            f"{path} needs \"additionalProperties\": false: in strict mode every object, nested ones and those "
            "inside arrays too, says that no other keys may appear")
        missing = sorted(set(node.get("properties", {})) - set(node.get("required", [])))
        assert not missing, (
            f"{path}: {missing} must be listed in required too. Strict mode sends every property; the ones that "
            "were optional say 'not given' with null instead of being left out")
    for path, node in _objects(original):
        target: Any = strict
        try:
            for part in path[2:].replace("[]", ".[]").split(".") if path != "$" else []:
                if part:
                    target = _value_branch(target["items"] if part == "[]" else target["properties"][part])
        except (KeyError, TypeError, AttributeError):
            raise AssertionError(f"{path} should still be there, with its properties") from None
        for name, prop in node.get("properties", {}).items():
            assert name in target.get("properties", {}), f"{path}.{name} disappeared: keep every property"
            converted = target["properties"][name]
            if name in node.get("required", []):
                assert not _nullable(converted) or _nullable(prop), (
                    f"{path}.{name} was required: leave it as it is (only optional properties become nullable)")
            else:
                assert _nullable(converted), (
                    f"{path}.{name} was optional, so it must become nullable: "
                    "{\"anyOf\": [<its schema>, {\"type\": \"null\"}]}; null is how a strict model says 'not given'")
            kept = _value_branch(converted)
            if not _nullable(prop):
                assert _types(kept) == _types(prop) and kept.get("enum", []) == prop.get("enum", []), (
                    f"{path}.{name} changed from {prop} to {converted}: keep the property's own schema (type, enum) "
                    "inside the anyOf")
    left = list(_defaults(strict))
    assert not left, (
        f"a default is left at {left[0]}: drop every `default` (including inside an anyOf). In strict mode the model "
        "sends every property, so a default never applies on its side; null now means 'use the default', and the "
        "default itself lives in your function")


def to_strict(to_strict: Callable[[dict], dict]) -> CheckResult:
    """Exercise 1: the strict-mode transform, on a flat and a nested schema, without touching its input."""
    def test() -> str:
        for schema in (FLAT, NESTED):
            given = copy.deepcopy(schema)  # the learner's function gets a copy: FLAT and NESTED stay as they are
            strict = solved(to_strict(given))
            assert given == schema, "to_strict changed the schema it was given: work on a copy (copy.deepcopy)"
            assert isinstance(strict, dict), f"return the new schema as a dict, not {type(strict).__name__}"
            assert strict.get("type") == "object", "return the whole object schema, with its type and properties"
            _check_strict(schema, strict)
        return "flat and nested schemas: objects closed, every property required, optional ones nullable, no defaults"
    return run_check(1, test, "Copy the schema, then walk it: every object schema gets the strict rules, and the "
                              "walk goes on into properties, array items and anyOf branches.",
                     recipe=hint.recipes[1])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "work on a deep copy. Write a recursive function for one node: remove its default; recurse into "
        "each anyOf branch and into items; for an object, make each property that is not required (and not "
        "already nullable) an anyOf of itself and {'type': 'null'}, then list every property in required "
        "and set additionalProperties to False\n"
        "中文：先深拷贝 schema；写一个递归函数处理每个节点：去掉 default；进入 anyOf 的各分支和 "
        "items；遇到对象时，把不在 required 里（且还不接受 null）的属性改成 anyOf [原 schema, {'type': "
        "'null'}]，再把所有属性列进 required，并设 additionalProperties 为 False"),
})
