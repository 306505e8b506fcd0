"""The practice model and long tool results: it reads a spilled file when it can, warns when it cannot, and
answers a head-truncated log from what is there (wrongly, when the answer was cut away)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mini_framework import Agent, connect, tool
from mini_framework.budget import spill as spill_module
from mini_framework.budget.spill import spill
from practice_model import planner, spilled
from practice_model.situation import analyse, offered_tool

LOG = "\n".join(f"2026-11-30 10:{i // 60 % 60:02d}:{i % 60:02d} INFO request {i} ok" for i in range(5000)) + \
    "\nERROR: payment service timed out after 30 s (exit code 3)"
ERROR_LINE = "ERROR: payment service timed out after 30 s (exit code 3)"
ASKED = 'Why did the deploy of service "payments" fail? Check its log.'
ASKED_ZH = '服务 "payments" 的部署为什么失败了？看看日志。'


@pytest.fixture(scope="module")
def practice() -> tuple[Any, str]:
    return connect("practice")


def read_log_tool(text: str = LOG, spill_at: int | bool = 2000):
    @tool(too_long_to_file=spill_at)
    def read_log(service: str) -> str:
        """Read the deploy log of a service."""
        return text
    return read_log


@tool(reads_files=True)
def search_file(path: str, pattern: str) -> str:
    """Search a text file for lines that contain a pattern; returns the matching lines with their numbers."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    found = [f"{n}: {line}" for n, line in enumerate(lines, 1) if pattern in line]
    return "\n".join(found[-5:]) or "no match"


