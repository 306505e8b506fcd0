"""Exercise checkers: pass the solution, say "not solved" to the stub, catch wrong answers, never raise."""
from __future__ import annotations

import asyncio
import concurrent.futures
import difflib
import json
import traceback
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from course import lesson00, lesson01, lesson02, lesson03, lesson04, lesson05, lesson06, lesson07, lesson08
from course.examples import FUNCTIONS, TOOLS
from course.shop import Shop, create_shop
from mini_framework import ToolError, connect, tool
from mini_framework.executor import redact
from mini_framework.numerals import parse_number
from mini_framework.schema import strict_schema


def stub(*args, **kwargs):
    return None


def boom(*args, **kwargs):
    raise KeyError("city")


# -- lesson 00 ----------------------------------------------------------------------------------

def ask(question):
    client, model = connect()
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": question}]).choices[0].message.content


def tokens(question):
    client, model = connect()
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": question}]).usage.total_tokens


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
        [lambda q: ask(q).upper()],                                  # not the model's text
        [lambda q: connect()[0].chat.completions.create(model="practice", messages=[{"role": "user", "content": q}])],
    ]),
    "tokens_used": (lesson00.tokens_used, [tokens], [stub], [
        [lambda q: connect()[0].chat.completions.create(model="practice", messages=[{"role": "user", "content": q}]).usage.prompt_tokens],
        [lambda q: 0],
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


# -- lessons 06-08 (implementations above the table would crowd it; they are added to it here) ---

def call_key(name, arguments):
    try:
        return f"{name} {json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)}"
    except ValueError:
        return f"{name} {arguments}"


def run_or_refuse(call, executor, seen, max_repeats=2, refuse=True, refusal_id=None):
    key = call_key(call.function.name, call.function.arguments)
    seen[key] = seen.get(key, 0) + 1
    if seen[key] <= max_repeats or not refuse:
        return executor.run_sync([call])[0].message
    return {"role": "tool", "tool_call_id": refusal_id or call.id,
            "content": f"You already called {call.function.name} with the same arguments. Answer with what you have."}


async def answer_concurrently(calls, run, gather=True, completion_order=False):
    if completion_order:
        results = [await done for done in asyncio.as_completed([run(c) for c in calls])]
    elif gather:
        results = await asyncio.gather(*(run(c) for c in calls))
    else:
        results = [await run(c) for c in calls]
    return [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]


def run_in_threads(calls, function, completion_order=False):
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(calls))) as pool:
        if not completion_order:
            return list(pool.map(lambda c: (c.id, function(c)), calls))
        futures = [pool.submit(function, c) for c in calls]
        return [(c.id, f.result()) for c, f in zip(calls, concurrent.futures.as_completed(futures))]


async def with_timeout(call, run, seconds, message=None):
    try:
        return await asyncio.wait_for(run(call), seconds)
    except asyncio.TimeoutError:
        return message if message is not None else (
            f"{call.function.name} did not answer within {seconds:g} s. Try again later or tell the user.")


def format_error(exc, call, redacted=True, flag=True):
    text = str(exc) if isinstance(exc, ToolError) else f"{call.name} failed: {type(exc).__name__}: {exc}"
    envelope = {"status": "error", "error": redact(text) if redacted else text}
    if flag:
        envelope["retryable"] = isinstance(exc, ConnectionError)
    return json.dumps(envelope, ensure_ascii=False)


SHOP = Shop(create_shop())


def order_tool(missing):
    """find_order, with `missing(order_id)` deciding what happens to an order that doesn't exist."""
    def find_order(order_id: str) -> dict:
        """查询订单的详细信息"""
        order = SHOP.get_order_detail(order_id)
        return missing(order_id) if "error" in order else order
    return tool(find_order)


def actionable(order_id):
    raise ToolError(f"没有找到订单号为 {order_id} 的订单。订单号是12位数字；请先用 get_orders 查询订单列表。")


def vague(order_id):
    raise ToolError("order not found")


def crash(order_id):
    raise KeyError(order_id)


