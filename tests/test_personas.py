"""The misbehaving personas: practice-sloppy, -hallucinate, -loop and -flaky.

Each persona is tested twice: through its function with realistic request bodies (exact calls and
texts, round by round), and end to end through a running practice server with the official
`openai` SDK, where every response is also fetched raw (JSON and stream) and validated against
OpenAI's spec.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from openai import OpenAI, RateLimitError

from mini_framework.numerals import parse_number
from practice_model import DEFAULT_PERSONAS, PracticeServer
from practice_model.language import read
from practice_model.pitfalls import hallucinate, loop, sloppy
from practice_model.planner import plan
from practice_model.reply import Reply

# -----------------------------------------------------------------------------
# request builders (as in test_planner.py)


def fn(name: str, description: str, properties: dict, required: list[str] | None = None) -> dict:
    """A function tool; every property is required unless `required` says otherwise."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": list(properties) if required is None else required}}}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def called(calls: list[tuple[str, str]], prefix: str) -> dict:
    """An assistant message carrying tool calls whose arguments are given as raw text."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"{prefix}_{i}", "type": "function", "function": {"name": name, "arguments": text}}
        for i, (name, text) in enumerate(calls)]}


def tool_message(content: Any, call_id: str) -> dict:
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def body(messages: list[dict], tools: list[dict], model: str = "practice", **extra: Any) -> dict:
    return {"model": model, "messages": messages, "tools": tools, **extra}


def raw_calls(reply: Reply) -> list[tuple[str, str]]:
    return [(c.name, c.arguments) for c in reply.tool_calls]


def drive(persona: Callable[[dict], Reply], question: str, tools: list[dict], run_tool: Callable[[str, str], Any],
          max_rounds: int = 10, **extra: Any) -> tuple[list[list[tuple[str, str]]], str]:
    """Ask, answer every call with `run_tool(name, arguments_text)`, feed it back, until a text answer."""
    messages, rounds = [user(question)], []
    for number in range(max_rounds):
        reply = persona(body(messages, tools, **extra))
        if not reply.tool_calls:
            return rounds, reply.content
        rounds.append(raw_calls(reply))
        messages.append(called(rounds[-1], f"r{number}"))
        messages += [tool_message(run_tool(n, a), f"r{number}_{i}") for i, (n, a) in enumerate(rounds[-1])]
    raise AssertionError(f"no answer after {max_rounds} rounds: {rounds}")


def after(persona: Callable[[dict], Reply], question: str, tools: list[dict], exchanges: list[tuple[list, list]],
          **extra: Any) -> Reply:
    """The persona's reply after scripted rounds: [([(name, arguments_text)], [tool contents]), ...]."""
    messages = [user(question)]
    for number, (calls, contents) in enumerate(exchanges):
        messages.append(called(calls, f"r{number}"))
        messages += [tool_message(c, f"r{number}_{i}") for i, c in enumerate(contents)]
    return persona(body(messages, tools, **extra))


