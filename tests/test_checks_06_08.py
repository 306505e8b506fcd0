"""Exercise checkers of lessons 06-08: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import traceback
from typing import Literal

import openai
from checker_cases import checker_tests, stub

from course import lesson06, lesson06b, lesson07, lesson08
from course.shop import Shop, create_shop
from mini_framework import Executor, Tool, ToolError, connect, tool
from mini_framework.executor import redact

# -- lesson 06 -----------------------------------------------------------------------------------

RATES = {"USD": 7.12, "EUR": 7.75, "JPY": 0.047}


def rate_tool(description, decorate=True):
    """get_exchange_rate with `description` as its docstring's first line."""
    def get_exchange_rate(currency: Literal["USD", "EUR", "JPY"]) -> str:
        return json.dumps({"currency": currency, "yuan_per_unit": RATES[currency]})
    get_exchange_rate.__doc__ = f"{description}\n\nArgs:\n    currency: 外币代码：USD（美元）、EUR（欧元）、JPY（日元）\n"
    return tool(get_exchange_rate) if decorate else get_exchange_rate


FINAL_RATE = "查询一种外币兑人民币的当前汇率（每 1 单位外币合多少元），返回的就是最新牌价，查一次即可作答"


def budget_loop(client, model_name, question, tools, max_tokens, *, final=True, final_tools=False, count="total",
                requests=None, flag=True, given=True, count_final=True):
    """The solution, and (through the options) the ways it goes wrong."""
    if not given:
        client, _ = connect()
    executor, specs = Executor(tools), Tool.serialize_tools(tools)
    messages = [{"role": "user", "content": question}]
    spent = made = 0
    while (spent < max_tokens) if requests is None else (made < requests):
        response = client.chat.completions.create(model=model_name, messages=messages, tools=specs)
        made += 1
        spent += response.usage.completion_tokens if count == "completion" else response.usage.total_tokens
        reply = response.choices[0].message
        messages.append(reply)
        if not reply.tool_calls:
            return reply.content, spent, False
        messages += [result.message for result in executor.run_sync(reply.tool_calls)]
    if not final:
        return None, spent, flag
    response = client.chat.completions.create(model=model_name, messages=messages,
                                              **({"tools": specs} if final_tools else {}))
    if count_final:
        spent += response.usage.completion_tokens if count == "completion" else response.usage.total_tokens
    return response.choices[0].message.content, spent, flag


SHOP = Shop(create_shop())
PRODUCT_SQL = """SELECT DISTINCT o.order_id, u.name, o.status
                 FROM order_items i JOIN orders o USING (order_id) JOIN users u USING (user_id)
                 WHERE i.product {} ORDER BY o.order_id"""


def product_tool(query, decorate=True):
    def orders_with_product(product: str) -> list:
        """列出包含某件商品的订单：订单号、下单用户和订单状态"""
        return query(product)
    return tool(orders_with_product) if decorate else orders_with_product


# -- lesson 06b ----------------------------------------------------------------------------------

def call_key(name, arguments):
    try:
        return f"{name} {json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)}"
    except ValueError:
        return f"{name} {arguments.strip()}"


def key_or(broken):
    """call_key, with `broken(name, arguments)` deciding what arguments that are not JSON get."""
    def call_key_(name, arguments):
        try:
            return f"{name} {json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)}"
        except ValueError:
            return broken(name, arguments)
    return call_key_


def run_or_refuse(call, executor, seen, max_repeats=2, refuse=True, refusal_id=None, key=None,
                  refusal="You already called {name} with the same arguments. Answer with what you have."):
    key = (key or call_key)(call.function.name, call.function.arguments)
    seen[key] = seen.get(key, 0) + 1
    if seen[key] <= max_repeats or not refuse:
        return executor.run_sync([call])[0].message
    return {"role": "tool", "tool_call_id": refusal_id or call.id,
            "content": refusal.format(name=call.function.name)}


