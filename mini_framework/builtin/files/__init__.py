"""A builtin file toolset: `read_file`, `grep`, `sed` and `echo_into`, confined to one workspace folder.

    files = FileToolset("workspace")                          # or requires_approval=True: edits wait for a person
    agent = Agent(client, model, files.tools)

    read_file(path, start_line=1, end_line=None)   numbered lines, bounded; says how many lines and how to read on
    grep(pattern, path_pattern)                    'path:line: text' per match; path_pattern (a glob) required
    sed(path, pattern, replacement, start_line, end_line)   a regex replaced in a range of lines
    echo_into(path, content)                       the whole text of a file replaced (or a new file created)

The rules, each refused with a message the model can act on (a tool error, never a traceback or a host path):
only non-hidden regular files inside the workspace, reached without following any symbolic link; no '..' in
any spelling, no absolute path, '~', drive letter or NUL; no file with a second hard link, no device, FIFO or
socket, nothing over `max_bytes`, no binary file; an edit needs a read of the file by this toolset, and a file
whose bytes changed since ("file has been changed") is not written; writes are atomic and keep the mode.

    toolset.py   FileToolset: the four tools, the read-before-edit hashes, the approval preview (a diff)
    paths.py     which paths a model may name (every spelling), and the walk that follows no link
    reading.py   text from bytes (binary refused), numbered line windows
    search.py    grep and sed's regex in a killable worker process (why: there), globs
    editing.py   hashes, the atomic write and its last check, diffs

Concessions: UTF-8 text only; no folders created, nothing deleted or renamed; cross-script look-alike names
(Cyrillic for Latin) are not detected; the stale check is a check right before the rename, not a lock;
Windows gets a weaker, check-then-use walk (paths.py and editing.py say exactly what each platform gets).

Needs: the core (executor, tools), and the approvals feature for requires_approval.
"""
from __future__ import annotations

from .paths import FileRefused
from .toolset import FileToolset

__all__ = ["FileRefused", "FileToolset"]
