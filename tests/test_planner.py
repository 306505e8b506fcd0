"""The practice planner: which tools it calls, with which arguments, and what it answers.

Every test goes through `plan()` with a realistic Chat Completions body; the multi-round tests
use `drive()`, a tiny agent loop that runs fake tools and feeds their results back.
"""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys

import pytest

from practice_model import planner, planning
from practice_model.planner import (
    analyse,
    compose_answer,
    fill_arguments,
    next_calls,
    plan,
    rank_tools,
    render,
    respond,
)
from practice_model.reply import Reply

# -----------------------------------------------------------------------------
# request builders and a tiny agent loop


def fn(name: str, description: str, properties: dict, required: list[str] | None = None) -> dict:
    """A function tool; every property is required unless `required` says otherwise."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": list(properties) if required is None else required}}}


def user(text) -> dict:
    return {"role": "user", "content": text}


def called(*calls: tuple[str, dict], prefix: str = "call") -> dict:
    """An assistant message carrying tool calls."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"{prefix}_{i}", "type": "function",
         "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
        for i, (name, args) in enumerate(calls)]}


def result(content, call_id: str = "call_0") -> dict:
    """A tool message; dicts and lists are sent as JSON text, as a real agent would."""
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def body(messages: list[dict], tools: list[dict], **extra) -> dict:
    return {"model": "practice", "messages": messages, "tools": tools, **extra}


def calls_of(reply: Reply) -> list[tuple[str, dict]]:
    return [(c.name, json.loads(c.arguments)) for c in reply.tool_calls]


def drive(question: str, tools: list[dict], run_tool, max_rounds: int = 6, **extra):
    """Ask, execute every call with `run_tool(name, args)`, feed results back, until the planner answers."""
    messages, rounds = [user(question)], []
    for round_no in range(max_rounds):
        reply = plan(body(messages, tools, **extra))
        if not reply.tool_calls:
            return rounds, reply.content
        rounds.append(calls_of(reply))
        messages.append(called(*rounds[-1], prefix=f"r{round_no}"))
        for i, (name, args) in enumerate(rounds[-1]):
            messages.append(result(run_tool(name, args), f"r{round_no}_{i}"))
    raise AssertionError(f"no answer after {max_rounds} rounds: {rounds}")


# -----------------------------------------------------------------------------
# tools (the seed article's, and ones the planner has never been tuned on)

WEATHER = fn("get_weather", "查询指定城市当前的天气情况，包括温度、天气状况和风力",
             {"city": {"type": "string", "description": "城市名称，例如北京、上海、广州"}})
ADD = fn("add_numbers", "计算两个数字相加的结果",
         {"a": {"type": "number", "description": "第一个加数"}, "b": {"type": "number", "description": "第二个加数"}})
SUBTRACT_ZH = fn("subtract", "计算两个数的差", {"a": {"type": "number", "description": "被减数"},
                                             "b": {"type": "number", "description": "减数"}})
SUBTRACT_EN = fn("subtract", "Subtract b from a and return the difference",
                 {"a": {"type": "number"}, "b": {"type": "number"}})
USER = fn("get_user_info", "根据用户名查询用户信息", {"user_name": {"type": "string", "description": "用户名"}})
ORDERS = fn("get_orders", "根据用户ID查询订单列表",
            {"user_id": {"type": "integer", "description": "用户ID"},
             "status": {"type": "string", "description": "订单状态，可选：pending（未发货）、shipped（已发货）"}},
            ["user_id"])
DETAIL = fn("get_order_detail", "查询订单的详细信息", {"order_id": {"type": "string", "description": "订单号"}})
CONVERT = fn("convert", "Convert an amount of money from one currency to another",
             {"amount": {"type": "number", "description": "The amount to convert"},
              "from_currency": {"type": "string", "description": "ISO currency code, e.g. USD"},
              "to_currency": {"type": "string", "description": "ISO currency code"}})
FLIGHTS = fn("search_flights", "搜索航班",
             {"origin": {"type": "string", "description": "出发城市"},
              "destination": {"type": "string", "description": "目的地城市"},
              "date": {"type": "string", "description": "出发日期"}})
EMAIL = fn("send_email", "Send an email. Ask the user before sending.",
           {"to": {"type": "string", "description": "Recipient email address"},
            "subject": {"type": "string", "description": "Subject line"},
            "body": {"type": "string", "description": "Message body"}})
STOCK = fn("get_stock_price", "获取股票的最新价格", {"symbol": {"type": "string", "description": "股票代码，如 AAPL"}})
WEATHER_UNIT = fn("get_weather", "Get the current weather for a city",
                  {"city": {"type": "string", "description": "City name"},
                   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"}},
                  ["city"])
BATCH = fn("get_weather_batch", "查询多个城市的天气",
           {"cities": {"type": "array", "items": {"type": "string"}, "description": "城市列表"}})
CALCULATOR = fn("calculator", "Evaluate a math expression", {"expression": {"type": "string"}})
SEARCH = fn("web_search", "Search the web", {"query": {"type": "string", "description": "What to search for"}})
# what Pydantic emits for `def create_event(event: Event, notify: bool | None = None)`
EVENT = {"type": "function", "function": {
    "name": "create_event", "description": "Create a calendar event", "parameters": {
        "$defs": {"Event": {"type": "object", "title": "Event", "required": ["title", "date"], "properties": {
            "title": {"type": "string", "description": "Event title"},
            "date": {"type": "string", "format": "date"},
            "attendees": {"type": "array", "items": {"type": "string", "format": "email"}}}}},
        "type": "object", "required": ["event"], "properties": {
            "event": {"$ref": "#/$defs/Event"},
            "notify": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None,
                       "description": "Send notifications to attendees"}}}}}

IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}
WEATHER_DATA = {"北京": {"temperature": 22, "condition": "晴", "wind": "东北风3级"},
                "上海": {"temperature": 25, "condition": "多云", "wind": "东南风2级"},
                "Paris": {"temperature": 18, "condition": "cloudy"},
                "Tokyo": {"temperature": 21, "condition": "sunny"}}
ORDER_LIST = [{"order_id": "A1001", "status": "未发货", "total": 399},
              {"order_id": "A1002", "status": "已发货", "total": 59},
              {"order_id": "A1003", "status": "未发货", "total": 1280}]


def fake_tools(name: str, args: dict):
    """Deterministic stand-ins for the article's tools."""
    if name in ("get_weather", "get_weather_batch"):
        if "cities" in args:
            return {c: WEATHER_DATA.get(c, "unknown") for c in args["cities"]}
        return WEATHER_DATA.get(args.get("city"), {"error": "暂无该城市数据"})
    if name == "add_numbers":
        return str(args["a"] + args["b"])
    if name == "subtract":
        return str(args["a"] - args["b"])
    if name == "get_user_info":
        return {"user_id": 1001, "name": args["user_name"]}
    if name == "get_orders":
        rows = ORDER_LIST if "status" not in args else [o for o in ORDER_LIST if o["status"] == "未发货"]
        return rows
    if name == "get_order_detail":
        return {"order_id": args["order_id"], "item": f"商品{args['order_id'][-1]}", "status": "未发货"}
    return {"status": "success", "data": {"echo": args}}


# -----------------------------------------------------------------------------
# 1. the seed article's two tools


def test_beijing_weather_round_trip():
    rounds, answer = drive("北京现在天气怎么样？", [WEATHER, ADD], fake_tools)
    assert rounds == [[("get_weather", {"city": "北京"})]]
    assert "22" in answer and "晴" in answer and "北京" in answer
    assert re.search(r"[\u4e00-\u9fff]", answer) and "temperature" not in answer


def test_the_articles_first_request():
    assert calls_of(plan(body([user("北京今天适合出门吗？")], [WEATHER]))) == [("get_weather", {"city": "北京"})]


def test_big_addition_keeps_integers():
    reply = plan(body([user("请计算123456789 + 987654321 等于多少？")], [WEATHER, ADD]))
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("add_numbers", '{"a":123456789,"b":987654321}')]
    rounds, answer = drive("请计算123456789 + 987654321 等于多少？", [WEATHER, ADD], fake_tools)
    assert "1111111110" in answer


# -----------------------------------------------------------------------------
# 2. several entities: parallel calls, sequential calls, array parameters


def test_two_cities_in_one_reply():
    reply = plan(body([user("What's the weather in Paris and Tokyo?")], [WEATHER, ADD]))
    assert calls_of(reply) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]