def with_broken_call_key():
    """The solution of exercise 2, calling an exercise-1 call_key that returns None for broken JSON."""
    source = (
        "def run_or_refuse(call, executor, seen, max_repeats=2):\n"
        "    key = call_key(call.function.name, call.function.arguments)\n"
        "    seen[key] = seen.get(key, 0) + 1\n"
        "    if seen[key] <= max_repeats:\n"
        "        return executor.run_sync([call])[0].message\n"
        "    return {'role': 'tool', 'tool_call_id': call.id, 'content': 'You already called it: answer now.'}\n")
    namespace = {"call_key": key_or(lambda name, arguments: None)}
    exec(source, namespace)
    return namespace["run_or_refuse"]


# -- lesson 07 -----------------------------------------------------------------------------------

async def answer_all(calls, functions, gather=True, completion_order=False, threads=True):
    async def run(call):
        function, arguments = functions[call.function.name], json.loads(call.function.arguments)
        if inspect.iscoroutinefunction(function):
            return await function(**arguments)
        return await asyncio.to_thread(function, **arguments) if threads else function(**arguments)

    if completion_order:
        results = [await done for done in asyncio.as_completed([run(c) for c in calls])]
    elif gather:
        results = await asyncio.gather(*(run(c) for c in calls))
    else:
        results = [await run(c) for c in calls]
    return [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]


async def answer_all_in_threads(calls, functions):
    """Every function handed to a thread, async ones too: their coroutines are never awaited."""
    results = await asyncio.gather(*(asyncio.to_thread(functions[c.function.name], **json.loads(c.function.arguments))
                                     for c in calls))
    return [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]


def run_with_progress(calls, function, on_done, how="as_completed"):
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(calls))) as pool:
        if how == "map":  # results in call order, progress reported afterwards, in call order
            for call, result in zip(calls, pool.map(function, calls)):
                results[call.id] = result
                on_done(call.id)
        elif how == "zip":  # finishing order zipped with call order: cross-wired
            futures = [pool.submit(function, call) for call in calls]
            for call, future in zip(calls, concurrent.futures.as_completed(futures)):
                results[call.id] = future.result()
                on_done(call.id)
        else:
            futures = {pool.submit(function, call): call for call in calls}
            for future in concurrent.futures.as_completed(futures):
                call = futures[future]
                results[call.id] = future.result()
                if how == "as_completed":
                    on_done(call.id)
                elif how == "result":
                    on_done(results[call.id])
    return [{"role": "tool", "tool_call_id": call.id, "content": results[call.id]} for call in calls]


def run_with_progress_sequential(calls, function, on_done):
    answers = []
    for call in calls:
        answers.append({"role": "tool", "tool_call_id": call.id, "content": function(call)})
        on_done(call.id)
    return answers


async def answer_by_deadline(calls, run, seconds, cancel=True, message=None, drop_late=False):
    tasks = [asyncio.ensure_future(run(call)) for call in calls]
    done, late = await asyncio.wait(tasks, timeout=seconds)
    if cancel:
        for task in late:
            task.cancel()
    answers = []
    for call, task in zip(calls, tasks):
        if task in done:
            content = task.result()
        elif drop_late:
            continue
        else:
            content = message if message is not None else json.dumps({"status": "error", "error": (
                f"{call.function.name} did not answer within {seconds:g} s and was stopped. "
                "Answer with the other results, and tell the user this one is unavailable.")})
        answers.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return answers


async def deadline_per_call(calls, run, seconds):
    """asyncio.wait_for on each call, all at once: also right."""
    async def one(call):
        try:
            return await asyncio.wait_for(run(call), seconds)
        except asyncio.TimeoutError:
            return f"{call.function.name} did not answer within {seconds:g} s and was stopped; answer without it."
    results = await asyncio.gather(*(one(c) for c in calls))
    return [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]


async def deadline_for_all(calls, run, seconds):
    """wait_for around the whole gather: one late call loses every result."""
    try:
        results = await asyncio.wait_for(asyncio.gather(*(run(c) for c in calls)), seconds)
    except asyncio.TimeoutError:
        results = [f"{c.function.name} did not answer within {seconds:g} s; tell the user it is unavailable."
                   for c in calls]
    return [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]


async def no_deadline(calls, run, seconds):
    results = await asyncio.gather(*(run(c) for c in calls))
    return [{"role": "tool", "tool_call_id": c.id, "content": r} for c, r in zip(calls, results)]


# -- lesson 08 -----------------------------------------------------------------------------------

