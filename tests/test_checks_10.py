"""Exercise checkers of lesson 10 (the canonical cache key is drilled in 06b, the bill in 10b): each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import functools
import random
import secrets
from pathlib import Path

import pytest
from checker_cases import boom, checker_tests, stub

from course import lesson10
from mini_framework import estimate_tokens

# -- exercise 1: spill_text ----------------------------------------------------------------------

REMINDER = ("<system-reminder>\nThe output was too long to show in full. All of it is in the file {path}: read the "
            "parts you need with a file tool, or tell the user where it is.\n</system-reminder>")


def spill_text(text, tool_name, folder, max_tokens=1_000, *, head=True, tail=True, file_holds="all", always=False,
               by_chars=False, reminder=True, names_path=True, cut=True, fixed_name=False):
    """The solution, and (through the options) the ways it goes wrong."""
    total = estimate_tokens(text)
    if not always and (len(text) if by_chars else total) <= max_tokens:
        return text
    name = f"tool_result_{tool_name}.txt" if fixed_name else f"tool_result_{tool_name}_{secrets.token_hex(4)}.txt"
    path = Path(folder) / name
    keep = len(text) * max_tokens // max(total, 1)
    first = text[: keep * 3 // 4] if head else ""
    last = text[len(text) - keep // 4:] if tail else ""
    if not head:
        last = text[len(text) - keep:]
    if not tail:
        first = text[:keep]
    shown = f"{first}\n[… not shown …]\n{last}" if cut else text
    path.write_text(text if file_holds == "all" else shown if file_holds == "cut" else text + "\n[end]",
                    encoding="utf-8")
    note = REMINDER.format(path=path if names_path else "a file") if reminder else f"(the rest is in {path})"
    return f"{shown}\n{note}"


def wrong_spill(**options):
    def spill_text_(text, tool_name, folder, max_tokens=1_000):
        return spill_text(text, tool_name, folder, max_tokens, **options)
    return spill_text_


def reminder_first_then_everything(text, tool_name, folder, max_tokens=1_000):
    """The reminder, then the whole text: nothing cut."""
    if estimate_tokens(text) <= max_tokens:
        return text
    path = Path(folder) / f"tool_result_{tool_name}_{secrets.token_hex(4)}.txt"
    path.write_text(text, encoding="utf-8")
    return REMINDER.format(path=path) + "\n" + text


def reminder_first_then_the_cut(text, tool_name, folder, max_tokens=1_000):
    """The right cut, but the reminder comes first."""
    returned = spill_text(text, tool_name, folder, max_tokens)
    if returned is text:
        return text
    opened = returned.index("<system-reminder>")
    return returned[opened:] + "\n" + returned[:opened]


def cut_then_everything_again(text, tool_name, folder, max_tokens=1_000):
    """The right cut and reminder, then the whole text appended after it."""
    returned = spill_text(text, tool_name, folder, max_tokens)
    return returned if returned is text else returned + "\n" + text


def strictly_under(text, tool_name, folder, max_tokens=1_000):
    """`<` instead of `<=`: a text of exactly max_tokens tokens is spilled."""
    if estimate_tokens(text) == max_tokens:
        return spill_text(text, tool_name, folder, max_tokens, always=True)
    return spill_text(text, tool_name, folder, max_tokens)


def minus_tail(text, tool_name, folder, max_tokens=1_000):
    """A learner's first attempt: tail = int(...), then text[-tail:], which is the whole text when tail is 0."""
    total = estimate_tokens(text)
    if total <= max_tokens:
        return text
    path = Path(folder) / f"tool_result_{tool_name}_{secrets.token_hex(4)}.txt"
    path.write_text(text, encoding="utf-8")
    chars_per_token = len(text) / total
    head = int(max_tokens * 0.75 * chars_per_token)
    tail = int(max_tokens * 0.25 * chars_per_token)
    return (text[:head] + f"\n[… {len(text) - head - tail:,} characters not shown …]\n" + text[-tail:]
            + f"\n<system-reminder>\nThe output was too long; the whole of it is in {path}.\n</system-reminder>")


def returns_a_dict(text, tool_name, folder, max_tokens=1_000):
    """The parts, as a dict: the model reads text."""
    return {"head": text[:100], "tail": text[-100:], "file": str(folder)}


# -- exercise 2: trim ------------------------------------------------------------------------------


