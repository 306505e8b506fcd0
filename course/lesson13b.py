"""Checks for lesson 13b (the support assistant: composing agents without losing anything).

Exercise 1 hands the learner's `child_answer` finished, empty, long and paused runs of a child agent (made
up here, no model involved) and checks what would reach the parent. Exercise 2 asks the learner's
`child_limit` what is left of the requests the children of one run share.
"""
from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any, Callable

from mini_framework import ToolError

from .checking import CheckResult, Hints, run_check, solved, where_in_your_code

# ----------------------------------------------------------------------------- exercise 1

SYSTEM = "你是退款专员。# How to use the tools: send_email ... (the child's whole system prompt)"


class Item:
    """A pending call that notes any decision taken on it (nobody but a person may decide)."""

    def __init__(self, summary: str) -> None:
        self.summary = summary
        self.decided: list[str] = []

    def approve(self, *args: Any, **kwargs: Any) -> None:
        self.decided.append("approve")

    def deny(self, *args: Any, **kwargs: Any) -> None:
        self.decided.append("deny")

    def edit(self, *args: Any, **kwargs: Any) -> None:
        self.decided.append("edit")

    def respond(self, *args: Any, **kwargs: Any) -> None:
        self.decided.append("respond")


def _run(text: str | None, pending: list[Item] | None = None) -> SimpleNamespace:
    """A child's RunResult, as far as exercise 1 needs one."""
    pending = pending or []
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "退款"}]
    if text is not None:
        messages.append({"role": "assistant", "content": text})
    return SimpleNamespace(text=text, messages=messages, pending=pending, paused=bool(pending), capped=False,
                           tool_results=[])


ANSWER = "订单202405230031已退款399元，确认邮件已发给zhang.san@example.com。"
LONG = "退货政策：" + "签收后七天内可无理由退货，商品需保持完好、配件齐全。" * 40  # about 1,000 characters


def _cut_count(returned: str, text: str) -> tuple[int, list[int]]:
    """How many characters of `text` start `returned`, and the numbers written after them."""
    kept = 0
    while kept < min(len(returned), len(text)) and returned[kept] == text[kept]:
        kept += 1
    numbers = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", returned[kept:])]
    return kept, numbers