def format_error(exc, call, redacted=True, flag=True):
    text = str(exc) if isinstance(exc, ToolError) else f"{call.name} failed: {type(exc).__name__}: {exc}"
    envelope = {"status": "error", "error": redact(text) if redacted else text}
    if flag:
        envelope["retryable"] = isinstance(exc, ConnectionError)
    return json.dumps(envelope, ensure_ascii=False)


def order_tool(missing, decorate=True):
    """find_order, with `missing(order_id)` deciding what happens to an order that doesn't exist."""
    def find_order(order_id: str) -> dict:
        """读取一个订单的明细"""
        order = SHOP.get_order_detail(order_id)
        return missing(order_id) if "error" in order else order
    return tool(find_order) if decorate else find_order


def actionable(order_id):
    raise ToolError(f"没有找到订单号为 {order_id} 的订单。订单号是12位数字；请先用 get_orders 查询订单列表。")


def vague(order_id):
    raise ToolError("order not found")


def crash(order_id):
    raise KeyError(order_id)


def returns_error_dict(order_id):
    return {"error": f"没有找到订单号为 {order_id} 的订单。订单号是12位数字；请先用 get_orders 查询订单列表。"}


def answer_or_apologise(client, model_name, question, catch=(openai.APIError,),
                        apology=lambda error: "抱歉，服务暂时繁忙，请稍后再试。"):
    try:
        reply = client.chat.completions.create(model=model_name, messages=[{"role": "user", "content": question}])
    except catch as error:
        return apology(error)
    return reply.choices[0].message.content


def answer_with_own_retries(client, model_name, question):
    for _ in range(3):  # retries on top of the client's own
        try:
            reply = client.chat.completions.create(model=model_name, messages=[{"role": "user", "content": question}])
        except openai.APIError:
            continue
        return reply.choices[0].message.content
    return "抱歉，服务暂时繁忙，请稍后再试。"


def good_words_wrong_exception(order_id):
    raise ValueError(f"没有找到订单号为 {order_id} 的订单。订单号是12位数字；请先用 get_orders 查询订单列表。")


def no_hint(order_id):
    raise ToolError(f"没有找到订单 {order_id}。")


