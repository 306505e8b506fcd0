"""Checks for lesson 10 (long tool results).

Exercise 1 spills texts into a temporary folder of its own and reads back what was written.
Exercise 2 trims conversations (one written out, then random ones, the same on every run) to several
budgets, and puts each result through the practice server's own request checks, in this process: no
server, no network. Exercise 3 pages texts by tokens, which the lesson's paged tool did by lines,
and follows the cursors to the end (a cursor that never moves is caught, not followed for ever).
"""
from __future__ import annotations

import copy
import json
import random
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable

from mini_framework import estimate_tokens, message_tokens

from .checking import CheckResult, Hints, NotSolved, run_check, solved

# ----------------------------------------------------------------------------- exercise 1


def _test_run(failures: int = 1) -> str:
    """A long test run's output (about 60,000 characters) whose failure and summary are in its last lines."""
    rng = random.Random(7)
    lines = ["============================= test session starts ==============================",
             "platform linux -- Python 3.12.3, pytest-8.2.0", "collected 1204 items", ""]
    for n in range(1, 1204):
        module = ["orders", "payments", "refunds", "users", "cart"][n % 5]
        padding = " " * rng.randint(1, 20)
        lines.append(f"tests/test_{module}.py::test_case_{n:04d} PASSED{padding}[{n * 100 // 1204:3d}%]")
    lines += ["tests/test_refunds.py::test_partial_refund FAILED                            [100%]", "",
              "=================================== FAILURES ===================================",
              "_____________________________ test_partial_refund ______________________________",
              "    assert refund.amount == 30",
              "E   AssertionError: assert 0 == 30",
              "=========================== short test summary info ============================",
              "FAILED tests/test_refunds.py::test_partial_refund - AssertionError: assert 0 == 30",
              f"======================== {failures} failed, 1203 passed in 84.20s ========================="]
    return "\n".join(lines) + "\n"


def _chat_export() -> str:
    """A long customer-service transcript in Chinese (about 20,000 characters); the outcome is its last line."""
    rng = random.Random(11)
    turns = ["顾客：我的订单什么时候发货？", "客服：已经在打包了，今天下午发出。", "顾客：能改地址吗？",
             "客服：还没发货，可以改，请告诉我新地址。", "顾客：好的，谢谢。", "客服：不客气，还有别的问题吗？"]
    lines = [f"{i:05d} {rng.choice(turns)}" for i in range(1, 1000)]
    lines.append("结论：顾客 2024 号要求退款 299 元，已转人工处理，工单 OPS-311。")
    return "\n".join(lines) + "\n"


TEST_RUN = _test_run()
CHAT_EXPORT = _chat_export()
SHORT = ("The nightly backup finished at 03:12. 1,284 files were copied, 3 were skipped because they were "
         "open, and nothing failed. ") * 16  # about 1,900 characters, well under 1,000 tokens
EDGE = TEST_RUN[:TEST_RUN.index("\n", 2_000) + 1]  # asked at exactly its tokens, and one less


def _new_files(folder: Path, before: set[Path]) -> list[Path]:
    return sorted(set(folder.iterdir()) - before)


def _names_path(returned: str, path: Path) -> bool:
    return any(str(p) in returned for p in (path, path.resolve(), path.absolute()))