def test_parallel_tool_calls_false_gives_one_call_per_reply():
    rounds, answer = drive("What's the weather in Paris and Tokyo?", [WEATHER, ADD], fake_tools,
                           parallel_tool_calls=False)
    assert rounds == [[("get_weather", {"city": "Paris"})], [("get_weather", {"city": "Tokyo"})]]
    assert "Paris: temperature 18, condition cloudy" in answer and "Tokyo: temperature 21" in answer


def test_which_city_is_warmer():
    rounds, answer = drive("北京和上海哪个更暖和？", [WEATHER, ADD], fake_tools)
    assert rounds == [[("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]]
    assert "北京：温度 22，天气 晴" in answer and "上海：温度 25" in answer
    assert "上海的温度更高（25）" in answer


def test_array_parameter_gets_one_call_with_every_city():
    reply = plan(body([user("北京、上海和广州今天天气如何")], [BATCH, ADD]))
    assert calls_of(reply) == [("get_weather_batch", {"cities": ["北京", "上海", "广州"]})]


# -----------------------------------------------------------------------------
# 3. numbers


@pytest.mark.parametrize("tool", [SUBTRACT_ZH, SUBTRACT_EN])
def test_net_growth_calls_subtract(tool):
    reply = plan(body([user("A组本周新增客户35个，流失8个，净增多少")], [WEATHER, ADD, tool]))
    assert calls_of(reply) == [("subtract", {"a": 35, "b": 8})]
    rounds, answer = drive("A组本周新增客户35个，流失8个，净增多少", [WEATHER, ADD, tool], fake_tools)
    assert "27" in answer


@pytest.mark.parametrize("question,a,b", [
    ("一百二十三加四百五十六等于多少", 123, 456),
    ("两千零五加上三点五", 2005, 3.5),
    ("负十二加1.2万是多少", -12, 12000),
    ("What is twelve plus one hundred and five?", 12, 105),
    ("add 1,000 and 3.5", 1000, 3.5),
    ("-12 + 30 = ?", -12, 30),
])
def test_numbers_in_every_form_fill_numeric_params(question, a, b):
    assert calls_of(plan(body([user(question)], [WEATHER, ADD]))) == [("add_numbers", {"a": a, "b": b})]


# -----------------------------------------------------------------------------
# 4. chains: user -> orders -> order details


def test_order_chain_with_status_evidence():
    rounds, answer = drive("帮我看看张三最近买了什么还没发货", [USER, ORDERS, DETAIL], fake_tools)
    assert rounds == [
        [("get_user_info", {"user_name": "张三"})],
        [("get_orders", {"user_id": 1001, "status": "pending"})],
        [("get_order_detail", {"order_id": "A1001"}), ("get_order_detail", {"order_id": "A1003"})],
    ]
    assert "A1001" in answer and "A1003" in answer and "商品1" in answer and "商品3" in answer
    assert re.search(r"[\u4e00-\u9fff]", answer)


def test_order_chain_one_call_per_reply():
    rounds, answer = drive("帮我看看张三最近买了什么还没发货", [USER, ORDERS, DETAIL], fake_tools, parallel_tool_calls=False)
    assert [call for calls in rounds for call in calls] == [
        ("get_user_info", {"user_name": "张三"}), ("get_orders", {"user_id": 1001, "status": "pending"}),
        ("get_order_detail", {"order_id": "A1001"}), ("get_order_detail", {"order_id": "A1003"})]
    assert all(len(calls) == 1 for calls in rounds) and "商品1" in answer and "商品3" in answer


def test_order_chain_without_status_evidence_fetches_every_order():
    rounds, answer = drive("张三最近买了什么？", [USER, ORDERS, DETAIL], fake_tools)
    assert rounds[1] == [("get_orders", {"user_id": 1001})]
    assert [args["order_id"] for _, args in rounds[2]] == ["A1001", "A1002", "A1003"]


def test_order_chain_in_english_against_chinese_descriptions():
    rounds, answer = drive("What did Zhang San buy that hasn't shipped yet?", [USER, ORDERS, DETAIL], fake_tools)
    assert rounds[0] == [("get_user_info", {"user_name": "Zhang San"})]
    assert rounds[1] == [("get_orders", {"user_id": 1001, "status": "pending"})]
    assert "Here is what I found" in answer and "A1003" in answer


def test_unfiltered_order_list_is_narrowed_to_what_was_asked():
    tools = [USER, fn("get_orders", "查询用户的订单", {"user_id": {"type": "integer"}}), DETAIL]
    rounds, _ = drive("帮我看看张三还没发货的订单", tools, fake_tools)
    assert rounds[2] == [("get_order_detail", {"order_id": "A1001"}), ("get_order_detail", {"order_id": "A1003"})]


def test_id_is_taken_from_key_id_in_the_owner_tools_result():
    tools = [fn("find_customer", "Find a customer by name", {"name": {"type": "string"}}),
             fn("list_invoices", "List the invoices of a customer", {"customer_id": {"type": "integer"}})]
    messages = [user("Show me the invoices of Alice"), called(("find_customer", {"name": "Alice"})),
                result({"customer": {"id": 77, "name": "Alice"}})]
    assert calls_of(plan(body(messages, tools))) == [("list_invoices", {"customer_id": 77})]


def test_a_failed_step_ends_the_chain_with_an_honest_answer():
    def broken(name, args):
        return {"error": "用户不存在"} if name == "get_user_info" else fake_tools(name, args)
    rounds, answer = drive("帮我看看王小二最近买了什么", [USER, ORDERS, DETAIL], broken)
    assert rounds == [[("get_user_info", {"user_name": "王小二"})]]
    assert "用户不存在" in answer and "失败" in answer


def test_no_call_is_repeated_after_the_latest_user_message():
    messages = [user("北京天气"), called(("get_weather", {"city": "北京"})), result("Error: timeout")]
    reply = plan(body(messages, [WEATHER]))
    assert not reply.tool_calls and reply.content == "查询北京的天气失败：服务响应超时。"


def test_a_new_user_message_may_ask_again():
    messages = [user("北京天气"), called(("get_weather", {"city": "北京"})), result(WEATHER_DATA["北京"]),
                {"role": "assistant", "content": "北京：温度 22。"}, user("再查一次北京天气")]
    assert calls_of(plan(body(messages, [WEATHER]))) == [("get_weather", {"city": "北京"})]


# -----------------------------------------------------------------------------
# 5. tool_choice


def test_tool_choice_none_answers_in_text_and_says_what_it_would_call():
    reply = plan(body([user("北京天气怎么样")], [WEATHER], tool_choice="none"))
    assert not reply.tool_calls and 'tool_choice 是 "none"' in reply.content and "get_weather（北京）" in reply.content
    assert "city=" not in reply.content                                    # no function-call syntax


def test_tool_choice_none_answers_from_results_so_far():
    messages = [user("北京天气"), called(("get_weather", {"city": "北京"})), result(WEATHER_DATA["北京"])]
    reply = plan(body(messages, [WEATHER], tool_choice="none"))
    assert not reply.tool_calls and "22" in reply.content


def test_tool_choice_required_always_calls():
    reply = plan(body([user("讲个笑话")], [WEATHER, ADD], tool_choice="required"))
    assert [c.name for c in reply.tool_calls] == ["get_weather"]
    done = [user("北京天气"), called(("get_weather", {"city": "北京"})), result(WEATHER_DATA["北京"])]
    assert calls_of(plan(body(done, [WEATHER, ADD], tool_choice="required"))) == [("get_weather", {"city": "北京"})]


@pytest.mark.parametrize("choice", [
    {"type": "function", "function": {"name": "add_numbers"}},
    {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [
        {"type": "function", "function": {"name": "add_numbers"}}]}},
])
def test_named_or_allowed_tool_is_the_only_one_called(choice):
    reply = plan(body([user("北京天气，顺便算 3 加 4")], [WEATHER, ADD], tool_choice=choice))
    assert calls_of(reply) == [("add_numbers", {"a": 3, "b": 4})]


def test_a_forced_tool_gets_invented_arguments_that_fit_its_schema():
    forced = {"type": "function", "function": {"name": "get_weather"}}
    assert calls_of(plan(body([user("Tell me a joke")], [WEATHER, ADD], tool_choice=forced))) == [
        ("get_weather", {"city": "a joke"})]
    forced = {"type": "function", "function": {"name": "add_numbers"}}
    assert calls_of(plan(body([user("北京天气")], [WEATHER, ADD], tool_choice=forced))) == [
        ("add_numbers", {"a": 0, "b": 0})]


def test_auto_is_the_default():
    a = plan(body([user("北京天气")], [WEATHER]))
    b = plan(body([user("北京天气")], [WEATHER], tool_choice="auto"))
    assert a == b and a.tool_calls


# -----------------------------------------------------------------------------
# 6. no useful tool: a short honest reply


@pytest.mark.parametrize("question,zh", [("Tell me a joke", False), ("讲个笑话", True),
                                         ("What is the capital of France?", False), ("北京有什么好吃的", True)])
def test_no_tool_fits(question, zh):
    reply = plan(body([user(question)], [WEATHER, ADD]))
    assert not reply.tool_calls
    assert "LLM_BASE_URL" in reply.content and "get_weather" in reply.content and "add_numbers" in reply.content
    assert reply.content.startswith("我是离线练习模型" if zh else "I'm the offline practice model")


@pytest.mark.parametrize("greeting,expected", [("hi", "Hello!"), ("Hello there!", "Hello!"), ("你好", "你好！"),
                                               ("您好！", "你好！"), ("谢谢", "不客气"), ("thanks!", "welcome")])
def test_small_talk(greeting, expected):
    reply = plan(body([user(greeting)], [WEATHER]))
    assert not reply.tool_calls and expected in reply.content


def test_missing_input_is_asked_for():
    reply = plan(body([user("明天会下雨吗？")], [WEATHER]))
    assert not reply.tool_calls and "city" in reply.content and "还需要" in reply.content


def test_no_tools_at_all():
    reply = plan({"model": "practice", "messages": [user("What's the weather in Paris?")]})
    assert not reply.tool_calls and "no tools" in reply.content


# -----------------------------------------------------------------------------
# 7. answers


def answer_after(question: str, tool: dict, calls: list[tuple[str, dict]], outputs: list) -> str:
    messages = [user(question), called(*calls)] + [result(o, f"call_{i}") for i, o in enumerate(outputs)]
    reply = plan(body(messages, [tool]))
    assert not reply.tool_calls
    return reply.content


def test_answer_in_english_with_the_facts_verbatim():
    text = answer_after("Weather in Beijing?", WEATHER, [("get_weather", {"city": "Beijing"})],
                        [{"temperature": 22.5, "condition": "晴", "humidity": 40}])
    assert text == "Beijing: temperature 22.5, condition 晴, humidity 40."


@pytest.mark.parametrize("output,expected", [
    ({"error": "暂无该城市数据"}, "暂无该城市数据"),
    ({"status": "error", "message": "upstream timeout"}, "upstream timeout"),
    ("Error: city not found", "city not found"),
])
def test_errors_are_reported_honestly(output, expected):
    text = answer_after("What's the weather in Paris?", WEATHER, [("get_weather", {"city": "Paris"})], [output])
    assert "couldn't" in text and expected in text


def test_long_plain_text_is_relayed_unquoted_and_truncated():
    text = answer_after("search python", SEARCH, [("web_search", {"query": "python"})], ["x" * 1000])
    assert text == "python: " + "x" * 300 + "…"


def test_lists_and_envelopes_are_rendered_readably():
    assert render([{"order_id": "A1", "status": "未发货"}, {"order_id": "A2", "status": "已发货"}], zh=True) == \
        "订单号 A1，状态 未发货；订单号 A2，状态 已发货"
    text = answer_after("search python", SEARCH, [("web_search", {"query": "python"})],
                        [{"status": "success", "data": ["3.12", "3.13"]}])
    assert text == 'python: 3.12, 3.13.'
    assert "没有结果" in answer_after("搜索 python", SEARCH, [("web_search", {"query": "python"})], [[]])


def test_every_number_in_an_answer_comes_from_the_request_or_the_results():
    question = "北京和上海哪个更暖和？"
    outputs = [WEATHER_DATA["北京"], WEATHER_DATA["上海"]]
    text = answer_after(question, WEATHER, [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})],
                        outputs)
    allowed = set(re.findall(r"\d+", question + json.dumps(outputs, ensure_ascii=False)))
    assert set(re.findall(r"\d+", text)) <= allowed


