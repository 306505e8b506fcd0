"""Checks for lesson 06 (the agent loop and iteration caps)."""
from __future__ import annotations

import json
import re
import sqlite3
from types import SimpleNamespace
from typing import Any, Callable

from mini_framework import Agent, connect, tool

from .checking import CheckResult, Hints, NotSolved, expect_tool, practice_in_use, run_check, solved
from .examples import WEATHER
from .shop import Shop, create_shop

# ----------------------------------------------------------------------------- exercise 1

RATE_QUESTION = "现在的美元汇率是多少？"
STUB_DESCRIPTION = "查询一种外币兑人民币的汇率。汇率变化很快，结果可能已经过时，如有疑问请再次查询确认"

# Words that tell a model its result may be wrong, or ask it to call again. "无需再次查询" (no need to
# query again) is fine: a clause that starts with a negation is left out before these are looked for.
DOUBT = re.compile(
    r"(?i)不准确|可能有误|可能不对|可能已?(?:经)?过时|过时|如有疑问|不确定|再次|再查|重新查询|多查|两次|多次|确认|核实|"
    r"\bagain\b|\btwice\b|\bconfirm|double[- ]?check|\bverify|\bstale\b|out[- ]of[- ]date|outdated|inaccurate|"
    r"\b(?:may|might|could) be (?:wrong|old|incorrect|off)|\bretry|if (?:in doubt|unsure|not sure)")
NEGATED = re.compile(r"(?i)(?:无需|不需要|不必|不用|不要|无须|没有必要|no need to|need not|do not|don't|never)"
                     r"[^，。；,.;!！?？]*")


def doubt_in(description: str) -> str | None:
    """The first words in `description` that invite a second call, or None.

    >>> doubt_in("结果可能不准确，如有疑问请再次调用确认"), doubt_in("查一次即可作答，无需再次查询")
    ('不准确', None)
    """
    found = DOUBT.search(NEGATED.sub(" ", description))
    return found.group(0) if found else None