def trim(messages, budget, count, *, units=True, turns=True, keep_system=True, keep_tail=True, respect_budget=True,
         gaps=False, strict=False, newest_first=False, copy=False, first_user=False, systems_first=False,
         by_chars=False):
    """The solution, and (through the options) the ways it goes wrong."""
    if by_chars:  # tokens counted as characters
        count = lambda kept: sum(len(str(m.get("content") or "")) for m in kept)  # noqa: E731
    if systems_first:  # every system message moved to the front
        messages = [m for m in messages if m["role"] == "system"] + [m for m in messages if m["role"] != "system"]
    pick = min if first_user else max  # first_user: the first user message taken as the question
    last_user = pick(i for i, m in enumerate(messages) if m["role"] == "user")
    end = last_user if keep_tail else len(messages)  # keep_tail=False: the question is droppable too
    groups, i = [], 0
    while i < end:
        if messages[i]["role"] == "system" and keep_system:
            i += 1
            continue
        group, j = [i], i + 1
        if units and turns and messages[i]["role"] == "user":  # a turn: everything up to the next user message
            while j < end and messages[j]["role"] != "user":
                if messages[j]["role"] != "system" or not keep_system:
                    group.append(j)
                j += 1
        elif units and messages[i].get("tool_calls"):
            while j < end and messages[j]["role"] == "tool":
                group.append(j)
                j += 1
        groups.append(group)
        i = j

    def kept(dropped: set[int]) -> list:
        keep = {j for n, g in enumerate(groups) if n not in dropped for j in g}
        out = [m for j, m in enumerate(messages) if j in keep or j >= end or (m["role"] == "system" and keep_system)]
        return [dict(m) for m in out] if copy else out

    if not respect_budget:
        return kept(set())
    order = list(range(len(groups)))
    if newest_first:
        order.reverse()
    if gaps:  # the largest units first, wherever they are
        order.sort(key=lambda n: -count([messages[j] for j in groups[n]]))
    dropped: set[int] = set()
    for n in order:
        total = count(kept(dropped))
        if (total < budget) if strict else (total <= budget):
            break
        dropped.add(n)
    return kept(dropped)


def wrong_trim(**options):
    def trim_(messages, budget, count):
        return trim(messages, budget, count, **options)
    return trim_


def last_n(messages, budget, count):
    """messages[-N:], with N as large as fits."""
    for n in range(len(messages), 0, -1):
        if count(messages[-n:]) <= budget:
            return messages[-n:]
    return messages[-1:]


def tool_results_first(messages, budget, count):
    """Saves tokens by dropping old tool results (the long part), keeping the calls."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    kept = list(messages)
    for m in messages[:last_user]:
        if count(kept) <= budget:
            break
        if m["role"] == "tool":
            kept.remove(m)
    return kept


def system_and_question(messages, budget, count):
    """Only what must be kept, whatever the budget."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [m for i, m in enumerate(messages) if m["role"] == "system" or i >= last_user]


def in_place(messages, budget, count):
    """Trims the caller's list itself (del messages[i])."""
    result = trim(messages, budget, count)
    keep = {id(m) for m in result}
    for i in range(len(messages) - 1, -1, -1):
        if id(messages[i]) not in keep:
            del messages[i]
    return messages