# answers read like an assistant's: no function-call syntax, the user's language, sensible labels

SHOP_DETAIL = fn("get_order_detail", "查询订单的详细信息：商品、数量、状态、预计送达日期",
                 {"order_id": {"type": "string", "description": "订单号，12位数字"}})
SHIPPED = {"order_id": "202405220012", "created_at": "2024-05-20", "status": "shipped", "eta": "2024-05-25",
           "items": [{"product": "机械键盘", "quantity": 2, "price": 299.0},
                     {"product": "鼠标垫", "quantity": 1, "price": 29.0}], "total": 627.0}
CALL_SYNTAX = re.compile(r"[A-Za-z_]\w*\((?:[A-Za-z_]\w*=|\))")      # add_numbers(a=…) or f()


@pytest.mark.parametrize("question,outputs,expected", [
    ("请计算123加456", ["579"], "123 加 456 等于 579。"),
    ("What is 123 plus 456?", ["579.0"], "123 + 456 = 579."),
    ("请计算123456789 + 987654321 等于多少？", [1111111110.0], "123456789 加 987654321 等于 1111111110。"),
])
def test_a_computation_reads_as_one(question, outputs, expected):
    numbers = [int(n) for n in re.findall(r"\d+", question)][:2]
    call = ("add_numbers", {"a": numbers[0], "b": numbers[1]})
    assert answer_after(question, ADD, [call], outputs) == expected


def test_a_computation_without_a_known_operation_names_its_inputs_by_their_descriptions():
    described = fn("calculate_discount", "计算打折后的价格（折扣）", DISCOUNT_PARAMS)
    call = ("calculate_discount", {"price": 200, "discount": 0.8})
    assert answer_after(DISCOUNT_QUESTION, described, [call], [160.0]) == "按原价 200、折扣系数 0.8 计算，结果是 160。"
    english = fn("calculate_discount", "Apply a discount", {
        "price": {"type": "number", "description": "original price"},
        "discount": {"type": "number", "description": "multiplier, e.g. 0.8"}})
    assert answer_after("What does a 200 shirt cost with 20% off?", english, [call], [160.0]) == \
        "With original price 200 and multiplier 0.8, the result is 160."


def test_status_words_are_said_in_chinese_for_a_chinese_question():
    call = [("get_order_detail", {"order_id": "202405220012"})]
    zh = answer_after("订单202405220012现在是什么状态？", SHOP_DETAIL, call, [SHIPPED])
    assert zh == ("202405220012：创建时间 2024-05-20，状态 已发货，预计送达 2024-05-25，"
                  "商品 机械键盘（数量 2，价格 299）、鼠标垫（数量 1，价格 29），合计 627。")
    pending = answer_after("订单202405220012现在是什么状态？", SHOP_DETAIL, call, [{**SHIPPED, "status": "pending"}])
    assert "状态 待发货" in pending and "pending" not in pending                    # orders: pending is 待发货
    task = fn("get_task", "查询任务", {"task_id": {"type": "string"}})
    assert "状态 待处理" in answer_after("任务T-42的状态？", task, [("get_task", {"task_id": "T-42"})],
                                      [{"title": "写周报", "status": "pending"}])    # anything else: 待处理
    en = answer_after("What's the status of order 202405220012?", SHOP_DETAIL, call, [SHIPPED])
    assert "status shipped" in en and "ETA 2024-05-25" in en and "已发货" not in en


def test_keys_that_carry_a_unit_are_labelled_with_it():
    data = {"temp_c": 21.0, "humidity_pct": 40, "wind_kph": 12, "feels_like_c": 19.5}
    zh = answer_after("北京天气", WEATHER, [("get_weather", {"city": "北京"})], [data])
    assert zh == "北京：温度 21°C，湿度 40%，风力 12 km/h，体感温度 19.5°C。"
    en = answer_after("Weather in Beijing?", WEATHER, [("get_weather", {"city": "Beijing"})], [data])
    assert en == "Beijing: temperature 21°C, humidity 40%, wind 12 km/h, feels like 19.5°C."
    assert "temp c" not in zh + en


def test_a_text_result_is_relayed_without_quotes_in_quotes():
    sentence = "订单202405220012：用户张三，当前状态为“已发货”，预计送达2024-05-25。"
    text = answer_after("订单202405220012现在是什么状态？", SHOP_DETAIL,
                        [("get_order_detail", {"order_id": "202405220012"})], [sentence])
    assert text == sentence                       # it names the order itself: no label, no “…” around it