def _spill_one(spill_text: Callable[..., Any], text: str, name: str, folder: Path, max_tokens: int,
               what: str, ends: bool = True) -> tuple[str, Path]:
    """Spill one long text and check what came back and what was written; (returned text, file). `ends=False`
    (a tiny max_tokens, where a few characters are all there is room for) skips looking for the head and the tail."""
    before = set(folder.iterdir())
    returned = spill_text(text, name, folder, max_tokens)
    solved(returned)
    if not isinstance(returned, str):
        raise AssertionError(f"return the text the model reads (a str), not {type(returned).__name__}")
    files = _new_files(folder, before)
    if not files:
        raise AssertionError(f"{what} is {estimate_tokens(text):,} tokens, over max_tokens={max_tokens:,}, but no "
                             "new file appeared in `folder`: write the whole text there before you cut it (in "
                             "`folder`, not the working directory)")
    if len(files) > 1:
        raise AssertionError(f"spilling {what} made {len(files)} files; one file holds the whole text")
    [path] = files
    if not re.fullmatch(rf"tool_result_{re.escape(name)}_[0-9a-f]{{8}}\.txt", path.name):
        raise AssertionError(f"the file is called {path.name!r}; name it tool_result_{name}_ and 8 random hex digits "
                             f"(secrets.token_hex(4)), then .txt: a name no one can guess, and never the same twice")
    saved = path.read_text(encoding="utf-8", errors="replace")
    if saved != text:
        raise AssertionError(f"the file holds {len(saved):,} characters, and {what} has {len(text):,}"
                             + (": it should hold all of it, not the cut version the model reads" if len(saved) <
                                len(text) else ": it should hold exactly the text, nothing added")
                             + ". The file is where the rest can still be read")
    body = returned.rstrip()
    closed = body.rfind("</system-reminder>")
    if closed < 0 or body.rfind("<system-reminder>", 0, closed) < 0:
        raise AssertionError("end what the model reads with <system-reminder> … </system-reminder>: the note that "
                             "tells it the output was cut and where the rest is")
    if closed + len("</system-reminder>") < len(body):
        after = body[closed + len("</system-reminder>"):]
        raise AssertionError(f"the reminder must come last, but {len(after):,} characters follow it "
                             f"({after.strip()[:40]!r}…): return the head, the tail, and then the reminder, and "
                             "nothing after it. Whatever comes after the reminder the model reads too, and pays for "
                             "on every later request")
    opened = body.rfind("<system-reminder>", 0, closed)
    shown = returned[:opened]  # everything the model reads of the text itself
    if ends:
        start = text[:80]
        if start not in shown:
            raise AssertionError(f"the start of {what} ({start[:40]!r}…) is not in what the model reads before the "
                                 "reminder: keep the head, it says what the output is")
        end = text.rstrip()[-80:]
        if end not in shown:
            raise AssertionError(f"the end of {what} (…{end[-50:]!r}) is not in what the model reads before the "
                                 "reminder: keep the tail too. That is where errors, summaries and exit codes are, the "
                                 "part a head-only cut loses")
    if not _names_path(returned[opened:closed], path):
        raise AssertionError(f"the reminder should name the file's path ({path}), so the model can read it or tell "
                             "the user where it is")
    used = estimate_tokens(shown)
    if used > max_tokens * 1.3 + 30:  # 30: room for a line saying how much is not shown
        if len(shown) >= len(text) and not ends:
            raise AssertionError(f"with max_tokens={max_tokens:,}, the model reads the whole of {what} ({used:,} "
                                 "tokens) before the reminder. If your tail is text[-n:], look at n: when it comes to "
                                 "0, text[-0:] is the whole text (-0 is 0). text[len(text) - n:] is empty for n = 0")
        if len(shown) >= len(text):
            raise AssertionError(f"the model reads the whole of {what} ({used:,} tokens, with max_tokens="
                                 f"{max_tokens:,}) before the reminder: the file keeps it all, so send only the "
                                 "start and the end, about max_tokens in all")
        raise AssertionError(f"the model reads {used:,} tokens of {what} (before the reminder), with max_tokens="
                             f"{max_tokens:,}: cut it to about max_tokens (for instance a share of the characters: "
                             "len(text) * max_tokens // estimate_tokens(text))")
    return returned, path


