"""Checks for lesson 10b (cache and cost).

Exercise 1 bills runs the lesson never showed: one request, several, one with nothing cached, one
almost all cached, a price without a cached rate, and a run of no requests; each compared with the
sum the price list gives, to a millionth of a cent.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from mini_framework import Price
from mini_framework.state import RequestUsage

from .checking import CheckResult, Hints, NotSolved, run_check, solved

# ----------------------------------------------------------------------------- exercise 1

GPT41_MINI = Price(input=0.40, cached_input=0.10, output=1.60, as_of="2025-04-14")
NO_CACHE_RATE = Price(input=2.00, output=8.00, as_of="2025-04-14")  # a model whose price list has no cached rate
RUNS = [  # (what, requests, price)
    ("one request, nothing cached", [RequestUsage(1_200, 80, 0)], GPT41_MINI),
    ("one request, 1,024 of its 1,745 prompt tokens cached", [RequestUsage(1_745, 60, 1_024)], GPT41_MINI),
    ("three requests of a run", [RequestUsage(1_745, 21, 0), RequestUsage(1_787, 64, 1_664),
                                 RequestUsage(52_058, 95, 51_200)], GPT41_MINI),
    ("a price with no cached rate (cached_input is None)", [RequestUsage(3_000, 200, 2_048)], NO_CACHE_RATE),
    ("a run of no requests", [], GPT41_MINI),
]


def expected(per_request: list[RequestUsage], price: Price) -> float:
    """What the price list says: cached prompt tokens at the cached rate (or input), the rest at input."""
    cached_rate = price.input if price.cached_input is None else price.cached_input
    return sum((r.prompt_tokens - r.cached_tokens) * price.input + r.cached_tokens * cached_rate
               + r.completion_tokens * price.output for r in per_request) / 1_000_000


def _why(got: float, per_request: list[RequestUsage], price: Price) -> str:
    """The likely mistake behind a wrong total, in the learner's terms ('' when none fits)."""
    cached_rate = price.input if price.cached_input is None else price.cached_input
    prompt = sum(r.prompt_tokens for r in per_request)
    cached = sum(r.cached_tokens for r in per_request)
    completion = sum(r.completion_tokens for r in per_request)
    right = expected(per_request, price)
    guesses = [
        ((prompt * price.input + cached * cached_rate + completion * price.output) / 1e6,
         "cached tokens are billed twice: they are part of prompt_tokens, so bill prompt_tokens - cached_tokens at "
         "input and only cached_tokens at cached_input"),
        ((prompt * price.input + completion * price.output) / 1e6,
         "every prompt token is billed at input: the cached ones cost cached_input, a quarter of it here"),
        (right * 1000, "prices are per million tokens: divide by 1,000,000, not 1,000"),
        ((prompt - cached) * price.input / 1e6 + cached * cached_rate / 1e6 + completion * price.input / 1e6,
         "completion tokens are billed at input: they cost output, four times as much here"),
        ((prompt - cached) * price.input / 1e6 + cached * cached_rate / 1e6,
         "completion tokens are left out: the reply is billed too, at output"),
        (round(right, 2), "the total was rounded to cents: a run costs fractions of a cent, and a bill of a "
                          "thousand runs is summed before rounding, so return it unrounded"),
    ]
    if per_request:
        first = per_request[0]
        guesses.append((expected([first], price), "only the first request was billed: add up every request"))
    return next((why for value, why in guesses if math.isclose(got, value, rel_tol=1e-9, abs_tol=1e-12)), "")


def bill(bill: Callable[..., Any]) -> CheckResult:
    """Exercise 1: a run's cost from its requests' usage and a Price, cached tokens at their own rate."""
    def test() -> str:
        for what, per_request, price in RUNS:
            try:
                got = bill(list(per_request), price)
            except TypeError as error:
                if price.cached_input is None and "NoneType" in str(error):
                    raise AssertionError(f"for {what}, your code raised TypeError ({error}): when cached_input is "
                                         "None, the price list has no cached rate, and cached tokens cost input") \
                        from None
                raise
            solved(got)
            if isinstance(got, bool) or not isinstance(got, (int, float)):
                raise AssertionError(f"return the cost in US$ as a number (a float), not {type(got).__name__} "
                                     f"{got!r:.60}")
            right = expected(per_request, price)
            if not math.isclose(got, right, rel_tol=1e-9, abs_tol=1e-12):
                why = _why(got, per_request, price)
                raise AssertionError(f"for {what} your bill is {got:.8f} US$, and the price list gives {right:.8f}"
                                     + (f": {why}" if why else ": bill prompt_tokens - cached_tokens at input, "
                                        "cached_tokens at cached_input (input when it is None), completion_tokens "
                                        "at output, all per million"))
        return (f"{len(RUNS)} runs billed to the millionth of a cent: cached tokens at their own rate and not again at "
                "input, a price without a cached rate, completions at output, nothing rounded")
    return run_check(1, test, "Split each request's prompt into the part the cache served and the rest; each part "
                              "has its price.", recipe=hint.recipes[1])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("Take the cached rate from the price, or the input rate when the price has none. For each request, the "
        "prompt tokens not served from the cache cost input, the cached ones cost the cached rate, the completion "
        "tokens cost output. Add up every request and divide by a million (prices are per million tokens).\n"
        "中文：缓存价取 price 的 cached_input，没有时用 input。每个请求：未命中缓存的提示 token 按 input，"
        "命中的按缓存价，补全 token 按 output。把所有请求加起来，再除以一百万（价格按每百万 token 计）。"),
})

__all__ = ["NotSolved", "bill", "hint"]