@pytest.mark.parametrize("output,expected", [
    ({"status": "error", "error": "get_weather did not finish within 0.5 s and was stopped. Try again later, or "
                                  "tell the user the service is not responding."},
     "查询深圳的天气失败：服务在 0.5 秒内没有响应，已被停止。"),
    ("KeyError: 'city'", "查询深圳的天气失败：工具内部出错（KeyError: 'city'）。"),
    ({"status": "error", "error": "get_weather failed: KeyError 'city'. Check the arguments, or tell the user."},
     "查询深圳的天气失败：工具内部出错（KeyError: 'city'）。"),
    ({"status": "error", "error": "天气服务暂时查不到深圳，请尝试查询其他城市（支持：北京、上海）"},
     "查询深圳的天气失败：天气服务暂时查不到深圳，请尝试查询其他城市（支持：北京、上海）。"),
    ({"error": "Unknown tool 'get_weather'. Available tools: add_numbers."}, "查询深圳的天气失败：没有这个工具。"),
    ({"status": "error", "error": "Invalid arguments for get_weather:\n- city: got [\"深圳\"]; expected a string\n"
                                  "Fix these arguments and call get_weather again."}, "查询深圳的天气失败：调用参数不对。"),
])
def test_a_failed_call_is_one_sentence_in_the_users_language(output, expected):
    assert answer_after("深圳天气怎么样？", WEATHER, [("get_weather", {"city": "深圳"})], [output]) == expected


def test_labels_of_several_values_are_joined_in_the_users_language():
    call = [("search_flights", {"origin": "Paris", "destination": "London", "date": "2025-03-01"})]
    assert answer_after("flights from Paris to London on 2025-03-01", FLIGHTS, call, [[]]) == \
        "Paris, London, 2025-03-01: no results (empty list)."
    call = [("search_flights", {"origin": "上海", "destination": "东京", "date": "下周五"})]
    flights = [{"flight": "MU523", "departure": "08:30", "price": 1299.0}]
    assert answer_after("下周五从上海飞东京的航班", FLIGHTS, call, [flights]) == "上海、东京、下周五：MU523（出发 08:30，价格 1299）。"


def test_a_failed_call_in_english():
    output = {"status": "error", "error": "get_weather did not finish within 0.5 s and was stopped. Try again later."}
    assert answer_after("What's the weather in Shenzhen?", WEATHER, [("get_weather", {"city": "Shenzhen"})],
                        [output]) == "I couldn't get the weather for Shenzhen: get_weather did not finish within 0.5 s and was stopped."


@pytest.mark.parametrize("question,tools", [
    ("请计算123456789 + 987654321 等于多少？", [WEATHER, ADD]),
    ("A组本周新增客户35个，流失8个，净增多少", [WEATHER, ADD, SUBTRACT_EN]),
    ("帮我看看张三最近买了什么还没发货", [USER, ORDERS, DETAIL]),
    ("What did Zhang San buy that hasn't shipped yet?", [USER, ORDERS, DETAIL]),
    ("北京天气怎么样？另外123加456等于多少", [WEATHER, ADD]),
    ("100美元换成人民币是多少", [WEATHER, CONVERT]),
    ("search for the latest Python release", [SEARCH, WEATHER]),
    ("下周五从上海飞东京的航班", [WEATHER, FLIGHTS]),
])
def test_no_answer_echoes_function_call_syntax(question, tools):
    _, answer = drive(question, tools, fake_tools)
    assert not CALL_SYNTAX.search(answer), answer
    if not question.isascii():                                     # labels in Chinese, not English key names
        assert not re.search(r"[a-z]{2,} [a-z]{2,} \d", answer), answer


# -----------------------------------------------------------------------------
# 8. arguments for tools the planner was never tuned on


@pytest.mark.parametrize("question,tools,expected", [
    ("100美元换成人民币是多少", [WEATHER, CONVERT],
     ("convert", {"amount": 100, "from_currency": "USD", "to_currency": "CNY"})),
    ("Convert 250 EUR to JPY", [WEATHER, CONVERT],
     ("convert", {"amount": 250, "from_currency": "EUR", "to_currency": "JPY"})),
    ("How many yen is 30 pounds?", [WEATHER, CONVERT],
     ("convert", {"amount": 30, "from_currency": "GBP", "to_currency": "JPY"})),
    ("下周五从上海飞东京的航班", [WEATHER, FLIGHTS],
     ("search_flights", {"origin": "上海", "destination": "东京", "date": "下周五"})),
    ("flights from Paris to London on 2025-03-01", [WEATHER, FLIGHTS],
     ("search_flights", {"origin": "Paris", "destination": "London", "date": "2025-03-01"})),
    ("飞往东京，从北京出发，2024年5月20日", [WEATHER, FLIGHTS],
     ("search_flights", {"origin": "北京", "destination": "东京", "date": "2024-05-20"})),
    ('Send an email to bob@example.com with subject "Lunch" and body "See you at noon"', [WEATHER, EMAIL],
     ("send_email", {"to": "bob@example.com", "subject": "Lunch", "body": "See you at noon"})),
    ("给 alice@example.com 发邮件，主题是「周报」，内容是“本周新增客户35个”", [WEATHER, EMAIL],
     ("send_email", {"to": "alice@example.com", "subject": "周报", "body": "本周新增客户35个"})),
    ("AAPL 现在股价多少", [WEATHER, STOCK], ("get_stock_price", {"symbol": "AAPL"})),
    ("What's the weather in Paris in fahrenheit?", [WEATHER_UNIT],
     ("get_weather", {"city": "Paris", "unit": "fahrenheit"})),
    ("上海天气，用摄氏度", [WEATHER_UNIT], ("get_weather", {"city": "上海", "unit": "celsius"})),
    ("Is it raining in Springfield?", [WEATHER_UNIT], ("get_weather", {"city": "Springfield"})),
    ("What is 2*(3+4)?", [CALCULATOR, WEATHER], ("calculator", {"expression": "2*(3+4)"})),
    ("三十五减八等于几", [CALCULATOR, WEATHER], ("calculator", {"expression": "35 - 8"})),
    ("search for the latest Python release", [SEARCH, WEATHER], ("web_search", {"query": "the latest Python release"})),
    ("帮我把这段话翻译成英文：今天天气很好", [WEATHER, fn("translate", "翻译文本", {
        "text": {"type": "string", "description": "要翻译的文本"}, "target_language": {"type": "string"}})],
     ("translate", {"text": "今天天气很好", "target_language": "en"})),
    ("Remind me to call mom tomorrow at 9:30", [WEATHER, fn("create_reminder", "Create a reminder", {
        "text": {"type": "string"}, "when": {"type": "string"}})],
     ("create_reminder", {"text": "call mom at 9:30", "when": "tomorrow"})),
    ('Create an event "Team lunch" on 2025-05-20 with alice@example.com and bob@example.com', [EVENT, WEATHER],
     ("create_event", {"event": {"title": "Team lunch", "date": "2025-05-20",
                                 "attendees": ["alice@example.com", "bob@example.com"]}})),
])
def test_unseen_tools(question, tools, expected):
    assert calls_of(plan(body([user(question)], tools))) == [expected]


def test_optional_params_need_evidence():
    tools = [fn("get_weather", "查询天气", {"city": {"type": "string"},
                                         "date": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                                         "days": {"type": "integer", "description": "预报天数", "default": 1}},
                ["city"])]
    assert calls_of(plan(body([user("北京天气")], tools))) == [("get_weather", {"city": "北京"})]
    assert calls_of(plan(body([user("北京明天的天气")], tools))) == [("get_weather", {"city": "北京", "date": "明天"})]
    assert calls_of(plan(body([user("北京未来3天的天气")], tools))) == [("get_weather", {"city": "北京", "days": 3})]


def test_strict_mode_nullable_params_get_null_without_evidence():
    strict = {"type": "function", "function": {"name": "get_orders", "description": "查询用户的订单", "strict": True,
              "parameters": {"type": "object", "additionalProperties": False, "required": ["user_name", "status"],
                             "properties": {"user_name": {"type": "string"},
                                            "status": {"type": ["string", "null"],
                                                       "enum": ["pending", "shipped", None]}}}}}
    assert calls_of(plan(body([user("李四的订单")], [strict]))) == [("get_orders", {"user_name": "李四", "status": None})]
    assert calls_of(plan(body([user("李四还没发货的订单")], [strict]))) == \
        [("get_orders", {"user_name": "李四", "status": "pending"})]


def test_booleans_from_evidence():
    tool = fn("get_weather", "Get the weather for a city",
              {"city": {"type": "string"},
               "include_forecast": {"type": "boolean", "description": "Add the 5-day forecast"}},
              ["city"])
    assert calls_of(plan(body([user("weather in London")], [tool]))) == [("get_weather", {"city": "London"})]
    assert calls_of(plan(body([user("weather in London with the forecast")], [tool]))) == \
        [("get_weather", {"city": "London", "include_forecast": True})]


