"""Checks for lesson 03 (tools from Python functions). Strict mode, an optional part, is checked in lesson03b."""
from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from mini_framework import connect
from mini_framework.tools import Tool

from .checking import CheckResult, Hints, NotSolved, expect_tool, practice_in_use, run_check

FLIGHT_QUESTION = "下周五从上海飞东京的航班有哪些？"  # Which flights go from Shanghai to Tokyo next Friday?
_GENERIC = re.compile(r"(?i)^\W*(?:an?|the)?\s*(?:helper|tool|function|utility|method|does stuff|todo|tbd)\W*$")


def _untouched(function: Any) -> bool:
    """The stub: a plain function with neither type hints nor a docstring (not a Tool, nothing written yet)."""
    return (callable(function) and not isinstance(function, Tool)
            and not getattr(function, "__doc__", None) and not getattr(function, "__annotations__", None))


def _says_nothing(text: str | None, name: str) -> bool:
    """A description that tells the model nothing: empty, one or two characters, the name again, or 'A helper.'."""
    words = (text or "").strip()
    return len(words) <= 2 or words.lower().replace(" ", "_") == name.lower() or bool(_GENERIC.match(words))


def search_flights(search_flights: Any) -> CheckResult:
    """Exercise 1: a fully described tool the model can use, whose parameters accept what the model sends."""
    def test() -> str:
        if _untouched(search_flights):
            raise NotSolved
        flights = expect_tool(search_flights, "search_flights")
        schema = flights.json_schema
        props = schema.get("properties", {})
        assert list(props) == ["origin", "destination", "date", "max_stops"], (
            f"search_flights takes origin, destination, date and max_stops, in that order; yours takes {list(props)}")
        assert not _says_nothing(flights.description, flights.name), (
            f"the tool's description is {flights.description!r}: the model picks tools by their descriptions, so say "
            "what it does in the docstring's first line (e.g. which flights it finds)")
        vague = [name for name, p in props.items() if _says_nothing(p.get("description"), name)]
        assert not vague, (
            f"describe every parameter in the docstring's Args: section (`name: what it is, with an example`); "
            f"{vague} say nothing yet, so the model has to guess which city is which")
        required = schema.get("required", [])
        assert required == ["origin", "destination", "date"], (
            f"required is {required}: a parameter without a default is required, one with a default is not; "
            "origin, destination and date have no sensible default, max_stops has (1)")
        stops = props["max_stops"]
        assert stops.get("type") == "integer" and stops.get("default") == 1, (
            f"max_stops should be `max_stops: int = 1` (an integer, default 1); its schema is {stops}")
        for date in ("下周五", "2025-03-07"):
            try:
                flights.validate({"origin": "上海", "destination": "东京", "date": date})
            except ValidationError:
                raise AssertionError(
                    f"your tool refuses date={date!r}. A model does not know today's date, so it cannot reliably turn "
                    "下周五 (next Friday) into a calendar date; it sends the user's words. Declare `date: str`, "
                    "describe the forms you accept, and work out the day inside the tool, which knows the "
                    "calendar") from None
        if not practice_in_use():
            return "the schema is complete, and the tool accepts dates as users say them"
        client, model = connect()
        message = client.chat.completions.create(
            model=model, tools=[flights.to_openai_tool()],
            messages=[{"role": "user", "content": FLIGHT_QUESTION}]).choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
        assert calls and calls[0][1].get("origin") == "上海" and calls[0][1].get("destination") == "东京", (
            f"the model's call was {calls}: describe origin and destination so it can tell them apart")
        args, kwargs = flights.bind(flights.validate(calls[0][1]))
        flights(*args, **kwargs)
        return (f"the model called search_flights({json.dumps(calls[0][1], ensure_ascii=False)}), and your tool "
                "ran with those arguments")
    return run_check(1, test, "Everything this needs is in get_weather at the top of the lesson: the decorator, "
                              "the type hints, the docstring.", recipe=hint.recipes[1])


