"""Tool output too long for a model: the whole text goes to a file, the model reads its head and tail.

    @tool(too_long_to_file=True)               # over 20,000 tokens: spilled (or too_long_to_file=5_000)
    def read_log(service: str) -> str: ...

What the model reads instead of a 200,000-character log: the first part of it (three quarters of
the threshold), a line saying how much was left out, the last part (a quarter: where summaries,
errors and exit codes usually are), then a `<system-reminder>` naming the file that holds the
full text. If the agent has a tool that can read files (`Tool.reads_files`), the reminder says to
read the parts it needs with it; if not, it says to tell the user the output was cut and where the
whole of it is, since the model cannot get at it.

The file: `tool_result_{tool}_{8 random hex}.txt` in the system's temporary folder or the folder you
give (`Agent(spill_dir=...)`), created owner-only (0600), never overwriting anything, UTF-8 (a
character that cannot be encoded is written as a backslash escape). Only text results are spilled
(a `str` the tool returned), as images and data have their own paths. A file holds at most
MAX_FILE_BYTES (64 MiB): of a longer text only the first 64 MiB (cut at a character) are saved,
and the reminder says the file holds only its first N bytes.

Cleaning up, each time a file is written, in that folder only: files named exactly as this module
names them (`tool_result_`, the tool's name as written, `_`, 8 lower-case hex digits, `.txt`) that
are regular files (a symbolic link is never followed, nor removed) and belong to the current user
are removed when they were last modified more than KEEP_SECONDS (24 hours) ago, and the oldest of
them beyond the KEEP_FILES (200) newest; the file just written is always kept. Nothing else in the
folder is touched. A folder others could change (writable by group or others without the sticky
bit, or owned by neither this user nor root) is not written to at all: the model is told the text
could not be saved, and nothing is removed from it. The system's temporary folder (sticky) is fine.

If the file cannot be written (folder missing, not writable, not safe, disk full), nothing is lost:
the model still gets the head and tail and a note that the full text could not be saved, and your
code still has the whole text in `ToolResult.value`.

Counting, so that a 12 MB result costs about as much as a 100 KB one: "over `threshold` tokens" is
decided on growing prefixes (the first that is over decides; a text that fits is counted whole),
the head and the tail are found the same way from their own ends, and the total the reminder gives
is counted for texts up to COUNT_LIMIT (1,000,000) characters and, for longer ones, judged from
their first and last SAMPLE (250,000) characters and shown as "about". The executor calls `spill`
in a thread, so the event loop and the other calls run on meanwhile.

Concessions: tokens are estimated (tokens.py), so the parts are close to, not exactly, their share;
the cut moves back to the last line break when one is near, so lines stay whole. The search relies
on the estimate never falling as a text grows (tests/test_tokens.py checks it for the estimate).
A total judged from the ends is off when the middle of the text is unlike them. Another run's file
in a shared folder goes only when it is a day old or 200 newer ones exist.
Ownership and the sticky bit are POSIX notions: elsewhere (Windows) the folder is not checked and
files are removed by name, type and age only.
"""
from __future__ import annotations

import errno
import os
import secrets
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .tokens import estimate_tokens

__all__ = ["DEFAULT_THRESHOLD", "Spilled", "is_spill_name", "spill"]

DEFAULT_THRESHOLD = 20_000  # tokens; a result longer than this is spilled
HEAD_SHARE = 0.75  # of the threshold, kept from the start; the rest from the end
MAX_FILE_BYTES = 64 * 2**20  # a spill file holds at most this many bytes (the start of the text)
KEEP_SECONDS = 24 * 3600  # spill files older than this are removed when a new one is written
KEEP_FILES = 200  # ... and the oldest beyond this many
COUNT_LIMIT = 1_000_000  # characters: a longer text's tokens are judged from samples of its two ends
SAMPLE = 250_000  # characters counted at each end of such a text
FIRST_LOOK = 4  # characters per token of the budget in the first prefix counted (then doubled)

REMINDER_READ = ("<system-reminder>\nThis tool's output was too long to show in full ({size}); you see its start "
                 "and its end. {saved}. Read only the parts you need with your file tools (search it, or read it "
                 "in pieces) rather than all of it.\n</system-reminder>")
REMINDER_WARN = ("<system-reminder>\nThis tool's output was too long to show in full ({size}); you see its start "
                 "and its end. {saved}, but you have no tool that can read files: tell the user the output was "
                 "cut, and where {what} is, so they can look at it or give you a way to read it.\n</system-reminder>")
REMINDER_LOST = ("<system-reminder>\nThis tool's output was too long to show in full ({size}); you see its start "
                 "and its end. The full text could not be saved ({reason}). Tell the user the output was cut."
                 "\n</system-reminder>")