def spill_text(spill_text: Callable[..., Any]) -> CheckResult:
    """Exercise 1: long texts cut to head + tail + reminder, all of it in a new file; short ones untouched."""
    def test() -> str:
        folder = Path(tempfile.mkdtemp(prefix="lesson10-spill-"))
        try:
            for text, name, max_tokens, what in [(TEST_RUN, "run_tests", 1_000, "the test run"),
                                                 (CHAT_EXPORT, "export_chat", 500, "the Chinese chat export"),
                                                 (TEST_RUN, "run_tests", 300, "the test run")]:
                _spill_one(spill_text, text, name, folder, max_tokens, what)
            again = _test_run(failures=1).replace("84.20s", "85.02s")
            _, second = _spill_one(spill_text, again, "run_tests", folder, 1_000, "a second test run")
            for file in folder.iterdir():
                if file != second and file.read_text(encoding="utf-8", errors="replace") == again:
                    raise AssertionError("two spills went into one file")
            kept = [p for p in folder.iterdir() if p.name.startswith("tool_result_run_tests_")]
            if len(kept) < 3:
                raise AssertionError("a second spill replaced an earlier file: every spill needs a new name "
                                     "(random), or an earlier result the model was told about is gone")
            edge = estimate_tokens(EDGE)
            for text, limit, what in [
                    (SHORT, 1_000, f"a {len(SHORT):,}-character text of {estimate_tokens(SHORT)} tokens is within "
                                   "max_tokens=1,000"),
                    ("ok", 1_000, "the two-character text 'ok' is within max_tokens=1,000"),
                    (EDGE, edge, f"a text of exactly {edge} tokens, with max_tokens={edge}, is at the limit, and "
                                 "'at most max_tokens' includes it (<=, not <)")]:
                before = set(folder.iterdir())
                returned = spill_text(text, "backup", folder, limit)
                if returned != text:
                    raise AssertionError(f"{what}: return it unchanged, not {returned!r:.80}"
                                         + (": the text itself is what the model reads" if returned is None else
                                            " (count tokens with estimate_tokens, not characters with len)"
                                            if len(text) > limit and text is not EDGE else ""))
                if _new_files(folder, before):
                    raise AssertionError(f"{what}, yet a file was written: spill only what is too long")
            _spill_one(spill_text, EDGE, "backup", folder, edge - 1, f"a text of {edge} tokens, one over "
                                                                    f"max_tokens={edge - 1},")
            # last: a tiny max_tokens, where a tail of 0 characters must stay 0 (text[-0:] is the whole text)
            _spill_one(spill_text, TEST_RUN, "run_tests", folder, 1, "the test run", ends=False)
            return ("the test run and the Chinese export cut to head + tail + a reminder (last) naming a new file "
                    "that holds all of it, even at max_tokens=1; a text at the limit and short texts untouched, "
                    "one token over it spilled")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return run_check(1, test, "A short text needs nothing. For a long one, write the file first, then keep both "
                              "ends and say where the rest is.", recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

WORDS = ["北京", "天气", "订单", "张三", "已发货", "明天", "退款", "上海", "weather", "order", "shipped", "refund",
         "202405220012", "预计", "送达", "多云", "温度"]


def tokens(messages: list[dict[str, Any]]) -> int:
    """The tokens of a list of messages, by the offline estimate (the same on every machine)."""
    return int(message_tokens(messages, use_tiktoken=False))


def _text(rng: random.Random, most: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, most)))