def test_enum_in_description_only_is_filled_by_synonym():
    tool = fn("list_orders", "List orders", {"state": {"type": "string", "description": "one of: 待发货 / 已发货 / 已签收"}},
              [])
    assert calls_of(plan(body([user("which orders have not shipped?")], [tool]))) == [("list_orders", {"state": "待发货"})]


def test_description_not_name_makes_a_tool_relevant():
    cryptic = fn("tool_a", "查询指定城市的天气", {"x": {"type": "string", "description": "城市"}})
    other = fn("tool_b", "Translate text", {"text": {"type": "string"}})
    reply = plan(body([user("How is the weather in Berlin?")], [other, cryptic]))
    assert calls_of(reply) == [("tool_a", {"x": "Berlin"})]


# descriptions decide (lesson 05's claim): what the author wrote counts more than the name

PAIR = {"a": {"type": "number"}, "b": {"type": "number"}}
MULTIPLY = fn("multiply", "计算两个数字相乘的结果", PAIR)
DISCOUNT_QUESTION = "这件衣服原价200元，打八折后多少钱？"
DISCOUNT_PARAMS = {"price": {"type": "number", "description": "原价"},
                   "discount": {"type": "number", "description": "折扣系数，例如八折是 0.8"}}


def test_a_well_described_tool_wins_over_a_generic_one():
    described = fn("calculate_discount", "计算打折后的价格（折扣）", DISCOUNT_PARAMS)
    assert calls_of(plan(body([user(DISCOUNT_QUESTION)], [WEATHER, ADD, MULTIPLY, described]))) == [
        ("calculate_discount", {"price": 200, "discount": 0.8})]


def test_a_description_that_contradicts_the_request_makes_the_tool_lose():
    misdescribed = fn("calculate_discount", "Converts temperatures between units", DISCOUNT_PARAMS)
    reply = plan(body([user(DISCOUNT_QUESTION)], [WEATHER, ADD, MULTIPLY, misdescribed]))
    assert calls_of(reply) == [("multiply", {"a": 200, "b": 0.8})]
    alone = plan(body([user(DISCOUNT_QUESTION)], [WEATHER, misdescribed]))     # nothing fits: no call at all
    assert not alone.tool_calls and "calculate_discount" in alone.content


def test_the_same_misdescribed_tool_is_used_for_what_its_description_says():
    misdescribed = fn("calculate_discount", "Converts temperatures between units",
                      {"value": {"type": "number", "description": "the temperature"}})
    assert calls_of(plan(body([user("What is 30 celsius in fahrenheit?")], [WEATHER, misdescribed]))) == [
        ("calculate_discount", {"value": 30})]


def test_a_vague_description_lets_a_better_described_tool_win():
    vague = fn("calculate_discount", "A helper.", {"x": {"type": "number", "description": "x"},
                                                    "y": {"type": "number", "description": "y"}})
    assert calls_of(plan(body([user(DISCOUNT_QUESTION)], [WEATHER, ADD, MULTIPLY, vague]))) == [
        ("multiply", {"a": 200, "b": 0.8})]
    ranked = [t.name for _, t in rank_tools(analyse(body([user(DISCOUNT_QUESTION)], [vague, MULTIPLY])))]
    assert ranked == ["multiply", "calculate_discount"]


def test_a_described_tool_outranks_one_that_only_has_a_fitting_name():
    named = fn("get_weather", "", {"city": {"type": "string"}})
    described = fn("lookup", "查询指定城市的天气", {"q": {"type": "string", "description": "城市"}})
    by_parameter = fn("lookup2", "Look something up", {"q": {"type": "string", "description": "要查天气的城市"}})
    ranked = [t.name for _, t in rank_tools(analyse(body([user("北京天气怎么样？")], [named, described])))]
    assert ranked == ["lookup", "get_weather"]
    ranked = [t.name for _, t in rank_tools(analyse(body([user("北京天气怎么样？")], [named, by_parameter])))]
    assert ranked == ["lookup2", "get_weather"]


def test_person_names():
    tool = fn("get_user_info", "Look up a user", {"user_name": {"type": "string", "description": "The user's name"}})
    for question, name in [("查一下李四的用户信息", "李四"), ("look up the user Alice", "Alice"),
                           ("用户小明的信息", "小明")]:
        assert calls_of(plan(body([user(question)], [tool]))) == [("get_user_info", {"user_name": name})]


def test_ids_from_the_request():
    assert calls_of(plan(body([user("查一下订单 A1001 和 A1002 的详情")], [DETAIL]))) == \
        [("get_order_detail", {"order_id": "A1001"}), ("get_order_detail", {"order_id": "A1002"})]
    numeric = fn("get_order", "查询订单详情", {"order_id": {"type": "integer", "description": "订单号"}})
    assert calls_of(plan(body([user("订单1001现在什么状态")], [numeric]))) == [("get_order", {"order_id": 1001})]


def test_a_learner_who_edits_the_question_gets_a_different_run():
    first = calls_of(plan(body([user("北京现在天气怎么样？")], [WEATHER, ADD])))
    edited = calls_of(plan(body([user("广州现在天气怎么样？")], [WEATHER, ADD])))
    sums = calls_of(plan(body([user("请计算 7 + 8")], [WEATHER, ADD])))
    assert first == [("get_weather", {"city": "北京"})] and edited == [("get_weather", {"city": "广州"})]
    assert sums == [("add_numbers", {"a": 7, "b": 8})]


def test_relevance_ranks_by_overlap():
    s = analyse(body([user("北京天气怎么样")], [ADD, WEATHER, SEARCH]))
    ranked = [(score, tool.name) for score, tool in rank_tools(s)]
    assert ranked[0][1] == "get_weather" and ranked[0][0] > 0 and all(score == 0 for score, _ in ranked[1:])


# -----------------------------------------------------------------------------
# 9. conversations


def test_follow_up_reuses_the_previous_tool():
    history = [user("北京天气怎么样"), called(("get_weather", {"city": "北京"})), result(WEATHER_DATA["北京"]),
               {"role": "assistant", "content": "北京：温度 22。"}]
    assert calls_of(plan(body(history + [user("那上海呢？")], [WEATHER, ADD]))) == [("get_weather", {"city": "上海"})]
    assert calls_of(plan(body(history + [user("And London?")], [WEATHER]))) == [("get_weather", {"city": "London"})]


def test_a_follow_up_naming_one_place_changes_the_destination_not_the_origin():
    asked = {"origin": "上海", "destination": "东京", "date": "下周五"}
    history = [user("下周五从上海飞东京的航班"), called(("search_flights", asked)), result([]),
               {"role": "assistant", "content": "没有找到航班。"}]
    assert calls_of(plan(body(history + [user("那大阪呢？")], [FLIGHTS]))) == [
        ("search_flights", {**asked, "destination": "大阪"})]
    assert calls_of(plan(body(history + [user("那从北京呢？")], [FLIGHTS]))) == [
        ("search_flights", {**asked, "origin": "北京"})]


def test_follow_up_restarts_a_chain_for_a_new_person():
    history = [user("帮我看看张三最近买了什么"), called(("get_user_info", {"user_name": "张三"})),
               result({"user_id": 1001}), called(("get_orders", {"user_id": 1001}), prefix="b"),
               result([], "b_0"), {"role": "assistant", "content": "张三没有订单。"}, user("那李四呢？")]
    assert calls_of(plan(body(history, [USER, ORDERS, DETAIL]))) == [("get_user_info", {"user_name": "李四"})]


def test_content_parts_and_system_messages():
    messages = [{"role": "system", "content": "你是助手"},
                {"role": "user", "content": [{"type": "text", "text": "北京天气"},
                                             IMAGE]}]
    assert calls_of(plan(body(messages, [WEATHER]))) == [("get_weather", {"city": "北京"})]


def test_images_a_tool_produced_are_not_a_new_question():
    messages = [user("北京天气"), called(("get_weather", {"city": "北京"})), result("media_id=img_1"),
                {"role": "user", "content": [{"type": "text", "text": "Tool output, not a message from the user:"},
                                             IMAGE]}]
    s = analyse(body(messages, [WEATHER]))
    assert s.request.text == "北京天气" and len(s.calls) == 1


# -----------------------------------------------------------------------------
# 10. determinism, purity, robustness


def test_same_request_same_reply():
    request = body([user("北京和上海哪个更暖和？")], [WEATHER, ADD])
    assert plan(request) == plan(json.loads(json.dumps(request)))