@tool(reads_files=True)
def read_file(path: str, tail: int = 0) -> str:
    """Read a text file, or only its last `tail` lines."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return "\n".join(lines[-tail:] if tail else lines[-3:])


def run(practice, tools, question, tmp_path, parallel: bool = True):
    client, model = practice
    result = Agent(client, model, tools=tools, spill_dir=tmp_path).run(question)
    messages = [m if isinstance(m, dict) else m.model_dump() for m in result.messages]
    calls = [(c["function"]["name"], json.loads(c["function"]["arguments"]))
             for m in messages for c in m.get("tool_calls") or []]
    return result.text, calls


def spill_file(tmp_path) -> Path:
    [path] = tmp_path.glob("tool_result_read_log_*.txt")
    assert path.read_text(encoding="utf-8") == LOG          # the file holds everything
    return path


# ---------------------------------------------------------------------------------------------
# A tool that reads files is offered: the model uses it, then answers from what it read.


def test_with_a_search_tool_the_model_searches_the_spilled_file_for_the_error(practice, tmp_path):
    text, calls = run(practice, [read_log_tool(), search_file], ASKED, tmp_path)
    path = spill_file(tmp_path)
    assert calls == [("read_log", {"service": "payments"}), ("search_file", {"path": str(path), "pattern": "ERROR"})]
    assert text == (f'The tool\'s output was too long to show in full, so I searched the full output ({path}) for '
                    f'"ERROR". What it says:\n- 5001: {ERROR_LINE}')


def test_with_a_reading_tool_the_model_reads_the_end_of_the_file(practice, tmp_path):
    text, calls = run(practice, [read_log_tool(), read_file], ASKED_ZH, tmp_path)
    path = spill_file(tmp_path)
    assert calls[1] == ("read_file", {"path": str(path), "tail": spilled.TAIL_LINES})
    assert text.startswith(f"工具的输出太长，只给我看了开头和结尾，所以我读取了完整输出（{path}）。")
    assert text.endswith(f"找到的内容：\n- {ERROR_LINE}")


def test_a_code_the_user_names_is_what_the_search_looks_for(practice, tmp_path):
    log = LOG.replace("INFO request 4321 ok", "INFO request r4321 ok (slow: 2.5 s)")
    question = 'In the log of service "payments", find the lines about r4321.'
    text, calls = run(practice, [read_log_tool(log), search_file], question, tmp_path)
    [path] = tmp_path.glob("tool_result_read_log_*.txt")
    assert calls[1] == ("search_file", {"path": str(path), "pattern": "r4321"})
    assert text.endswith('for "r4321". What it says:\n- 4322: 2026-11-30 10:12:01 INFO request r4321 ok (slow: 2.5 s)')


def test_a_search_that_finds_nothing_says_so_and_falls_back_on_the_part_shown(practice, tmp_path):
    @tool(reads_files=True)
    def grep(path: str, pattern: str) -> str:
        """Search a file for a pattern."""
        return "no match"

    text, _ = run(practice, [read_log_tool(), grep], ASKED, tmp_path)
    assert "It found nothing. In the part I saw:\n- " + ERROR_LINE in text


def test_a_reading_tool_that_fails_is_reported_and_the_part_shown_still_answers(practice, tmp_path):
    @tool(reads_files=True)
    def open_file(path: str) -> str:
        """Open a text file and read it."""
        raise PermissionError("permission denied")

    text, calls = run(practice, [read_log_tool(), open_file], ASKED, tmp_path)
    assert [name for name, _ in calls] == ["read_log", "open_file"]
    assert "That did not work:" in text and "permission denied" in text and ERROR_LINE in text


def test_a_reading_tool_whose_own_result_is_spilled_is_not_followed_for_ever(practice, tmp_path):
    @tool(reads_files=True, too_long_to_file=2000)
    def cat_file(path: str) -> str:
        """Read a whole text file."""
        return Path(path).read_text(encoding="utf-8")

    text, calls = run(practice, [read_log_tool(), cat_file], ASKED, tmp_path)
    assert [name for name, _ in calls] == ["read_log", "cat_file"]
    assert ERROR_LINE in text


def test_one_call_at_a_time_when_parallel_calls_are_off(practice, tmp_path):
    client, model = practice
    agent = Agent(client, model, tools=[read_log_tool(), search_file], spill_dir=tmp_path, parallel_tool_calls=False)
    assert ERROR_LINE in agent.run(ASKED).text


# ---------------------------------------------------------------------------------------------
# No tool reads files: the answer says the output was cut and where the whole of it is.


def test_without_a_reading_tool_the_answer_warns_and_names_the_file(practice, tmp_path):
    text, calls = run(practice, [read_log_tool()], ASKED, tmp_path)
    path = spill_file(tmp_path)
    assert calls == [("read_log", {"service": "payments"})]
    assert text == (f"The tool's output was too long and was cut: I only saw its start and its end. The full output "
                    f"is in {path}; open it there, or give me a tool that can read files. In the part I saw:\n"
                    f"- {ERROR_LINE}")


def test_the_warning_in_chinese(practice, tmp_path):
    text, _ = run(practice, [read_log_tool()], ASKED_ZH, tmp_path)
    assert text.startswith(f"工具的输出太长被截断了，我只看到了开头和结尾。完整内容保存在 {spill_file(tmp_path)}，")
    assert text.endswith(f"从我看到的部分来看：\n- {ERROR_LINE}")


def test_a_question_that_is_not_about_an_error_gets_the_end_of_the_part_shown(practice, tmp_path):
    text, _ = run(practice, [read_log_tool()], 'Show me the log of service "payments".', tmp_path)
    assert text.endswith(f"The part I saw ends with: {ERROR_LINE}") and str(spill_file(tmp_path)) in text


def test_a_file_that_could_not_be_saved_is_said_so(practice, tmp_path):
    text, _ = run(practice, [read_log_tool(), search_file], ASKED, tmp_path / "missing")
    assert text.startswith("The tool's output was too long and was cut: I only saw its start and its end, and the "
                           "full text could not be saved (no such file or directory).")
    assert ERROR_LINE in text


# ---------------------------------------------------------------------------------------------
# Cut by its head (no reminder): answered from what is there, wrongly when the answer was cut away.


def test_a_head_truncated_log_is_answered_from_its_head_and_the_error_is_missed(practice, tmp_path):
    text, _ = run(practice, [read_log_tool(LOG[:4000], spill_at=False)], ASKED, tmp_path)
    assert text == "I found no error in the output. It ends with: 2026-11-30 10:01:42 INFO reque"
    text, _ = run(practice, [read_log_tool(LOG[:4000], spill_at=False)], ASKED_ZH, tmp_path)
    assert text == "输出里没有看到错误，最后一行是：2026-11-30 10:01:42 INFO reque"


def test_a_long_log_whose_error_is_in_what_was_kept_is_quoted(practice, tmp_path):
    text, _ = run(practice, [read_log_tool(LOG[-4000:], spill_at=False)], ASKED, tmp_path)
    assert text == f"The output shows:\n- {ERROR_LINE}"


def test_short_results_are_answered_as_before(practice, tmp_path):
    text, _ = run(practice, [read_log_tool("deploy failed: disk full", spill_at=False)], ASKED, tmp_path)
    assert spilled.cut_of("deploy failed: disk full") is None and "disk full" in text


# ---------------------------------------------------------------------------------------------
# The pieces.


@pytest.mark.parametrize("readable", [True, False])
def test_the_reminders_spill_writes_are_recognised(tmp_path, readable):
    cut = spill(LOG, "read_log", threshold=500, folder=tmp_path, can_read_files=readable)
    found = spilled.cut_of(cut.content.strip())
    assert found is not None and found.path == str(cut.path) and found.reason == ""
    assert found.visible.startswith("2026-11-30 10:00:00 INFO request 0 ok") and found.visible.endswith(ERROR_LINE)
    assert "not shown" in found.shown and "not shown" not in found.visible


def test_the_reminder_of_a_file_that_was_not_saved_is_recognised(tmp_path):
    cut = spill(LOG, "read_log", threshold=500, folder=tmp_path / "missing")
    found = spilled.cut_of(cut.content)
    assert found is not None and found.path is None and found.reason == "no such file or directory"


def test_the_words_copied_from_spill_py_are_still_there():
    for reminder in (spill_module.REMINDER_READ, spill_module.REMINDER_WARN, spill_module.REMINDER_LOST):
        assert reminder.startswith(spilled.REMINDER_START) and reminder.endswith(spilled.REMINDER_END)
        assert spilled._TOO_LONG in reminder


@pytest.mark.parametrize("text", ["", "ok", "<system-reminder>\nhello\n</system-reminder>", {"a": 1},
                                  "x\n<system-reminder>\nThis tool's output was too long to show in full\n"
                                  "</system-reminder>"])
def test_other_results_are_not_spills(text):
    assert spilled.cut_of(text) is None


def function(name: str, description: str, **params: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in params.items()}, "required": list(params)}}}


@pytest.mark.parametrize("entry, kind", [
    (function("search_file", "Search a file for a pattern.", path="string", pattern="string"), "search"),
    (function("grep", "grep -E over a log", file="string", regex="string"), "search"),
    (function("read_file", "Read a text file.", path="string"), "read"),
    (function("查看文件", "读取文本文件的内容", file_path="string"), "read"),
    (function("tail_log", "Show the last lines of a log file.", log_path="string", lines="integer"), "read"),
    (function("write_file", "Write text to a file.", path="string", text="string"), None),
    (function("delete_file", "Delete a file after reading it.", path="string"), None),
    (function("read_log", "Read the deploy log of a service.", service="string"), None),
    (function("upload", "Upload a file.", path="string"), None),
    (function("convert", "Convert units.", path="integer"), None),
])
def test_which_tools_read_files(entry, kind):
    assert spilled.reader(offered_tool(entry)) == kind


def spilled_request(question: str, tools: list[dict], tmp_path) -> dict:
    cut = spill(LOG, "read_log", threshold=500, folder=tmp_path, can_read_files=True)
    return {"messages": [
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "read_log", "arguments": '{"service": "payments"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": cut.content}],
        "tools": [function("read_log", "Read the deploy log of a service.", service="string"), *tools]}


def test_a_tool_that_takes_a_regular_expression_gets_every_error_word(tmp_path):
    grep = function("grep", "Search a file with a regular expression.", path="string", pattern="string")
    [call] = planner.plan(spilled_request(ASKED, [grep], tmp_path)).tool_calls
    assert json.loads(call.arguments)["pattern"] == spilled.ERROR_PATTERN


def test_a_required_count_is_filled_and_a_search_comes_before_a_read(tmp_path):
    tools = [function("read_file", "Read a file.", path="string"),
             function("search_file", "Search a file.", path="string", pattern="string", max_results="integer")]
    [call] = planner.plan(spilled_request(ASKED, tools, tmp_path)).tool_calls
    assert call.name == "search_file" and json.loads(call.arguments)["max_results"] == spilled.TAIL_LINES


def test_no_reading_call_is_planned_twice_and_nothing_is_planned_without_a_spill(tmp_path):
    request = spilled_request(ASKED, [function("read_file", "Read a file.", path="string")], tmp_path)
    [call] = planner.plan(request).tool_calls
    request["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "type": "function", "function": {
            "name": call.name, "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": "c2", "content": ERROR_LINE}]
    reply = planner.plan(request)
    assert not reply.tool_calls and ERROR_LINE in reply.content
    assert spilled.reading_calls(analyse({"messages": [{"role": "user", "content": ASKED}]})) is None


def test_a_spill_and_another_result_are_both_answered(tmp_path):
    request = spilled_request(ASKED, [], tmp_path)
    request["messages"][1]["tool_calls"].append({"id": "c9", "type": "function", "function": {
        "name": "get_status", "arguments": '{"service": "payments"}'}})
    request["messages"].append({"role": "tool", "tool_call_id": "c9", "content": '{"status": "down"}'})
    reply = planner.plan(request)
    assert ERROR_LINE in reply.content and "status down" in reply.content


@pytest.mark.parametrize("question, expected", [
    ("Why did it fail?", True), ("What went wrong with the build?", True), ("报错原因是什么", True),
    ("Show me the log", False), ("日志最后一行是什么", False)])
def test_error_questions(question, expected):
    assert spilled.is_error_question(question) is expected
