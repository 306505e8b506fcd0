"""Exercise checkers of lesson 13b: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import json
import math

from checker_cases import boom, checker_tests, stub

from course import lesson13b
from mini_framework import ToolError

# -- exercise 1: child_answer ---------------------------------------------------------------------


def child_answer(result, max_chars, *, paused="raise", cut="note", empty=True, note_fits=True, count=True):
    """The solution, and (through the options) the ways it goes wrong."""
    if result.paused:
        if paused == "approve":
            for item in result.pending:
                item.approve()
            return "已提交"
        if paused == "text":
            return "退款专员在等人批准：" + "; ".join(p.summary for p in result.pending)
        if paused == "vague":
            raise ToolError("the specialist waits for a person's approval")
        if paused == "raise":
            raise ToolError("the specialist waits for a person's approval: "
                            + "; ".join(p.summary for p in result.pending))
    if cut == "messages":
        return json.dumps(result.messages, ensure_ascii=False)
    text = result.text
    if empty and not (text or "").strip():
        return "（退款专员没有给出回答）"
    if text is None:
        return str(text)
    if len(text) <= max_chars or cut == "none":
        return text
    if cut == "plain":
        return text[:max_chars]
    note = f"…（共 {len(text)} 个字符，已截断）" if count else "…（已截断）"
    return text[:max_chars - len(note) if note_fits else max_chars] + note


def wrong(function, **options):
    def wrapped(*args):
        return function(*args, **options)
    return wrapped


def only_text(result, max_chars):
    """The first wrapper of the lesson: result.text, whatever happened."""
    return result.text


# -- exercise 2: child_limit ----------------------------------------------------------------------


def child_limit(parent_max, share, used, *, rounding="down", subtract=True, clamp=True):
    raw = parent_max * share
    value = math.ceil(raw) if rounding == "up" else round(raw) if rounding == "nearest" else int(raw)
    if rounding == "float":
        value = raw
    if subtract:
        value -= used
    return max(0, value) if clamp else value


def child_limit_at_least_one(parent_max, share, used):
    """At least one request, always."""
    return max(1, int(parent_max * share) - used)


def child_limit_of_what_is_left(parent_max, share, used):
    """A share of what is left: (parent_max - used) * share."""
    return max(0, int((parent_max - used) * share))


CASES = {
    "child_answer": (lesson13b.child_answer, [child_answer], [stub], [
        [only_text],  # result.text: None when paused, long answers uncut
        [wrong(child_answer, cut="messages")],  # the child's whole transcript
        [wrong(child_answer, cut="plain")],  # cut without a note
        [wrong(child_answer, cut="none")],  # never cut
        [wrong(child_answer, note_fits=False)],  # the note added after max_chars: over the limit
        [wrong(child_answer, count=False)],  # a note that says nothing about how much
        [wrong(child_answer, empty=False)],  # text None returned as "None"
        [wrong(child_answer, paused="approve")],  # the tool approves for a person
        [wrong(child_answer, paused="text")],  # a pause returned as an ordinary result
        [wrong(child_answer, paused="vague")],  # an error that doesn't say what waits
        [boom],
    ]),
    "child_limit": (lesson13b.child_limit, [child_limit], [stub], [
        [wrong(child_limit, subtract=False)],  # what was spent not taken away
        [wrong(child_limit, rounding="up")],  # math.ceil: more than the share
        [wrong(child_limit, rounding="nearest")],  # round(): 2.5 -> 2 but 1.5 -> 2
        [wrong(child_limit, rounding="float")],  # a float
        [wrong(child_limit, clamp=False)],  # negative once overspent
        [child_limit_at_least_one],  # at least one even when nothing is left
        [child_limit_of_what_is_left],  # a share of what is left, not of the cap
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_a_tool_that_approves_is_told_it_must_not():
    assert "never decide for a person" in lesson13b.child_answer(wrong(child_answer, paused="approve")).message