CASES = {
    # lesson 06
    "exchange_rate": (lesson06.exchange_rate, [rate_tool(FINAL_RATE)], [rate_tool(lesson06.STUB_DESCRIPTION)], [
        [rate_tool("Current exchange rate of a currency in yuan. Rates move fast and may be stale: call again "
                   "to confirm.")],
        [rate_tool("查询一种外币兑人民币的汇率，如有疑问请再查一次")],                  # still hedging
        [rate_tool("查询一种外币兑人民币的汇率，结果可能不准确")],
        [rate_tool("A helper.")],                                                 # says nothing of rates
        [rate_tool(FINAL_RATE, decorate=False)],                                  # @tool removed
    ]),
    "budget_loop": (lesson06.budget_loop, [budget_loop], [stub], [
        [lambda *a: budget_loop(*a, final=False)],                  # no last request: no answer
        [lambda *a: budget_loop(*a, final_tools=True)],             # last request still offers tools
        [lambda *a: budget_loop(*a, count="completion")],           # counts completion tokens only
        [lambda *a: budget_loop(*a, requests=5)],                   # a request cap in disguise
        [lambda *a: budget_loop(*a, flag=False)],                   # never says it was capped
        [lambda *a: budget_loop(*a, given=False)],                  # ignores the client it was given
        [lambda *a: budget_loop(*a, count_final=False)],            # the last request's tokens not counted
        [lambda *a: (budget_loop(*a)[0], budget_loop(*a)[1])],      # two values, not three
    ]),
    "orders_with_product": (lesson06.orders_with_product,
                            [product_tool(lambda p: SHOP.query(PRODUCT_SQL.format("= ?"), p))],
                            [product_tool(lambda p: None)], [
        [product_tool(lambda p: SHOP.query(PRODUCT_SQL.format(f"= '{p}'")))],             # pasted into SQL
        [product_tool(lambda p: SHOP.query(PRODUCT_SQL.format("LIKE ?"), p))],             # wildcards
        [product_tool(lambda p: SHOP.query(PRODUCT_SQL.format("LIKE '%' || ? || '%'"), p))],
        [product_tool(lambda p: [r["order_id"] for r in SHOP.query(PRODUCT_SQL.format("= ?"), p)])],
        [product_tool(lambda p: SHOP.query("SELECT order_id FROM order_items WHERE product = ?", p))],
        [product_tool(lambda p: SHOP.query(PRODUCT_SQL.format("= ?"), p), decorate=False)],  # @tool removed
    ]),
    # lesson 06b
    "call_key": (lesson06b.call_key, [call_key], [stub], [
        [lambda name, arguments: f"{name} {arguments}"],                                 # spacing matters
        [lambda name, arguments: f"{name} {json.loads(arguments)}"],                     # key order matters
        [lambda name, arguments: json.dumps(json.loads(arguments), sort_keys=True)],     # name ignored
        [lambda name, arguments: f"{name} " + " ".join(                                   # 1 and "1" the same
            f"{k}={v}" for k, v in sorted(json.loads(arguments).items()))],
        [lambda name, arguments: hash(call_key(name, arguments))],                        # not a string
        [lambda name, arguments: f"{name} " + ",".join(                                   # comma-joined values
            str(v) for _, v in sorted(json.loads(arguments).items()))],
        [lambda name, arguments: f"{name} " + ",".join(                                   # comma-joined JSON values
            json.dumps(v, ensure_ascii=False) for _, v in sorted(json.loads(arguments).items()))],
        [lambda name, arguments: f"{name} {json.dumps(json.loads(arguments), sort_keys=True)}"],  # raises on broken
        [key_or(lambda name, arguments: None)],                                           # None for broken JSON
        [key_or(lambda name, arguments: name)],                                           # all broken calls alike
        [key_or(lambda name, arguments: "")],
        [key_or(lambda name, arguments: arguments)],                                      # name left out
    ]),
    "run_or_refuse": (lesson06b.run_or_refuse, [run_or_refuse], [stub], [
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(call, executor, seen, max_repeats, refuse=False)],
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(call, executor, seen, max_repeats, refusal_id="call_1")],
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(call, executor, {}, max_repeats)],  # forgets
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(                     # counts the raw text
            call, executor, seen, max_repeats, key=lambda name, arguments: f"{name} {arguments}")],
        [lambda call, executor, seen, max_repeats=2: run_or_refuse(                     # says nothing useful
            call, executor, seen, max_repeats, refusal="Error.")],
        [with_broken_call_key()],                                                       # exercise 1 not solved
    ]),
    "run_cost": (lesson06b.run_cost, [lambda u, i, o: (u.prompt_tokens * i + u.completion_tokens * o) / 1e6], [stub], [
        [lambda u, i, o: u.total_tokens * i / 1e6],
        [lambda u, i, o: u.prompt_tokens * i + u.completion_tokens * o],
        [lambda u, i, o: (u.prompt_tokens * o + u.completion_tokens * i) / 1e6],
        [lambda u, i, o: f"¥{(u.prompt_tokens * i + u.completion_tokens * o) / 1e6:.4f}"],   # text, not a number
        [lambda u, i, o: round((u.prompt_tokens * i + u.completion_tokens * o) / 1e6, 2)],  # rounded away
    ]),
    # lesson 07
    "answer_all": (lesson07.answer_all, [answer_all], [stub], [
        [lambda calls, functions: answer_all(calls, functions, gather=False)],             # one after another
        [lambda calls, functions: answer_all(calls, functions, completion_order=True)],    # cross-wired
        [lambda calls, functions: answer_all(calls, functions, threads=False)],            # blocks the loop
        [answer_all_in_threads],                                                           # coroutines unawaited
    ]),
    "run_with_progress": (lesson07.run_with_progress, [run_with_progress], [stub], [
        [lambda calls, function, on_done: run_with_progress(calls, function, on_done, how="map")],
        [lambda calls, function, on_done: run_with_progress(calls, function, on_done, how="zip")],
        [lambda calls, function, on_done: run_with_progress(calls, function, on_done, how="result")],
        [lambda calls, function, on_done: run_with_progress(calls, function, on_done, how="never")],
        [run_with_progress_sequential],
    ]),
    "answer_by_deadline": (lesson07.answer_by_deadline, [answer_by_deadline], [stub], [
        [lambda calls, run, seconds: answer_by_deadline(calls, run, seconds, cancel=False)],   # late task runs on
        [lambda calls, run, seconds: answer_by_deadline(calls, run, seconds, message="TimeoutError()")],
        [lambda calls, run, seconds: answer_by_deadline(calls, run, seconds, drop_late=True)],  # a call unanswered
        [deadline_for_all],
        [no_deadline],
    ]),
    # lesson 08
    "format_error": (lesson08.format_error, [format_error], [stub], [
        [lambda exc, call: format_error(exc, call, redacted=False)],
        [lambda exc, call: format_error(exc, call, flag=False)],
        [lambda exc, call: "".join(traceback.format_exception(exc))],
        [lambda exc, call: json.dumps({"status": "error", "error": str(exc), "retryable": False})],
        [lambda exc, call: json.loads(format_error(exc, call))],                     # a dict, not JSON text
        [lambda exc, call: format_error(exc, call).replace('"retryable": true', '"retryable": "yes"')],
        [lambda exc, call: json.dumps({"status": "error", "error": redact(f"{call.name}: {exc}"),   # no type named
                                       "retryable": isinstance(exc, ConnectionError)})],
    ]),
    "find_order": (lesson08.find_order, [order_tool(actionable)], [order_tool(lambda order_id: SHOP.get_order_detail(order_id))], [
        [order_tool(vague)],
        [order_tool(crash)],
        [order_tool(good_words_wrong_exception)],                                    # not a ToolError
        [order_tool(no_hint)],                                                       # says nothing of get_orders
        [order_tool(returns_error_dict)],                                            # returned, not raised
        [order_tool(actionable, decorate=False)],                                    # @tool removed
    ]),
    "answer_or_apologise": (lesson08.answer_or_apologise, [answer_or_apologise], [stub], [
        [answer_with_own_retries],
        [lambda client, model, question: answer_or_apologise(client, model, question, catch=())],     # no try
        [lambda client, model, question: answer_or_apologise(client, model, question,                 # 429 only
                                                             catch=(openai.RateLimitError,))],
        [lambda client, model, question: answer_or_apologise(client, model, question, catch=(Exception,))],
        [lambda client, model, question: answer_or_apologise(client, model, question, apology=str)],  # technical
        [lambda client, model, question: answer_or_apologise(client, model, question, apology=lambda e: None)],
        [lambda client, model, question: "抱歉，服务暂时繁忙，请稍后再试。"],                              # never asks
    ]),
}