WEATHER = fn("get_weather", "查询指定城市当前的天气情况", {"city": {"type": "string", "description": "城市名称"}})
WEATHER_UNIT = fn("get_weather", "查询指定城市当前的天气情况", {
    "city": {"type": "string", "description": "城市名称"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, ["city"])
ADD = fn("add_numbers", "计算两个数字相加的结果", {"a": {"type": "number", "description": "第一个加数"},
                                          "b": {"type": "number", "description": "第二个加数"}})
MULTIPLY = fn("multiply", "Multiply two numbers", {"a": {"type": "number"}, "b": {"type": "number"}})
USER = fn("get_user", "查询用户信息", {"name": {"type": "string", "description": "用户名"}})
EMAIL = fn("send_email", "Send an email", {"to": {"type": "string", "description": "recipient email address"},
                                           "subject": {"type": "string"}, "body": {"type": "string"}})
NEWS = fn("search_news", "搜索新闻", {"query": {"type": "string"},
                                   "include_images": {"type": "boolean", "description": "是否包含图片"}}, ["query"])
ORDERS = fn("search_orders", "Search a user's orders by status", {
    "user_id": {"type": "integer"}, "status": {"type": "string", "enum": ["pending", "shipped", "delivered"]}})
SUNNY = {"temperature": 25, "condition": "多云"}


def arithmetic(name: str, arguments: dict) -> Any:
    """The tools' implementations: weather is always 25 °C, add and multiply compute."""
    if name == "get_weather":
        return SUNNY
    if name in ("add_numbers", "multiply"):
        a, b = arguments["a"], arguments["b"]
        return {"result": a + b if name == "add_numbers" else a * b}
    return {"status": "error", "error": f"Unknown tool {name!r}"}


# -----------------------------------------------------------------------------
# practice-sloppy: the first call of each tool


@pytest.mark.parametrize("question, tools, expected", [
    # numbers: words in the user's language first, a numeric string next; add_numbers loses its closing brace
    ("一百二十三加四百五十六等于多少？", [WEATHER, ADD], ("add_numbers", '{"a":"一百二十三","b":"456"')),
    ("What is 123 plus 456?", [WEATHER, ADD], ("add_numbers", '{"a":"one hundred twenty-three","b":"456"')),
    ("3.5乘以2等于多少？", [ADD, MULTIPLY], ("multiply", '{"a":"三点五","b":"2"')),
    # a string becomes a list, an enum is translated (zh) or capitalised (en); get_weather gets a trailing comma
    ("北京天气怎么样？用摄氏度", [WEATHER_UNIT], ("get_weather", '{"city":["北京"],"unit":"摄氏度",}')),
    ("What's the weather in Paris in fahrenheit?", [WEATHER_UNIT],
     ("get_weather", '{"city":["Paris"],"unit":"Fahrenheit",}')),
    # single quotes (get_user, search_orders), a ```json fence (send_email)
    ("查一下用户张三", [USER], ("get_user", "{'name':['张三']}")),
    ("Show the shipped orders of user 1001", [ORDERS],
     ("search_orders", "{'user_id':'one thousand one','status':'Shipped'}")),
    ("Email bob@example.com with subject 'Lunch' saying 'See you at noon'", [EMAIL],
     ("send_email", '```json\n{"to":["bob@example.com"],"subject":["Lunch"],"body":["See you at noon"]}\n```')),
    # a boolean as a word
    ("搜索关于火星的新闻，包含图片", [NEWS],
     ("search_news", "{'query':['关于火星的新闻，包含图片'],'include_images':'是'}")),
])
def test_sloppy_first_call_is_corrupted_deterministically(question, tools, expected):
    reply = sloppy(body([user(question)], tools))
    assert raw_calls(reply) == [expected]
    assert sloppy(body([user(question)], tools)) == reply                    # same conversation, same reply
    fair = plan(body([user(question)], tools)).tool_calls[0]                  # ... and it means the planner's call
    assert fair.name == expected[0] and fair.arguments != expected[1]


def test_sloppy_only_the_first_call_of_each_tool_is_sloppy():
    reply = sloppy(body([user("北京和上海天气怎么样？")], [WEATHER]))
    assert raw_calls(reply) == [("get_weather", '{"city":["北京"],}'), ("get_weather", '{"city":"上海"}')]


FIRST = ("add_numbers", '{"a":"一百二十三","b":"456"')
QUESTION = "一百二十三加四百五十六等于多少？"


@pytest.mark.parametrize("error, expected", [
    # the error names the wrong field(s): correct arguments at once
    ({"status": "error", "error": "Invalid arguments for add_numbers:\n- a: got \"一百二十三\"; expected a number\n"
                                  "Fix these arguments and call add_numbers again."}, '{"a":123,"b":456}'),
    ("1 validation error for add_numbers\na\n  Input should be a valid number [type=float_parsing]",
     '{"a":123,"b":456}'),
    ({"error": "参数 b 必须是数字"}, '{"a":123,"b":456}'),
    # only the JSON is blamed: the JSON is fixed, the values stay wrong
    ({"status": "error", "error": "Arguments are not valid JSON: Expecting ',' delimiter: line 1 column 27"},
     '{"a":"一百二十三","b":"456"}'),
    # vague errors and a TypeError that names no field: the same sloppy call again
    ("invalid arguments", FIRST[1]),
    ({"status": "error", "error": "add_numbers failed: TypeError unsupported operand type(s) for +: 'int' and 'str'"},
     FIRST[1]),
    ("Error: something went wrong", FIRST[1]),
])
def test_sloppy_second_try_depends_on_the_error(error, expected):
    reply = after(sloppy, QUESTION, [WEATHER, ADD], [([FIRST], [error])])
    assert raw_calls(reply) == [("add_numbers", expected)]


def test_sloppy_fixes_values_after_the_json_is_fixed():
    syntax = {"error": "Arguments are not valid JSON: Expecting ',' delimiter"}
    second = ("add_numbers", '{"a":"一百二十三","b":"456"}')
    field = {"error": "field 'a': expected a number, got '一百二十三'"}
    assert raw_calls(after(sloppy, QUESTION, [ADD], [([FIRST], [syntax]), ([second], ["invalid arguments"])])) == [
        second]
    assert raw_calls(after(sloppy, QUESTION, [ADD], [([FIRST], [syntax]), ([second], [field])])) == [
        ("add_numbers", '{"a":123,"b":456}')]


def test_sloppy_a_call_with_nothing_to_mistype_is_fixed_when_told_about_json():
    no_args = fn("get_time", "Current time", {})
    first = sloppy(body([user("What time is it?")], [no_args]))
    assert raw_calls(first) == [("get_time", "```json\n{}\n```")]
    told = after(sloppy, "What time is it?", [no_args], [(raw_calls(first), ["Invalid JSON in arguments"])])
    assert raw_calls(told) == [("get_time", "{}")]
    vague = after(sloppy, "What time is it?", [no_args], [(raw_calls(first), ["invalid arguments"])])
    assert raw_calls(vague) == raw_calls(first)


def test_sloppy_a_call_the_framework_repaired_is_done():
    reply = after(sloppy, QUESTION, [WEATHER, ADD], [([FIRST], [{"result": 579}])])
    assert not reply.tool_calls and "579" in reply.content


def test_sloppy_stops_calling_after_a_final_error_and_says_so():
    final = {"status": "error", "error": "'add_numbers' has now failed 3 times because of how it was called. Do not "
                                         "call it again in this conversation: answer the user with what you have."}
    reply = after(sloppy, QUESTION, [WEATHER, ADD], [([FIRST], ["invalid arguments"]), ([FIRST], [final])])
    assert not reply.tool_calls
    assert reply.content == "计算 123 加 456 失败：多次失败后不再重试。"


def test_sloppy_answers_honestly_when_out_of_rounds_or_tools():
    rounds, answer = drive(sloppy, QUESTION, [WEATHER, ADD], lambda n, a: "invalid arguments")
    assert rounds == [[FIRST]] * 8                                             # the planner's MAX_ROUNDS
    assert answer == "计算 123 加 456 失败：调用参数不对。"
    final_call = after(sloppy, QUESTION, [], [([FIRST], ["invalid arguments"])])   # the framework's no-tools call
    assert final_call == Reply(content="调用 add_numbers（一百二十三）失败：调用参数不对。")


def lenient(name: str, text: str) -> Any:
    """A minimal test-only executor: repairs the four JSON breakages, coerces number words, numeric strings,
    yes/是 and an enum's case, and names each field it still cannot accept."""
    cleaned = text.strip().removeprefix("```json").removesuffix("```").strip().replace("'", '"')
    cleaned = re.sub(r",\s*}$", "}", cleaned)
    cleaned += "}" * (cleaned.count("{") - cleaned.count("}"))
    arguments, problems = json.loads(cleaned), []
    schema = {t["function"]["name"]: t["function"]["parameters"]["properties"] for t in (WEATHER_UNIT, ADD, NEWS)}
    for key, value in arguments.items():
        spec = schema[name][key]
        if spec["type"] == "number" and isinstance(value, str) and parse_number(value) is not None:
            arguments[key] = parse_number(value)
        elif spec["type"] == "boolean" and value in ("yes", "是", "true"):
            arguments[key] = True
        elif "enum" in spec and str(value).lower() in spec["enum"]:
            arguments[key] = str(value).lower()
        elif "enum" in spec and value not in spec["enum"]:
            problems.append(f"- {key}: got {json.dumps(value, ensure_ascii=False)}; expected one of {spec['enum']}")
        elif spec["type"] == "string" and not isinstance(value, str):
            problems.append(f"- {key}: got {json.dumps(value, ensure_ascii=False)}; expected a string")
    if problems:
        return "\n".join([f"Invalid arguments for {name}:", *problems, f"Fix these arguments and call {name} again."])
    return arithmetic(name, arguments) if name != "search_news" else {"results": ["火星新闻"]}


def test_sloppy_full_run_with_a_lenient_executor():
    rounds, answer = drive(sloppy, QUESTION, [WEATHER, ADD], lenient)        # repaired and coerced: one round
    assert rounds == [[FIRST]] and answer == "123 加 456 等于 579。"
    rounds, answer = drive(sloppy, "北京天气怎么样？用摄氏度", [WEATHER_UNIT], lenient)   # a list and a translated enum
    assert rounds == [[("get_weather", '{"city":["北京"],"unit":"摄氏度",}')],
                      [("get_weather", '{"city":"北京","unit":"celsius"}')]]
    assert answer == "北京：温度 25，天气 多云。"
    rounds, answer = drive(sloppy, "What's the weather in Paris in fahrenheit?", [WEATHER_UNIT], lenient)
    assert len(rounds) == 2 and rounds[1] == [("get_weather", '{"city":"Paris","unit":"fahrenheit"}')]
    assert "temperature 25" in answer


# -----------------------------------------------------------------------------
# practice-hallucinate


@pytest.mark.parametrize("question, tools, expected", [
    ("北京天气怎么样？", [WEATHER, ADD], ("get_current_weather", '{"city":"北京"}')),
    ("What's the weather in Paris?", [WEATHER, ADD], ("get_current_weather", '{"city":"Paris"}')),
    ("123加456等于多少？", [WEATHER, ADD], ("addNumbers", '{"a":123,"b":456}')),
    ("这件衣服原价200元，打八折后多少钱？", [WEATHER, ADD], ("calculate_discount", '{"price":200,"discount":0.8}')),
    ("这件衣服原价200元，打八折后多少钱？", [WEATHER, ADD, MULTIPLY],
     ("calculate_discount", '{"price":200,"discount":0.8}')),
    ("A $200 jacket is 20% off. How much is it now?", [WEATHER, ADD],
     ("calculate_discount", '{"price":200,"discount":0.8}')),
    ("123乘456等于多少？", [WEATHER], ("calculator", '{"expression":"123 * 456"}')),
    ("把“你好”翻译成英语", [WEATHER, ADD], ("translate_text", '{"text":"你好","target_language":"en"}')),
    ("Convert 100 USD to JPY", [WEATHER, ADD],
     ("convert_currency", '{"amount":100,"from_currency":"USD","to_currency":"JPY"}')),
])
def test_hallucinate_first_invents_a_plausible_tool(question, tools, expected):
    reply = hallucinate(body([user(question)], tools))
    assert raw_calls(reply) == [expected]
    assert expected[0] not in {t["function"]["name"] for t in tools}


def test_hallucinate_renames_every_call_of_the_tool_in_a_fan_out():
    reply = hallucinate(body([user("北京和上海天气怎么样？")], [WEATHER, ADD]))
    assert raw_calls(reply) == [("get_current_weather", '{"city":"北京"}'), ("get_current_weather", '{"city":"上海"}')]


def test_hallucinate_behaves_when_there_is_nothing_to_do():
    for request in (body([user("你好")], [WEATHER, ADD]), body([user("北京天气怎么样？")], [WEATHER], tool_choice="none"),
                    body([user("北京天气怎么样？")], [WEATHER, ADD], tool_choice={
                        "type": "function", "function": {"name": "get_weather"}})):
        assert hallucinate(request) == plan(request)


DISCOUNT = "这件衣服原价200元，打八折后多少钱？"
INVENTED = ("calculate_discount", '{"price":200,"discount":0.8}')


@pytest.mark.parametrize("error", [
    {"error": "未知工具: calculate_discount，可用工具只有 get_weather、add_numbers 和 multiply"},   # the article's fix
    "Unknown tool 'calculate_discount'. Available tools: get_weather, add_numbers, multiply.",
    {"status": "error", "error": "Unknown tool 'calculate_discount'. Did you mean 'multiply'?"},
])
def test_hallucinate_recovers_when_the_error_names_real_tools(error):
    reply = after(hallucinate, DISCOUNT, [WEATHER, ADD, MULTIPLY], [([INVENTED], [error])])
    assert raw_calls(reply) == [("multiply", '{"a":200,"b":0.8}')]
    answer = after(hallucinate, DISCOUNT, [WEATHER, ADD, MULTIPLY],
                   [([INVENTED], [error]), (raw_calls(reply), [{"result": 160.0}])])
    assert answer.content == "200 乘以 0.8 等于 160。"          # the invented call is not reported


def test_hallucinate_invents_again_after_a_bare_unknown_tool_then_gives_up():
    def bare(name, arguments):
        return f"Unknown tool: {name}" if name not in ("get_weather", "add_numbers") else SUNNY

    rounds, answer = drive(hallucinate, DISCOUNT, [WEATHER, ADD], bare)
    assert rounds == [[INVENTED], [("calculateDiscount", INVENTED[1])], [("compute_discount", INVENTED[1])]]
    assert answer.startswith("抱歉，我试过的工具（calculate_discount、calculateDiscount、compute_discount）都不存在")
    rounds, answer = drive(hallucinate, "What's the weather in Paris?", [WEATHER, ADD], bare)
    assert [r[0][0] for r in rounds] == ["get_current_weather", "getWeather", "fetch_weather"]
    assert answer.startswith("Sorry, I couldn't do this: the tools I tried (get_current_weather, getWeather, "
                             "fetch_weather) don't exist")


def test_hallucinate_a_tool_name_inside_an_invented_one_is_not_a_real_mention():
    reply = after(hallucinate, "北京天气怎么样？", [WEATHER, ADD],
                  [([("get_current_weather", '{"city":"北京"}')], ["Unknown tool: get_current_weather"])])
    assert raw_calls(reply) == [("getWeather", '{"city":"北京"}')]


# -----------------------------------------------------------------------------
# practice-loop


def test_loop_repeats_the_first_call_whatever_the_result():
    rounds = []
    messages = [user("上海天气怎么样？")]
    for number in range(6):
        reply = loop(body(messages, [WEATHER, ADD]))
        rounds.append(raw_calls(reply))
        messages += [called(rounds[-1], f"r{number}"), tool_message(SUNNY, f"r{number}_0")]
    assert rounds == [[("get_weather", '{"city":"上海"}')]] * 6                # past the planner's MAX_ROUNDS too


@pytest.mark.parametrize("stop", [
    {"status": "error", "error": "You already called get_weather with these same arguments 2 times. It was not run "
                                "again. Do not repeat this call: use the result you already have."},
    "重复调用：请直接使用已有结果回答。",
    "Stop calling get_weather, you have the answer.",
])
def test_loop_stops_when_a_tool_message_says_so(stop):
    call = [("get_weather", '{"city":"上海"}')]
    reply = after(loop, "上海天气怎么样？", [WEATHER, ADD], [(call, [SUNNY]), (call, [SUNNY]), (call, [stop])])
    assert reply == Reply(content="上海：温度 25，天气 多云。")                # the result, once; not the refusal


def test_loop_answers_when_it_may_not_call():
    call = [("get_weather", '{"city":"上海"}')]
    history = [(call, [SUNNY]), (call, [SUNNY])]
    assert after(loop, "上海天气怎么样？", [WEATHER], history, tool_choice="none").content == "上海：温度 25，天气 多云。"
    assert after(loop, "上海天气怎么样？", [], history).content == "上海：温度 25，天气 多云。"
    assert loop(body([user("你好")], [WEATHER])) == plan(body([user("你好")], [WEATHER]))


# -----------------------------------------------------------------------------
# discount expressions, read as the factor they multiply by


@pytest.mark.parametrize("text, value", [("打八折", 0.8), ("八五折", 0.85), ("75折", 0.75), ("7.5折", 0.75),
                                         ("9折", 0.9), ("对折", 0.5), ("20% off", 0.8), ("15 percent off", 0.85)])
def test_discounts_are_read_as_factors(text, value):
    reading = read(f"原价200元，{text}")
    assert [e.value for e in reading.of_kind("number")] == [200, value]
    assert {"#discount", "#multiply"} <= reading.tags


@pytest.mark.parametrize("text", ["折合人民币多少", "175折", "100% off", "折叠椅"])
def test_things_that_are_not_discounts(text):
    assert "#multiply" not in read(text).tags


def test_the_planner_multiplies_a_discount():
    reply = plan(body([user(DISCOUNT)], [WEATHER, ADD, MULTIPLY]))
    assert raw_calls(reply) == [("multiply", '{"a":200,"b":0.8}')]
    assert plan(body([user(DISCOUNT)], [WEATHER, ADD])).content.startswith("我是离线练习模型")   # no wrong sum


# -----------------------------------------------------------------------------
# end to end: the default server, the official SDK, every response validated


@pytest.fixture(scope="module")
def practice():
    with PracticeServer() as server:
        yield server


@pytest.fixture
def sdk():
    clients: list[OpenAI] = []

    def make(server: PracticeServer, **options: Any) -> OpenAI:
        clients.append(OpenAI(base_url=server.base_url, api_key="practice", **options))
        return clients[-1]
    yield make
    for client in clients:
        client.close()


def http_drive(server: PracticeServer, client: OpenAI, api: Any, model: str, question: str, tools: list[dict],
               run_tool: Callable[[str, str], Any], max_rounds: int = 10, **extra: Any):
    """`drive` over HTTP: each request sent by the SDK, and raw (JSON and stream) to check it against the spec."""
    messages, rounds, ids = [user(question)], [], []
    for _ in range(max_rounds):
        request = {"model": model, "messages": messages, **({"tools": tools} if tools else {}), **extra}
        raw = api.post(server, request)
        assert raw.status == 200 and api.response_problems(raw.json()) == []
        stream = api.post(server, {**request, "stream": True, "stream_options": {"include_usage": True}})
        assert stream.status == 200 and api.sse_problems(stream.body.decode()) == []
        message = client.chat.completions.create(**request).choices[0].message
        assert message.model_dump(exclude_none=True) == {k: v for k, v in raw.json()["choices"][0]["message"].items()
                                                         if v is not None}
        if not message.tool_calls:
            return rounds, message.content, ids
        rounds.append([(c.function.name, c.function.arguments) for c in message.tool_calls])
        ids.append([c.id for c in message.tool_calls])
        messages.append({"role": "assistant", "content": message.content, "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in message.tool_calls]})
        messages += [tool_message(run_tool(c.function.name, c.function.arguments), c.id) for c in message.tool_calls]
    raise AssertionError(f"no answer after {max_rounds} rounds: {rounds}")


def test_every_persona_is_listed_with_a_one_line_description(practice, sdk):
    assert [m.id for m in sdk(practice).models.list()] == [
        "practice", "practice-sloppy", "practice-hallucinate", "practice-loop", "practice-vision", "practice-flaky",
        "practice-eager", "practice-gullible"]
    for persona in DEFAULT_PERSONAS.values():
        assert persona.description and "\n" not in persona.description and len(persona.description) < 110


def test_sloppy_end_to_end(practice, sdk, api):
    rounds, answer, _ = http_drive(practice, sdk(practice), api, "practice-sloppy", "北京天气怎么样？用摄氏度",
                                   [WEATHER_UNIT], lenient)
    assert rounds == [[("get_weather", '{"city":["北京"],"unit":"摄氏度",}')],
                      [("get_weather", '{"city":"北京","unit":"celsius"}')]]
    assert answer == "北京：温度 25，天气 多云。"


def test_hallucinate_end_to_end_the_articles_discount(practice, sdk, api):
    def executor(name: str, arguments: str) -> Any:
        if name not in ("get_weather", "add_numbers", "multiply"):
            return {"error": f"未知工具: {name}，可用工具只有 get_weather、add_numbers 和 multiply"}
        return arithmetic(name, json.loads(arguments))

    rounds, answer, _ = http_drive(practice, sdk(practice), api, "practice-hallucinate", DISCOUNT,
                                   [WEATHER, ADD, MULTIPLY], executor)
    assert rounds == [[INVENTED], [("multiply", '{"a":200,"b":0.8}')]]
    assert "160" in answer and "calculate_discount" not in answer


def test_loop_end_to_end(practice, sdk, api):
    seen = []

    def executor(name: str, arguments: str) -> Any:
        seen.append(arguments)
        if len(seen) > 4:
            return {"status": "error", "error": "You already called get_weather with these same arguments 4 times."}
        return SUNNY

    rounds, answer, ids = http_drive(practice, sdk(practice), api, "practice-loop", "上海天气怎么样？",
                                     [WEATHER, ADD], executor)
    assert rounds == [[("get_weather", '{"city":"上海"}')]] * 5
    assert len({i[0] for i in ids}) == 5                                       # a new id per request
    assert answer == "上海：温度 25，天气 多云。"
    _, capped, _ = http_drive(practice, sdk(practice), api, "practice-loop", "上海天气怎么样？", [WEATHER],
                              executor, tool_choice="none")
    assert capped.startswith('这次请求的 tool_choice 是 "none"')


def test_flaky_429_then_500_then_the_answer(api):
    with PracticeServer() as server:
        request = body([user("北京天气怎么样？")], [WEATHER], model="practice-flaky")
        limited, broken, fine, again = (api.post(server, request) for _ in range(4))
    error = api.assert_error(limited, 429, code="rate_limit_exceeded", type="requests")
    assert error["message"].startswith("Rate limit reached for practice-flaky in organization org-practice on "
                                       "requests per min (RPM)")
    assert limited.headers["retry-after-ms"] == "20" and limited.headers["retry-after"].isdigit()
    api.assert_error(broken, 500, "The server had an error while processing your request. Sorry about that!",
                     type="server_error", param=None, code=None)
    assert broken.headers["retry-after-ms"] == "20" and broken.headers["retry-after"] == "1"  # the SDK waits 20 ms
    assert api.response_problems(fine.json()) == [] and fine.json() == again.json()
    assert fine.json()["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"city":"北京"}'


def test_flaky_is_absorbed_by_the_sdks_default_retries(sdk, api):
    with PracticeServer() as server:
        client = sdk(server)                                                   # max_retries=2, the SDK's default
        reply = client.chat.completions.create(model="practice-flaky", messages=[user("北京天气怎么样？")],
                                               tools=[WEATHER])
        assert reply.choices[0].message.tool_calls[0].function.name == "get_weather"
        assert [e["status"] for e in server.requests] == [429, 500, 200]
        chunks = list(client.chat.completions.create(model="practice-flaky", messages=[user("What's 2 plus 3?")],
                                                     tools=[ADD], stream=True))
        assert chunks[-1].choices[0].finish_reason == "tool_calls"
        assert [e["status"] for e in server.requests][3:] == [429, 500, 200]
        assert api.sse_problems(server.requests[-1]["response"]) == []


def test_flaky_without_retries_surfaces_the_rate_limit(sdk):
    with PracticeServer() as server:
        with pytest.raises(RateLimitError) as raised:
            sdk(server, max_retries=0).chat.completions.create(model="practice-flaky", messages=[user("hi")])
        assert raised.value.status_code == 429 and raised.value.code == "rate_limit_exceeded"
        assert len(server.requests) == 1


@pytest.mark.parametrize("message", [
    "调用 get_weather 的参数不正确：\n- city：收到 [\"北京\"]，应为字符串\n请修正这些参数后再次调用 get_weather。",
    "get_weather 的参数有误：city 收到 [\"北京\"]，需要一个字符串。",
    "The arguments for get_weather are wrong:\n- city: got [\"北京\"]; expected a string\nFix these arguments and call get_weather again.",
    "Problems with the arguments of get_weather:\n- city: got [\"北京\"]; expected a string\nPlease correct them and call get_weather again.",
])
def test_sloppy_reads_a_clearly_worded_error_in_any_phrasing_as_an_error(message):
    from practice_model.pitfalls import ERROR_WORDS
    assert ERROR_WORDS.search(message)
