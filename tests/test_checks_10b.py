"""Exercise checker of lesson 10b: the solution passes, the stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

from checker_cases import boom, checker_tests, stub

from course import lesson10b


def bill(per_request, price, *, cached="own rate", per=1_000_000, completion_rate="output", rounded=False,
         first_only=False, none_rate="input"):
    """The solution, and (through the options) the ways it goes wrong."""
    if first_only:
        per_request = per_request[:1]
    cached_rate = price.cached_input
    if cached_rate is None:
        cached_rate = price.input if none_rate == "input" else None  # None: the TypeError a learner meets
    total = 0.0
    for r in per_request:
        if cached == "own rate":
            total += (r.prompt_tokens - r.cached_tokens) * price.input + r.cached_tokens * cached_rate
        elif cached == "twice":
            total += r.prompt_tokens * price.input + r.cached_tokens * cached_rate
        elif cached == "ignored":
            total += r.prompt_tokens * price.input
        if completion_rate == "output":
            total += r.completion_tokens * price.output
        elif completion_rate == "input":
            total += r.completion_tokens * price.input
    total /= per
    return round(total, 2) if rounded else total


def wrong_bill(**options):
    def bill_(per_request, price):
        return bill(per_request, price, **options)
    return bill_


def as_text(per_request, price):
    return f"${bill(per_request, price):.6f}"


def from_the_totals(per_request, price):
    """Prompt and completion totals only, the cached count read from the first request."""
    prompt = sum(r.prompt_tokens for r in per_request)
    completion = sum(r.completion_tokens for r in per_request)
    cached = per_request[0].cached_tokens if per_request else 0
    rate = price.input if price.cached_input is None else price.cached_input
    return ((prompt - cached) * price.input + cached * rate + completion * price.output) / 1e6


CASES = {
    "bill": (lesson10b.bill, [bill], [stub], [
        [wrong_bill(cached="twice")],  # cached tokens billed at input and again at cached_input
        [wrong_bill(cached="ignored")],  # every prompt token at input
        [wrong_bill(per=1_000)],  # per thousand
        [wrong_bill(completion_rate="input")],  # completions at the input rate
        [wrong_bill(completion_rate=None)],  # completions left out
        [wrong_bill(rounded=True)],  # rounded to cents
        [wrong_bill(first_only=True)],  # only the first request
        [wrong_bill(none_rate=None)],  # cached_input None multiplied: TypeError
        [as_text],  # a formatted string
        [from_the_totals],  # the cached tokens of the first request only
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_messages_say_what_went_wrong():
    assert "billed twice" in lesson10b.bill(wrong_bill(cached="twice")).message
    assert "cached_input" in lesson10b.bill(wrong_bill(cached="ignored")).message
    assert "1,000,000" in lesson10b.bill(wrong_bill(per=1_000)).message
    assert "four times" in lesson10b.bill(wrong_bill(completion_rate="input")).message
    assert "rounded" in lesson10b.bill(wrong_bill(rounded=True)).message
    assert "every request" in lesson10b.bill(wrong_bill(first_only=True)).message
    assert "None" in lesson10b.bill(wrong_bill(none_rate=None)).message