test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


# -- the wrong answers the issue named, and right answers written another way ---------------------

def test_a_call_key_that_gives_broken_json_no_key_is_told_so():
    result = lesson06b.call_key(key_or(lambda name, arguments: None))
    assert result.status == "wrong" and "not valid JSON" in result.message, result.message


def test_a_deadline_that_leaves_the_late_call_running_is_told_to_cancel_it():
    result = lesson07.answer_by_deadline(lambda calls, run, seconds: answer_by_deadline(calls, run, seconds, cancel=False))
    assert result.status == "wrong" and "task.cancel()" in result.message, result.message


def test_a_deadline_per_call_is_right_too():
    assert lesson07.answer_by_deadline(deadline_per_call).passed


def test_progress_reported_from_the_worker_threads_is_right_too():
    def reporting_in_workers(calls, function, on_done):
        def run(call):
            result = function(call)
            on_done(call.id)
            return call.id, result
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(calls)) as pool:
            results = dict(pool.map(run, calls))
        return [{"role": "tool", "tool_call_id": c.id, "content": results[c.id]} for c in calls]
    assert lesson07.run_with_progress(reporting_in_workers).passed


def test_a_description_that_rules_out_a_second_call_is_not_mistaken_for_doubt():
    assert lesson06.doubt_in("查询一种外币兑人民币的当前汇率，查一次即可作答，无需再次查询确认") is None
    assert lesson06.doubt_in("Current exchange rate in yuan; one call is final, do not call again.") is None
    assert lesson06.doubt_in(lesson06.STUB_DESCRIPTION) is not None
