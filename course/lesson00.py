"""Checks for lesson 00 (setup and the practice model)."""
from __future__ import annotations

from typing import Callable

from mini_framework import connect

from .checking import CheckResult, Hints, practice_in_use, run_check, solved

QUESTION = "你好！"


def _reference(question: str):
    client, model = connect()
    return client.chat.completions.create(model=model, messages=[{"role": "user", "content": question}])


def ask(ask: Callable[[str], str]) -> CheckResult:
    """Exercise 1: `ask(question)` returns the reply text of a one-message request."""
    def test() -> str:
        answer = solved(ask(QUESTION))
        assert isinstance(answer, str), f"ask() returned a {type(answer).__name__}, not the reply text (a str)"
        assert answer.strip(), "ask() returned an empty string"
        if not practice_in_use():  # a real model words its reply differently every time
            return f"ask({QUESTION!r}) → {answer[:80]!r}"
        expected = _reference(QUESTION).choices[0].message.content
        assert answer == expected, f"ask({QUESTION!r}) returned {answer!r}, but the model's reply is {expected!r}"
        return f"ask({QUESTION!r}) → {answer!r}"
    return run_check(1, test, "create a completion with messages=[{'role': 'user', 'content': question}] "
                              "and return response.choices[0].message.content")


def tokens_used(tokens_used: Callable[[str], int]) -> CheckResult:
    """Exercise 2: `tokens_used(question)` returns `usage.total_tokens`."""
    def test() -> str:
        total = solved(tokens_used(QUESTION))
        assert isinstance(total, int), f"tokens_used() returned a {type(total).__name__}, expected an int"
        assert total > 0, f"got {total}; a request always uses some tokens"
        if not practice_in_use():
            return f"{total} tokens"
        usage = _reference(QUESTION).usage
        assert total == usage.total_tokens, (
            f"got {total}; the response reports prompt_tokens={usage.prompt_tokens}, "
            f"completion_tokens={usage.completion_tokens}, total_tokens={usage.total_tokens}")
        return f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion = {total} tokens"
    return run_check(2, test, "every response has a `usage` object; look at response.usage")


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "create a completion with messages=[{'role': 'user', 'content': question}] and return "
        "response.choices[0].message.content"),
    2: "every response has a `usage` object; look at response.usage",
})