def child_answer(child_answer: Callable[[Any, int], Any]) -> CheckResult:
    """Exercise 1: only the child's final answer reaches the parent, bounded; a pause is not an answer."""
    def test() -> str:
        answer = solved(child_answer(_run(ANSWER), 600))
        if SYSTEM[:12] in str(answer) or '"role"' in str(answer):
            raise AssertionError("your function returned the child's messages (its system prompt, its tool calls): "
                                 "that is the flood of section 2. Return only its final answer, result.text")
        if answer != ANSWER:
            raise AssertionError(f"for a short final answer you returned {answer!r:.80}: return result.text as it is")
        limit = 200
        long = child_answer(_run(LONG), limit)
        if not isinstance(long, str):
            raise AssertionError(f"for a long answer you returned {type(long).__name__}: return text")
        if long == LONG:
            raise AssertionError(f"for a {len(LONG)}-character answer and max_chars={limit} you returned all of it: "
                                 "the parent reads every character in every later request; cut it to max_chars")
        if len(long) > limit:
            raise AssertionError(f"for a {len(LONG)}-character answer and max_chars={limit} you returned {len(long)} "
                                 "characters: the note about the cut counts too, so keep fewer characters of the "
                                 "answer (max_chars minus the note's length)")
        kept, numbers = _cut_count(long, LONG)
        if kept < limit // 2:
            raise AssertionError(f"for a long answer you kept only {kept} of its first characters: keep as much of "
                                 "the answer's start as fits beside the note")
        if len(LONG) - kept not in numbers and len(LONG) not in numbers:
            raise AssertionError(f"you cut the answer after {kept} characters, but your note does not say how much "
                                 f"was left out ({len(LONG) - kept} characters) or how long the answer was "
                                 f"({len(LONG)}), so the parent model can't tell an answer that was cut from one that "
                                 "ended there. Add a note such as '…(cut: N characters in all)'")
        empty = child_answer(_run(None), 600)
        if not isinstance(empty, str) or not empty.strip() or empty.strip() == "None":
            raise AssertionError(f"for a child that finished without an answer (text None) you returned {empty!r}: "
                                 "say in words that it gave no answer, so the parent model does not read nothing")
        items = [Item("send_email(to='zhang.san@example.com', subject='退款已办理')"),
                 Item("send_email(to='li.si@example.com', subject='退款已办理')")]
        try:
            paused = child_answer(_run(None, items), 600)
        except ToolError as error:
            decided = [d for item in items for d in item.decided]
            if decided:
                raise AssertionError(f"your function called {decided[0]}() on the child's pending call: a tool must "
                                     "never decide for a person") from None
            missing = [item.summary for item in items if item.summary not in str(error)]
            if missing:
                raise AssertionError(f"your ToolError does not name the call(s) waiting, e.g. {missing[0]}: list each "
                                     "pending item's summary, so the model can tell the user what waits") from None
            return "the final answer only, cut with a note that counts, and a paused child reported, never approved"
        except Exception as error:
            raise AssertionError(f"for a paused child your function raised {type(error).__name__}: {error}"
                                 f"{where_in_your_code(error)}. Raise ToolError (from mini_framework) with the "
                                 "pending calls' summaries") from None
        decided = [d for item in items for d in item.decided]
        if decided:
            raise AssertionError(f"your function called {decided[0]}() on the child's pending call: a tool must never "
                                 "decide for a person")
        raise AssertionError(f"for a paused child you returned {paused!r:.80}: a pause is not an answer, and a tool "
                             "result makes the parent's run look fine. Raise ToolError naming the calls that wait, "
                             "so the failure is marked and the model tells the user")
    return run_check(1, test, "Look at result.paused first; then at result.text, and how long it is.",
                     recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

# (parent's max_iterations, share, requests the children spent, what the next child may make, why)
LIMIT_CASES: list[tuple[int, float, int, int, str]] = [
    (8, 1.0, 0, 8, "a share of 1: the children together may make as many requests as the parent"),
    (8, 0.5, 0, 4, "half of 8"),
    (8, 0.5, 3, 1, "4 for all the children, and 3 are spent: 1 left for the next one"),
    (8, 0.5, 4, 0, "all 4 are spent: 0, the next child may not start"),
    (8, 0.5, 6, 0, "more were spent than the share (a child's last request without tools): 0, never negative"),
    (3, 0.5, 0, 1, "half of 3 is 1.5: round down, or the children make more than their share"),
    (10, 0.25, 0, 2, "a quarter of 10 is 2.5: round down"),
    (5, 0.1, 0, 0, "a tenth of 5 is 0.5, rounded down to 0: the share allows no request"),
]


def child_limit(child_limit: Callable[[int, float, int], Any]) -> CheckResult:
    """Exercise 2: what is left of the children's shared budget."""
    def test() -> str:
        for number, (most, share, used, expected, why) in enumerate(LIMIT_CASES):
            answer = child_limit(most, share, used)
            if number == 0:
                solved(answer)
            if not isinstance(answer, int) or isinstance(answer, bool):
                raise AssertionError(f"child_limit({most}, {share}, {used}) returned {type(answer).__name__} "
                                     f"{answer!r:.40}: a number of requests is a whole number (int)")
            if answer != expected:
                raise AssertionError(f"child_limit({most}, {share}, {used}) returned {answer}, not {expected}: {why}")
        return f"{len(LIMIT_CASES)} budgets shared: share × the parent's cap, rounded down, less what was spent"
    return run_check(2, test, "How many requests do all the children get together? And how many are gone?",
                     recipe=hint.recipes[2])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("If result.paused, raise ToolError with a message that lists p.summary for each p in result.pending (and "
        "decide nothing). If result.text is None or empty, return a sentence saying there was no answer. If it is "
        "longer than max_chars, make the note first (it says how long the answer was), keep max_chars - len(note) "
        "characters and add the note. Else return result.text.\n"
        "中文：先看 result.paused：暂停了就抛出 ToolError，列出每个待批准调用的 summary，不替人做决定；"
        "没有回答就返回一句说明；太长就先写好注明原文长度的说明，"
        "再保留 max_chars 减去说明长度的字符；否则原样返回 result.text。"),
    2: ("The children's budget is int(parent_max * share) (int() rounds a positive number down); take away "
        "`used`, and return 0 when that is below 0: max(0, ...).\n"
        "中文：子 agent 的总预算是 int(parent_max * share)（int() 对正数向下取整）；减去 used，小于 0 时返回 0。"),
})
