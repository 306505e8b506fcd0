"""Checks for lesson 00 (setup and the practice model)."""
from __future__ import annotations

from typing import Any, Callable

from mini_framework import connect

from .checking import CheckResult, Hints, practice_in_use, run_check, solved

QUESTION = "你好！"
SECOND_QUESTION = "Hello! Who are you?"  # a reply in another language: ask() must send the question it is given
FOLLOW_UP = "今天几号？"

# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "make one request with client.chat.completions.create: the model is `model`, the messages one user "
        "message with `question`; the reply's text is in the first choice's message\n"
        "中文：用 client.chat.completions.create 发一个请求：model 用 `model`，messages 里只有一条内容为 "
        "question 的用户消息；回复的文字在第一个 choice 的 message 里"),
    2: (
        "make the same request as in Exercise 1; the response's usage says how many tokens it took in total "
        "(prompt plus completion)\n"
        "中文：发和练习 1 一样的请求，返回 response.usage.total_tokens（prompt_tokens 加 completion_tokens）"),
    3: (
        "the messages to send are history followed by the new user message; after the request, return those "
        "messages with one more: the assistant's reply, as a dict with role and content\n"
        "中文：要发的 messages 是 history 加上新的用户消息；请求之后，返回这些消息再加一条：assistant "
        "的回复，写成带 role 和 content 的字典"),
})


def _reference(messages: list[dict[str, Any]]):
    client, model = connect()
    return client.chat.completions.create(model=model, messages=messages)


def _not_the_text(value: Any, name: str) -> str | None:
    """What to say when `value` is a response or message object instead of the reply's text."""
    kind = type(value).__name__
    if kind == "ChatCompletion":
        return f"{name} returned the whole response (a ChatCompletion); the text is inside it, in choices[0]"
    if kind == "ChatCompletionMessage":
        return f"{name} returned the message object; its text is the message's .content"
    return None


def ask(ask: Callable[[str], str]) -> CheckResult:
    """Exercise 1: `ask(question)` returns the reply text of a one-message request."""
    def test() -> str:
        answer = solved(ask(QUESTION))
        wrong_kind = _not_the_text(answer, "ask()")
        assert wrong_kind is None, wrong_kind
        assert isinstance(answer, str), f"ask() returned a {type(answer).__name__}, not the reply's text (a str)"
        assert answer.strip(), "ask() returned an empty string"
        if not practice_in_use():  # a real model words its reply differently every time
            return f"ask({QUESTION!r}) → {answer[:80]!r}"
        for question, got in ((QUESTION, answer), (SECOND_QUESTION, ask(SECOND_QUESTION))):
            expected = _reference([{"role": "user", "content": question}]).choices[0].message.content
            if got == answer and question != QUESTION:
                raise AssertionError(
                    f"ask({question!r}) returned the same reply as ask({QUESTION!r}): send the `question` you are "
                    f"given as the message, not a fixed text")
            assert got == expected, (
                f"ask({question!r}) returned {got!r:.80}, but the model's reply is {expected!r:.80}: return the "
                f"reply's text unchanged")
        return f"ask({QUESTION!r}) → {answer!r}"
    return run_check(1, test, "Do what section 3 does, with `question` as the message, and return the reply's "
                              "text instead of printing it.", recipe=hint.recipes[1])


def tokens_used(tokens_used: Callable[[str], int]) -> CheckResult:
    """Exercise 2: `tokens_used(question)` returns `usage.total_tokens`."""
    def test() -> str:
        total = solved(tokens_used(QUESTION))
        assert isinstance(total, int) and not isinstance(total, bool), (
            f"tokens_used() returned a {type(total).__name__}, expected the number of tokens (an int)")
        assert total > 0, f"got {total}; every request uses some tokens: the question in, the reply out"
        if not practice_in_use():
            return f"{total} tokens"
        usage = _reference([{"role": "user", "content": QUESTION}]).usage
        assert total != usage.prompt_tokens, (
            f"{total} is prompt_tokens, the question's part only; the reply's tokens (completion_tokens) are "
            f"billed too, and total_tokens counts both")
        assert total != usage.completion_tokens, (
            f"{total} is completion_tokens, the reply's part only; the question's tokens (prompt_tokens) are "
            f"billed too, and total_tokens counts both")
        assert total == usage.total_tokens, (
            f"got {total}; the response reports prompt_tokens={usage.prompt_tokens}, "
            f"completion_tokens={usage.completion_tokens}, total_tokens={usage.total_tokens}")
        return f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion = {total} tokens"
    return run_check(2, test, "Every response says how many tokens it used; find where in section 3's JSON.",
                     recipe=hint.recipes[2])


