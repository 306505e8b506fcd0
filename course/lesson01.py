"""Checks for lesson 01 (a raw REST tool call)."""
from __future__ import annotations

import json
import re
from typing import Any, Callable

import openai

from mini_framework import connect

from .checking import CheckResult, Hints, expect_json_object, expect_text, practice_in_use, run_check, solved
from .examples import FUNCTIONS, TOOLS, WEATHER

CALL = {"id": "call_check0001", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}

# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "a str stays as it is; anything else becomes JSON text with json.dumps (ensure_ascii=False keeps "
        "Chinese readable); the message is a dict with role 'tool', the call's id as tool_call_id and that "
        "text as content\n"
        "中文：result 是字符串就原样用，否则用 json.dumps(result, ensure_ascii=False) 转成文本；返回 role "
        "为 tool、带 tool_call['id'] 作为 tool_call_id、content 为这段文本的字典"),
    2: (
        "check the name first: if it is not in FUNCTIONS, return a JSON error that names it and lists the "
        "names FUNCTIONS has; then parse the arguments, and if json.loads raises JSONDecodeError, return a "
        "JSON error saying they are not valid JSON; only then call the function, and make its result text\n"
        "中文：先取工具名：不在 FUNCTIONS 里就返回一段 JSON 错误，点名它并列出 FUNCTIONS 里有的工具；再用 "
        "json.loads 解析 arguments，捕获 json.JSONDecodeError 并返回说明“参数不是合法 JSON”的 JSON "
        "错误；最后调用函数，结果不是字符串就转成 JSON 文本"),
    3: (
        "subtract returns a minus b. SUBTRACT_TOOL has the shape of the entries in tools: type 'function', "
        "and a function with a name, a description of what it computes (e.g. 净增 = 新增 - 流失, *net gain "
        "= gained - lost*) and parameters: an object with two numbers, a and b, each described, both "
        "required\n"
        "中文：subtract 返回 a - b；SUBTRACT_TOOL 照 tools 里条目的格式写：type 为 function，function 里有 "
        "name、说明它算什么的 description（如“a 减去 b 的差，如净增 = 新增 - 流失”）、parameters（a、b 两个 "
        "number 参数，各有描述，都在 required 里）"),
})


# ----------------------------------------------------------------------------- exercise 1

def _content(tool_message: Callable[[dict, Any], dict], result: Any) -> str:
    """The content of the learner's message for `result`, after checking the message's shape."""
    message = tool_message(CALL, result)
    solved(message)
    assert isinstance(message, dict), f"tool_message() should return a dict (a message), not {type(message).__name__}"
    assert message.get("role") == "tool", (
        f"role should be 'tool', not {message.get('role')!r}: a result goes back in a tool message")
    assert message.get("tool_call_id") == CALL["id"], (
        f"tool_call_id should be the id of the call it answers, {CALL['id']!r}, not {message.get('tool_call_id')!r}: "
        f"the API pairs each result with its call by that id")
    extra = set(message) - {"role", "tool_call_id", "content"}
    assert not extra, f"unexpected keys {sorted(extra)}: a tool message has role, tool_call_id and content"
    return expect_text(message.get("content"), f"for a {type(result).__name__} result, content")