def book_room(book_room: Any) -> CheckResult:
    """Exercise 2: a Pydantic parameter with constraints, described and enforced."""
    def test() -> str:
        room = expect_tool(book_room, "book_room")
        booking = room.json_schema.get("properties", {}).get("booking")
        assert booking and booking.get("type") == "object", (
            "book_room takes one parameter, `booking: Booking`, where Booking is your Pydantic model; its fields "
            "then appear in the schema as a nested object")
        props = booking.get("properties", {})
        assert set(props) == {"guests", "room", "nights"}, (
            f"Booking's fields should be guests, room and nights, not {sorted(props)}")
        guests = props["guests"]
        assert guests.get("type") == "integer" and guests.get("minimum") == 1 and guests.get("maximum") == 8, (
            "guests: `int = Field(..., ge=1, le=8)`; the limits go into the schema as minimum/maximum, so the model "
            f"sees them and Pydantic enforces them (guests' schema is {guests})")
        assert sorted(props["room"].get("enum", [])) == ["double", "single", "suite"], (
            "room: `Literal['single', 'double', 'suite']` becomes an enum, so the model can only choose one of the "
            f"three (room's schema is {props['room']})")
        assert props["nights"].get("exclusiveMinimum") != 1, (
            "nights: gt=1 means 'more than one', so a one-night stay would be refused; at least one night is ge=1")
        assert props["nights"].get("type") == "integer" and props["nights"].get("minimum") == 1, (
            f"nights: `int = Field(..., ge=1)` (its schema is {props['nights']})")
        vague = [name for name, p in props.items() if _says_nothing(p.get("description"), name)]
        assert not vague, f"give every field a description with Field(..., description=...); {vague} have none yet"
        good = room.validate({"booking": {"guests": 2, "room": "double", "nights": "3"}})
        args, kwargs = room.bind(good)
        confirmation = room(*args, **kwargs)
        assert isinstance(confirmation, str), f"book_room should return a confirmation string, not {confirmation!r}"
        for bad in ({"guests": 0, "room": "double", "nights": 1}, {"guests": 9, "room": "double", "nights": 1},
                    {"guests": 2, "room": "triple", "nights": 1}, {"guests": 2, "room": "suite", "nights": 0}):
            try:
                room.validate({"booking": bad})
            except ValidationError:
                continue
            raise AssertionError(f"{bad} should be refused before book_room runs")
        return f"the schema carries the limits, bad bookings are refused before book_room runs: {confirmation!r:.60}"
    return run_check(2, test, "Section 4's Address and shipping_quote are the pattern to follow.",
                     recipe=hint.recipes[2])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "@tool on the line above `def search_flights(origin: str, destination: str, date: str, max_stops: "
        "int = 1)`; a docstring whose first line says what it finds (查询两个城市之间的航班), then `Args:` "
        "with one line per parameter, e.g. `origin: 出发城市，例如上海`; keep date a str and say which "
        "forms you accept (2025-03-07, 下周五)\n"
        "中文：在 def search_flights(origin: str, destination: str, date: str, max_stops: int = 1) 上一行加 "
        "@tool；docstring 第一行说明它查什么（查询两个城市之间的航班），然后在 Args: 下每个参数一行，如 "
        "origin: 出发城市，例如上海；date 保持 str，并写明接受哪些写法（2025-03-07、下周五）"),
    2: (
        "Booking subclasses BaseModel with three fields, each a Field with its limits and a description: "
        "guests an int from 1 to 8, room a Literal of the three room kinds, nights an int of at least 1. "
        "book_room, decorated with @tool, takes one Booking and returns a confirmation\n"
        "中文：Booking 继承 BaseModel：guests 是 1 到 8 的 int，room 是 Literal['single', 'double', "
        "'suite']，nights 是至少 1 的 int，每个都用 Field 写上范围和 description；再用 @tool 写 "
        "book_room(booking: Booking) -> str，返回一句确认"),
})