def exchange_rate(get_exchange_rate: Any) -> CheckResult:
    """Exercise 1: a description that says what the result is, so one call is enough."""
    def test() -> str:
        rate_tool = expect_tool(get_exchange_rate, "get_exchange_rate")
        description = (rate_tool.description or "").strip()
        if description == STUB_DESCRIPTION:
            raise NotSolved
        assert description, ("the tool has no description: write the docstring's first line, or the model has "
                             "nothing to choose it by")
        invitation = doubt_in(description)
        assert invitation is None, (
            f"the description still invites a second call ({invitation!r}): a model that reads it calls again to "
            f"be sure. Say what the result is (the current rate) and that one call is enough")
        assert re.search(r"(?i)汇率|牌价|exchange|rate", description), (
            f"{description!r} does not say the tool gives an exchange rate (汇率): the model picks tools by "
            "their descriptions, so say what it returns")
        if not practice_in_use():
            return f"the description says what the tool returns, and invites no second call: {description}"
        client, model = connect()
        run = Agent(client, model, tools=[rate_tool], max_iterations=4, max_repeats=100).run(RATE_QUESTION)
        calls = [r for r in run.tool_results if r.call.name == rate_tool.name]
        assert calls, (f"the practice model did not pick your tool for {RATE_QUESTION!r}: say plainly what it "
                       "returns (an exchange rate, 汇率)")
        assert len(calls) == 1 and not run.capped, (
            f"the practice model called it {len(calls)} times for one question: say that the result is final")
        return f"one call, then the answer: {run.text}"
    return run_check(1, test, "What in the description makes the model doubt the result? Say what it returns instead.",
                     recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

class CountingClient:
    """A client whose chat.completions.create records each request (tools offered?, tokens) and stops
    a loop that never ends."""

    def __init__(self, client: Any, limit: int = 25) -> None:
        self.client, self.limit = client, limit
        self.requests: list[tuple[bool, int]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **params: Any) -> Any:
        if len(self.requests) >= self.limit:
            raise AssertionError(f"{self.limit} requests and still going: the budget never stopped the loop. "
                                 "Check what you have spent before each request")
        response = self.client.chat.completions.create(**params)
        tokens = response.usage.total_tokens if response.usage else 0
        self.requests.append((bool(params.get("tools")), tokens))
        return response


@tool
def _weather(city: str) -> str:
    """Today's weather in a city: temperature in °C, sky and wind.

    Args:
        city: the city, e.g. 上海
    """
    return json.dumps(WEATHER.get(city, {"error": f"no weather for {city}"}), ensure_ascii=False)


def _unpack(result: Any) -> tuple[Any, Any, Any]:
    solved(result)
    assert isinstance(result, tuple) and len(result) == 3, (
        f"return three things, (answer, tokens_spent, capped), not {type(result).__name__} {result!r:.60}")
    return result


def budget_loop(budget_loop: Callable[..., Any]) -> CheckResult:
    """Exercise 2: the loop, capped by tokens spent instead of requests, still ending with an answer."""
    def test() -> str:
        real, model = connect()
        client = CountingClient(real)
        answer, spent, capped = _unpack(budget_loop(client, model, "帮我看看张三最近买了什么还没发货",
                                                    Shop(create_shop()).tools, 20_000))
        assert client.requests, "no request went through the client you were given: use the `client` parameter"
        reported = sum(tokens for _, tokens in client.requests)
        assert spent == reported, (
            f"the API reported {reported} tokens over {len(client.requests)} responses, you counted {spent}: add "
            "response.usage.total_tokens of every response (prompt and completion), the last one included")
        assert capped is False, "the order lookup fits a budget of 20000 tokens easily: capped should be False"
        assert all(with_tools for with_tools, _ in client.requests), \
            "offer the tools on every request while the budget lasts"
        assert isinstance(answer, str) and answer, \
            f"the order lookup should end with the model's answer, not {answer!r}"
        lookup = f"{len(client.requests)} requests, {spent} tokens"
        if not practice_in_use():
            return f"the order lookup took {lookup}"
        _, loop_model = connect("practice-loop")
        client, budget = CountingClient(real), 500
        answer, spent, capped = _unpack(budget_loop(client, loop_model, "上海天气怎么样？", [_weather], budget))
        assert client.requests, "no request went through the client you were given: use the `client` parameter"
        assert isinstance(answer, str) and answer, (
            f"the looping model's run ended with {answer!r}, no answer: once the budget is spent, send one last "
            "request without tools and return its text")
        assert not client.requests[-1][0], "the last request still offered tools: leave `tools` out of it"
        running = 0
        for number, (with_tools, tokens) in enumerate(client.requests[:-1], start=1):
            assert with_tools, f"request {number} went without tools before the budget was spent"
            assert running < budget, (f"request {number} was sent with tools after {running} tokens, over the "
                                      f"budget of {budget}: check the budget before each request")
            running += tokens
        assert running >= budget, (f"you stopped offering tools after {running} tokens, before the budget of "
                                   f"{budget} was spent")
        reported = sum(tokens for _, tokens in client.requests)
        without_last = " (the last request, the one without tools, is missing)" \
            if spent == reported - client.requests[-1][1] else ""
        assert spent == reported, f"the API reported {reported} tokens in all, you counted {spent}{without_last}"
        assert capped is True, "the budget ended this run: return capped=True so the caller knows"
        return (f"the order lookup took {lookup}; the looping model was stopped after {len(client.requests)} "
                f"requests ({spent} tokens, budget {budget}) and answered: {answer}")
    return run_check(2, test, "Section 6's agent_loop, with tokens counted instead of requests.",
                     recipe=hint.recipes[2])


# ----------------------------------------------------------------------------- exercise 3

PRODUCTS = {"蓝牙耳机": [("202405230031", "张三", "pending")], "茶杯": [("202405240044", "张三", "pending")],
            "台灯": [("202405210018", "李四", "pending")], "机械键盘": [("202405220012", "张三", "shipped")],
            "不存在的商品": []}
ATTACKS = ["蓝牙耳机' OR '1'='1", "' OR 1=1 --", "x' UNION SELECT order_id, product, product FROM order_items --",
           "%", "_%", "蓝牙耳机'; DROP TABLE orders; --"]


def _rows(product_tool: Any, product: str) -> list[tuple[Any, Any, Any]]:
    try:
        rows = product_tool(product)
    except sqlite3.Error as error:
        raise AssertionError(f"the product name {product!r} broke the query ({error}): it was pasted into the "
                             "SQL text. Pass it as a parameter instead") from None
    solved(rows)
    assert isinstance(rows, list) and all(isinstance(r, dict) for r in rows), (
        f"return the rows shop.query(...) gives you (a list of dicts), not {type(rows).__name__} {rows!r:.60}")
    for row in rows:
        missing = [key for key in ("order_id", "name", "status") if key not in row]
        assert not missing, f"each row needs order_id, name (the buyer) and status; {row} lacks {missing}"
    return [(r["order_id"], r["name"], r["status"]) for r in rows]


def orders_with_product(orders_with_product: Any) -> CheckResult:
    """Exercise 3: a parameterised query no product name can change."""
    def test() -> str:
        product_tool = expect_tool(orders_with_product, "orders_with_product")
        for product, expected in PRODUCTS.items():
            got = _rows(product_tool, product)
            assert sorted(got) == expected, f"orders with {product!r} should be {expected}, got {got}"
        for attack in ATTACKS:
            got = _rows(product_tool, attack)
            if attack.startswith(("%", "_")):
                assert not got, (f"the product name {attack!r} matched {len(got)} orders: LIKE treats % and _ as "
                                 "wildcards. Compare the name exactly, with =")
            assert not got, (f"the product name {attack!r} returned {len(got)} orders: it changed the query. Put a "
                             "? in the SQL and pass the name to shop.query(sql, product)")
        return f"{len(PRODUCTS)} products found, {len(ATTACKS)} hostile names matched nothing and changed nothing"
    return run_check(3, test, "The shop's own tools show how a value reaches SQL without becoming SQL.",
                     recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "Delete the hedging (结果可能已经过时, 如有疑问请再次查询确认: they ask for another call). Say what "
        "the tool returns (a currency's current rate in yuan), that it is the latest rate, and that one "
        "call is enough to answer.\n"
        "中文：删掉让模型怀疑的话（结果可能已经过时、如有疑"
        "问请再次查询确认：它们在要求再调用一次）。说清工具"
        "返回什么（一种外币兑人民币的当前汇率）、这就是最新牌价，并说明查一次即可作答"),
    2: (
        "Copy agent_loop from section 6 and change three things: spent = 0 before the loop; keep the whole "
        "response = client.chat.completions.create(...) and add response.usage.total_tokens to spent after "
        "every request; loop `while spent < max_tokens`. After the loop, one request without tools= , its "
        "tokens added too; return (its content, spent, True). A reply without tool calls returns "
        "(reply.content, spent, False).\n"
        "中文：从第 6 节的 agent_loop 改三处：循环前 spent = 0；保留整个 response，每次请求后把 "
        "response.usage.total_tokens 加进 spent；循环条件改为 spent < max_tokens。循环结束后发一次不带 "
        "tools 的请求，它的 token 也加上，返回 (它的 content, spent, True)；回复没有工具调用时返回 (回复的 "
        "content, spent, False)"),
    3: (
        "one SELECT that joins order_items, orders and users on order_id and user_id and picks the order "
        "id, the user's name and the status, where product = ? (DISTINCT drops repeated orders); pass the "
        "product as shop.query's parameter: sqlite3 fills the ?, so the name is only ever compared\n"
        "中文：用一条 SELECT 把 order_items、orders、users 按 order_id 和 user_id "
        "连起来，取订单号、用户名和状态，条件是 product = ?（DISTINCT 去掉重复的订单）；商品名作为参数传给 "
        "shop.query，由 sqlite3 填进 ?，所以它只会被比较，不会被执行"),
})