def tool_message(tool_message: Callable[[dict, Any], dict]) -> CheckResult:
    """Exercise 1: the `role: "tool"` message answering a call, its content always text; accepted by the API."""
    def test() -> str:
        text = json.dumps(WEATHER["上海"], ensure_ascii=False)
        content = _content(tool_message, text)
        assert content == text, (
            f"a string result should stay as it is; content is {content!r:.60}. A string is already text: "
            f"json.dumps would wrap it in quotes a second time" if content.startswith('"') else
            f"a string result should stay as it is; content is {content!r:.60}")
        weather = dict(WEATHER["上海"])
        content = _content(tool_message, weather)
        if content == str(weather):
            raise AssertionError(f"for a dict, content is {content!r:.50}: str() writes Python's notation (single "
                                 f"quotes), which is not JSON. json.dumps writes JSON text")
        parsed = expect_json_object(content, "for a dict result, content")
        assert parsed == weather, f"for a dict result, content should be that dict as JSON text, not {content!r:.60}"
        assert "\\u" not in content, (
            f"content is {content!r:.50}: the Chinese came out as \\u escapes. Pass ensure_ascii=False to "
            f"json.dumps so it stays readable (and shorter, which means fewer tokens)")
        content = _content(tool_message, 42.5)
        assert content.strip() == "42.5", f"for the number 42.5, content should be '42.5', not {content!r}"
        client, model = connect()  # the API must accept it right after the assistant's request
        client.chat.completions.create(model=model, tools=TOOLS, messages=[
            {"role": "user", "content": "上海天气如何？"},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            tool_message(CALL, text),
        ])
        return "strings kept, a dict and a number as JSON text; the API accepted your message as the answer"
    return run_check(1, test, "Start from the tool message of section 5, then make sure `content` is always text.",
                     recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def execute_tool_call(execute_tool_call: Callable[[dict], str]) -> CheckResult:
    """Exercise 2: dispatch by name; unknown names and broken arguments become JSON errors, never exceptions."""
    def test() -> str:
        weather = expect_text(solved(execute_tool_call(CALL)), "the result of get_weather(city='上海')")
        expected = json.dumps(WEATHER["上海"], ensure_ascii=False)
        assert weather == expected, f"get_weather(city='上海') gives {expected}, but you returned {weather!r:.80}"
        total = expect_text(execute_tool_call(_call("call_check0002", "add_numbers", '{"a": 2, "b": 40}')),
                            "the result of add_numbers(a=2, b=40)")
        assert total.strip() in ("42", "42.0"), f"add_numbers(a=2, b=40) should give '42', not {total!r}"

        unknown = execute_tool_call(_call("call_check0003", "calculate_discount", '{"price": 100}'))
        error = expect_json_object(unknown, "for the unknown tool calculate_discount, the result")
        text = json.dumps(error, ensure_ascii=False)
        assert "calculate_discount" in text, f"the error should name the tool that doesn't exist: {text}"
        missing = [name for name in FUNCTIONS if name not in text]
        assert not missing, (
            f"the error should also list the tools that exist ({', '.join(FUNCTIONS)}); it lacks {missing}. "
            f"A model told only 'no such tool' guesses again; told the real names, it picks one")

        broken = execute_tool_call(_call("call_check0004", "get_weather", '{"city": "上海"'))
        error = expect_json_object(broken, "for arguments cut off mid-way, the result")
        text = json.dumps(error, ensure_ascii=False).lower()
        assert any(word in text for word in ("json", "argument", "参数")), (
            f"the error should say that the arguments are not valid JSON, so the model knows what to send again: "
            f"{text:.80}")
        return "weather and sum computed; an unknown tool and broken arguments reported, no exception"
    return run_check(2, test, "Check the name before calling anything, and catch what json.loads raises on broken "
                              "text.", recipe=hint.recipes[2])


# ----------------------------------------------------------------------------- exercise 3

QUESTION = "A组本周新增客户35个，流失8个，净增多少"  # Team A gained 35 customers this week and lost 8: net gain?
NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def _check_description(tool: Any) -> dict:
    """The tool's `function` part, after checking the entry has the shape of those in `tools`."""
    assert isinstance(tool, dict), (
        f"SUBTRACT_TOOL should be a dict like the entries of `tools`, not {type(tool).__name__}")
    assert tool.get("type") == "function", 'SUBTRACT_TOOL needs "type": "function" beside "function": {...}'
    function = tool.get("function")
    assert isinstance(function, dict), 'SUBTRACT_TOOL needs a "function": {"name": ..., "description": ..., ...}'
    name = function.get("name")
    assert isinstance(name, str) and NAME.fullmatch(name), (
        f"the name {name!r} won't do: the API accepts 1 to 64 letters, digits, _ or -, as in a Python name")
    assert isinstance(function.get("description"), str) and function["description"].strip(), (
        "give the function a description: it is what the model reads to decide when to use the tool")
    schema = function.get("parameters")
    assert isinstance(schema, dict) and schema.get("type") == "object", (
        'parameters should be a JSON schema of an object: {"type": "object", "properties": {...}, "required": [...]}')
    properties = schema.get("properties")
    assert isinstance(properties, dict) and set(properties) == {"a", "b"}, (
        f"parameters should describe a and b under properties, the names of subtract's parameters (they become "
        f"its keyword arguments); found {sorted(properties) if isinstance(properties, dict) else properties!r}")
    for key in ("a", "b"):
        kind = properties[key].get("type") if isinstance(properties[key], dict) else None
        assert kind in ("number", "integer"), (
            f'{key} should have "type": "number" so the model sends a number, not {kind!r}')
    required = schema.get("required")
    assert isinstance(required, list) and sorted(required) == ["a", "b"], (
        f"required should list both a and b ({'it is missing' if required is None else f'not {required!r}'}): a "
        f"parameter left out of required is optional to the model, and subtract() without it fails")
    return function


def _api_message(error: openai.APIStatusError) -> str:
    """The `message` of an API error body, whichever way the SDK hands it over."""
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(inner.get("message") or error).rstrip(".")


def subtract_tool(subtract: Callable[[float, float], float], tool: Any,
                  ask_with_tools: Callable[..., str]) -> CheckResult:
    """Exercise 3: a hand-written tool the model actually picks, and calls with the right numbers."""
    def test() -> str:
        solved(tool)
        difference = solved(subtract(35, 8))
        assert difference == 27, (
            f"subtract(35, 8) should be 35 - 8 = 27, got {difference!r}" + (
                ": a and b are the other way round" if difference == -27 else ""))
        function = _check_description(tool)
        client, model = connect()
        try:  # the API checks tools before a model sees them: say so here, not as an error inside ask_with_tools
            client.chat.completions.create(model=model, tools=[*TOOLS, tool],
                                           messages=[{"role": "user", "content": QUESTION}])
        except openai.BadRequestError as error:
            raise AssertionError(f"the API refused SUBTRACT_TOOL: {_api_message(error)}") from None
        calls: list[tuple] = []

        def recording_subtract(**arguments: Any) -> float:
            calls.append((arguments.get("a"), arguments.get("b")))
            return subtract(**arguments)

        functions = {**FUNCTIONS, function["name"]: recording_subtract}
        answer = ask_with_tools(QUESTION, tools=[*TOOLS, tool], functions=functions) or ""
        if practice_in_use():
            assert calls, (
                f"the model did not call {function['name']}: nothing in its description matched the question "
                f"({function['description']!r:.60}). A model picks a tool by its description: say what it computes, "
                f"in words a user would use (差, 减去, 净增, difference, subtract)")
            assert calls == [(35, 8)], (
                f"the model called {function['name']} with (a, b) = {calls[0]}, not (35, 8): describe each parameter "
                f"so the model knows which number goes where (a: the number to subtract from, b: the one taken away)")
        assert "27" in answer, f"the answer should contain 27: {answer!r}"
        return f"the model called {function['name']}{calls[0] if calls else ''} and answered: {answer}"
    return run_check(3, test, "Copy the add_numbers entry of `tools` and change what must change; the description "
                              "is what the model reads to pick a tool.", recipe=hint.recipes[3])
