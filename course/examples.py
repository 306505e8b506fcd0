"""The example tools every lesson may use: a weather lookup and an adder, with their JSON schemas.

Lesson 01 writes this code out by hand (tests/test_checks_00_02.py keeps the two the same);
later lessons import it from here, so that each notebook runs on its own.

    >>> get_weather("上海")
    '{"temperature": 25, "condition": "多云", "wind": "东南风2级"}'
    >>> add_numbers(2, 40)
    42
    >>> [tool["function"]["name"] for tool in TOOLS]
    ['get_weather', 'add_numbers']
"""
from __future__ import annotations

import json
from typing import Any

# A fixed table stands in for a weather service, so every run gives the same answers.
# Temperatures in °C; condition and wind in the city's language.
WEATHER: dict[str, dict[str, Any]] = {
    "北京": {"temperature": 22, "condition": "晴", "wind": "东北风3级"},
    "上海": {"temperature": 25, "condition": "多云", "wind": "东南风2级"},
    "广州": {"temperature": 28, "condition": "小雨", "wind": "南风4级"},
    "Paris": {"temperature": 18, "condition": "cloudy", "wind": "W 10 km/h"},
    "Tokyo": {"temperature": 21, "condition": "sunny", "wind": "S 8 km/h"},
    "London": {"temperature": 14, "condition": "light rain", "wind": "SW 15 km/h"},
}


def get_weather(city: str) -> str:
    """The weather in `city` right now, as JSON text (looked up in WEATHER, not on the internet)."""
    if city not in WEATHER:
        return json.dumps({"error": f"没有{city}的天气数据", "known_cities": list(WEATHER)}, ensure_ascii=False)
    return json.dumps(WEATHER[city], ensure_ascii=False)


def add_numbers(a: float, b: float) -> float:
    """Return a + b."""
    return a + b


# What the model sees of each function: a name, a description, and a JSON schema of its parameters.
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "查一个城市现在的天气：气温（摄氏度）、晴雨和风",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "城市名，如 北京、上海 或 Paris"}},
            "required": ["city"],
        },
    },
}

ADD_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "add_numbers",
        "description": "把两个数相加，返回它们的和",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "第一个数"},
                "b": {"type": "number", "description": "第二个数"},
            },
            "required": ["a", "b"],
        },
    },
}

TOOLS: list[dict[str, Any]] = [WEATHER_TOOL, ADD_TOOL]
FUNCTIONS = {"get_weather": get_weather, "add_numbers": add_numbers}


def insist_on_a_call(client: Any, message: Any, name: str, **request: Any) -> Any:
    """`message` (an SDK reply message) if it calls a tool. A small real model may answer in words instead: then
    say what it said, and ask again (`request`: the same create() keywords) with `tool_choice` naming the tool
    `name`, which makes any model that supports `tool_choice` call it. Lesson 01 shows the same by hand.

    >>> from types import SimpleNamespace
    >>> insist_on_a_call(None, SimpleNamespace(tool_calls=[1]), "get_weather").tool_calls
    [1]
    """
    if message.tool_calls:
        return message
    print(f"no tool call; the model said {message.content!r:.80}. Asking again with tool_choice naming {name}:")
    force = {"type": "function", "function": {"name": name}}
    return client.chat.completions.create(**request, tool_choice=force).choices[0].message
