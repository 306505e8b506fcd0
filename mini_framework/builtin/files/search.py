"""Regular expressions bounded in time: grep over the workspace, and sed's replacement, in a worker process.

    grep(workspace, pattern, path_pattern, ...)   "path:line: text" for each matching line, bounded
    substitute(pattern, replacement, lines, t)    each line with the pattern replaced (sed), bounded
    matches_glob(glob_parts, file_parts)          whether a file's path matches path_pattern

Why a worker process: Python's `re` backtracks, so `(a+)+$` over a long line of a's takes longer than the
universe, and a running match cannot be interrupted from another thread (it holds the GIL; the executor's
timeout only abandons the thread, which keeps a core busy for ever). A process can be killed. Each call runs
`python -I -S -c WORKER` (isolated: no site, no environment, no current folder on sys.path; it imports
json, re and sys only), sends it the pattern and the text on stdin, and kills it after `timeout` seconds.
A linear-time engine (google-re2) would need a dependency the copied framework does not have, and a
restricted syntax would refuse patterns a model writes every day. The price: a process start per call
(tens of milliseconds) and the text copied through a pipe. The worker never opens a file: the parent reads
each one through the workspace's checks (paths.py), so a file the tools refuse is never searched.

Bounds of a grep: `max_matches` lines shown (each cut at MATCH_CHARS), files over `limit` bytes skipped,
at most MAX_FILES files and MAX_TOTAL bytes read, reading stops after `timeout` seconds and the search
after another `timeout`. The pattern is compiled first in this process, so a bad one gets re's own words.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from .paths import FileRefused, Workspace, parts_of
from .reading import text_of

__all__ = ["MATCH_CHARS", "MAX_FILES", "MAX_TOTAL", "compiled", "grep", "matches_glob", "substitute"]

MATCH_CHARS = 300  # characters of a matching line shown
MAX_FILES = 5_000  # files read by one grep
MAX_TOTAL = 64_000_000  # bytes read by one grep
MAX_PATTERN = 2_000  # characters of a pattern

WORKER = r"""
import json, re, sys
job, body = json.loads(sys.stdin.buffer.readline()), sys.stdin.buffer.read()
rx, out, start = re.compile(job["pattern"]), {"hits": [], "more": False}, 0
try:
    if job["op"] == "sub":
        out["lines"] = [rx.subn(job["replacement"], line) for line in job["lines"]]
    else:
        for path, size in job["files"]:
            text, start = body[start:start + size].decode("utf-8"), start + size
            for number, line in enumerate(text.split("\n"), 1):
                if rx.search(line.removesuffix("\r")):
                    if len(out["hits"]) == job["max"]:
                        out["more"] = True
                        break
                    out["hits"].append([path, number, line.removesuffix("\r")[:job["chars"]]])
            if out["more"]:
                break
except (re.error, IndexError) as error:
    out["error"] = str(error)
