"""Exercise checkers of lessons 06-08: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import traceback

from checker_cases import checker_tests, stub

from course import lesson06, lesson07, lesson08
from course.shop import Shop, create_shop
from mini_framework import ToolError, connect, tool
from mini_framework.executor import redact

# -- lessons 06-08 ------------------------------------------------------------------------------

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


CASES = {
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
}


test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)