SAVED_ALL = "The complete output is in the file {path}"
SAVED_PART = "Only the first {kept:,} bytes of the output were saved (the rest is lost), in the file {path}"
SIZE_COUNTED = "{tokens:,} tokens, about {chars:,} characters"
SIZE_JUDGED = ("about {tokens:,} tokens, judged from its first and last {sample:,} characters; "
               "{chars:,} characters")
UNSAFE_FOLDER = "the folder can be changed by other users"


@dataclass(frozen=True)
class Spilled:
    """A long result, cut for the model."""

    content: str  # what the model reads: head, a gap line, tail, the reminder
    path: Path | None  # the file with the full text (None: it could not be written)
    tokens: int  # estimated tokens of the full text (over COUNT_LIMIT characters: judged from its ends)
    complete: bool = True  # False: the file holds only the text's first `max_bytes` bytes


def spill(text: str, tool_name: str, *, threshold: int = DEFAULT_THRESHOLD,
          folder: str | os.PathLike[str] | None = None, can_read_files: bool = False,
          count: Callable[[str], int] = estimate_tokens, max_bytes: int | None = None) -> Spilled | None:
    """Cut `text` for the model if it is over `threshold` tokens, saving it to a file; None if it fits.

    Blocking (it counts, writes and cleans up): from a coroutine, run it in a thread. `max_bytes`
    (None: MAX_FILE_BYTES) caps the file.

    >>> import tempfile
    >>> log = "\\n".join(f"line {i}: ok" for i in range(3000)) + "\\nFAILED: 2 tests"
    >>> cut = spill(log, "run_tests", threshold=200, folder=tempfile.mkdtemp())
    >>> cut.content.startswith("line 0: ok"), "FAILED: 2 tests" in cut.content, cut.path.read_text() == log
    (True, True, True)
    """
    if not _over(text, threshold, count):
        return None
    tokens, size = _size(text, threshold, count)
    head_end = _prefix_fitting(text, int(threshold * HEAD_SHARE), count)
    tail_start = _suffix_fitting(text, threshold - int(threshold * HEAD_SHARE), count, not_before=head_end)
    head, tail = text[:head_end], text[tail_start:]
    gap = ("" if head.endswith("\n") else "\n") + f"[… {tail_start - head_end:,} characters not shown …]\n"
    try:
        path, kept = _write(text, tool_name, folder, MAX_FILE_BYTES if max_bytes is None else max_bytes)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return Spilled(head + gap + tail + "\n\n" + REMINDER_LOST.format(size=size, reason=reason.lower()),
                       None, tokens)
    complete = kept is None
    saved = SAVED_ALL.format(path=path) if complete else SAVED_PART.format(path=path, kept=kept)
    what = "the whole of it" if complete else "the part saved"
    reminder = (REMINDER_READ if can_read_files else REMINDER_WARN).format(size=size, saved=saved, what=what)
    return Spilled(head + gap + tail + "\n\n" + reminder, path, tokens, complete)


def _over(text: str, threshold: int, count: Callable[[str], int]) -> bool:
    """Whether `text` is over `threshold` tokens, counting growing prefixes: the first one over decides."""
    length = max(64, FIRST_LOOK * threshold)
    while True:
        if count(text[:length]) > threshold:
            return True
        if length >= len(text):
            return False
        length *= 2


def _size(text: str, threshold: int, count: Callable[[str], int]) -> tuple[int, str]:
    """The text's tokens and how the reminder says its size: counted, or (very long) judged from its ends."""
    if len(text) <= COUNT_LIMIT:
        tokens = count(text)
        return tokens, SIZE_COUNTED.format(tokens=tokens, chars=len(text))
    sampled = count(text[:SAMPLE]) + count(text[-SAMPLE:])
    tokens = max(threshold + 1, int(round(sampled * len(text) / (2 * SAMPLE), -3)))
    return tokens, SIZE_JUDGED.format(tokens=tokens, sample=SAMPLE, chars=len(text))


def _prefix_fitting(text: str, budget: int, count: Callable[[str], int]) -> int:
    """The end of the longest prefix within `budget` tokens, moved back to a line break if one is near."""
    low, high = 0, len(text)  # text[:low] fits; the answer is at most `high`
    length = max(64, FIRST_LOOK * budget)
    while length < high:  # doubling, so that a 12 MB text costs what its head does
        if count(text[:length]) > budget:
            high = length - 1
            break
        low, length = length, length * 2
    while low < high:  # binary search: the estimate only grows with the length
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    newline = text.rfind("\n", 0, low)
    return newline + 1 if newline >= low * 0.8 else low