def test_same_reply_whatever_the_hash_seed():
    script = ("import json; from practice_model.planner import plan; "
              "r = plan(json.loads(input())); print(r.content, [(c.name, c.arguments) for c in r.tool_calls])")
    request = json.dumps(body([user("帮我看看张三最近买了什么还没发货，顺便查北京和上海天气")], [USER, ORDERS, DETAIL, WEATHER]))
    outputs = {subprocess.run([sys.executable, "-c", script], input=request, capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3")}
    assert len(outputs) == 1 and "get_weather" in outputs.pop()


def test_plan_does_not_mutate_the_request():
    request = body([user("北京天气"), called(("get_weather", {"city": "北京"})), result(WEATHER_DATA["北京"])], [WEATHER])
    snapshot = json.dumps(request, sort_keys=True)
    plan(request)
    assert json.dumps(request, sort_keys=True) == snapshot


def test_internal_bugs_degrade_to_text(monkeypatch):
    def boom(_):
        raise KeyError("bug")
    monkeypatch.setattr(planner, "analyse", boom)
    reply = plan(body([user("北京天气")], [WEATHER]))
    assert not reply.tool_calls and "practice model" in reply.content


def _weird_value(rng: random.Random, depth: int = 0):
    choices = [None, "", "北京", "Paris", "一百二十三", "12abc", "x" * 5000, "\u0000", "{", "[1,2", -1, 3.5, True,
               ["a", 1], {"k": "v"}, {"type": "text", "text": "hi"}, "AAPL", "bob@example.com", "2024年5月20日"]
    if depth < 2 and rng.random() < 0.3:
        return {rng.choice(["type", "properties", "items", "enum", "$ref", "anyOf", "required", "x"]):
                _weird_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice(choices)


def _weird_request(rng: random.Random) -> dict:
    tools = [WEATHER, ADD, ORDERS, EVENT, CONVERT,
             {"type": "function", "function": {"name": "odd", "parameters": _weird_value(rng)}},
             {"type": "function", "function": {"name": "odd2", "description": _weird_value(rng),
                                               "parameters": {"type": "object", "properties": {
                                                   "p": _weird_value(rng), "q": {"$ref": "#/nowhere"}},
                                                   "required": _weird_value(rng)}}},
             _weird_value(rng)]
    messages = []
    for _ in range(rng.randint(0, 5)):
        role = rng.choice(["user", "assistant", "tool", "system", "developer", None])
        message = {"role": role, "content": _weird_value(rng)}
        if role == "assistant" and rng.random() < 0.6:
            name = rng.choice(["get_weather", "add_numbers", "get_orders", "nope", None])
            message["tool_calls"] = [{"id": "c1", "type": "function",
                                      "function": {"name": name, "arguments": rng.choice(
                                          ['{"city":"北京"}', "{bad", "null", '{"a":1,"b":2}', None, "[]"])}}]
        if role == "tool":
            message["tool_call_id"] = "c1"
        messages.append(message)
    messages.append(user(rng.choice(["北京天气", "3+4", "hi", "", None, "张三的订单", "x" * 20000,
                                     [{"type": "text", "text": "Paris weather"}], "Convert 1 USD to EUR"])))
    return {"messages": messages, "tools": rng.sample(tools, rng.randint(0, len(tools))),
            "tool_choice": rng.choice([None, "auto", "none", "required", {"type": "function",
                                       "function": {"name": "get_weather"}}, {"type": "allowed_tools"}, 7]),
            "parallel_tool_calls": rng.choice([True, False, None])}


def test_hundreds_of_weird_requests_always_get_a_reply():
    rng = random.Random(20240520)
    for _ in range(400):
        request = _weird_request(rng)
        reply = respond(analyse(request))            # the unwrapped pipeline: a bug here fails the test
        assert isinstance(reply, Reply) and (reply.content or reply.tool_calls)
        for call in reply.tool_calls:
            assert isinstance(json.loads(call.arguments), dict)


@pytest.mark.parametrize("request_", [None, {}, {"messages": None}, {"messages": "hi"}, {"messages": [None, 3]},
                                      {"messages": [user("北京天气")], "tools": "nope"},
                                      {"messages": [user("北京天气")], "tools": [{"function": {}}]}])
def test_malformed_bodies(request_):
    reply = respond(analyse(request_))
    assert isinstance(reply, Reply) and reply.content


def test_the_pieces_are_usable_on_their_own():
    s = analyse(body([user("北京和上海的天气")], [WEATHER, ADD]))
    tool = next(t for t in s.tools if t.name == "get_weather")
    assert fill_arguments(tool, s).variants == ({"city": "北京"}, {"city": "上海"})
    assert next_calls(s) == [("get_weather", {"city": "北京"}), ("get_weather", {"city": "上海"})]
    done = analyse(body([user("北京天气"), called(("get_weather", {"city": "北京"})), result({"temperature": 22})],
                        [WEATHER]))
    assert next_calls(done) == [] and compose_answer(done) == "北京：温度 22。"


def test_when_two_tools_fit_the_same_values_only_the_better_one_is_called():
    pair = {"a": {"type": "number"}, "b": {"type": "number"}}
    multiply = {"type": "function", "function": {"name": "multiply", "description": "计算两个数字相乘的结果",
                "parameters": {"type": "object", "properties": pair, "required": ["a", "b"]}}}
    discount = {"type": "function", "function": {"name": "calculate_discount", "description": "计算打折后的价格（折扣）",
                "parameters": {"type": "object", "properties": {"price": {"type": "number", "description": "原价"},
                               "discount": {"type": "number", "description": "折扣系数"}}, "required": ["price", "discount"]}}}
    reply = plan(body([user("这件衣服原价200元，打八折后多少钱？")], [WEATHER, multiply, discount]))
    assert calls_of(reply) == [("calculate_discount", {"price": 200, "discount": 0.8})]
    reply = plan(body([user("北京天气怎么样？另外123加456等于多少")], [WEATHER, ADD]))
    assert [name for name, _ in calls_of(reply)] == ["get_weather", "add_numbers"]  # different values: both


def test_two_different_asks_about_the_same_city_call_both_tools():
    hotels = {"type": "function", "function": {"name": "search_hotels", "description": "搜索指定城市的酒店",
              "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "城市"}},
                             "required": ["city"]}}}
    reply = plan(body([user("What's the weather and hotels in Paris?")], [WEATHER, hotels]))
    assert sorted(name for name, _ in calls_of(reply)) == ["get_weather", "search_hotels"]


# -----------------------------------------------------------------------------
# 11. pitfalls the well-behaved persona shows, because real models do


CLOCK = fn("get_current_date", "获取今天的日期（读本机时钟）", {})


@pytest.mark.parametrize("question,tools,expected", [
    ("今天几号？", [], "今天是 2024 年 6 月 12 日，星期三。"),
    ("今天星期几？", [WEATHER, ADD], "今天是 2024 年 6 月 12 日，星期三。"),
    ("What's the date today?", [], "Today is Wednesday, June 12, 2024."),
    ("现在几点了？", [], "现在是 2024 年 6 月 12 日（星期三）下午 3 点左右。"),
])
def test_without_a_clock_the_date_is_confidently_wrong(question, tools, expected):
    request = {"model": "practice", "messages": [user(question)], **({"tools": tools} if tools else {})}
    reply = plan(request)
    assert not reply.tool_calls and reply.content == expected
    assert plan(json.loads(json.dumps(request))) == reply                       # the same wrong date every time


@pytest.mark.parametrize("question,output,expected", [
    ("今天几号？", {"date": "2025-03-01"}, "今天是 2025 年 3 月 1 日，星期六。"),
    ("What's the date today?", "2025-03-01", "Today is Saturday, March 1, 2025."),
    ("What's the date today?", {"status": "success", "data": {"today": "2025-12-31T09:30:00"}},
     "Today is Wednesday, December 31, 2025."),
])
def test_with_a_clock_the_model_calls_it_and_answers_from_it(question, output, expected):
    rounds, answer = drive(question, [WEATHER, CLOCK], lambda name, args: output)
    assert rounds == [[("get_current_date", {})]] and answer == expected


LOOSE_WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "查询城市当前的天气", "parameters": {
    "type": "object", "properties": {"city": {"type": "string", "description": "城市名，例如北京、上海"}}}}}  # no required


def test_without_a_required_list_the_first_call_leaves_the_argument_out():
    def safe_getter(name, args):                      # the 'safe' default that hides the problem
        return WEATHER_DATA[args.get("city", "北京")]
    rounds, answer = drive("上海天气怎么样？", [LOOSE_WEATHER], safe_getter)
    assert rounds == [[("get_weather", {})]]
    assert answer == "温度 22，天气 晴，风力 东北风3级。"        # 北京's weather, for a question about 上海, confidently
    with_required = calls_of(plan(body([user("上海天气怎么样？")], [WEATHER])))
    assert with_required == [("get_weather", {"city": "上海"})]


