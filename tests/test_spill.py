"""too_long_to_file: the full text in a file, the head and the tail for the model, and a reminder."""
from __future__ import annotations

import os
import re
import stat

import pytest

from mini_framework import Agent, ToolDefinitionError, tool
from mini_framework.budget.spill import spill
from tests.test_agent import ScriptedClient

LOG = "\n".join(f"2026-11-30 10:{i // 60:02d}:{i % 60:02d} INFO request {i} ok" for i in range(5000)) + \
    "\nERROR: payment service timed out after 30 s (exit code 3)"


def call(name: str, arguments: str = "{}") -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]}


def test_short_text_is_left_alone(tmp_path):
    assert spill("北京：晴，22°C", "get_weather", threshold=100, folder=tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_a_long_text_keeps_its_head_and_its_tail_and_the_file_holds_all_of_it(tmp_path):
    cut = spill(LOG, "read_log", threshold=2000, folder=tmp_path)
    assert cut is not None and re.fullmatch(r"tool_result_read_log_[0-9a-f]{8}\.txt", cut.path.name)
    assert cut.path.read_text(encoding="utf-8") == LOG
    assert stat.S_IMODE(cut.path.stat().st_mode) == 0o600
    assert cut.content.startswith("2026-11-30 10:00:00 INFO request 0 ok\n")
    assert "ERROR: payment service timed out after 30 s (exit code 3)" in cut.content  # the answer at the end
    assert "characters not shown" in cut.content and str(cut.path) in cut.content
    assert "you have no tool that can read files: tell the user" in cut.content
    body = cut.content.split("<system-reminder>")[0]
    assert len(body) < len(LOG) / 5 and all(len(line) > 20 for line in body.strip().splitlines()
                                             if "not shown" not in line)  # whole lines


def test_chinese_text_is_cut_by_tokens_not_characters(tmp_path):
    text = "北京今天天气晴朗，气温二十二度。\n" * 3000
    cut = spill(text, "report", threshold=1000, folder=tmp_path)
    assert cut is not None and cut.path.read_text(encoding="utf-8") == text
    assert len(cut.content.split("<system-reminder>")[0]) < 2000  # ~1,000 tokens of Chinese, not 4,000 characters


def test_the_reminder_says_to_read_the_file_when_a_tool_can(tmp_path):
    cut = spill(LOG, "read_log", threshold=500, folder=tmp_path, can_read_files=True)
    assert "Read only the parts you need with your file tools" in cut.content


def test_an_unwritable_folder_loses_nothing_the_model_is_told(tmp_path):
    cut = spill(LOG, "read_log", threshold=500, folder=tmp_path / "missing")
    assert cut.path is None and "could not be saved" in cut.content and "exit code 3" in cut.content


def test_text_that_is_not_valid_utf8_is_written_with_escapes(tmp_path):
    text = b"ok \xff\xfe broken bytes\n".decode("utf-8", errors="surrogateescape") * 2000
    cut = spill(text, "dump", threshold=200, folder=tmp_path)
    assert "\\udcff" in cut.path.read_text(encoding="utf-8")


def test_the_agent_spills_text_results_of_opted_in_tools_only(tmp_path):
    @tool(too_long_to_file=500)
    def read_log(service: str = "payments") -> str:
        """Read a service's log."""
        return LOG

    @tool(too_long_to_file=500)
    def log_stats(service: str = "payments") -> dict:
        """Numbers about a log (data is never spilled)."""
        return {"lines": LOG.count("\n"), "tail": LOG[-3000:]}

    @tool
    def plain_log(service: str = "payments") -> str:
        """A log without spilling."""
        return LOG

    agent = Agent(ScriptedClient([call("read_log"), call("log_stats"), call("plain_log")]), "m",
                  [read_log, log_stats, plain_log], spill_dir=tmp_path)
    result = agent.run("why did payments fail?")
    spilled, data, plain = result.tool_results
    assert "<system-reminder>" in spilled.content and spilled.value == LOG and len(os.listdir(tmp_path)) == 1
    assert "<system-reminder>" not in data.content and plain.content == LOG


def test_a_threshold_must_be_sensible():
    def f() -> str:
        """x"""
        return ""

    for bad in (5, -1, "20000", 2.5):
        with pytest.raises(ToolDefinitionError, match="too_long_to_file"):
            tool(f, too_long_to_file=bad)


def test_bytes_from_a_spilling_tool_are_not_spilled_and_a_vanished_file_is_a_clear_error(tmp_path):
    from openai import OpenAI

    from practice_model import shared_server

    @tool(too_long_to_file=500)
    def dump_core(service: str = "payments") -> bytes:
        """A binary dump (not text: never spilled)."""
        return b"\x89PNG\xff\xfe" * 5000

    result = Agent(ScriptedClient([call("dump_core")]), "m", [dump_core], spill_dir=tmp_path).run("q")
    assert len(result.tool_results) == 1 and os.listdir(tmp_path) == []  # answered, nothing written

    @tool(too_long_to_file=500)
    def read_log(service: str = "payments") -> str:
        """Read the payments service's deploy log."""
        return LOG

    @tool(reads_files=True)
    def search_file(path: str, pattern: str) -> str:
        """Search a file for lines matching a pattern; returns the matching lines with their numbers."""
        with open(path, encoding="utf-8") as f:  # the file was removed meanwhile: FileNotFoundError
            return "\n".join(f"{i}: {line}" for i, line in enumerate(f, 1) if pattern in line)

    def vanish(event):
        from mini_framework.events import ToolFinished
        if isinstance(event, ToolFinished) and event.result.call.name == "read_log":
            for name in os.listdir(tmp_path):
                os.remove(tmp_path / name)  # the spilled file disappears before the model reads it

    client = OpenAI(base_url=shared_server().base_url, api_key="practice")
    result = Agent(client, "practice", [read_log, search_file], spill_dir=tmp_path, on_event=vanish).run(
        "为什么 payments 部署失败了？看看日志。")
    searches = [r for r in result.tool_results if r.call.name == "search_file"]
    assert result.text and searches and all(r.failure == "exception" and "No such file" in r.content for r in searches)
    assert all(m.get("role") != "tool" or m["content"] for m in result.messages)  # every call answered
