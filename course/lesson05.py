"""Checks for lesson 05 (unknown tools)."""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from mini_framework import Executor, Tool, connect

from .checking import CheckResult, Hints, expect_text, expect_tool, practice_in_use, run_check, solved

FLIGHT_PARAMETERS = ["origin", "destination", "date", "max_stops"]
WEATHER_PARAMETERS = ["city"]
CURRENCY_QUESTION = "100美元换成人民币是多少？"  # How much is 100 US dollars in Chinese yuan?
RATES = {"CNY": 1.0, "USD": 7.1, "EUR": 7.7, "JPY": 0.047}  # yuan per unit, as in the lesson
_GENERIC = re.compile(r"(?i)^\W*(?:an?|the)?\s*(?:helper|tool|function|utility|method|converter|does stuff|todo)\W*$")


def _mentions(name: str, text: str) -> int:
    """How often `name` appears in `text` as a whole identifier (so 'city' is not found in 'City' or 'cityName')."""
    return len(re.findall(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text))


def unknown_arguments_message(message: Callable[[str, dict, list[str]], str | None]) -> CheckResult:
    """Exercise 1: unknown argument names named, the real ones listed, the closest suggested only when close."""
    def test() -> str:
        sent = {"orgin": "上海", "destination": "东京", "date": "下周五"}
        near = expect_text(message("search_flights", dict(sent), list(FLIGHT_PARAMETERS)), "your message")
        assert _mentions("orgin", near), "say which argument the tool doesn't have: 'orgin' is not in your message"
        assert "search_flights" in near, "name the tool, so the model knows which of its calls to fix"
        for name in FLIGHT_PARAMETERS:
            assert _mentions(name, near), (
                f"list the tool's real parameters; {name!r} is missing, and the model can't send a name it isn't told")
        assert _mentions("origin", near) >= 2, (
            "'orgin' is one letter away from 'origin': suggest it (e.g. \"did you mean 'origin'?\"). Listing it among "
            "the parameters is not enough; the model should not have to work out which one it meant. "
            "difflib.get_close_matches finds close names")
        two = expect_text(message("search_flights", {"orgin": "上海", "destnation": "东京", "date": "下周五"},
                                  list(FLIGHT_PARAMETERS)), "your message")
        assert _mentions("destnation", two) and _mentions("destination", two) >= 2, (
            "with two misspelt arguments (orgin, destnation), report and suggest both: the model fixes only what it "
            "is told")
        far = expect_text(message("search_flights", {"airline": "东航"}, list(FLIGHT_PARAMETERS)), "your message")
        assert _mentions("airline", far), "say which argument the tool doesn't have: 'airline' is not in your message"
        for name in FLIGHT_PARAMETERS:
            assert _mentions(name, far) >= 1, f"list the tool's real parameters; {name!r} is missing"
            assert _mentions(name, far) == 1, (
                f"'airline' is not close to any parameter, yet your message names {name!r} more than once: a "
                "suggestion here would be a guess that sends the model the wrong way; suggest a name only when it "
                "is close (difflib.get_close_matches with its default cutoff 0.6)")
        case = expect_text(message("get_weather", {"City": "北京"}, list(WEATHER_PARAMETERS)), "your message")
        assert _mentions("City", case) and _mentions("city", case) >= 2, (
            "'City' for 'city': report it and suggest 'city' (names are case-sensitive for the tool, not for the "
            "model's intent)")
        fine = message("get_weather", {"city": "北京"}, list(WEATHER_PARAMETERS))
        assert fine is None, (
            f"every argument of {{'city': '北京'}} is a real parameter, so return None (the call goes on to "
            f"validation), not {fine!r:.60}")
        return f"near and far misses answered, e.g. {near!r:.140}"
    return run_check(1, test, "The same idea as unknown_tool_message, one level down: which names are unknown, "
                              "what the real ones are, and which real one is close.", recipe=hint.recipes[1])


def _says_nothing(text: str | None, name: str) -> bool:
    words = (text or "").strip()
    return len(words) <= 2 or words.lower().replace(" ", "_") == name.lower() or bool(_GENERIC.match(words))


