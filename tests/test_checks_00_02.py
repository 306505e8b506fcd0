"""Exercise checkers of lessons 00-02: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import ast
import json
from pathlib import Path

from checker_cases import boom, checker_tests, stub

from course import examples, lesson00, lesson01, lesson02
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
    content = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call["id"], "content": content}


def _with_content(content):
    return lambda call, result: {"role": "tool", "tool_call_id": call["id"], "content": content(result)}


def execute(call):
    name = call["function"]["name"]
    if name not in FUNCTIONS:
        return json.dumps({"error": f"no tool named {name}", "available_tools": list(FUNCTIONS)})
    try:
        arguments = json.loads(call["function"]["arguments"])
    except json.JSONDecodeError as error:
        return json.dumps({"error": f"the arguments are not valid JSON: {error}"})
    result = FUNCTIONS[name](**arguments)
    return result if isinstance(result, str) else json.dumps(result)


def execute_unguarded(call):  # the happy path only
    return str(FUNCTIONS[call["function"]["name"]](**json.loads(call["function"]["arguments"])))


def execute_no_json_guard(call):  # unknown names handled, broken arguments raise
    name = call["function"]["name"]
    if name not in FUNCTIONS:
        return json.dumps({"error": f"no tool named {name}", "available_tools": list(FUNCTIONS)})
    return str(FUNCTIONS[name](**json.loads(call["function"]["arguments"])))


def execute_unhelpful(call):  # the error names the tool but not the ones that exist
    if call["function"]["name"] not in FUNCTIONS:
        return json.dumps({"error": f"Unknown tool {call['function']['name']}"})
    return execute(call)


def execute_plain_text_errors(call):
    if call["function"]["name"] not in FUNCTIONS:
        return f"Unknown tool {call['function']['name']}; try one of {', '.join(FUNCTIONS)}"
    return execute(call)


def execute_dicts(call):  # returns Python objects instead of text
    return json.loads(execute(call)) if call["function"]["name"] != "get_weather" else execute(call)


def execute_raw_result(call):  # add_numbers' number returned as a number
    if call["function"]["name"] == "add_numbers":
        return FUNCTIONS["add_numbers"](**json.loads(call["function"]["arguments"]))
    return execute(call)


def subtract(a, b):
    return a - b


def tool_entry(description="求两个数的差 a - b，比如净增 = 新增 - 流失", name="subtract",
               a="被减的数，如新增数", b="要减去的数，如流失数", kind="number", required=("a", "b")):
    schema = {"type": "object", "properties": {"a": {"type": kind, "description": a},
                                               "b": {"type": kind, "description": b}}}
    if required is not None:
        schema["required"] = list(required)
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


SUBTRACT = tool_entry()


def ask_with_tools(question, tools=TOOLS, functions=FUNCTIONS):
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
# The checks of exercises 2 and 3 watch the `client` of the module the learner's function lives in (here, this one).

client, model = connect()


def answer_all(message):
    return [{"role": "tool", "tool_call_id": c.id,
             "content": execute({"function": {"name": c.function.name, "arguments": c.function.arguments}})}
            for c in message.tool_calls]


def answer_raw(message):  # contents not turned into text
    return [{"role": "tool", "tool_call_id": c.id, "content": FUNCTIONS[c.function.name](**json.loads(c.function.arguments))
             if c.function.name in FUNCTIONS else {"error": c.function.name}} for c in message.tool_calls]


def answer_unguarded(message):
    return [{"role": "tool", "tool_call_id": c.id, "content": str(FUNCTIONS[c.function.name](**json.loads(c.function.arguments)))}
            for c in message.tool_calls]


def answer_known_only(message):  # skips the call it can't run
    return [a for a, c in zip(answer_all(message), message.tool_calls) if c.function.name in FUNCTIONS]


def answer_vague_error(message):
    return [{**a, "content": json.dumps({"error": "unknown tool"})} if c.function.name not in FUNCTIONS else a
            for a, c in zip(answer_all(message), message.tool_calls)]


FORCED = {"type": "function", "function": {"name": "route_ticket"}}


def routing(tools=None, tool_choice=FORCED, pick=lambda arguments: arguments["team"]):
    """A route() that sends `tools` (default: all of them) with `tool_choice`, and returns pick(arguments)."""
    def route(text):
        request = {"model": model, "messages": [{"role": "user", "content": text}],
                   "tools": tools if tools is not None else [*TOOLS, lesson02.ROUTE_TOOL]}
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        call = client.chat.completions.create(**request).choices[0].message.tool_calls[0]
        return pick(json.loads(call.function.arguments))
    return route


def route_without_tools(text):
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}],
                                          tool_choice=FORCED).choices[0].message.content


def counting(answer=answer_all, cap=10, returns=lambda n: n, after_cap=lambda cap: cap, tools_after_first=True):
    """A round_trips() built from parts, so that each wrong answer changes one thing."""
    def round_trips(question, parallel):
        messages = [{"role": "user", "content": question}]
        n = 0
        while cap is None or n < cap:
            n += 1
            request = {"model": model, "messages": messages, "parallel_tool_calls": parallel}
            if n == 1 or tools_after_first:
                request["tools"] = TOOLS
            message = client.chat.completions.create(**request).choices[0].message
            if not message.tool_calls:
                return returns(n)
            messages += [message, *answer(message)]
        return after_cap(cap)
    return round_trips


round_trips = counting()


CASES = {
    "ask": (lesson00.ask, [ask], [stub], [
        [lambda q: ask(q).upper()],                                   # not the model's text
        [lambda q: _create([{"role": "user", "content": q}])],        # the whole response
        [lambda q: _create([{"role": "user", "content": q}]).choices[0].message],  # the message object
        [lambda q: ""],
        [lambda q: ask("你好！")],                                    # always sends the same question
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
        [lambda call, result: {**tool_message(call, result), "role": "assistant"}],
        [lambda call, result: {**tool_message(call, result), "tool_call_id": "call_123"}],
        [lambda call, result: {**tool_message(call, result), "name": "get_weather"}],
        [_with_content(lambda result: result)],                                   # a dict stays a dict
        [_with_content(str)],                                                     # Python's notation, not JSON
        [_with_content(lambda result: json.dumps(result, ensure_ascii=False))],   # a string encoded twice
        [_with_content(lambda result: result if isinstance(result, str) else json.dumps(result))],  # \u escapes
        [_with_content(lambda result: json.dumps(result, ensure_ascii=False) if isinstance(result, dict) else result)],
    ]),
    "execute_tool_call": (lesson01.execute_tool_call, [execute], [stub], [
        [execute_unguarded],
        [execute_no_json_guard],
        [execute_unhelpful],
        [execute_plain_text_errors],
        [execute_dicts],
        [execute_raw_result],
        [lambda call: "ok"],
        [boom],
    ]),
    "subtract_tool": (lesson01.subtract_tool, [subtract, SUBTRACT, ask_with_tools], [stub, None, ask_with_tools], [
        [lambda a, b: b - a, SUBTRACT, ask_with_tools],
        [subtract, {**SUBTRACT, "function": {**SUBTRACT["function"], "parameters": {"type": "object", "properties": {}}}},
         ask_with_tools],
        [subtract, tool_entry(description=""), ask_with_tools],
        [subtract, tool_entry(required=None), ask_with_tools],                    # nothing required
        [subtract, tool_entry(name="subtract numbers"), ask_with_tools],          # the API refuses the name
        [subtract, tool_entry(kind="string"), ask_with_tools],
        [subtract, SUBTRACT["function"], ask_with_tools],                         # the inner part only
        [subtract, tool_entry(description="Converts temperatures between Celsius and Fahrenheit", a="", b=""),
         ask_with_tools],                                                         # never picked for the question
    ]),
    "answer_tool_calls": (lesson02.answer_tool_calls, [answer_all], [stub], [
        [lambda m: answer_all(m)[::-1]],                              # wrong order
        [lambda m: answer_all(m)[:1]],                                # only the first call
        [lambda m: [{**a, "tool_call_id": "call_1"} for a in answer_all(m)]],
        [answer_raw],                                                 # a number as content
        [answer_unguarded],                                           # the unknown tool raises
        [answer_known_only],
        [answer_vague_error],
        [lambda m: answer_all(m)[-1]],                                # one message, not a list
    ]),
    "route": (lesson02.route, [routing()], [stub], [
        [routing(tool_choice="required")],
        [routing(tool_choice="auto", pick=lambda arguments: arguments.get("team"))],
        [routing(tool_choice=None, pick=lambda arguments: arguments.get("team"))],
        [routing(tools=[lesson02.ROUTE_TOOL], tool_choice="required")],   # only the router on offer
        [routing(pick=lambda arguments: arguments)],                       # all the arguments
        [routing(pick=lambda arguments: json.dumps(arguments))],
        [routing(pick=lambda arguments: "route_ticket")],
        [routing(tool_choice={"type": "function", "name": "route_ticket"})],  # the Responses API's form
        [route_without_tools],
    ]),
    "round_trips": (lesson02.round_trips, [round_trips, answer_all], [stub, stub], [
        [lambda q, parallel: 2, answer_all],
        [lambda q, parallel: round_trips(q, not parallel), answer_all],
        [counting(cap=None), answer_all],                             # no cap: runs as long as the model wants
        [counting(after_cap=lambda cap: None), answer_all],           # capped, but returns nothing then
        [counting(returns=lambda n: n - 1), answer_all],              # the last request not counted
        [counting(cap=5), answer_all],
        [counting(tools_after_first=False), answer_all],
        [counting(answer=lambda m: answer_all(m)[:1]), lambda m: answer_all(m)[:1]],  # Exercise 1 wrong
        [counting(answer=stub), stub],                                # Exercise 1 not solved
    ]),
}


test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_lesson_01_writes_out_what_course_examples_ships():
    """Lesson 01 types WEATHER and `tools` by hand; later lessons import them from course.examples (its functions
    are pinned by same-as tags, see tests/test_same_code.py)."""
    notebook = Path(__file__).resolve().parent.parent / "solutions" / "01_raw_rest_tool_call.ipynb"
    written = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        for node in ast.parse("".join(cell["source"])).body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id in ("WEATHER", "tools"):
                    written[node.targets[0].id] = ast.literal_eval(node.value)
    assert written == {"WEATHER": examples.WEATHER, "tools": examples.TOOLS}


def test_a_wrong_exercise_1_is_named_as_the_cause_of_exercise_3_failing():
    only_first = lambda m: answer_all(m)[:1]  # noqa: E731
    for answer in (only_first, stub):
        result = lesson02.round_trips(counting(answer=answer), answer)
        assert result.status == "wrong" and "Exercise 1" in result.message, result.message


def test_lesson_02_shows_the_route_tool_the_check_uses():
    notebook = Path(__file__).resolve().parent.parent / "solutions" / "02_openai_sdk.ipynb"
    shown = [ast.literal_eval(node.value) for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]
             if cell["cell_type"] == "code" for node in ast.parse("".join(cell["source"])).body
             if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "ROUTE_TOOL"]
    assert shown == [lesson02.ROUTE_TOOL]
