"""Checks for lesson 02 (the OpenAI SDK, several calls, tool_choice, parallel_tool_calls)."""
from __future__ import annotations

import json
from typing import Any, Callable

from openai.types.chat import ChatCompletionMessage

from mini_framework import connect

from .checking import CheckResult, Hints, practice_in_use, run_check, solved
from .examples import WEATHER


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


def answer_tool_calls(answer_tool_calls: Callable[[Any], list]) -> CheckResult:
    """Exercise 1: every call answered, in order, with its own id; unknown names don't raise."""
    def test() -> str:
        message = ChatCompletionMessage(role="assistant", content=None, tool_calls=[
            _call("call_A", "get_weather", {"city": "广州"}),
            _call("call_B", "add_numbers", {"a": 1.5, "b": 2}),
            _call("call_C", "calculate_discount", {"price": 100}),
        ])
        answers = solved(answer_tool_calls(message))
        assert isinstance(answers, list), f"return a list of messages, not {type(answers).__name__}"
        ids = [a.get("tool_call_id") for a in answers]
        assert ids == ["call_A", "call_B", "call_C"], \
            f"expected one answer per call in order (call_A, call_B, call_C), got {ids}"
        assert all(a.get("role") == "tool" for a in answers), 'every answer needs role "tool"'
        assert answers[0]["content"] == json.dumps(WEATHER["广州"], ensure_ascii=False), "call_A is get_weather(广州)"
        assert float(answers[1]["content"]) == 3.5, "call_B is add_numbers(1.5, 2) = 3.5"
        assert "calculate_discount" in answers[2]["content"], "call_C's error should name the unknown tool"
        return "three calls, three answers, ids in order, the unknown tool reported"
    return run_check(1, test, "loop over message.tool_calls; each answer is "
                              "{'role': 'tool', 'tool_call_id': call.id, 'content': ...}")


CLASSIFY_TOOL = {
    "type": "function",
    "function": {
        "name": "classify_intent",
        "description": "Classify what the user wants",
        "parameters": {
            "type": "object",
            "properties": {
                "intent": {"type": "string", "enum": ["weather", "math", "chitchat"]},
                "text": {"type": "string", "description": "the user's message"},
            },
            "required": ["intent", "text"],
        },
    },
}


def force_tool(force_tool: Callable[[str], Any]) -> CheckResult:
    """Exercise 2: a tool_choice value naming one function, and the model obeys it."""
    def test() -> str:
        choice = solved(force_tool("classify_intent"))
        expected = {"type": "function", "function": {"name": "classify_intent"}}
        assert choice == expected, f"expected {expected}, got {choice!r}"
        client, model = connect()
        response = client.chat.completions.create(
            model=model, tools=[CLASSIFY_TOOL], tool_choice=choice,
            messages=[{"role": "user", "content": "Tell me a joke"}])
        calls = response.choices[0].message.tool_calls or []
        assert [c.function.name for c in calls] == ["classify_intent"], "the model should have called classify_intent"
        return f"even for 'Tell me a joke' the model called classify_intent({calls[0].function.arguments})"
    return run_check(2, test, 'the named form is {"type": "function", "function": {"name": ...}}')


QUESTION = "What's the weather in Paris, Tokyo and London?"


def round_trips(round_trips: Callable[[str, bool], int]) -> CheckResult:
    """Exercise 3: count requests until a text answer, with and without parallel calls."""
    def test() -> str:
        parallel = solved(round_trips(QUESTION, True))
        one_by_one = solved(round_trips(QUESTION, False))
        assert isinstance(parallel, int) and isinstance(one_by_one, int), "return the number of requests (an int)"
        if practice_in_use():
            assert parallel == 2, f"with parallel calls: 1 request with 3 calls + 1 for the answer = 2, got {parallel}"
            assert one_by_one == 4, f"one call per reply: 3 requests + 1 for the answer = 4, got {one_by_one}"
        assert 1 <= parallel <= one_by_one, f"parallel calls can't need more requests ({parallel} vs {one_by_one})"
        return f"three cities: {parallel} requests with parallel calls, {one_by_one} without"
    return run_check(3, test, "loop: create(..., tools=TOOLS, parallel_tool_calls=parallel); return the count "
                              "when the reply has no tool_calls; otherwise append the message and its answers")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "loop over message.tool_calls; each answer is {'role': 'tool', 'tool_call_id': call.id, 'content': "
        "...}"),
    2: 'the named form is {"type": "function", "function": {"name": ...}}',
    3: (
        "loop: create(..., tools=TOOLS, parallel_tool_calls=parallel); return the count when the reply has no"
        " tool_calls; otherwise append the message and its answers"),
})