sys.stdout.write(json.dumps(out))
"""


def compiled(pattern: str) -> re.Pattern[str]:
    """The pattern compiled, or FileRefused in re's own words.

    >>> compiled("(unclosed")
    Traceback (most recent call last):
    ...
    mini_framework.builtin.files.paths.FileRefused: invalid regular expression: missing ), unterminated subpattern ...
    """
    if not isinstance(pattern, str) or not pattern or len(pattern) > MAX_PATTERN:
        raise FileRefused(f"give a regular expression of 1 to {MAX_PATTERN:,} characters")
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError, ValueError) as error:
        raise FileRefused(f"invalid regular expression: {error} (Python re syntax: escape ( ) [ ] . * + ? with a "
                          "backslash to match them literally)") from None


def run_worker(job: dict[str, Any], timeout: float, body: bytes = b"") -> dict[str, Any]:
    """Run the job in a fresh worker process, killed after `timeout` seconds: the job as one line of JSON on
    stdin, then `body` (the files' bytes, one after the other: JSON-escaping 20 MB would double the time)."""
    compiled(job["pattern"])
    if not sys.executable:
        raise FileRefused("regular expressions need a Python interpreter to run in, and none was found")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", WORKER], capture_output=True, timeout=timeout,
                              input=json.dumps(job).encode() + b"\n" + body)
    except subprocess.TimeoutExpired:
        raise FileRefused(f"the regular expression ran for more than {timeout:g} s and was stopped. Simplify it: "
                          "nested repeats such as (a+)+ or (.*)* can take for ever") from None
    except OSError as error:
        raise FileRefused(f"the regular expression could not be run ({error.strerror or 'no worker'})") from None
    if done.returncode != 0:
        why = "it ran out of memory" if b"MemoryError" in done.stderr else "its worker failed"
        raise FileRefused(f"the regular expression could not be run: {why}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def substitute(pattern: str, replacement: str, lines: list[str], timeout: float) -> list[tuple[str, int]]:
    """Each line with `pattern` replaced (re.subn: `\\1` or `\\g<name>` in the replacement), bounded in time.

    >>> substitute(r"(\\w+)@example\\.com", r"\\1@example.org", ["li@example.com", "none"], 10)
    [('li@example.org', 1), ('none', 0)]
    """
    result = run_worker({"op": "sub", "pattern": pattern, "replacement": replacement, "lines": lines}, timeout)
    if "error" in result:
        raise FileRefused(f"invalid replacement: {result['error']} (use \\1 or \\g<1> for a group the pattern has)")
    return [(text, count) for text, count in result["lines"]]


def matches_glob(glob: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Whether a file's path parts match a glob's: '*' within a name, '**' any number of folders; a glob
    without a folder ('*.md') matches the name in every folder.

    >>> [matches_glob(g, ("docs", "a", "x.md")) for g in [("*.md",), ("docs", "*.md"), ("docs", "**", "*.md")]]
    [True, False, True]
    """
    if len(glob) == 1 and glob[0] != "**":
        return fnmatch.fnmatchcase(parts[-1], glob[0])
    return _matches(glob, parts)


def _matches(glob: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """A glob against a path, component by component from the workspace."""
    if not glob:
        return not parts
    if glob[0] == "**":
        return any(_matches(glob[1:], parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and fnmatch.fnmatchcase(parts[0], glob[0]) and _matches(glob[1:], parts[1:])


def grep(workspace: Workspace, pattern: str, path_pattern: str, *, limit: int, timeout: float,
         max_matches: int) -> str:
    """Every line matching `pattern` in the workspace's files whose path matches `path_pattern`."""
    compiled(pattern)
    glob = parts_of(path_pattern)
    if glob.count("**") > 3:
        raise FileRefused("use '**' at most three times in path_pattern")
    files: list[tuple[str, bytes]] = []
    skipped, total, stopped = 0, 0, ""
    deadline = time.monotonic() + timeout
    for seen, parts in enumerate(_walk(workspace.root)):
        if seen > 10 * MAX_FILES or len(files) + skipped >= MAX_FILES or total > MAX_TOTAL or \
                time.monotonic() > deadline:
            stopped = "; the search stopped early (too many files): narrow path_pattern"
            break
        if not matches_glob(glob, parts):
            continue
        try:
            data, _ = workspace.read(parts, limit)
            text_of(data)  # text files only
            files.append(("/".join(parts), data))
            total += len(data)
        except (FileRefused, OSError):
            skipped += 1  # links, binary, too large, unreadable: read_file on one says why
    note = (f"; {skipped} matching file(s) not searched (links, binary, too large or unreadable: read_file on one "
            "says why)" if skipped else "") + stopped
    if not files:
        return f"No file to search matches path_pattern {path_pattern!r} (hidden files are never searched){note}."
    result = run_worker({"op": "grep", "pattern": pattern, "files": [(path, len(data)) for path, data in files],
                         "max": max_matches, "chars": MATCH_CHARS}, timeout, b"".join(data for _, data in files))
    hits = [f"{path}:{number}: {line}" for path, number, line in result["hits"]]
    if not hits:
        return f"No line matches {pattern!r} in the {len(files)} file(s) matching {path_pattern!r}{note}."
    more = f" (stopped at {max_matches}: narrow the pattern or path_pattern)" if result["more"] else ""
    return "\n".join([f"{len(hits)} matching line(s) in {len(files)} file(s) searched{more}{note}:", *hits])


def _walk(root: str) -> Iterator[tuple[str, ...]]:
    """The parts of every non-hidden file under root whose path the tools accept, in order (links not walked)."""
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = tuple(os.path.relpath(folder, root).split(os.sep)) if folder != root else ()
        for name in sorted(names):
            try:
                yield parts_of("/".join((*here, name)))
            except FileRefused:
                continue  # hidden, or a name no tool could use