CASES.update({
    "call_key": (lesson06.call_key, [call_key], [stub], [
        [lambda name, arguments: f"{name} {arguments}"],                                 # spacing matters
        [lambda name, arguments: f"{name} {json.loads(arguments)}"],                     # key order matters
        [lambda name, arguments: json.dumps(json.loads(arguments), sort_keys=True)],     # name ignored
    ]),
    "run_or_refuse": (lesson06.run_or_refuse, [run_or_refuse], [stub], [
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(call, executor, seen, max_repeats, refuse=False)],
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(call, executor, seen, max_repeats, refusal_id="call_1")],
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(call, executor, {}, max_repeats)],  # forgets
    ]),
    "run_cost": (lesson06.run_cost, [lambda u, i, o: (u.prompt_tokens * i + u.completion_tokens * o) / 1e6], [stub], [
        [lambda u, i, o: u.total_tokens * i / 1e6],
        [lambda u, i, o: u.prompt_tokens * i + u.completion_tokens * o],
        [lambda u, i, o: (u.prompt_tokens * o + u.completion_tokens * i) / 1e6],
    ]),
    "answer_concurrently": (lesson07.answer_concurrently, [answer_concurrently], [stub], [
        [lambda calls, run: answer_concurrently(calls, run, gather=False)],
        [lambda calls, run: answer_concurrently(calls, run, completion_order=True)],
    ]),
    "run_in_threads": (lesson07.run_in_threads, [run_in_threads], [stub], [
        [lambda calls, function: [(c.id, function(c)) for c in calls]],
        [lambda calls, function: run_in_threads(calls, function, completion_order=True)],
    ]),
    "with_timeout": (lesson07.with_timeout, [with_timeout], [stub], [
        [lambda call, run, seconds: run(call)],                                      # no deadline
        [lambda call, run, seconds: with_timeout(call, run, seconds, message=str(asyncio.TimeoutError()))],
        [lambda call, run, seconds: with_timeout(call, run, seconds, message="timeout")],
    ]),
    "format_error": (lesson08.format_error, [format_error], [stub], [
        [lambda exc, call: format_error(exc, call, redacted=False)],
        [lambda exc, call: format_error(exc, call, flag=False)],
        [lambda exc, call: "".join(traceback.format_exception(exc))],
        [lambda exc, call: json.dumps({"status": "error", "error": str(exc), "retryable": False})],
    ]),
    "find_order": (lesson08.find_order, [order_tool(actionable)], [order_tool(lambda order_id: SHOP.get_order_detail(order_id))], [
        [order_tool(vague)],
        [order_tool(crash)],
    ]),
    "resilient_connection": (lesson08.resilient_connection, [lambda: connect("practice-flaky", max_retries=3, timeout=30)], [stub], [
        [lambda: connect("practice-flaky")],
        [lambda: connect("practice-flaky", max_retries=0, timeout=30)],
        [lambda: connect("practice-flaky", max_retries=1, timeout=30)],
    ]),
})


# -- lessons 03-05 ------------------------------------------------------------------------------

def _flights(origin: str, destination: str, date: str, max_stops: int = 1) -> list:
    """查询两个城市之间的航班

    Args:
        origin: 出发城市，例如上海
        destination: 到达城市，例如东京
        date: 出发日期
        max_stops: 最多经停次数
    """
    return []


def _flights_undescribed(origin: str, destination: str, date: str, max_stops: int = 1) -> list:
    """查询两个城市之间的航班"""
    return []


def _flights_all_required(origin: str, destination: str, date: str, max_stops: int) -> list:
    """查询两个城市之间的航班

    Args:
        origin: 出发城市
        destination: 到达城市
        date: 出发日期
        max_stops: 最多经停次数
    """
    return []


class _Booking(BaseModel):
    guests: int = Field(..., ge=1, le=8, description="number of guests")
    room: Literal["single", "double", "suite"] = Field(..., description="room type")
    nights: int = Field(..., ge=1, description="nights")


class _LooseBooking(BaseModel):
    guests: int = Field(..., description="number of guests")
    room: str = Field(..., description="room type")
    nights: int = Field(..., description="nights")


def _book(booking: _Booking) -> str:
    """Book a room."""
    return "ok"


def _book_loose(booking: _LooseBooking) -> str:
    """Book a room."""
    return "ok"


def _chinese(text):
    return parse_number(text) if text and set(text) <= set("零一二两三四五六七八九十百千万点负") else None


def _explain(error, tool_name):
    lines = [f"Invalid arguments for {tool_name}:"]
    lines += [f"- {'.'.join(map(str, p['loc']))}: got {json.dumps(p.get('input'), ensure_ascii=False)}; {p['msg']}"
              for p in error.errors()]
    return "\n".join(lines + [f"Fix these arguments and call {tool_name} again."])