def _role_and_content(message: Any) -> tuple[Any, Any]:
    """A message's role and content, whether it is a dict or the SDK's message object."""
    if isinstance(message, dict):
        return message.get("role"), message.get("content")
    return getattr(message, "role", None), getattr(message, "content", None)


def _check_turn(history: list, question: str, returned: Any, call: str) -> None:
    """`returned` must be `history` + the user's question + an assistant reply."""
    wrong_kind = _not_the_text(returned, call)
    assert not isinstance(returned, str) and wrong_kind is None, (
        f"{call} returned the reply alone; return the whole history, a list that ends with the question and "
        f"the reply, so the next turn can send it again")
    assert isinstance(returned, list), f"{call} should return the history (a list of messages), not a " \
                                       f"{type(returned).__name__}"
    grown = len(returned) - len(history)
    assert grown > 0, (
        f"{call} returned {len(returned)} message(s) for a history of {len(history)}: the earlier messages are "
        f"missing. Return the whole history, then the question and the reply")
    assert grown == 2, (
        f"{call} returned {len(returned)} message(s) for a history of {len(history)}: each turn adds two, the "
        f"user's question and the assistant's reply" + (" (one is missing)" if grown == 1 else ""))
    assert [_role_and_content(m) for m in returned[:len(history)]] == [_role_and_content(m) for m in history], (
        f"{call} changed the earlier messages; keep the history as it was and add to its end")
    role, content = _role_and_content(returned[-2])
    assert (role, content) == ("user", question), (
        f"the second-to-last message should be the question, {{'role': 'user', 'content': {question!r}}}, "
        f"not role={role!r}, content={content!r:.40}")
    role, content = _role_and_content(returned[-1])
    assert role == "assistant", (
        f"the last message should be the reply with role 'assistant', not {role!r}: a model reads its own earlier "
        f"replies by that role")
    assert isinstance(content, str) and content.strip(), "the reply's content should be the reply's text"


def chat(chat: Callable[[list, str], list]) -> CheckResult:
    """Exercise 3: a conversation is resent whole; each turn adds the question and the reply."""
    def test() -> str:
        first = solved(chat([], QUESTION))
        _check_turn([], QUESTION, first, f"chat([], {QUESTION!r})")
        history = list(first)
        second = chat(list(history), FOLLOW_UP)
        _check_turn(history, FOLLOW_UP, second, f"chat(history, {FOLLOW_UP!r})")
        if not practice_in_use():
            return "two turns, four messages"
        from practice_model import shared_server

        sent = shared_server().requests[-1]["request"].get("messages", [])
        expected = [*map(_role_and_content, history), ("user", FOLLOW_UP)]
        assert [(m.get("role"), m.get("content")) for m in sent] == expected, (
            f"the second request carried {len(sent)} message(s) ({', '.join(str(m.get('role')) for m in sent)}), "
            f"but the model needs the whole conversation: the server keeps nothing between requests, so send the "
            f"history and then the question")
        reply = _reference([{"role": r, "content": c} for r, c in expected]).choices[0].message.content
        assert _role_and_content(second[-1])[1] == reply, (
            f"the reply in the history should be the model's text, unchanged: {reply!r:.60}")
        return f"the second request carried all {len(sent)} messages; the history now has {len(second)}"
    return run_check(3, test, "A request must carry the whole conversation: the old messages, then the new "
                              "question.", recipe=hint.recipes[3])