def convert_currency(convert_tool: Any, tools: list[Any]) -> CheckResult:
    """Exercise 2: the tool the model kept inventing, described so that it is picked and filled in right."""
    def test() -> str:
        converter = expect_tool(convert_tool, "convert_currency")
        assert converter.name == "convert_currency", (
            f"name it convert_currency, the name the model kept asking for, not {converter.name!r}")
        assert not _says_nothing(converter.description, converter.name), (
            f"the description {converter.description!r} says nothing a model can match a question against: say what "
            "it does, in the words users use (换算/兑换 currency, an amount of money from one currency to another)")
        params = converter.json_schema.get("properties", {})
        vague = [name for name, p in params.items() if _says_nothing(p.get("description"), name)]
        assert not vague, (
            f"describe every parameter (what it is, with an example); {vague} say nothing yet, so the model has to "
            "guess which currency goes where")
        assert list(params) == ["amount", "from_currency", "to_currency"], (
            f"the parameters are amount, from_currency and to_currency, in that order; yours are {list(params)}")
        args, kwargs = converter.bind(converter.validate({"amount": 100, "from_currency": "USD", "to_currency": "CNY"}))
        result = solved(converter(*args, **kwargs))
        assert not isinstance(result, str), (
            f"convert_currency returned the text {result!r}: return the number (710.0), and let the model word "
            "the answer; a number is also what other code can compute with")
        assert isinstance(result, (int, float)) and abs(result - 710) < 0.01, (
            f"100 USD at 7.1 yuan per dollar is 710 CNY, not {result!r}: amount × RATES[from] / RATES[to]")
        args, kwargs = converter.bind(converter.validate({"amount": 100, "from_currency": "USD", "to_currency": "EUR"}))
        assert abs(converter(*args, **kwargs) - 100 * 7.1 / 7.7) < 0.01, (
            "100 USD in EUR: go through yuan, amount × RATES[from] / RATES[to]")
        if not practice_in_use():
            return "a described convert_currency that converts 100 USD to 710 CNY"
        client, model = connect()
        offered = [*tools, converter]
        executor = Executor(offered)
        messages: list[Any] = [{"role": "user", "content": CURRENCY_QUESTION}]
        called, sent, failed = [], [], []
        for _ in range(4):
            message = client.chat.completions.create(
                model=model, messages=messages, tools=Tool.serialize_tools(offered)).choices[0].message
            messages.append(message)
            if not message.tool_calls:
                break
            called += [c.function.name for c in message.tool_calls]
            sent += [json.loads(c.function.arguments) for c in message.tool_calls]
            results = executor.run_sync(message.tool_calls)
            failed += [r.content for r in results if r.failure]
            messages += [r.message for r in results]
        assert called[:1] == ["convert_currency"], (
            f"asked {CURRENCY_QUESTION} (100 US dollars in yuan?), the model called {called or 'nothing'}: it picks "
            "the tool whose description matches the question, so say what convert_currency does in the words of "
            "such questions")
        assert not failed, (
            f"the model called convert_currency with {json.dumps(sent[0], ensure_ascii=False)} and got "
            f"{failed[0]!r:.120}: tell it which values your tool accepts (Literal['CNY', 'USD', ...] makes the "
            "currency codes an enum, and the description can say which currency each code is)")
        assert called == ["convert_currency"], f"the model needed {called}: one call of convert_currency should do"
        answer = messages[-1].content or ""
        assert "710" in answer, f"the answer should say 710: {answer!r}"
        return f"the model used your tool at once, with {json.dumps(sent[0], ensure_ascii=False)}: {answer}"
    return run_check(2, test, "Write it so a model reading only the name, the description and the parameter "
                              "descriptions knows when to call it and what to send.", recipe=hint.recipes[2])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "collect the argument names that are not in parameters; none means return None. Otherwise write one "
        "line per unknown name saying it is not a parameter of the tool, with a 'did you mean' when "
        "difflib.get_close_matches (n=1, cutoff=0.6) finds a close name; end by listing all the parameters "
        "and asking for a call with these names\n"
        "中文：找出 arguments 里不在 parameters 中的名字；没有就返回 "
        "None；否则每个未知名字一行，说明它不是这个工具的参数；用 difflib.get_close_matches(name, "
        "parameters, n=1, cutoff=0.6) 找到接近的名字时，加上“你是不是想用 "
        "…”；最后列出全部参数，并让模型用这些名字再调用一次"),
    2: (
        "a @tool convert_currency(amount: float, from_currency, to_currency), each currency a Literal of "
        "RATES' codes; convert into yuan with RATES, then into the target currency, rounded to 2 places; a "
        "docstring whose first line says it converts an amount of money between currencies (货币换算), and "
        "an Args: line per parameter\n"
        "中文：用 @tool 写 convert_currency(amount: float, from_currency, to_currency)，两个币种用 Literal "
        "限定为 RATES 里的币种；按 RATES 先换成人民币、再换成目标币种，保留两位小数；docstring "
        "第一行说明它在币种之间换算金额（货币换算），Args: 下每个参数一行说明"),
})
