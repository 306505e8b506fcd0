"""Exercise checkers of lessons 00-02: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import json

from checker_cases import boom, checker_tests, stub

from course import lesson00, lesson01, lesson02
from course.examples import FUNCTIONS, TOOLS
from mini_framework import connect

# -- lesson 00 ----------------------------------------------------------------------------------

def _create(messages, model_name=None):
    client, model = connect()
    return client.chat.completions.create(model=model_name or model, messages=messages)


def ask(question):
    return _create([{"role": "user", "content": question}]).choices[0].message.content


def tokens(question):
    return _create([{"role": "user", "content": question}]).usage.total_tokens


def chat(history, question):
    messages = [*history, {"role": "user", "content": question}]
    return [*messages, {"role": "assistant", "content": _create(messages).choices[0].message.content}]


def chat_forgetful(history, question):  # sends only the new question: the model never sees the earlier turns
    reply = _create([{"role": "user", "content": question}]).choices[0].message.content
    return [*history, {"role": "user", "content": question}, {"role": "assistant", "content": reply}]


def chat_reply_as_user(history, question):
    messages = [*history, {"role": "user", "content": question}]
    return [*messages, {"role": "user", "content": _create(messages).choices[0].message.content}]


def chat_reply_only(history, question):  # the reply's text, not the history
    return _create([*history, {"role": "user", "content": question}]).choices[0].message.content


def chat_without_question(history, question):
    messages = [*history, {"role": "user", "content": question}]
    return [*history, {"role": "assistant", "content": _create(messages).choices[0].message.content}]


# -- lesson 01 ----------------------------------------------------------------------------------

def tool_message(call, result):
    return {"role": "tool", "tool_call_id": call["id"], "content": result}


def execute(call):
    name = call["function"]["name"]
    if name not in FUNCTIONS:
        return json.dumps({"error": f"Unknown tool {name}"})
    return str(FUNCTIONS[name](**json.loads(call["function"]["arguments"])))


def subtract(a, b):
    return a - b


SUBTRACT = {"type": "function", "function": {
    "name": "subtract", "description": "计算两个数字相减的结果（a 减去 b）",
    "parameters": {"type": "object", "properties": {"a": {"type": "number", "description": "被减数"},
                                                      "b": {"type": "number", "description": "减数"}},
                   "required": ["a", "b"]}}}


def run_conversation(question, tools=TOOLS, functions=FUNCTIONS):
    client, model = connect()
    messages = [{"role": "user", "content": question}]
    for _ in range(3):
        message = client.chat.completions.create(model=model, messages=messages, tools=tools).choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message)
        for call in message.tool_calls:
            result = functions[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(result)})
    return ""


# -- lesson 02 ----------------------------------------------------------------------------------

def answer_all(message):
    return [{"role": "tool", "tool_call_id": c.id,
             "content": execute({"function": {"name": c.function.name, "arguments": c.function.arguments}})}
            for c in message.tool_calls]


def round_trips(question, parallel):
    client, model = connect()
    messages = [{"role": "user", "content": question}]
    for n in range(1, 11):
        message = client.chat.completions.create(model=model, messages=messages, tools=TOOLS,
                                                 parallel_tool_calls=parallel).choices[0].message
        if not message.tool_calls:
            return n
        messages += [message, *answer_all(message)]
    return 10


CASES = {
    "ask": (lesson00.ask, [ask], [stub], [
        [lambda q: ask(q).upper()],                                   # not the model's text
        [lambda q: _create([{"role": "user", "content": q}])],        # the whole response
        [lambda q: _create([{"role": "user", "content": q}]).choices[0].message],  # the message object
        [lambda q: ""],
    ]),
    "tokens_used": (lesson00.tokens_used, [tokens], [stub], [
        [lambda q: _create([{"role": "user", "content": q}]).usage.prompt_tokens],
        [lambda q: _create([{"role": "user", "content": q}]).usage.completion_tokens],
        [lambda q: _create([{"role": "user", "content": q}]).usage],  # the usage object, not a number
        [lambda q: len(q)],                                           # characters are not tokens
        [lambda q: 0],
    ]),
    "chat": (lesson00.chat, [chat], [stub], [
        [chat_forgetful],
        [chat_reply_as_user],
        [chat_reply_only],
        [chat_without_question],
        [lambda history, question: chat(history, question)[-2:]],    # drops the earlier turns
    ]),
    "tool_message": (lesson01.tool_message, [tool_message], [stub], [
        [lambda call, result: {"role": "assistant", "tool_call_id": call["id"], "content": result}],
        [lambda call, result: {"role": "tool", "tool_call_id": "call_123", "content": result}],
        [lambda call, result: {"role": "tool", "tool_call_id": call["id"], "content": json.loads(result)}],
        [lambda call, result: {"role": "tool", "tool_call_id": call["id"], "name": "get_weather", "content": result}],
    ]),
    "execute_tool_call": (lesson01.execute_tool_call, [execute], [stub], [
        [lambda call: str(FUNCTIONS[call["function"]["name"]](**json.loads(call["function"]["arguments"])))],  # unknown raises
        [lambda call: "ok"],
        [boom],
    ]),
    "subtract_tool": (lesson01.subtract_tool, [subtract, SUBTRACT, run_conversation], [stub, None, run_conversation], [
        [lambda a, b: b - a, SUBTRACT, run_conversation],
        [subtract, {**SUBTRACT, "function": {**SUBTRACT["function"], "parameters": {"type": "object", "properties": {}}}}, run_conversation],
        [subtract, {"type": "function", "function": {**SUBTRACT["function"], "description": ""}}, run_conversation],
    ]),
    "answer_tool_calls": (lesson02.answer_tool_calls, [answer_all], [stub], [
        [lambda m: answer_all(m)[::-1]],                              # wrong order
        [lambda m: answer_all(m)[:1]],                                # only the first call
        [lambda m: [{**a, "tool_call_id": "call_1"} for a in answer_all(m)]],
    ]),
    "force_tool": (lesson02.force_tool, [lambda name: {"type": "function", "function": {"name": name}}], [stub], [
        [lambda name: "required"],
        [lambda name: {"type": "function", "name": name}],
    ]),
    "round_trips": (lesson02.round_trips, [round_trips], [stub], [
        [lambda q, parallel: 2],
        [lambda q, parallel: round_trips(q, not parallel)],
    ]),
}


test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)