def test_an_error_for_the_missing_argument_makes_the_model_send_it():
    def strict(name, args):
        return {"error": "city is required"} if "city" not in args else WEATHER_DATA[args["city"]]
    rounds, answer = drive("上海天气怎么样？", [LOOSE_WEATHER], strict)
    assert rounds == [[("get_weather", {})], [("get_weather", {"city": "上海"})]]
    assert answer == "上海：温度 25，天气 多云，风力 东南风2级。"          # the failure put right is not reported


@pytest.mark.parametrize("description", ["查询城市的实时天气。结果可能不准确，如有疑问请再次调用确认",
                                         "Current weather for a city. Results may be stale; call again to confirm."])
def test_a_doubtful_description_makes_the_model_call_again_and_again(description):
    doubtful = fn("get_weather", description, {"city": {"type": "string", "description": "城市名"}})
    rounds, answer = drive("上海天气怎么样？", [doubtful], fake_tools, max_rounds=12)
    assert rounds == [[("get_weather", {"city": "上海"})]] * planning.MAX_ROUNDS     # until the planner's own cap
    assert answer == "上海：温度 25，天气 多云，风力 东南风2级。"                        # reported once


def test_the_doubt_loop_ends_when_told_to_stop_repeating():
    doubtful = fn("get_weather", "查询城市的实时天气。结果可能不准确，如有疑问请再次调用确认", {"city": {"type": "string"}})
    seen = []

    def guarded(name, args):                           # what the framework's repeated-call guard answers
        seen.append(args)
        if len(seen) > 2:
            return {"status": "error", "error": "You already called get_weather with these same arguments 2 times. "
                                                "Do not repeat this call: use the result you already have."}
        return WEATHER_DATA[args["city"]]
    rounds, answer = drive("上海天气怎么样？", [doubtful], guarded)
    assert len(rounds) == 3 and "25" in answer and "失败" not in answer


def test_an_authoritative_description_gets_one_call():
    sure = fn("get_weather", "查询城市的实时天气，数据直接来自气象服务，查一次即可作答", {"city": {"type": "string"}})
    rounds, _ = drive("上海天气怎么样？", [sure], fake_tools)
    assert rounds == [[("get_weather", {"city": "上海"})]]


READINGS = {"北京": {"temperature": 22, "humidity": 35, "wind": "东北风3级", "aqi": 160}}
NARROW = [fn("get_temperature", "查询城市现在的气温（摄氏度）", {"city": {"type": "string"}}),
          fn("get_humidity", "查询城市现在的相对湿度（百分比）", {"city": {"type": "string"}}),
          fn("get_wind", "查询城市现在的风向和风力", {"city": {"type": "string"}}),
          fn("get_air_quality", "查询城市现在的空气质量指数（AQI，越低越好）", {"city": {"type": "string"}})]
RUNNING = fn("running_conditions", "判断城市现在适不适合户外跑步：综合气温、湿度、风力和空气质量，给出结论和理由",
             {"city": {"type": "string"}})


def weather_service(name: str, args: dict):
    now = READINGS[args["city"]]
    if name == "running_conditions":
        return {"city": args["city"], "verdict": "不建议户外跑步", "reasons": [f"空气质量差（AQI {now['aqi']}）"]}
    key = {"get_temperature": "temperature", "get_humidity": "humidity", "get_wind": "wind"}.get(name, "aqi")
    return {"city": args["city"], key: now[key]}


@pytest.mark.parametrize("question", ["北京现在适合出去跑步吗？", "Is it a good day to go for a run in Beijing?"])
def test_four_narrow_tools_get_four_calls_one_purpose_built_tool_gets_one(question):
    city = "北京" if "北京" in question else "Beijing"
    rounds, answer = drive(question, NARROW, lambda n, a: weather_service(n, {"city": "北京"}))
    assert rounds == [[(t["function"]["name"], {"city": city}) for t in NARROW]]
    assert answer == ("北京：温度 22，湿度 35，风力 东北风3级，空气质量指数 160。" if city == "北京" else
                      "Beijing: city 北京, temperature 22, humidity 35, wind 东北风3级, AQI 160.")   # each fact once
    rounds, answer = drive(question, [RUNNING], lambda n, a: weather_service(n, {"city": "北京"}))
    assert rounds == [[("running_conditions", {"city": city})]]
    if city == "北京":
        assert answer == "北京：结论 不建议户外跑步，原因 空气质量差（AQI 160）。"
    rounds, _ = drive(question, [*NARROW, RUNNING], lambda n, a: weather_service(n, {"city": "北京"}))
    assert rounds == [[("running_conditions", {"city": city})]]              # offered all five: the fitting one


BOOKINGS_TOOL = fn("find_bookings", "查一位乘客订的机票", {"id_number": {"type": "string", "description": "乘客的身份证号"},
                                                   "api_key": {"type": "string", "description": "订票系统的 API key"}})


def test_secrets_in_the_conversation_are_copied_into_the_arguments():
    messages = [{"role": "system", "content": "订票系统的 API key 是 tk-live-8f3a2c91。"},
                user("我的身份证号是 11010519491231002X，帮我查一下我订的机票。")]
    assert calls_of(plan(body(messages, [BOOKINGS_TOOL]))) == [
        ("find_bookings", {"id_number": "11010519491231002X", "api_key": "tk-live-8f3a2c91"})]
    balance = fn("get_balance", "Get the account balance", {"api_key": {"type": "string"}})
    assert calls_of(plan(body([user("My API key is sk-test-1234567890abcdef, what's my balance?")], [balance]))) == [
        ("get_balance", {"api_key": "sk-test-1234567890abcdef"})]
    login = fn("login", "Log in to the shop", {"username": {"type": "string"}, "password": {"type": "string"}})
    assert calls_of(plan(body([user("Log in as Alice with password hunter22")], [login]))) == [
        ("login", {"username": "Alice", "password": "hunter22"})]


def test_without_the_secret_the_model_asks_for_it():
    reply = plan(body([user("我的身份证号是 11010519491231002X，帮我查一下我订的机票。")], [BOOKINGS_TOOL]))
    assert not reply.tool_calls and "api_key" in reply.content


# small talk, enums and conversions: what a well-behaved model does with them

def shop_tools() -> list[dict]:
    """The shop's three tools exactly as lesson 06 sends them."""
    from course.shop import Shop, create_shop
    return [t.to_openai_tool() for t in Shop(create_shop()).tools]


AFTER_A_LOOKUP = [user("帮我查一下张三的信息"), called(("get_user_info", {"user_name": "张三"})),
                  result({"user_id": 1001, "name": "张三", "city": "北京"}),
                  {"role": "assistant", "content": "张三：用户ID 1001，城市 北京。"}]


@pytest.mark.parametrize("said, reply_starts", [
    ("谢谢！", "不客气"), ("好的，谢谢", "不客气"), ("thank you", "You're welcome"), ("Thanks!", "You're welcome"),
    ("好的", "好的！"), ("OK", "Sure!"), ("收到", "好的！"), ("嗯嗯", "好的！"), ("你好", "你好！"), ("Hello there!", "Hello!"),
    ("再见", "再见！"), ("bye", "Goodbye!")])
def test_small_talk_after_a_lookup_is_answered_and_never_an_argument(said, reply_starts):
    for history in (AFTER_A_LOOKUP, []):
        reply = plan(body(history + [user(said)], shop_tools()))
        assert not reply.tool_calls, f"{said!r} called {calls_of(reply)}"
        assert reply.content.startswith(reply_starts), reply.content


def test_small_talk_is_not_made_into_an_argument_even_when_a_call_is_forced():
    for said in ("谢谢！", "OK", "好的"):
        forced = plan(body(AFTER_A_LOOKUP + [user(said)], shop_tools(), tool_choice="required"))
        assert calls_of(forced) == [("get_user_info", {"user_name": "张三"})]       # the last lookup again
        forced = plan(body([user(said)], shop_tools(), tool_choice={"type": "function",
                                                                       "function": {"name": "get_user_info"}}))
        assert calls_of(forced) == [("get_user_info", {"user_name": "user_name"})]   # visibly made up


