"""The example tools the lessons share (from the seed article, §3.2–3.3), so every notebook runs alone.

Lesson 01 writes these out in full; later lessons import them from here to stay short.
"""
from __future__ import annotations

import json
from typing import Any

# A fixed table instead of a weather API, as in the article. The Chinese cities are the article's.
WEATHER: dict[str, dict[str, Any]] = {
    "北京": {"temperature": 22, "condition": "晴", "wind": "东北风3级"},
    "上海": {"temperature": 25, "condition": "多云", "wind": "东南风2级"},
    "广州": {"temperature": 28, "condition": "小雨", "wind": "南风4级"},
    "Paris": {"temperature": 18, "condition": "cloudy", "wind": "W 10 km/h"},
    "Tokyo": {"temperature": 21, "condition": "sunny", "wind": "S 8 km/h"},
    "London": {"temperature": 14, "condition": "light rain", "wind": "SW 15 km/h"},
}


def get_weather(city: str) -> str:
    """Current weather for a city, as a JSON string (a stand-in for a real weather API)."""
    if city in WEATHER:
        return json.dumps(WEATHER[city], ensure_ascii=False)
    return json.dumps({"error": "暂无该城市数据"}, ensure_ascii=False)


def add_numbers(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "查询指定城市当前的天气情况，包括温度、天气状况和风力",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "城市名称，例如北京、上海、广州"}},
            "required": ["city"],
        },
    },
}

ADD_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "add_numbers",
        "description": "计算两个数字相加的结果",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {"type": "number", "description": "第一个加数"},
                "b": {"type": "number", "description": "第二个加数"},
            },
            "required": ["a", "b"],
        },
    },
}

TOOLS: list[dict[str, Any]] = [WEATHER_TOOL, ADD_TOOL]
FUNCTIONS = {"get_weather": get_weather, "add_numbers": add_numbers}