def conversation(rng: random.Random) -> list[dict[str, Any]]:
    """A random, valid history ending in the question being asked (sometimes with its tool rounds after it)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "你是网店的客服助手。" + _text(rng, 6)}]
    if rng.random() < 0.2:
        messages.append({"role": "system", "content": "Answer briefly. " + _text(rng, 4)})
    ids = iter(f"call_{i}" for i in range(10_000))

    def rounds(most: int) -> None:
        for _ in range(rng.randint(0, most)):
            calls = [{"id": next(ids), "type": "function", "function": {
                "name": rng.choice(["get_forecast", "get_order"]),
                "arguments": json.dumps({"q": _text(rng, 3)}, ensure_ascii=False)}} for _ in range(rng.randint(1, 3))]
            messages.append({"role": "assistant", "content": rng.choice([None, _text(rng, 5)]), "tool_calls": calls})
            messages.extend({"role": "tool", "tool_call_id": c["id"], "content": _text(rng, 40)} for c in calls)

    for turn in range(rng.randint(1, 6)):
        if turn and rng.random() < 0.15:  # a system message later on: a summary, a change of instructions
            messages.append({"role": "system", "content": "From here on: " + _text(rng, 6)})
        messages.append({"role": "user", "content": _text(rng, 15)})
        rounds(3)
        messages.append({"role": "assistant", "content": _text(rng, 25)})
    messages.append({"role": "user", "content": _text(rng, 15)})
    if rng.random() < 0.3:
        rounds(2)
    return messages


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# the lesson's situation: the last six messages start with a tool message
WRITTEN = [
    {"role": "system", "content": "你是网店“小满优选”的客服助手，回答简短。"},
    {"role": "user", "content": "北京未来三天天气怎么样？"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_a", "get_forecast", '{"city":"北京","days":3}')]},
    {"role": "tool", "tool_call_id": "call_a", "content": "第1天 晴 15~27°C；第2天 多云 16~25°C；第3天 小雨 14~20°C"},
    {"role": "assistant", "content": "北京：第1天 晴，第2天 多云，第3天 小雨。"},
    {"role": "user", "content": "帮我看看张三最近买了什么还没发货"},
    {"role": "assistant", "content": None, "tool_calls": [_call("call_b", "get_user_info", '{"user_name":"张三"}')]},
    {"role": "tool", "tool_call_id": "call_b", "content": '{"user_id": 1001, "name": "张三", "city": "北京"}'},
    {"role": "assistant", "content": None,
     "tool_calls": [_call("call_c", "get_orders", '{"user_id":1001,"status":"pending"}')]},
    {"role": "tool", "tool_call_id": "call_c",
     "content": '[{"order_id": "202405240044"}, {"order_id": "202405230031"}]'},
    {"role": "assistant", "content": None, "tool_calls": [
        _call("call_d", "get_order_detail", '{"order_id":"202405240044"}'),
        _call("call_e", "get_order_detail", '{"order_id":"202405230031"}')]},
    {"role": "tool", "tool_call_id": "call_d",
     "content": '{"items": [{"product": "绿茶", "quantity": 2}], "total": 196}'},
    {"role": "tool", "tool_call_id": "call_e",
     "content": '{"items": [{"product": "蓝牙耳机", "quantity": 1}], "total": 399}'},
    {"role": "assistant", "content": "还没发货的有两单：绿茶 ×2（196 元）和蓝牙耳机 ×1（399 元）。"},
    {"role": "user", "content": "广州未来两天呢？"},
]


# the same chat with a system message in its middle, where an app adds one (the customer has logged in)
WITH_LATER_SYSTEM = [*WRITTEN[:5], {"role": "system", "content": "顾客已登录：张三（user_id 1001）。"}, *WRITTEN[5:]]


def units_of(messages: list[dict[str, Any]]) -> tuple[list[list[int]], int]:
    """The droppable units before the last user message (oldest first), and where that message is: a user turn (its
    non-system messages up to the next user message); before the first user message, a call with its answers, or
    one message."""
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    units, i = [], 0
    while i < last_user:
        if messages[i]["role"] == "system":
            i += 1
            continue
        unit, j = [i], i + 1
        if messages[i]["role"] == "user":
            while j < last_user and messages[j]["role"] != "user":
                if messages[j]["role"] != "system":
                    unit.append(j)
                j += 1
        elif messages[i].get("tool_calls"):
            while j < last_user and messages[j]["role"] == "tool":
                unit.append(j)
                j += 1
        units.append(unit)
        i = j
    return units, last_user


def _accepted(kept: list[dict[str, Any]]) -> str | None:
    """None if the practice server's request checks accept these messages, else the API's error message."""
    from practice_model import checks
    from practice_model.errors import ApiError
    from practice_model.personas import registry

    body = json.loads(json.dumps({"model": "practice", "messages": kept}, ensure_ascii=False, default=str))
    try:
        checks.check(body, registry(None))
    except ApiError as error:
        return error.message
    return None


def _positions(messages: list[dict[str, Any]], kept: list[Any], what: str) -> list[int]:
    """Where each kept message is in `messages` (matched in order); AssertionError for one that isn't there."""
    positions, start = [], 0
    for n, message in enumerate(kept):
        at = next((i for i in range(start, len(messages)) if messages[i] is message or messages[i] == message), None)
        if at is None:
            was = next((i for i in range(len(messages)) if messages[i] is message or messages[i] == message), None)
            if was is not None:
                before = positions[-1]  # the kept message put in front of it, later in the history
                system = next((i for i in (was, before) if messages[i].get("role") == "system"), None)
                moved = (f"messages[{system}] is a system message later in the history (a summary, a change of "
                         "instructions): it applies from where it is, so keep every system message in its place, "
                         "not gathered at the front" if system is not None else "keep the history's order")
                raise AssertionError(f"{what}: the message you returned at position {n} is messages[{was}], but you "
                                     f"put it after messages[{before}], which comes later in the history. {moved}")
            raise AssertionError(f"the message you returned at position {n} ({message!r:.80}) is not one of the input "
                                 "messages, in their order: return the messages you keep, unchanged and in order")
        positions.append(at)
        start = at + 1
    return positions