def test_small_talk_words_are_not_names():
    from practice_model.language import read
    for text in ("谢谢！", "好的，谢谢", "查余额", "帮我查一下余额", "许多人在问"):
        assert read(text).of_kind("person") == [], text
    assert [e.value for e in read("张三的余额是多少").of_kind("person")] == ["张三"]
    assert [e.value for e in read("用户余华的订单").of_kind("person")] == ["余华"]    # 余 is still a surname
    assert [e.value for e in read("谢谢，那李四呢？").of_kind("person")] == ["李四"]


def test_a_balance_question_is_about_the_balance_not_a_person_named_yu():
    balance = fn("get_balance", "查询用户的账户余额", {"user_name": {"type": "string", "description": "用户姓名"}})
    reply = plan(body([user("查余额")], [balance]))
    assert not reply.tool_calls and reply.content.startswith("要调用 get_balance，我还需要知道：user_name")
    assert calls_of(plan(body([user("张三的余额是多少")], [balance]))) == [("get_balance", {"user_name": "张三"})]


RATE = fn("get_exchange_rate", "查询一种外币兑人民币的当前汇率（每 1 单位外币合多少元）",
          {"currency": {"type": "string", "enum": ["USD", "EUR", "JPY"], "description": "外币代码"}})
RATE_EN = fn("get_exchange_rate", "Get the exchange rate of a currency",
             {"currency": {"type": "string", "enum": ["USD", "EUR", "JPY"]}})


def test_an_enum_gets_a_member_the_request_names_never_another_value():
    for question in ("1美元现在能换多少人民币？", "100 dollars in yuan?", "现在的美元汇率是多少？"):   # not CNY as well
        assert calls_of(plan(body([user(question)], [RATE]))) == [("get_exchange_rate", {"currency": "USD"})]
    for tool in (RATE, RATE_EN):
        assert calls_of(plan(body([user("What's the exchange rate of the US dollar?")], [tool]))) == [
            ("get_exchange_rate", {"currency": "USD"})]
        assert calls_of(plan(body([user("欧元和日元的汇率")], [tool]))) == [
            ("get_exchange_rate", {"currency": "EUR"}), ("get_exchange_rate", {"currency": "JPY"})]
    for question in ("人民币汇率是多少？", "英镑汇率是多少？"):        # a currency the enum does not have: ask
        reply = plan(body([user(question)], [RATE]))
        assert not reply.tool_calls
        assert reply.content == "要调用 get_exchange_rate，我还需要知道：currency（外币代码；可选：USD、EUR、JPY）。请补充后再问我一次。"


def test_a_numeric_enum_gets_a_member_or_is_left_out():
    tool = fn("get_forecast", "查询城市未来几天的天气预报",
              {"city": {"type": "string", "description": "城市"},
               "days": {"type": "integer", "enum": [1, 3, 7], "description": "预报天数"}}, ["city"])
    assert calls_of(plan(body([user("北京未来3天的天气")], [tool]))) == [("get_forecast", {"city": "北京", "days": 3})]
    assert calls_of(plan(body([user("北京未来5天的天气")], [tool]))) == [("get_forecast", {"city": "北京"})]
    required = fn("get_forecast", "查询城市未来几天的天气预报",
                  {"city": {"type": "string", "description": "城市"},
                   "days": {"type": "integer", "enum": [1, 3, 7], "description": "预报天数"}})
    reply = plan(body([user("北京未来5天的天气")], [required]))
    assert not reply.tool_calls and "可选：1、3、7" in reply.content
    assert calls_of(plan(body([user("北京未来3天或5天的天气")], [required]))) == [
        ("get_forecast", {"city": "北京", "days": 3})]                  # no fan-out to 5, which is not a member


def _enum_problems(value, schema: dict, root: dict, path: str = "") -> list[str]:
    """Where a value breaks an enum of its schema (nested objects and arrays included)."""
    from practice_model.schemas import resolve
    schema = resolve(schema, root)
    problems = []
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        problems.append(f"{path}={value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        for k, v in value.items():
            problems += _enum_problems(v, (schema.get("properties") or {}).get(k, {}), root, f"{path}.{k}")
    if isinstance(value, list):
        problems += [p for v in value for p in _enum_problems(v, schema.get("items") or {}, root, f"{path}[]")]
    return problems


ENUM_TOOLS = [
    RATE, RATE_EN,
    fn("convert_currency", "把一笔钱从一种货币换算成另一种货币",
       {"amount": {"type": "number"}, "from_currency": {"type": "string", "enum": ["CNY", "USD", "EUR", "JPY"]},
        "to_currency": {"type": "string", "enum": ["CNY", "USD", "EUR", "JPY"]}}),
    fn("get_weather", "Get the weather for a city", {"city": {"type": "string", "enum": ["北京", "上海"]},
                                                      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}),
    fn("list_orders", "列出订单", {"status": {"type": "array", "items": {"enum": ["pending", "shipped"]}}}),
    fn("book_rooms", "预订酒店房间", {"hotel": {"type": "object", "required": ["city", "rooms"], "properties": {
        "city": {"type": "string", "enum": ["上海", "东京"]}, "rooms": {"type": "integer", "enum": [1, 2]}}}}),
]


@pytest.mark.parametrize("question", [
    "1美元现在能换多少人民币？", "100英镑换成韩元", "100 pounds in won?", "深圳和北京天气怎么样？用开尔文", "London weather in celsius",
    "已取消和已发货的订单", "在大阪订3间房", "在东京订2间房", "帮我查一下订单", "人民币兑美元", "50欧元和80美元换成日元"])
def test_no_call_sends_a_value_outside_an_enum(question):
    for choice in ("auto", "required"):
        reply = plan(body([user(question)], ENUM_TOOLS, tool_choice=choice))
        schemas = {t["function"]["name"]: t["function"]["parameters"] for t in ENUM_TOOLS}
        for name, args in calls_of(reply):
            assert _enum_problems(args, schemas[name], schemas[name]) == [], (question, name, args)


CONVERT_CURRENCY = fn(            # lesson 05's solution
    "convert_currency", "把一笔钱从一种货币换算成另一种货币（按当天汇率）",
    {"amount": {"type": "number", "description": "要换算的金额，例如 100"},
     "from_currency": {"type": "string", "enum": ["CNY", "USD", "EUR", "JPY"],
                       "description": "这笔钱原来的货币：CNY 人民币、USD 美元、EUR 欧元、JPY 日元"},
     "to_currency": {"type": "string", "enum": ["CNY", "USD", "EUR", "JPY"], "description": "要换成的货币，代码同上"}})
RATES = {"CNY": 1.0, "USD": 7.1, "EUR": 7.7, "JPY": 0.047}


def convert_money(name: str, args: dict) -> float:
    return round(args["amount"] * RATES[args["from_currency"]] / RATES[args["to_currency"]], 2)


def test_a_conversion_is_answered_in_words():
    usd_to_cny = [[("convert_currency", {"amount": 100, "from_currency": "USD", "to_currency": "CNY"})]]
    assert drive("100美元换成人民币是多少？", [CONVERT_CURRENCY], convert_money) == (usd_to_cny, "100 美元约合 710 元人民币。")
    assert drive("How much is 100 US dollars in yuan?", [CONVERT_CURRENCY], convert_money) == (
        usd_to_cny, "100 USD is about 710 CNY.")
    assert drive("100美元换成人民币是多少？", [CONVERT_CURRENCY], lambda n, a: {"result": 710.0})[1] == \
        "100 美元约合 710 元人民币。"
    assert drive("200欧元能换多少日元？", [CONVERT_CURRENCY], convert_money)[1] == "200 欧元约合 32765.96 日元。"
    temperature = fn("convert_temperature", "Convert a temperature between units",
                     {"value": {"type": "number"}, "from_unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                      "to_unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}})
    assert drive("What is 30 celsius in fahrenheit?", [temperature], lambda n, a: 86)[1] == "30°C is about 86°F."
    assert drive("30摄氏度是多少华氏度？", [temperature], lambda n, a: 86)[1] == "30 摄氏度约合 86 华氏度。"
    plain = fn("convert", "Convert an amount of money from one currency to another",      # no enum, English names
               {"amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}})
    assert drive("Convert 100 USD to EUR", [plain], lambda n, a: 92.5)[1] == "100 USD is about 92.5 EUR."


def test_only_a_conversion_is_worded_as_one():
    fare = fn("get_fare", "查询两个城市之间的机票价格",
              {"origin": {"type": "string", "description": "出发城市"}, "destination": {"type": "string",
               "description": "目的城市"}, "passengers": {"type": "integer", "description": "乘客人数"}})
    answer = drive("从北京到上海2位乘客的机票多少钱？", [fare], lambda n, a: 1200)[1]
    assert "约合" not in answer and "1200" in answer
