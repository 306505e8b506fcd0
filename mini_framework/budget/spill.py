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
(a `str` the tool returned), as images and data have their own paths.

If the file cannot be written (folder missing, not writable, disk full), nothing is lost: the model
still gets the head and tail and a note that the full text could not be saved, and your code still
has the whole text in `ToolResult.value`.

Concessions: tokens are estimated (tokens.py), so the parts are close to, not exactly, their share;
the cut moves back to the last line break when one is near, so lines stay whole.
"""
from __future__ import annotations

import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .tokens import estimate_tokens

__all__ = ["DEFAULT_THRESHOLD", "Spilled", "spill"]

DEFAULT_THRESHOLD = 20_000  # tokens; a result longer than this is spilled
HEAD_SHARE = 0.75  # of the threshold, kept from the start; the rest from the end

REMINDER_READ = ("<system-reminder>\nThis tool's output was too long to show in full ({tokens:,} tokens, about "
                 "{chars:,} characters); you see its start and its end. The complete output is in the file "
                 "{path}. Read only the parts you need with your file tools (search it, or read it in pieces) "
                 "rather than all of it.\n</system-reminder>")
REMINDER_WARN = ("<system-reminder>\nThis tool's output was too long to show in full ({tokens:,} tokens, about "
                 "{chars:,} characters); you see its start and its end. The complete output is in the file "
                 "{path}, but you have no tool that can read files: tell the user the output was cut, and "
                 "where the whole of it is, so they can look at it or give you a way to read it.\n</system-reminder>")
REMINDER_LOST = ("<system-reminder>\nThis tool's output was too long to show in full ({tokens:,} tokens, about "
                 "{chars:,} characters); you see its start and its end. The full text could not be saved "
                 "({reason}). Tell the user the output was cut.\n</system-reminder>")


@dataclass(frozen=True)
class Spilled:
    """A long result, cut for the model."""

    content: str  # what the model reads: head, a gap line, tail, the reminder
    path: Path | None  # the file with the full text (None: it could not be written)
    tokens: int  # estimated tokens of the full text


def spill(text: str, tool_name: str, *, threshold: int = DEFAULT_THRESHOLD,
          folder: str | os.PathLike[str] | None = None, can_read_files: bool = False,
          count: Callable[[str], int] = estimate_tokens) -> Spilled | None:
    """Cut `text` for the model if it is over `threshold` tokens, saving all of it to a file; None if it fits.

    >>> import tempfile
    >>> log = "\\n".join(f"line {i}: ok" for i in range(3000)) + "\\nFAILED: 2 tests"
    >>> cut = spill(log, "run_tests", threshold=200, folder=tempfile.mkdtemp())
    >>> cut.content.startswith("line 0: ok"), "FAILED: 2 tests" in cut.content, cut.path.read_text() == log
    (True, True, True)
    """
    tokens = count(text)
    if tokens <= threshold:
        return None
    head_end = _prefix_fitting(text, int(threshold * HEAD_SHARE), count)
    tail_start = _suffix_fitting(text, threshold - int(threshold * HEAD_SHARE), count, not_before=head_end)
    head, tail = text[:head_end], text[tail_start:]
    gap = ("" if head.endswith("\n") else "\n") + f"[… {tail_start - head_end:,} characters not shown …]\n"
    facts = {"tokens": tokens, "chars": len(text)}
    try:
        path = _write(text, tool_name, folder)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return Spilled(head + gap + tail + "\n\n" + REMINDER_LOST.format(reason=reason.lower(), **facts), None, tokens)
    reminder = REMINDER_READ if can_read_files else REMINDER_WARN
    return Spilled(head + gap + tail + "\n\n" + reminder.format(path=path, **facts), path, tokens)


def _prefix_fitting(text: str, budget: int, count: Callable[[str], int]) -> int:
    """The end of the longest prefix within `budget` tokens, moved back to a line break if one is near."""
    low, high = 0, len(text)
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
    low, high = not_before, len(text)
    while low < high:
        middle = (low + high) // 2
        if count(text[middle:]) <= budget:
            high = middle
        else:
            low = middle + 1
    newline = text.find("\n", low)
    return newline + 1 if 0 <= newline and len(text) - newline - 1 >= (len(text) - low) * 0.8 else low


def _write(text: str, tool_name: str, folder: str | os.PathLike[str] | None) -> Path:
    """Write the full text to a new owner-only file; OSError if that is not possible."""
    where = Path(folder) if folder is not None else Path(tempfile.gettempdir())
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in tool_name)[:64] or "tool"
    for _ in range(5):
        path = where / f"tool_result_{safe}_{secrets.token_hex(4)}.txt"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(text)
        return path
    raise FileExistsError(17, "no free file name")
