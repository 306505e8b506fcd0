"""Checks for lesson 05 (unknown tools)."""
from __future__ import annotations

import json
from typing import Any, Callable

from mini_framework import Executor, Tool, connect

from .checking import CheckResult, Hints, NotSolved, practice_in_use, run_check, solved

AVAILABLE = ["get_weather", "add_numbers", "multiply"]
QUESTION = "这件衣服原价200元，打八折后多少钱？"


def unknown_tool_error(message: Callable[[str, list[str]], str]) -> CheckResult:
    """Exercise 1: names the tool, lists the real ones, suggests the closest only when it is close."""
    def test() -> str:
        near = solved(message("get_current_weather", list(AVAILABLE)))
        assert isinstance(near, str), f"return the message (a str), not {type(near).__name__}"
        assert "get_current_weather" in near, "say which tool is unknown"
        for name in AVAILABLE:
            assert name in near, f"list every available tool; {name!r} is missing"
        assert "get_weather" in near.replace("get_current_weather", ""), "suggest get_weather for get_current_weather"
        far = message("calculate_discount", list(AVAILABLE))
        for name in AVAILABLE:
            assert name in far, f"list every available tool; {name!r} is missing"
        assert "mean" not in far.lower(), "no 'did you mean' when nothing is close (calculate_discount)"
        if not practice_in_use():
            return "near and far misses answered"
        client, model = connect("practice-hallucinate")
        numbers = {"a": {"type": "number"}, "b": {"type": "number"}}
        tools = [{"type": "function", "function": {"name": n, "description": d, "parameters": {
            "type": "object", "properties": numbers, "required": ["a", "b"]}}}
            for n, d in (("add_numbers", "计算两个数字相加的结果"), ("multiply", "计算两个数字相乘的结果"))]
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        first = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        call = first.tool_calls[0]
        messages += [first, {"role": "tool", "tool_call_id": call.id,
                             "content": message(call.function.name, ["add_numbers", "multiply"])}]
        second = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        names = [c.function.name for c in second.tool_calls or []]
        assert names == ["multiply"], f"after your message the model called {names or 'nothing'}"
        return f"after {call.function.name} failed, your message led the model to multiply"
    return run_check(1, test, "f\"Unknown tool {name!r}. Available tools: {', '.join(available)}.\" plus "
                              "difflib.get_close_matches(name, available, n=1, cutoff=0.6) for the suggestion")


def calculate_discount(discount_tool: Any, tools: list[Any]) -> CheckResult:
    """Exercise 2: the tool the model wanted, used straight away, with the right answer."""
    def test() -> str:
        if not isinstance(solved(discount_tool), Tool):
            raise NotSolved
        assert discount_tool.name == "calculate_discount", f"name it calculate_discount, not {discount_tool.name!r}"
        params = discount_tool.json_schema.get("properties", {})
        assert set(params) == {"price", "discount"}, f"parameters price and discount, not {sorted(params)}"
        missing = [p for p, schema in params.items() if not schema.get("description")]
        assert not missing, f"describe every parameter; missing: {missing}"
        args, kwargs = discount_tool.bind(discount_tool.validate({"price": 200, "discount": 0.8}))
        assert abs(float(discount_tool(*args, **kwargs)) - 160) < 1e-9, "200 at 八折 (0.8) should cost 160"
        if not practice_in_use():
            return "a described calculate_discount that computes 160"
        client, model = connect("practice")
        all_tools = [*tools, discount_tool]
        executor = Executor(all_tools)
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        called = []
        for _ in range(4):
            message = client.chat.completions.create(
                model=model, messages=messages, tools=Tool.serialize_tools(all_tools)).choices[0].message
            messages.append(message)
            if not message.tool_calls:
                break
            called += [c.function.name for c in message.tool_calls]
            messages += [r.message for r in executor.run_sync(message.tool_calls)]
        assert called == ["calculate_discount"], \
            f"the model called {called}: describe the tool so it fits better than multiply"
        answer = messages[-1].content or ""
        assert "160" in answer, f"the answer should say 160: {answer!r}"
        return f"the model used your tool at once: {json.dumps(called)} → {answer}"
    return run_check(2, test, "@tool def calculate_discount(price: float, discount: float) -> float, with a "
                              "docstring that says 折扣/discount and an Args: section")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        'f"Unknown tool {name!r}. Available tools: {\', \'.join(available)}." plus '
        "difflib.get_close_matches(name, available, n=1, cutoff=0.6) for the suggestion"),
    2: (
        "@tool def calculate_discount(price: float, discount: float) -> float, with a docstring that says "
        "折扣/discount and an Args: section"),
})
