"""Exercise checkers of lesson 13: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from checker_cases import boom, checker_tests, stub

from course import lesson13

# -- exercise 1: inside ---------------------------------------------------------------------------


def inside(workspace, relative, *, absolute=True, hidden="all", resolve=True, compare="path", strict=False,
           dots_only=False):
    """The solution, and (through the options) the ways it goes wrong."""
    path = Path(relative)
    if absolute and path.is_absolute():
        return None
    if dots_only:  # only '..' in the text, nothing resolved
        return None if ".." in relative else (workspace / relative)
    parts = path.parts if hidden == "all" else path.parts[-1:] if hidden == "name" else ()
    if any(part.startswith(".") for part in parts):
        return None
    if not hidden and ".." in path.parts:  # no hidden check, but '..' still refused
        return None
    root = workspace.resolve()
    where = (root / relative).resolve(strict=strict) if resolve else root / relative
    if compare == "string":
        return where if str(where).startswith(str(root)) else None
    return where if where.is_relative_to(root) else None


def wrong(function, **options):
    def wrapped(*args):
        return function(*args, **options)
    return wrapped


# -- exercise 2: fingerprint and may_edit -----------------------------------------------------------


def fingerprint(path, *, how="sha256"):
    if how == "mtime":
        return str(path.stat().st_mtime_ns)
    if how == "size":
        return str(path.stat().st_size)
    if how == "head":
        return hashlib.sha256(path.read_bytes()[:1024]).hexdigest()
    if how == "size_mtime":
        stat = path.stat()
        return f"{stat.st_size}-{stat.st_mtime_ns}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_may_edit(fingerprint_=fingerprint, *, need_read=True, guard_missing=True):
    def may_edit(path, seen):
        if str(path) not in seen:
            return not need_read
        if guard_missing and not path.exists():
            return False
        return fingerprint_(path) == seen[str(path)]
    return may_edit


def by(how):
    def fingerprint_(path):
        return fingerprint(path, how=how)
    return fingerprint_


# -- exercise 3: open_calls -----------------------------------------------------------------------


def open_calls(messages, *, last_only=False, by_count=False, any_answer=False):
    asked, answered = [], []
    for message in messages:
        if message.get("role") == "assistant":
            if last_only:  # only the last assistant message counts
                asked = []
            asked += [call["id"] for call in message.get("tool_calls") or []]
        elif message.get("role") == "tool":
            answered.append(message["tool_call_id"])
    if any_answer:  # a tool message after the calls: all answered
        return [] if answered else asked
    if by_count:  # as many answers as calls: all answered; else the last ones open
        return asked[len(answered):]
    return [i for i in asked if i not in set(answered)]


def open_calls_last_message(messages):
    """Only the very last message: calls in it are open, else nothing."""
    last = messages[-1]
    return [call["id"] for call in last.get("tool_calls") or []]


def open_calls_popping(messages):
    """Right answer, but removes the answered tool messages from the learner's list."""
    result = open_calls(messages)
    messages[:] = [m for m in messages if m.get("role") != "tool"]
    return result


CASES = {
    "inside": (lesson13.inside, [inside], [stub], [
        [wrong(inside, dots_only=True)],  # '..' in the text only: symlinks, hidden files and absolute paths pass
        [wrong(inside, compare="string")],  # str(...).startswith(str(root)): shop-private passes
        [wrong(inside, hidden=None)],  # no hidden check: .env passes
        [wrong(inside, hidden="name")],  # only the file name: docs/.git/config passes
        [wrong(inside, resolve=False)],  # not resolved: a symlink out passes
        [wrong(inside, strict=True)],  # resolve(strict=True): a new file raises FileNotFoundError
        [boom],
    ]),
    "may_edit": (lesson13.may_edit, [fingerprint, make_may_edit()], [stub, stub], [
        [by("mtime"), make_may_edit(by("mtime"))],  # the modification time
        [by("size"), make_may_edit(by("size"))],  # the size
        [by("size_mtime"), make_may_edit(by("size_mtime"))],  # size and time together (as rsync's quick check)
        [by("head"), make_may_edit(by("head"))],  # the first 1 KB only
        [fingerprint, make_may_edit(need_read=False)],  # a file never read may be edited
        [fingerprint, make_may_edit(guard_missing=False)],  # a deleted file raises FileNotFoundError
        [fingerprint, boom],
    ]),
    "open_calls": (lesson13.open_calls, [open_calls], [stub], [
        [wrong(open_calls, last_only=True)],  # only the last assistant message's calls
        [wrong(open_calls, by_count=True)],  # answers counted, not matched by id
        [wrong(open_calls, any_answer=True)],  # any tool message means all answered
        [open_calls_last_message],  # only the last message looked at
        [open_calls_popping],  # changes the conversation
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_prefix_trick_is_named_in_the_message():
    said = lesson13.inside(wrong(inside, compare="string")).message
    assert "is_relative_to" in said and "shop-private" in said


def test_the_checks_leave_no_folder_behind(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    lesson13.inside(inside)
    lesson13.may_edit(fingerprint, make_may_edit())
    assert os.listdir(tmp_path) == []