CASES = {
    "spill_text": (lesson10.spill_text, [spill_text], [stub], [
        [wrong_spill(tail=False)],  # the head only: the error at the end is lost
        [wrong_spill(head=False)],  # the tail only
        [wrong_spill(file_holds="cut")],  # the file holds the cut version
        [wrong_spill(file_holds="more")],  # the file holds more than the text
        [wrong_spill(always=True)],  # a short text spilled too
        [wrong_spill(by_chars=True)],  # characters counted as tokens: a 1,900-character text spilled
        [wrong_spill(reminder=False)],  # no <system-reminder>
        [wrong_spill(names_path=False)],  # the reminder does not say where the file is
        [wrong_spill(cut=False)],  # the whole text sent, plus a reminder
        [wrong_spill(fixed_name=True)],  # one name per tool: the second spill overwrites the first
        [reminder_first_then_everything],  # the reminder, then the whole text
        [reminder_first_then_the_cut],  # the reminder before the head and the tail
        [cut_then_everything_again],  # a right answer, then the whole text after the reminder
        [strictly_under],  # < instead of <=: a text at the limit spilled
        [minus_tail],  # text[-tail:] with tail == 0 at a tiny max_tokens: the whole text
        [returns_a_dict],
        [boom],
    ]),
    "trim": (lesson10.trim, [trim], [stub], [
        [last_n],  # messages[-N:]
        [tool_results_first],  # drops a tool message, keeps its call
        [wrong_trim(units=False)],  # drops message by message: a call without its answers, or the reverse
        [wrong_trim(keep_system=False)],  # the system prompt dropped like any message
        [wrong_trim(respect_budget=False)],  # ignores the budget
        [wrong_trim(newest_first=True)],  # drops the newest units first
        [wrong_trim(gaps=True)],  # drops the largest units first, leaving gaps
        [wrong_trim(strict=True)],  # one unit too many (< instead of <=)
        [system_and_question],  # drops everything droppable
        [in_place],  # changes the caller's history
        [wrong_trim(first_user=True)],  # the first user message taken as the question: nothing droppable
        [wrong_trim(systems_first=True)],  # a later system message moved to the front
        [wrong_trim(keep_tail=False)],  # the question droppable too: a tight budget leaves only ['system']
        [wrong_trim(turns=False)],  # units of single messages: ['system', 'assistant', 'user'], an answer without its question
        [wrong_trim(by_chars=True)],  # tokens counted as characters: drops far more than needed
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


@pytest.mark.parametrize("seed", range(30))
def test_the_random_conversations_are_valid_and_end_with_a_question(seed):
    messages = lesson10.conversation(random.Random(seed))
    assert lesson10._accepted(messages) is None
    assert any(m["role"] == "user" for m in messages) and messages[0]["role"] == "system"


def test_the_written_chat_loses_its_pairing_in_the_last_six():
    assert [m["role"] for m in lesson10.WRITTEN[-6:]][0] == "tool"
    assert lesson10._accepted(lesson10.WRITTEN[-6:]) is not None
    assert lesson10._accepted(lesson10.WRITTEN) is None


def test_messages_teach():
    """A few wrong answers and what the learner reads: the rule, not just 'wrong'."""
    said = lesson10.spill_text(wrong_spill(tail=False)).message
    assert "keep the tail" in said and "errors" in said
    said = lesson10.trim(last_n).message
    assert "system prompt" in said or "one unit" in said


def test_the_new_messages_say_what_happened():
    said = lesson10.spill_text(minus_tail).message
    assert "text[-0:]" in said
    said = lesson10.spill_text(cut_then_everything_again).message
    assert "must come last" in said
    said = lesson10.spill_text(strictly_under).message
    assert "<=, not <" in said
    said = lesson10.trim(wrong_trim(first_user=True)).message
    assert "latest user message" in said and "drop more" not in said
    said = lesson10.trim(wrong_trim(systems_first=True)).message
    assert "in its place" in said
    said = lesson10.trim(wrong_trim(turns=False)).message
    assert "question" in said and "goes whole" in said
    said = lesson10.trim(wrong_trim(keep_tail=False)).message
    assert "last user message" in said


def test_the_spill_check_cleans_up_its_folder(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert lesson10.spill_text(spill_text).passed
    assert list(tmp_path.iterdir()) == []


# -- exercise 3: page -------------------------------------------------------------------------------


def page(text, cursor, max_tokens, *, by_chars=False, next_at=0, last_cursor=None, empty_when_long=False,
         strict=False, from_start=False, as_list=False):
    """The solution, and (through the options) the ways it goes wrong."""
    lines = text.split("\n")
    start = 0 if from_start else cursor

    def size(chosen):
        joined = "\n".join(chosen)
        return len(joined) if by_chars else estimate_tokens(joined)

    chosen = [lines[start]]
    if empty_when_long and size(chosen) > max_tokens:
        chosen = []
    while chosen and start + len(chosen) < len(lines):
        bigger = size(chosen + [lines[start + len(chosen)]])
        if (bigger >= max_tokens) if strict else (bigger > max_tokens):
            break
        chosen.append(lines[start + len(chosen)])
    following = start + len(chosen) + next_at
    if following >= len(lines):
        following = len(lines) if last_cursor == "length" else None
    if not chosen:
        following = cursor
    return (chosen if as_list else "\n".join(chosen)), following


def wrong_page(**options):
    """`page` with these options, as a learner's answer: the same options give the same answer."""
    return _wrong_page(tuple(sorted(options.items())))


@functools.cache
def _wrong_page(options):
    def page_(text, cursor, max_tokens):
        return page(text, cursor, max_tokens, **dict(options))
    return page_


# Each answer is checked once in this module (the solution's check pages long texts: ~0.4 s of CPU): the table's
# tests and the messages test read the same result.
check_page = functools.cache(lesson10.page)


def forever(text, cursor, max_tokens):
    """A page whose cursor never moves: the check must stop following it."""
    return text.split("\n")[cursor], cursor


PAGE = {"page": (check_page, [page], [stub], [
    [wrong_page(by_chars=True)],  # tokens counted as characters: pages far smaller than the budget
    [wrong_page(next_at=-1)],  # the next cursor is the last line returned: each page repeats a line
    [wrong_page(next_at=1)],  # the next cursor skips a line
    [wrong_page(last_cursor="length")],  # after the last page, a cursor past the end instead of None
    [wrong_page(empty_when_long=True)],  # a line over the budget gives an empty page, and the cursor stays
    [wrong_page(strict=True)],  # < instead of <=: a page one line short
    [wrong_page(from_start=True)],  # the cursor ignored: every page from line 0
    [wrong_page(as_list=True)],  # the page as a list of lines
    [forever],
    [boom],
])}

test_page_passes, test_page_waits, test_page_catches = checker_tests(PAGE)


def test_the_page_messages_say_what_happened():
    assert "not characters" in check_page(wrong_page(by_chars=True)).message
    assert "None" in check_page(wrong_page(last_cursor="length")).message
    assert "for ever" in check_page(wrong_page(empty_when_long=True)).message
    assert "the first line not returned yet" in check_page(wrong_page(next_at=-1)).message