def _judge(trim: Callable[..., Any], messages: list[dict[str, Any]], budget: int, what: str) -> None:
    """Trim `messages` to `budget` with the learner's function and check the result (AssertionError: what's wrong)."""
    given = copy.deepcopy(messages)  # the learner's function gets a copy: the check's own data stays as it is
    kept = trim(given, budget, tokens)
    solved(kept)
    if given != messages:
        raise AssertionError("your function changed the list it was given: build a new list, leave the history as "
                             "it was (the run still needs the whole of it)")
    if not isinstance(kept, list):
        raise AssertionError(f"return a list of messages, not {type(kept).__name__}")
    positions = _positions(given, kept, what)
    units, last_user = units_of(messages)
    roles = [messages[i]["role"] for i in positions]
    for i, m in enumerate(messages):
        if m["role"] == "system" and i not in positions:
            raise AssertionError(f"{what}: the system prompt (messages[{i}]) was dropped. It holds the instructions "
                                 "and is in every request: keep every system message, whatever the budget")
    if any(i not in positions for i in range(last_user, len(messages))):
        raise AssertionError(f"{what}: the question being asked (the last user message, messages[{last_user}]) and "
                             "everything after it must be kept: without them the model answers nothing, or answers "
                             "calls it never sees")
    for unit in units:
        if messages[unit[0]]["role"] == "user" and unit[0] not in positions:
            orphan = next((i for i in unit[1:] if i in positions), None)
            if orphan is not None:
                raise AssertionError(f"{what}: you kept messages[{orphan}] ({messages[orphan]['role']}) but dropped "
                                     f"messages[{unit[0]}], the user's question it belongs to. Roles kept: {roles}. "
                                     "An answer without its question reads as an answer to nothing: a turn (a user "
                                     "message with everything up to the next user message) goes whole")
    refused = _accepted(kept)
    if refused is not None:
        raise AssertionError(f"{what}: the API refuses what you kept: 400 {refused!r:.200}. Roles kept: {roles}. An "
                             "assistant message with tool_calls and the tool messages answering it are one unit: keep "
                             "them together or drop them together")
    used = tokens(kept)
    still = [unit[0] for unit in units if unit[0] in positions]  # droppable units kept
    if used > budget and still:  # over the budget with only what must stay left is right: it must stay
        raise AssertionError(f"{what}: you kept {used} tokens, over the budget of {budget}, and messages[{still[0]}] "
                             f"({messages[still[0]]['role']}), older than the question, is still there. The turn that "
                             f"must stay is the latest user message (messages[{last_user}], the last with role "
                             "'user', not the first) and what follows it; every unit between the system prompt and it "
                             "can go, oldest first, until count(kept) fits")
    dropped = [n for n, unit in enumerate(units) if unit[0] not in positions]
    kept_units = [n for n, unit in enumerate(units) if unit[0] in positions]
    if dropped and kept_units and max(dropped) > min(kept_units):
        raise AssertionError(f"{what}: you dropped messages[{units[max(dropped)][0]}] but kept the older "
                             f"messages[{units[min(kept_units)][0]}]: drop from the oldest on, with no gap, or the "
                             "model reads a conversation with a hole in its middle")
    if dropped:
        newest = units[max(dropped)]
        with_it = [messages[i] for i in sorted(set(positions) | set(newest))]
        if tokens(with_it) <= budget:
            raise AssertionError(f"{what}: you dropped more than needed: with messages[{newest[0]}] (the newest unit "
                                 f"you dropped) kept too, it is {tokens(with_it)} tokens, within the budget of "
                                 f"{budget}. Stop dropping as soon as it fits")