def _suffix_fitting(text: str, budget: int, count: Callable[[str], int], not_before: int) -> int:
    """The start of the longest suffix within `budget` tokens (after `not_before`), at a line start if near."""
    low, high = not_before, len(text)  # text[high:] fits; the answer is at least `low`
    length = max(64, FIRST_LOOK * budget)
    while len(text) - length > low:
        if count(text[len(text) - length:]) > budget:
            low = len(text) - length + 1
            break
        high, length = len(text) - length, length * 2
    while low < high:
        middle = (low + high) // 2
        if count(text[middle:]) <= budget:
            high = middle
        else:
            low = middle + 1
    newline = text.find("\n", low)
    return newline + 1 if 0 <= newline and len(text) - newline - 1 >= (len(text) - low) * 0.8 else low


# ----------------------------------------------------------------------------- the file

def _write(text: str, tool_name: str, folder: str | os.PathLike[str] | None, max_bytes: int) -> tuple[Path, int | None]:
    """Write the text (its first `max_bytes` bytes) to a new owner-only file, then clean up the folder:
    (the file, None or the bytes kept when the text was longer). OSError if it cannot be written."""
    where = Path(folder) if folder is not None else Path(tempfile.gettempdir())
    data = text[:max_bytes].encode("utf-8", errors="backslashreplace")  # a character is at least a byte
    kept: int | None = None
    if len(data) > max_bytes or len(text) > max_bytes:
        end = min(len(data), max(0, max_bytes))
        while 0 < end < len(data) and data[end] & 0xC0 == 0x80:  # back to the start of a character
            end -= 1
        data, kept = data[:end], end
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in tool_name)[:64] or "tool"
    with _Folder(where) as place:
        for _ in range(5):
            name = f"tool_result_{safe}_{secrets.token_hex(4)}.txt"
            try:
                fd = place.create(name)
            except FileExistsError:
                continue
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            except OSError:
                place.remove(name)  # half a file is no file
                raise
            place.clean(keep=name)
            return where / name, kept
    raise FileExistsError(errno.EEXIST, "no free file name")


def is_spill_name(name: str) -> bool:
    """Whether `name` is exactly how `spill` names its files (the only files cleaning ever removes).

    >>> is_spill_name("tool_result_read_log_0a1b2c3d.txt"), is_spill_name("tool_result_read_log_0a1b2c3d.txt.bak")
    (True, False)
    >>> is_spill_name("tool_result_查看_0a1b2c3d.txt"), is_spill_name("tool_result__0A1B2C3D.txt")
    (True, False)
    """
    if not (name.startswith("tool_result_") and name.endswith(".txt")):
        return False
    middle, digits = name[len("tool_result_"):-len(".txt")], name[-len("0a1b2c3d.txt"):-len(".txt")]
    tool = middle[:-len("_0a1b2c3d")]
    return (len(middle) > len("_0a1b2c3d") and middle[-9] == "_" and all(c in "0123456789abcdef" for c in digits)
            and 0 < len(tool) <= 64 and all(c.isalnum() or c in "_-" for c in tool))


class _Folder:
    """The spill folder, opened once (its file descriptor, where the platform allows), checked to be safe."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.fd: int | None = None

    def __enter__(self) -> _Folder:
        if os.open in os.supports_dir_fd and hasattr(os, "O_DIRECTORY"):
            self.fd = os.open(self.where, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
            info = os.fstat(self.fd)
        else:
            info = os.stat(self.where)
            if not stat.S_ISDIR(info.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a folder")
        if hasattr(os, "geteuid"):
            shared = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX
            if shared or info.st_uid not in (os.geteuid(), 0):
                self.__exit__()
                raise PermissionError(errno.EPERM, UNSAFE_FOLDER)
        return self

    def __exit__(self, *_: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def create(self, name: str) -> int:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        flags |= getattr(os, "O_BINARY", 0)
        if self.fd is not None:
            return os.open(name, flags, 0o600, dir_fd=self.fd)
        return os.open(self.where / name, flags, 0o600)

    def remove(self, name: str) -> None:
        try:
            if self.fd is not None:
                os.unlink(name, dir_fd=self.fd)  # removes the name: never follows a link
            else:
                os.unlink(self.where / name)
        except OSError:
            pass  # gone already, or not ours to remove

    def clean(self, keep: str) -> None:
        """Remove this user's spill files older than KEEP_SECONDS, and the oldest beyond KEEP_FILES."""
        try:
            names = [n for n in os.listdir(self.fd if self.fd is not None else self.where) if is_spill_name(n)]
        except OSError:
            return
        me = os.geteuid() if hasattr(os, "geteuid") else None
        files: list[tuple[float, str]] = []
        for name in names:
            try:
                info = (os.stat(name, dir_fd=self.fd, follow_symlinks=False) if self.fd is not None
                        else os.lstat(self.where / name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (me is None or info.st_uid == me) and name != keep:
                files.append((info.st_mtime, name))
        files.sort(reverse=True)  # newest first
        now = time.time()
        for index, (modified, name) in enumerate(files):
            if now - modified > KEEP_SECONDS or index >= KEEP_FILES - 1:  # the new file is one of those kept
                self.remove(name)
