"""The check machinery: progressive hints, errors located in the learner's own cell, common mistakes named."""
from __future__ import annotations

import json

import pytest

from course.checking import (
    Hints,
    NotSolved,
    expect_json_object,
    expect_text,
    expect_tool,
    run_check,
    where_in_your_code,
)
from mini_framework import tool

CELL = "/tmp/ipykernel_4242/1234567890.py"  # the file name Jupyter gives a cell's code


def in_a_cell(source: str, name: str):
    """A function defined as if in a notebook cell (its frames carry the cell's file name)."""
    namespace: dict = {"json": json}
    exec(compile(source, CELL, "exec"), namespace)
    return namespace[name]


def test_the_line_named_is_in_the_learners_cell_not_in_the_library():
    parse = in_a_cell("def parse(text):\n    data = 1\n    return json.loads(text)\n", "parse")
    try:
        parse("{broken")
    except ValueError as error:
        assert where_in_your_code(error) == " (line 3 of your cell, in parse)"


def test_an_error_raised_by_the_check_itself_names_no_line():
    try:
        json.loads("{broken")
    except ValueError as error:
        assert "your cell" not in where_in_your_code(error)


def test_a_raising_answer_is_reported_with_its_cell_line():
    parse = in_a_cell("def parse(text):\n    return json.loads(text)\n", "parse")
    result = run_check(1, lambda: parse("{"), nudge="a nudge", recipe="the recipe")
    assert result.status == "wrong" and "line 2 of your cell" in result.message and "check.hint(1)" in result.message


def test_hints_are_progressive():
    def waiting() -> str:
        raise NotSolved

    def wrong() -> str:
        raise AssertionError("the id is wrong")

    pending = run_check(2, waiting, nudge="Look at the call's id.", recipe="Return {'tool_call_id': call['id'], ...}")
    assert "Look at the call's id." in pending.message and "check.hint(2)" in pending.message
    assert "tool_call_id" not in pending.message  # no answer before an attempt
    first = run_check(2, wrong, nudge="Look at the call's id.", recipe="Return {'tool_call_id': call['id'], ...}")
    assert first.message.startswith("❌") and "the id is wrong." in first.message and "check.hint(2)" in first.message
    assert "Return {'tool_call_id'" not in first.message  # the first ❌ says what is wrong, not the answer
    again = run_check(2, wrong, nudge="Look at the call's id.", recipe="Return {'tool_call_id': call['id'], ...}")
    assert "Return {'tool_call_id'" in again.message and "wrong.." not in again.message  # then the steps


def test_hint_prints_the_recipe_on_request(capsys):
    Hints({1: "step one, step two"})(1)
    assert "step one, step two" in capsys.readouterr().out


def test_a_dict_where_json_text_belongs_is_named():
    with pytest.raises(AssertionError, match="json.dumps"):
        expect_text({"status": "error"}, "the tool message content")
    with pytest.raises(AssertionError, match="not valid JSON"):
        expect_json_object("{'a': 1}", "the envelope")
    assert expect_json_object('{"a": 1}', "the envelope") == {"a": 1}
    with pytest.raises(NotSolved):
        expect_text(None, "x")


def test_a_function_without_tool_is_told_to_add_it():
    def get_weather(city: str) -> str:
        return city

    with pytest.raises(AssertionError, match="put @tool on the line above `def get_weather`"):
        expect_tool(get_weather)
    assert expect_tool(tool(get_weather)).name == "get_weather"
    with pytest.raises(NotSolved):
        expect_tool(None)


def test_a_check_whose_code_never_returns_stops_at_its_time_limit_and_says_so(monkeypatch):
    import threading
    import time as clock

    from course import checking

    monkeypatch.setattr(checking, "TIME_LIMIT", 0.3)
    never = threading.Event()
    started = clock.perf_counter()
    result = checking.run_check(1, lambda: never.wait() and "done", "a nudge", "the steps")
    assert clock.perf_counter() - started < 5
    assert result.status == "wrong" and result.message.startswith("⌛ Exercise 1: the check stopped after 0.3 seconds")
    assert "wait forever" in result.message
    never.set()  # let the abandoned thread end
    ok = checking.run_check(2, lambda: "fine", "a nudge")
    assert ok.passed and ok.message == "✅ Exercise 2 passed: fine"
    raised = checking.run_check(3, lambda: 1 / 0, "a nudge")
    assert raised.status == "wrong" and "ZeroDivisionError" in raised.message  # errors still come through the thread