def trim(trim: Callable[..., Any]) -> CheckResult:
    """Exercise 2: whole units dropped from the oldest, system prompt and last turn kept, within the budget."""
    def test() -> str:
        checked = 0
        full, fixed = tokens(WRITTEN), tokens([WRITTEN[0], WRITTEN[-1]])
        for budget in (full, full - 1, 300, fixed, fixed - 1, 20):  # the last two: less than must stay
            _judge(trim, WRITTEN, budget, f"the lesson's chat trimmed to {budget} tokens")
            checked += 1
        for budget in (tokens(WITH_LATER_SYSTEM), 300):
            _judge(trim, WITH_LATER_SYSTEM, budget, f"the lesson's chat with a system message at messages[5], "
                                                    f"trimmed to {budget} tokens")
            checked += 1
        for seed in range(30):
            rng = random.Random(seed)
            messages = conversation(rng)
            units, last_user = units_of(messages)
            must = [m for i, m in enumerate(messages) if m["role"] == "system" or i >= last_user]
            low, high = tokens(must), tokens(messages)
            for budget in sorted({low // 2, low, high, high - 1, *(rng.randint(low, high) for _ in range(4))}):
                _judge(trim, messages, budget, f"random conversation {seed} ({len(messages)} messages) trimmed to "
                                               f"{budget} tokens")
                checked += 1
        return (f"{checked} trims of 32 conversations: the system prompt and the last turn kept (also where they alone "
                "are over the budget), whole turns dropped (no answer without its question), within budget, nothing "
                "dropped that fitted; the practice server accepted every one")
    return run_check(2, test, "Group the history into units first (a user turn with everything up to the next user "
                              "message is one); then drop whole units from the oldest on, until count(kept) fits.",
                     recipe=hint.recipes[2])


# ----------------------------------------------------------------------------- exercise 3


def _page_texts() -> list[tuple[str, str, int]]:
    """(what, text, max_tokens) the pager is tried on: English and Chinese, and a line longer than a page."""
    long_line = "2024-05-21 23:58:03 ERROR migrate " + "x" * 900
    odd = "\n".join(["short line"] * 5 + [long_line] + ["after the long line"] * 5)
    run, export = TEST_RUN.rstrip("\n"), CHAT_EXPORT.rstrip("\n")
    return [("the test run", run, 300), ("the Chinese chat export", export, 200),
            ("the test run", run, 1_000), ("a log with one 934-character line", odd, 40)]


def _read_all(page: Callable[..., Any], text: str, max_tokens: int, what: str) -> list[list[str]]:
    """Follow the cursors from 0 to None; the lines of each page (AssertionError: what went wrong)."""
    lines = text.split("\n")
    pages: list[list[str]] = []
    cursor: Any = 0
    for _ in range(len(lines) + 2):
        returned = page(text, cursor, max_tokens)
        solved(returned)
        if not (isinstance(returned, tuple) and len(returned) == 2):
            raise AssertionError(f"return a pair (the page's text, the next cursor), not {type(returned).__name__} "
                                 f"{returned!r:.60}")
        body, following = returned
        if not isinstance(body, str):
            raise AssertionError(f"the page is {type(body).__name__}; return its lines joined with \\n, as a str: "
                                 "the model reads text")
        if following is not None and (isinstance(following, bool) or not isinstance(following, int)):
            raise AssertionError(f"the next cursor is {following!r:.40}; make it a line number (an int), or None "
                                 "after the last line")
        got = body.split("\n")
        if not body and not (isinstance(cursor, int) and cursor < len(lines) and lines[cursor] == ""):
            raise AssertionError(f"{what} with max_tokens={max_tokens}: the page at cursor {cursor} is empty"
                                 + (f" (line {cursor} alone is {estimate_tokens(lines[cursor])} tokens, over the "
                                    "budget)" if isinstance(cursor, int) and cursor < len(lines) else "")
                                 + ". Always return at least one line, even one over the budget, or the model "
                                 "asks for the same page for ever")
        start = sum(len(p) for p in pages)
        if got != lines[start:start + len(got)]:
            seen = next((n for n in range(len(lines)) if lines[n:n + len(got)] == got), None)
            where = (f"it starts at line {seen}, and the lines read so far end at line {start - 1}" if seen is not None
                     else "its lines are not the text's lines, in order")
            raise AssertionError(f"{what} with max_tokens={max_tokens}: the page at cursor {cursor} does not go on "
                                 f"where the previous one stopped ({where}). The next cursor is the number of the "
                                 "first line not yet returned: no line twice, none skipped")
        pages.append(got)
        if following is None:
            break
        if following != start + len(got):
            raise AssertionError(f"{what} with max_tokens={max_tokens}: a page of lines {start} to "
                                 f"{start + len(got) - 1} gave the next cursor {following}; it should be "
                                 f"{start + len(got)}, the first line not returned yet")
        if following >= len(lines):
            raise AssertionError(f"{what} with max_tokens={max_tokens}: the last page (up to line {len(lines) - 1}) "
                                 f"gave the cursor {following}. After the last line, return None: it tells the "
                                 "model there is nothing more to read")
        cursor = following
    else:
        raise AssertionError(f"{what}: the cursors never came to None")
    if sum(len(p) for p in pages) < len(lines):
        raise AssertionError(f"{what} with max_tokens={max_tokens}: the cursor was None after line "
                             f"{sum(len(p) for p in pages) - 1}, but the text has {len(lines)} lines: None only "
                             "after the last one")
    return pages


def page(page: Callable[..., Any]) -> CheckResult:
    """Exercise 3: whole lines within max_tokens, at least one, a cursor that goes on where the page stopped."""
    def test() -> str:
        read = 0
        for what, text, max_tokens in _page_texts():
            pages = _read_all(page, text, max_tokens, what)
            for n, lines in enumerate(pages):
                used = estimate_tokens("\n".join(lines))
                if used > max_tokens and len(lines) > 1:
                    chars = len("\n".join(lines))
                    raise AssertionError(f"{what} with max_tokens={max_tokens}: page {n + 1} is {used} tokens, over "
                                         "the budget" + (" (its characters are within it: count tokens with "
                                                         "estimate_tokens, not characters)" if chars <= max_tokens
                                                         else ""))
                if n + 1 < len(pages):
                    more = estimate_tokens("\n".join(lines + pages[n + 1][:1]))
                    if more <= max_tokens:
                        chars = len("\n".join(lines))
                        by_chars = len("\n".join(lines + pages[n + 1][:1])) > max_tokens  # the next line: over in chars
                        raise AssertionError(f"{what} with max_tokens={max_tokens}: page {n + 1} has {used} tokens, "
                                             f"and with the next line it would have {more}, still within the budget"
                                             + (f". Did you count characters ({chars:,} of them)? Count tokens with "
                                                "estimate_tokens, not characters" if by_chars else
                                                ": fill the page while the next line fits (<=)"))
            read += len(pages)
        return (f"{read} pages of four texts, English and Chinese: whole lines within the budget, each page as full "
                "as it can be, at least one line (also one over the budget), every line once, None after the last")
    return run_check(3, test, "Add whole lines from the cursor while the page, counted with estimate_tokens, stays "
                              "within max_tokens; the next cursor is the first line you left out.",
                     recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("Count the text's tokens with estimate_tokens; at most max_tokens: return the text as it is. Otherwise "
        "write all of it (UTF-8) to a new file in folder named with the tool's name and secrets.token_hex(4). Keep a "
        "share of the characters in proportion to max_tokens over the total: three quarters of it from the start, a "
        "quarter from the end (slice the end by its start index, so that a share of 0 stays empty). Return the head, "
        "a line saying how much is not shown, the tail, and last a <system-reminder> … </system-reminder> naming the "
        "file's path.\n"
        "中文：用 estimate_tokens 数 token；不超过 max_tokens 就原样返回。否则把全文（UTF-8）写进 folder 里的"
        "新文件，文件名含工具名和 "
        "secrets.token_hex(4)。按 max_tokens 占总数的比例保留字符：四分之三取开头，四分之一取结尾（结尾按起始"
        "下标切，份额为 0 "
        "时才是空的）。返回开头、一行说明省略了多少、结尾，最后是写明文件路径的 <system-reminder> … </system-"
        "reminder>。"),
    2: ("Find the index of the last message whose role is 'user'. Walk the messages before it, building units: "
        "skip system messages; a user message starts a unit that takes every non-system message up to the next user "
        "message; before the first user message, an assistant message with tool_calls takes the tool messages right "
        "after it, anything else is a unit alone. Write kept(first): the system messages, the units from number "
        "first on, and everything from the last user message on, in their original order. Raise first from 0 while "
        "there are units left and count(kept(first)) is over the budget; return kept(first).\n"
        "中文：先找到最后一条 user 消息的位置。遍历它之前的消息分组：跳过 system；一条 user 消息开始一组，收进"
        "直到下一条 user "
        "消息为止的非 system 消息；第一条 user 之前，带 tool_calls 的 assistant 消息和紧随其后的 tool 消息为一"
        "组，其他各自一组。"
        "kept(first) 取所有 system 消息、从第 first 组起的各组、最后一条 user 消息及其后的全部，保持原顺序。first 从 0 "
        "开始，只要还有组且 count(kept(first)) 超出预算就加一；返回 kept(first)。"),
    3: ("Split the text into lines. Start at the cursor's line and take it, whatever its size. Then take the next "
        "line while the page with it, joined by newlines and counted with estimate_tokens, is still within max_tokens. "
        "The next cursor is the number of the first line you did not take, or None when there is none.\n"
        "中文：按行切分。从 cursor 那一行开始，先取这一行（不管多长）；之后只要加上下一行、"
        "用换行连接后用 estimate_tokens 数出的 token 仍不超过 max_tokens，就继续取。"
        "下一个游标是第一条没取的行号；没有了就返回 None。"),
})

__all__ = ["NotSolved", "hint", "page", "spill_text", "trim"]