def _coerce(arguments, schema):
    out = dict(arguments)
    for name, value in arguments.items():
        kind = schema.get("properties", {}).get(name, {}).get("type")
        if kind in ("integer", "number") and isinstance(value, str) and (n := parse_number(value)) is not None:
            if kind == "number" or float(n).is_integer():
                out[name] = int(n) if kind == "integer" else n
    return out


def _coerce_in_place(arguments, schema):
    arguments.update(_coerce(arguments, schema))
    return arguments


def _unknown(name, available):
    close = difflib.get_close_matches(name, available, n=1, cutoff=0.6)
    text = f"Unknown tool {name!r}. Available tools: {', '.join(available)}."
    return f"{text} Did you mean {close[0]!r}?" if close else text


def _discount(price: float, discount: float) -> float:
    """计算打折后的价格（折扣）

    Args:
        price: 原价
        discount: 折扣系数，例如八折是 0.8
    """
    return price * discount


def _discount_off_by(price: float, discount: float) -> float:
    """计算打折后的价格（折扣）

    Args:
        price: 原价
        discount: 折扣系数，例如八折是 0.8
    """
    return price * (1 - discount)  # 八折 read as "80% off"


@tool
def _weather(city: str) -> str:
    """查询天气"""
    return "{}"


@tool
def _multiply(a: float, b: float) -> float:
    """计算两个数字相乘的结果"""
    return a * b


REAL_TOOLS = [_weather, _multiply]

CASES.update({
    "to_strict": (lesson03.to_strict, [strict_schema], [stub], [
        [lambda schema: {**schema, "additionalProperties": False}],                     # optional ones not required
        [lambda schema: (schema.update(additionalProperties=False, required=list(schema["properties"])), schema)[1]],
        [lambda schema: {**schema, "required": list(schema["properties"]), "additionalProperties": False}],
    ]),
    "search_flights": (lesson03.search_flights, [tool(_flights)], [_flights], [
        [tool(_flights_undescribed)], [tool(_flights_all_required)]]),
    "book_room": (lesson03.book_room, [tool(_book)], [None], [[tool(_book_loose)]]),
    "parse_chinese_number": (lesson04.parse_chinese_number, [_chinese], [stub], [
        [lambda text: 102 if text == "十二" else _chinese(text)],                     # 十二 read as 一百零二
        [lambda text: abs(v) if isinstance(v := _chinese(text), (int, float)) else v],  # sign lost
        [lambda text: int(v) if isinstance(v := _chinese(text), float) else v],         # decimals lost
    ]),
    "explain_errors": (lesson04.explain_errors, [_explain], [stub], [
        [lambda error, name: f"Invalid arguments, call {name} again."],
        [lambda error, name: "\n".join(str(p["loc"]) for p in error.errors())],
        [lambda error, name: str(error)],
    ]),
    "coerce_numbers": (lesson04.coerce_numbers, [_coerce], [stub], [
        [_coerce_in_place],
        [lambda args, schema: {k: parse_number(v) if isinstance(v, str) and parse_number(v) is not None else v
                               for k, v in args.items()}],                              # ignores the schema
    ]),
    "unknown_tool_error": (lesson05.unknown_tool_error, [_unknown], [stub], [
        [lambda name, available: f"Unknown tool {name}"],
        [lambda name, available: _unknown(name, available) + " Did you mean 'multiply'?"],
    ]),
    "calculate_discount": (lesson05.calculate_discount, [tool(name="calculate_discount")(_discount), REAL_TOOLS],
                           [None, REAL_TOOLS], [
        [tool(name="calculate_discount")(_discount_off_by), REAL_TOOLS],
        [tool(name="discount")(_discount), REAL_TOOLS],
    ]),
})


@pytest.mark.parametrize("name", CASES)
def test_checker_passes_the_solution(name):
    checker, solution, _, _ = CASES[name]
    result = checker(*solution)
    assert result.passed, result.message


@pytest.mark.parametrize("name", CASES)
def test_checker_says_not_solved_to_the_stub(name):
    checker, _, stubbed, _ = CASES[name]
    result = checker(*stubbed)
    assert result.status == "not solved" and "not solved yet" in repr(result), result.message


@pytest.mark.parametrize("name,index", [(n, i) for n, case in CASES.items() for i in range(len(case[3]))])
def test_checker_catches_a_wrong_answer_without_raising(name, index):
    checker, _, _, wrong = CASES[name]
    result = checker(*wrong[index])
    assert result.status == "wrong" and repr(result).startswith("❌"), result.message
