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


BIG = "2026-11-30 10:00:00 INFO request ok, nothing to report\n" * (12_000_000 // 55)  # 12 MB of text


def test_spilling_a_12_mb_result_does_not_block_other_calls(tmp_path, monkeypatch):
    import asyncio
    import threading
    import time

    import mini_framework.budget.hooks as hooks_module
    from mini_framework import Executor, ToolCall
    from mini_framework.budget import SpillHook

    window: dict[str, float] = {}
    done = threading.Event()
    real = hooks_module.spill

    def timed(*args, **kwargs):
        window["start"] = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            window["end"] = time.perf_counter()
            done.set()

    monkeypatch.setattr(hooks_module, "spill", timed)

    @tool(too_long_to_file=True)
    def read_log(service: str = "payments") -> str:
        """Read a service's whole log."""
        return BIG

    lags: list[tuple[float, float]] = []  # (when the tick was due, how late it woke)

    @tool
    async def ticker() -> str:
        """Wake up every 10 ms until the spill is over."""
        deadline = time.perf_counter() + 120
        while not done.is_set() and time.perf_counter() < deadline:
            due = time.perf_counter() + 0.01
            await asyncio.sleep(0.01)
            lags.append((due, time.perf_counter() - due))
        return "ticked"

    executor = Executor([read_log, ticker], timeout=300, hooks=[SpillHook(tmp_path)])
    spilled, ticked = executor.run_sync([ToolCall("c1", "read_log", "{}"), ToolCall("c2", "ticker", "{}")])
    assert "<system-reminder>" in spilled.content and ticked.content == "ticked"
    seconds = window["end"] - window["start"]
    during = [lag for due, lag in lags if window["start"] - 0.01 <= due <= window["end"]]
    worst = max(during, default=seconds)  # no tick at all while spilling: blocked all along
    assert worst < seconds / 3, f"the loop stalled {worst:.3f} s while a {seconds:.3f} s spill ran"


def test_a_file_holds_at_most_max_bytes_cut_at_a_character_and_the_reminder_says_so(tmp_path):
    from practice_model import spilled

    cut = spill(LOG, "read_log", threshold=500, folder=tmp_path, max_bytes=10_000, can_read_files=True)
    assert cut.complete is False and cut.path.read_bytes() == LOG.encode()[:10_000]
    assert "Only the first 10,000 bytes of the output were saved (the rest is lost)" in cut.content
    assert "The complete output" not in cut.content and "exit code 3" in cut.content  # the model still sees the end
    assert spilled.cut_of(cut.content).path == str(cut.path)  # the practice model still finds the file
    chinese = "北京今天天气晴朗。\n" * 3000
    cut = spill(chinese, "report", threshold=500, folder=tmp_path, max_bytes=1_000)  # 35 lines of 28 bytes + 20
    saved = cut.path.read_bytes()
    assert len(saved) == 35 * 28 + 18 and chinese.startswith(saved.decode("utf-8"))
    assert "where the part saved is" in cut.content
    whole = spill(chinese, "report", threshold=500, folder=tmp_path)
    assert whole.complete and whole.path.read_text(encoding="utf-8") == chinese


def test_a_very_long_text_is_judged_from_its_ends_and_said_to_be_about(tmp_path):
    cut = spill(BIG, "read_log", threshold=2000, folder=tmp_path)
    from mini_framework.budget.tokens import estimate_tokens

    whole = len(BIG) // 55 * estimate_tokens(BIG[:55])  # as many tokens in every line
    assert abs(cut.tokens - whole) / whole < 0.01 and f"about {cut.tokens:,} tokens, judged from" in cut.content
    assert f"{len(BIG):,} characters" in cut.content and cut.path.stat().st_size == len(BIG)


def age(path, hours: float) -> None:
    when = os.path.getmtime(path) - hours * 3600
    os.utime(path, (when, when), follow_symlinks=False)


def test_old_spill_files_are_removed_and_nothing_else(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    folder = tmp_path / "spill"
    folder.mkdir()
    old = folder / "tool_result_read_log_0a1b2c3d.txt"
    fresh = folder / "tool_result_read_log_1a2b3c4d.txt"
    others = ["tool_result_read_log_0a1b2c3d.txt.bak", "tool_result_read_log_0A1B2C3D.txt", "notes.txt",
              "tool_result_read_log_0a1b2c3.txt", "tool_result__0a1b2c3d.txt", "my_tool_result_x_0a1b2c3d.txt"]
    for path in [old, fresh] + [folder / name for name in others]:
        path.write_text("x")
    (folder / "tool_result_dir_2a2b2c2d.txt").mkdir()  # a folder named like a spill file: left alone
    link = folder / "tool_result_link_3a3b3c3d.txt"
    link.symlink_to(outside / "precious.txt")  # a link named like one: neither followed nor removed
    for path in [old, *(folder / name for name in others), folder / "tool_result_dir_2a2b2c2d.txt",
                 outside / "precious.txt", link]:
        age(path, 48)
    cut = spill(LOG, "read_log", threshold=500, folder=folder)
    left = sorted(p.name for p in folder.iterdir())
    assert old.name not in left and fresh.name in left and cut.path.name in left
    assert set(others) | {"tool_result_dir_2a2b2c2d.txt", link.name} <= set(left)
    assert (outside / "precious.txt").read_text() == "keep me" and link.is_symlink()


def test_at_most_keep_files_are_kept_the_new_one_always(tmp_path, monkeypatch):
    from mini_framework.budget import spill as spill_module

    monkeypatch.setattr(spill_module, "KEEP_FILES", 3)
    names = [f"tool_result_read_log_{i:08x}.txt" for i in range(5)]
    for hours, name in enumerate(names):  # the first is the newest
        (tmp_path / name).write_text("x")
        age(tmp_path / name, hours)
    cut = spill(LOG, "read_log", threshold=500, folder=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([cut.path.name, *names[:2]])


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX ownership")
def test_other_users_files_and_folders_that_are_not_ours_are_left_alone(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone may rename or replace files here: not written to, not cleaned
    stale = shared / "tool_result_read_log_0a1b2c3d.txt"
    stale.write_text("x")
    age(stale, 48)
    cut = spill(LOG, "read_log", threshold=500, folder=shared)
    assert cut.path is None and "could not be saved (the folder can be changed by other users)" in cut.content
    assert [p.name for p in shared.iterdir()] == [stale.name] and "exit code 3" in cut.content

    shared.chmod(0o1777)  # sticky, like /tmp: others cannot touch our files, so it is fine
    cut = spill(LOG, "read_log", threshold=500, folder=shared)
    assert cut.path is not None and not stale.exists()

    if os.geteuid() != 0:
        return  # only root can give files away
    theirs = shared / "tool_result_read_log_1a1b1c1d.txt"
    theirs.write_text("x")
    os.chown(theirs, 65534, 65534)
    age(theirs, 48)
    spill(LOG, "read_log", threshold=500, folder=shared)
    assert theirs.exists()  # another user's file, even in our folder's pattern and old
    foreign = tmp_path / "foreign"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, 65534, 65534)  # root could write here, but the folder's owner could swap the file
    cut = spill(LOG, "read_log", threshold=500, folder=foreign)
    assert cut.path is None and list(foreign.iterdir()) == []
