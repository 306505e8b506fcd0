"""FileToolset's behaviour: read_file, grep, sed and echo_into as a model uses them (the attacks: test_file_attacks)."""
from __future__ import annotations

import json
import os
import stat

import pytest

from mini_framework import Agent, Executor, FileToolset, connect
from mini_framework.builtin.files import FileRefused, search
from mini_framework.replies import ToolCall
from tests.test_agent import ScriptedClient
from tests.test_approvals import calls


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "notes.txt").write_text("tea\ncoffee\nmilk\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "policy.md").write_text("# Policy\nRefunds within 30 days of delivery.\nNo refunds on sale items.\n")
    (tmp_path / "docs" / "deep").mkdir()
    (tmp_path / "docs" / "deep" / "faq.md").write_text("Q: refunds?\nA: see policy.md\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("VERSION = 'v1.2'\n# TODO: tests\n")
    return tmp_path


def run(files: FileToolset, name: str, **arguments):
    """One call through the executor: (ok, what the model reads)."""
    [result] = Executor(files.tools).run_sync([ToolCall("c1", name, json.dumps(arguments))])
    return result.ok, result.content


# ----------------------------------------------------------------------------- read_file

def test_read_file_numbers_lines_and_says_how_many_there_are(ws):
    files = FileToolset(ws)
    assert files.read_file("notes.txt") == "notes.txt: lines 1-3 of 3 (the whole file)\n     1\ttea\n     2\tcoffee\n     3\tmilk"
    assert files.read_file("notes.txt", 2, 2) == ("notes.txt: lines 2-2 of 3 (call read_file with start_line=3 to read "
                                                  "on)\n     2\tcoffee")
    assert files.read_file("./docs\\policy.md", 3).startswith("docs/policy.md: lines 3-3 of 3 (to the end of the file)")


def test_an_absolute_path_inside_the_workspace_is_its_relative_path(ws):
    """A spilled result's reminder names its file by an absolute path: inside the workspace, that is fine."""
    files = FileToolset(ws)
    assert files.read_file(str(ws / "docs" / "policy.md")).startswith("docs/policy.md: lines 1-3 of 3")
    assert files.sed(str(ws / "docs" / "policy.md"), "30", "14", 2, 2).startswith("docs/policy.md: 1 replacement")
    for outside in (str(ws) + "_other/x.txt", str(ws), str(ws / ".." / "x.txt")):
        with pytest.raises(FileRefused):
            files.read_file(outside)


def test_read_file_is_bounded_and_says_how_to_read_on(ws):
    (ws / "long.txt").write_text("".join(f"line {n} {'y' * 50}\n" for n in range(1, 1001)) + "x" * 5000 + "\n")
    files = FileToolset(ws)
    first = files.read_file("long.txt")
    assert first.splitlines()[0] == "long.txt: lines 1-200 of 1,001 (call read_file with start_line=201 to read on)"
    assert len(first.splitlines()) == 201
    last = files.read_file("long.txt", 1001)
    assert "[3,000 more characters on this line]" in last and len(last) < 2200
    many = files.read_file("long.txt", 1, 1001)  # asked for everything: cut at about 40,000 characters, said so
    assert len(many) <= 41_000 and "read on" in many.splitlines()[0]


def test_read_file_errors_the_model_can_act_on(ws):
    (ws / "empty.txt").write_text("")
    files = FileToolset(ws)
    assert files.read_file("empty.txt") == "empty.txt: the file is empty (0 lines)"
    for arguments, words in [({"path": "notes.txt", "start_line": 9}, "past the end: the file has 3 lines"),
                             ({"path": "notes.txt", "start_line": 3, "end_line": 2}, "must not be before"),
                             ({"path": "missing.txt"}, "no such file"),
                             ({"path": "notes.txt", "start_line": 0}, "start_line"),
                             ({"start_line": 1}, "path")]:
        ok, content = run(files, "read_file", **arguments)
        assert not ok and words in content, content


def test_crlf_lines_are_shown_without_their_cr_and_kept_by_an_edit(ws):
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    files = FileToolset(ws)
    assert files.read_file("dos.txt").endswith("1\tone\n     2\ttwo")
    files.sed("dos.txt", "^two$", "TWO", 1, 2)
    assert (ws / "dos.txt").read_bytes() == b"one\r\nTWO\r\n"


# ----------------------------------------------------------------------------- grep

def test_grep_answers_path_line_text(ws):
    assert FileToolset(ws).grep("(?i)refund", "*.md").splitlines() == [
        "3 matching line(s) in 2 file(s) searched:",
        "docs/policy.md:2: Refunds within 30 days of delivery.",
        "docs/policy.md:3: No refunds on sale items.",
        "docs/deep/faq.md:1: Q: refunds?"]


@pytest.mark.parametrize("glob, found", [
    ("*.md", {"docs/policy.md", "docs/deep/faq.md"}),       # no folder: every folder
    ("docs/*.md", {"docs/policy.md"}),                      # a folder: that folder only
    ("docs/**/*.md", {"docs/policy.md", "docs/deep/faq.md"}),
    ("**/deep/*", {"docs/deep/faq.md"}),
    ("src/*.py", {"src/app.py"}),
    ("*", {"notes.txt", "docs/policy.md", "docs/deep/faq.md", "src/app.py"}),
    ("**", {"notes.txt", "docs/policy.md", "docs/deep/faq.md", "src/app.py"}),
    ("notes.txt", {"notes.txt"}),
])
def test_path_pattern_is_a_glob_relative_to_the_workspace(ws, glob, found):
    out = FileToolset(ws).grep(".", glob)
    assert {line.split(":")[0] for line in out.splitlines()[1:]} == found


def test_grep_needs_a_path_pattern_and_says_when_nothing_matches(ws):
    files = FileToolset(ws)
    ok, content = run(files, "grep", pattern="tea")
    assert not ok and "path_pattern" in content
    assert files.grep("tea", "*.rst") == ("No file to search matches path_pattern '*.rst' (hidden files are never "
                                          "searched).")
    assert files.grep("nowhere", "*.md") == "No line matches 'nowhere' in the 2 file(s) matching '*.md'."


def test_grep_shows_at_most_max_matches_and_cuts_long_lines(ws):
    (ws / "many.txt").write_text("hit " + "x" * 1000 + "\n" + "hit\n" * 50)
    out = FileToolset(ws, max_matches=5).grep("hit", "many.txt")
    lines = out.splitlines()
    assert lines[0] == "5 matching line(s) in 1 file(s) searched (stopped at 5: narrow the pattern or path_pattern):"
    assert len(lines) == 6 and len(lines[1]) == len("many.txt:1: ") + search.MATCH_CHARS


def test_grep_skips_files_it_cannot_read_and_says_so(ws):
    (ws / "big.txt").write_text("tea\n" * 1000)
    (ws / "blob.bin").write_bytes(b"tea\0")
    out = FileToolset(ws, max_bytes=100).grep("tea", "*")
    assert out.splitlines()[0] == ("1 matching line(s) in 4 file(s) searched; 2 matching file(s) not searched (links, "
                                   "binary, too large or unreadable: read_file on one says why):")


def test_a_catastrophic_pattern_ends_within_the_timeout_with_a_clear_message(ws):
    (ws / "aaa.txt").write_text("a" * 5000 + "!\n")
    ok, content = run(FileToolset(ws, grep_timeout=0.25), "grep", pattern="(a+)+$", path_pattern="aaa.txt")
    assert not ok and "ran for more than 0.25 s and was stopped" in content and "(a+)+" in content


def test_the_worker_runs_isolated_and_never_opens_a_file(ws):
    assert "open(" not in search.WORKER and "import json, re, sys" in search.WORKER
    assert search.substitute("a", "b", ["banana"], 10) == [("bbnbnb", 3)]


# ----------------------------------------------------------------------------- sed

def test_sed_replaces_in_the_range_only_and_answers_what_changed(ws):
    files = FileToolset(ws)
    files.read_file("docs/policy.md")
    out = files.sed("docs/policy.md", r"(\d+) days", r"\1 calendar days", 1, 2)
    assert out == ("docs/policy.md: 1 replacement(s) in lines 1-2; the file has 3 lines. Changed:\n"
                   "     2\tRefunds within 30 calendar days of delivery.")
    assert (ws / "docs" / "policy.md").read_text().splitlines()[1:] == [
        "Refunds within 30 calendar days of delivery.", "No refunds on sale items."]


def test_two_edits_in_a_row_work_the_new_hash_is_the_known_one(ws):
    files = FileToolset(ws)
    files.read_file("notes.txt")
    files.sed("notes.txt", "tea", "green tea", 1, 1)
    files.sed("notes.txt", "milk", "oat milk", 1, 99)  # end_line past the end: up to the last line
    files.echo_into("notes.txt", "water\n")
    files.sed("notes.txt", "water", "sparkling water", 1, 1)
    assert (ws / "notes.txt").read_text() == "sparkling water\n"


def test_sed_errors(ws):
    files = FileToolset(ws)
    files.read_file("notes.txt")
    for arguments, words in [({"pattern": "zzz", "start_line": 1, "end_line": 3}, "no match for 'zzz' in lines 1-3"),
                             ({"pattern": "tea", "start_line": 5, "end_line": 6}, "past the end"),
                             ({"pattern": "tea", "start_line": 2, "end_line": 1}, "must not be before"),
                             ({"pattern": "(", "start_line": 1, "end_line": 1}, "invalid regular expression")]:
        ok, content = run(files, "sed", path="notes.txt", replacement="x", **arguments)
        assert not ok and words in content, content
    assert (ws / "notes.txt").read_text() == "tea\ncoffee\nmilk\n"


def test_a_file_changed_since_it_was_read_is_refused_and_reading_again_fixes_it(ws):
    files = FileToolset(ws)
    files.read_file("notes.txt")
    (ws / "notes.txt").write_text("tea\ncoffee\nmilk\nsugar\n")
    with pytest.raises(FileRefused, match="file has been changed"):
        files.sed("notes.txt", "tea", "TEA", 1, 1)
    files.read_file("notes.txt")
    files.sed("notes.txt", "tea", "TEA", 1, 1)
    assert (ws / "notes.txt").read_text() == "TEA\ncoffee\nmilk\nsugar\n"


def test_a_change_of_the_same_size_within_the_same_second_is_seen(ws):
    """The hash, not size and mtime, decides."""
    files = FileToolset(ws)
    files.read_file("notes.txt")
    before = os.stat(ws / "notes.txt")
    (ws / "notes.txt").write_text("TEA\ncoffee\nmilk\n")
    os.utime(ws / "notes.txt", ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(FileRefused, match="file has been changed"):
        files.echo_into("notes.txt", "x")


def test_reading_is_per_toolset(ws):
    FileToolset(ws).read_file("notes.txt")
    with pytest.raises(FileRefused, match="read this file with read_file first"):
        FileToolset(ws).echo_into("notes.txt", "x")


# ----------------------------------------------------------------------------- echo_into

def test_echo_into_replaces_atomically_keeps_the_mode_and_leaves_no_temporary_file(ws):
    os.chmod(ws / "notes.txt", 0o640)
    files = FileToolset(ws)
    files.read_file("notes.txt")
    inode = os.stat(ws / "notes.txt").st_ino
    assert files.echo_into("notes.txt", "only water\n") == "notes.txt: written, 1 lines"
    assert (ws / "notes.txt").read_text() == "only water\n"
    assert stat.S_IMODE(os.stat(ws / "notes.txt").st_mode) == 0o640 and os.stat(ws / "notes.txt").st_ino != inode
    assert sorted(os.listdir(ws)) == ["docs", "notes.txt", "src"]


def test_echo_into_creates_a_new_file_in_a_folder_that_exists(ws):
    files = FileToolset(ws)
    assert files.echo_into("docs/summary.md", "# Summary\n") == "docs/summary.md: created, 1 lines"
    assert (ws / "docs" / "summary.md").read_text() == "# Summary\n"
    assert files.sed("docs/summary.md", "Summary", "Short", 1, 1).startswith("docs/summary.md: 1 replacement")
    with pytest.raises(FileRefused, match="no such folder"):
        files.echo_into("reports/q1.md", "x")
    assert not (ws / "reports").exists()


def test_a_write_that_fails_midway_loses_nothing(ws, monkeypatch):
    from mini_framework.builtin.files import editing

    files = FileToolset(ws)
    files.read_file("notes.txt")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(editing.os, "fsync", disk_full)
    ok, content = run(files, "echo_into", path="notes.txt", content="new text")
    assert not ok and "the file system refused: No space left on device; nothing was changed" in content
    assert (ws / "notes.txt").read_text() == "tea\ncoffee\nmilk\n" and sorted(os.listdir(ws)) == ["docs", "notes.txt",
                                                                                                  "src"]


def test_options_are_checked():
    for bad in ({"max_bytes": 0}, {"grep_timeout": -1}, {"max_matches": True}):
        with pytest.raises(ValueError):
            FileToolset(".", **bad)
    with pytest.raises(ValueError, match="not a folder"):
        FileToolset("/no/such/folder")


# ----------------------------------------------------------------------------- approval, agents

def test_requires_approval_gates_sed_and_echo_into_and_the_preview_is_the_diff(ws):
    files = FileToolset(ws, requires_approval=True)
    assert [t.requires_approval for t in files.tools] == [False, False, True, True]
    edit = {"path": "notes.txt", "pattern": "coffee", "replacement": "cocoa", "start_line": 1, "end_line": 3}
    fake = ScriptedClient([calls(("c1", "read_file", {"path": "notes.txt"})), calls(("c2", "sed", edit))])
    agent = Agent(fake, "m", files.tools)
    paused = agent.run("change coffee to cocoa")
    [item] = paused.pending
    assert item.preview == ("--- notes.txt\n+++ notes.txt (after the edit)\n@@ -1,3 +1,3 @@\n tea\n-coffee\n+cocoa\n"
                            " milk")
    assert item.preview in item.details() and (ws / "notes.txt").read_text() == "tea\ncoffee\nmilk\n"
    item.approve()
    result = agent.resume(paused)
    assert result.text == "done" and (ws / "notes.txt").read_text() == "tea\ncocoa\nmilk\n"


def test_a_preview_says_when_the_call_will_be_refused(ws):
    files = FileToolset(ws, requires_approval=True)
    fake = ScriptedClient([calls(("c1", "echo_into", {"path": "notes.txt", "content": "x"}))])
    paused = Agent(fake, "m", files.tools).run("overwrite")
    assert paused.pending[0].preview.startswith("This call will be refused: read this file with read_file first")


def test_a_denied_edit_changes_nothing(ws):
    files = FileToolset(ws, requires_approval=True)
    files.read_file("notes.txt")
    fake = ScriptedClient([calls(("c1", "echo_into", {"path": "notes.txt", "content": "gone"}))])
    agent = Agent(fake, "m", files.tools)
    paused = agent.run("overwrite")
    paused.pending[0].deny("no")
    agent.resume(paused)
    assert (ws / "notes.txt").read_text() == "tea\ncoffee\nmilk\n"


def test_calls_of_one_reply_run_concurrently_and_edits_take_turns(ws):
    files = FileToolset(ws)
    files.read_file("notes.txt")
    edits = [ToolCall(f"c{i}", "sed", json.dumps({"path": "notes.txt", "pattern": word, "replacement": word.upper(),
                                                   "start_line": 1, "end_line": 3}))
             for i, word in enumerate(["tea", "coffee", "milk"])]
    results = Executor(files.tools).run_sync(edits)
    assert all(r.ok for r in results) and (ws / "notes.txt").read_text() == "TEA\nCOFFEE\nMILK\n"


def test_through_an_agent_against_the_practice_model(ws):
    files = FileToolset(ws)
    agent = Agent(*connect(), files.tools)
    result = agent.run("Read the file docs/policy.md: what does it say about refunds?")
    read = [r for r in result.tool_results if r.call.name == "read_file"]
    assert read and read[0].ok and "30 days" in read[0].content and "30 days" in result.text
    result = agent.run('Which markdown files mention "30 days"? Search *.md')
    found = [r for r in result.tool_results if r.call.name == "grep"]
    assert found and found[0].ok and "docs/policy.md:2:" in found[0].content and "policy.md" in result.text
    assert (ws / "notes.txt").read_text() == "tea\ncoffee\nmilk\n"  # nothing was written on the way
