"""Checks for lesson 01 (a raw REST tool call)."""
from __future__ import annotations

import json
from typing import Any, Callable

from mini_framework import connect

from .checking import CheckResult, Hints, practice_in_use, run_check, solved
from .examples import FUNCTIONS, TOOLS, WEATHER

CALL = {"id": "call_check0001", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}


def tool_message(tool_message: Callable[[dict, str], dict]) -> CheckResult:
    """Exercise 1: the `role: "tool"` message answering a call, accepted by the API."""
    def test() -> str:
        result = json.dumps(WEATHER["上海"], ensure_ascii=False)
        message = solved(tool_message(CALL, result))
        assert isinstance(message, dict), f"expected a dict, got {type(message).__name__}"
        assert message.get("role") == "tool", f"role should be 'tool', not {message.get('role')!r}"
        assert message.get("tool_call_id") == CALL["id"], (
            f"tool_call_id should be the call's id {CALL['id']!r}, not {message.get('tool_call_id')!r}")
        assert message.get("content") == result, "content should be the result string, unchanged"
        extra = set(message) - {"role", "tool_call_id", "content"}
        assert not extra, f"unexpected keys {sorted(extra)}: a tool message has role, tool_call_id and content"
        client, model = connect()  # the API must accept it right after the assistant's request
        client.chat.completions.create(model=model, tools=TOOLS, messages=[
            {"role": "user", "content": "上海天气如何？"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            message,
        ])
        return "the API accepted your message as the answer to call_check0001"
    return run_check(1, test, "three keys: role ('tool'), tool_call_id (the call's 'id'), content (the string)")


def execute_tool_call(execute_tool_call: Callable[[dict], str]) -> CheckResult:
    """Exercise 2: dispatch by name, parse arguments, never raise on unknown names."""
    def test() -> str:
        weather = solved(execute_tool_call(CALL))
        assert weather == json.dumps(WEATHER["上海"], ensure_ascii=False), (
            f"get_weather(city='上海') should give {json.dumps(WEATHER['上海'], ensure_ascii=False)}, got {weather!r}")
        add = {"id": "call_check0002", "type": "function",
               "function": {"name": "add_numbers", "arguments": '{"a": 2, "b": 40}'}}
        total = execute_tool_call(add)
        assert isinstance(total, str), f"return a string (the tool message content), not {type(total).__name__}"
        assert float(total) == 42, f"add_numbers(a=2, b=40) should give '42', got {total!r}"
        unknown = {"id": "call_check0003", "type": "function",
                   "function": {"name": "calculate_discount", "arguments": "{}"}}
        error = execute_tool_call(unknown)
        assert isinstance(error, str), f"an unknown tool should give an error string, got {type(error).__name__}"
        parsed = json.loads(error)
        assert "calculate_discount" in json.dumps(parsed, ensure_ascii=False), "the error should name the unknown tool"
        return f"weather, addition and an unknown tool ({error}) all handled"
    return run_check(2, test, "json.loads(tool_call['function']['arguments']), then FUNCTIONS[name](**arguments); "
                              "check `name in FUNCTIONS` first and json.dumps an error otherwise")


QUESTION = "A组本周新增客户35个，流失8个，净增多少"


def subtract_tool(subtract: Callable[[float, float], float], tool: Any,
                  run_conversation: Callable[..., str]) -> CheckResult:
    """Exercise 3: a hand-written tool the model actually uses for the article's question."""
    def test() -> str:
        solved(tool)
        assert solved(subtract(35, 8)) == 27, f"subtract(35, 8) should be 27, got {subtract(35, 8)!r}"
        assert isinstance(tool, dict) and tool.get("type") == "function", 'the tool needs "type": "function"'
        function = tool.get("function") or {}
        schema = function.get("parameters") or {}
        assert function.get("name") and function.get("description"), "give the function a name and a description"
        assert schema.get("type") == "object" and set(schema.get("properties", {})) == {"a", "b"}, (
            'parameters should be {"type": "object", "properties": {"a": ..., "b": ...}}')
        assert sorted(schema.get("required", [])) == ["a", "b"], "both a and b should be required"
        calls: list[tuple] = []

        def recording_subtract(**arguments: Any) -> float:
            calls.append((arguments.get("a"), arguments.get("b")))
            return subtract(**arguments)

        functions = {**FUNCTIONS, function["name"]: recording_subtract}
        answer = run_conversation(QUESTION, tools=[*TOOLS, tool], functions=functions) or ""
        if practice_in_use():
            assert calls == [(35, 8)], f"the model should call your tool once with a=35, b=8; calls: {calls}"
        assert "27" in answer, f"the answer should contain 27: {answer!r}"
        return f"the model called {function['name']}{calls[0] if calls else ''} and answered: {answer}"
    return run_check(3, test, "copy the add_numbers entry of `tools` and adapt name, description and the "
                              "parameter descriptions; the description is how the model picks the tool")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: "three keys: role ('tool'), tool_call_id (the call's 'id'), content (the string)",
    2: (
        "json.loads(tool_call['function']['arguments']), then FUNCTIONS[name](**arguments); check `name in "
        "FUNCTIONS` first and json.dumps an error otherwise"),
    3: (
        "copy the add_numbers entry of `tools` and adapt name, description and the parameter descriptions; "
        "the description is how the model picks the tool"),
})
