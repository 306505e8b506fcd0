"""Checks for lesson 03 (tools from Python functions)."""
from __future__ import annotations

import copy
import json
from typing import Any, Callable, Iterator

from mini_framework import connect
from mini_framework.tools import Tool

from .checking import CheckResult, Hints, NotSolved, practice_in_use, run_check, solved

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
        "stops": {"type": "array", "items": {"type": "object", "properties": {"city": {"type": "string"}},
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


def _nullable(prop: dict) -> bool:
    return any(b.get("type") == "null" for b in prop.get("anyOf", [])) or (
        isinstance(prop.get("type"), list) and "null" in prop["type"])


def _check_strict(original: dict, strict: dict) -> None:
    for path, node in _objects(strict):
        assert node.get("additionalProperties") is False, f"{path} needs \"additionalProperties\": false"
        assert sorted(node.get("required", [])) == sorted(node.get("properties", {})), (
            f"{path}: every property must be listed in required")
    for path, node in _objects(original):
        target = strict
        for part in path[2:].replace("[]", ".[]").split(".") if path != "$" else []:
            target = target["items"] if part == "[]" else target["properties"][part]
            target = next((b for b in target.get("anyOf", []) if b.get("type") != "null"), target)
        for name, prop in node.get("properties", {}).items():
            converted = target["properties"][name]
            if name in node.get("required", []):
                assert not _nullable(converted) or _nullable(prop), f"{path}.{name} is required: don't make it nullable"
            else:
                assert _nullable(converted), f"{path}.{name} was optional, so it must become nullable (anyOf with null)"
                assert "default" not in converted, f"{path}.{name}: drop the default in strict mode"


def to_strict(to_strict: Callable[[dict], dict]) -> CheckResult:
    """Exercise 1: the strict-mode transform, on a flat and a nested schema, without touching its input."""
    def test() -> str:
        for schema in (FLAT, NESTED):
            before = copy.deepcopy(schema)
            strict = solved(to_strict(schema))
            assert schema == before, "to_strict changed its input: work on a copy (copy.deepcopy)"
            assert isinstance(strict, dict) and strict.get("type") == "object", "return the new object schema"
            _check_strict(schema, strict)
        return "flat and nested schemas: objects closed, all properties required, optional ones nullable"
    return run_check(1, test, "walk the schema: for every object, set additionalProperties to False, "
                              "list all properties in required, and wrap the ones that were optional "
                              "as {'anyOf': [prop, {'type': 'null'}]}; recurse into properties and items")


def search_flights(search_flights: Any) -> CheckResult:
    """Exercise 2: a fully described tool the model can use."""
    def test() -> str:
        if not isinstance(solved(search_flights), Tool):
            raise NotSolved  # still the plain function of the stub
        schema = search_flights.json_schema
        props = schema.get("properties", {})
        assert search_flights.description, "give the tool a description (the docstring's first line)"
        assert list(props) == ["origin", "destination", "date", "max_stops"], f"parameters: {list(props)}"
        missing = [name for name, p in props.items() if not p.get("description")]
        assert not missing, f"describe every parameter in the docstring's Args: section; missing: {missing}"
        assert schema.get("required") == ["origin", "destination", "date"], f"required: {schema.get('required')}"
        assert props["max_stops"].get("default") == 1 and props["max_stops"].get("type") == "integer", (
            "max_stops: an int defaulting to 1")
        if not practice_in_use():
            return "the schema is complete"
        client, model = connect()
        message = client.chat.completions.create(
            model=model, tools=[search_flights.to_openai_tool()],
            messages=[{"role": "user", "content": "下周五从上海飞东京的航班有哪些？"}]).choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
        assert calls and calls[0][1].get("origin") == "上海" and calls[0][1].get("destination") == "东京", (
            f"the model's call was {calls}; describe origin and destination so it can tell them apart")
        return f"the model called search_flights({calls[0][1]})"
    return run_check(2, test, "@tool, annotate each parameter (str / int = 1), and document them in "
                              "an 'Args:' section of the docstring")


def book_room(book_room: Any) -> CheckResult:
    """Exercise 3: a Pydantic parameter with constraints, described and enforced."""
    def test() -> str:
        solved(book_room)
        assert isinstance(book_room, Tool), "book_room should be a tool (@tool)"
        booking = book_room.json_schema.get("properties", {}).get("booking")
        assert booking and booking.get("type") == "object", "book_room takes one parameter, booking: Booking"
        props = booking.get("properties", {})
        assert set(props) == {"guests", "room", "nights"}, f"Booking's fields: {sorted(props)}"
        assert props["guests"].get("minimum") == 1 and props["guests"].get("maximum") == 8, "guests: Field(ge=1, le=8)"
        assert sorted(props["room"].get("enum", [])) == ["double", "single", "suite"], "room: a Literal of the three"
        assert props["nights"].get("minimum") == 1, "nights: Field(ge=1)"
        missing = [name for name, p in props.items() if not p.get("description")]
        assert not missing, f"give every field a description; missing: {missing}"
        good = book_room.validate({"booking": {"guests": 2, "room": "double", "nights": "3"}})
        args, kwargs = book_room.bind(good)
        assert isinstance(book_room(*args, **kwargs), str), "book_room should return a confirmation string"
        for bad in ({"guests": 0, "room": "double", "nights": 1}, {"guests": 9, "room": "double", "nights": 1},
                    {"guests": 2, "room": "triple", "nights": 1}, {"guests": 2, "room": "suite", "nights": 0}):
            try:
                book_room.validate({"booking": bad})
            except Exception:
                continue
            raise AssertionError(f"{bad} should be refused")
        return "the schema carries the limits, and bad bookings are refused before book_room runs"
    return run_check(3, test, "class Booking(BaseModel): guests: int = Field(..., ge=1, le=8, description=...), "
                              "room: Literal['single', 'double', 'suite'] = Field(..., description=...), ...")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "walk the schema: for every object, set additionalProperties to False, list all properties in "
        "required, and wrap the ones that were optional as {'anyOf': [prop, {'type': 'null'}]}; recurse into "
        "properties and items"),
    2: (
        "@tool, annotate each parameter (str / int = 1), and document them in an 'Args:' section of the "
        "docstring"),
    3: (
        "class Booking(BaseModel): guests: int = Field(..., ge=1, le=8, description=...), room: "
        "Literal['single', 'double', 'suite'] = Field(..., description=...), ..."),
})
