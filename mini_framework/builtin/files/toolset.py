"""`FileToolset`: read_file, grep, sed and echo_into over one workspace folder, as tools for an Agent.

    files = FileToolset("workspace")                          # reads and edits run at once
    files = FileToolset("workspace", requires_approval=True)  # sed and echo_into wait for a person (a diff shown)
    agent = Agent(client, model, files.tools)

Each tool's description tells the model the rules; what it cannot do comes back as a tool error it can act on
(FileRefused). Editing needs a read: sed and echo_into refuse a file this toolset has not read (or written),
and one whose bytes no longer hash to what was read or last written ("file has been changed"). A new file
may be created by echo_into, in a folder that exists, under a name that passes paths.py and looks like no
other file there. The hashes live in this object: a new FileToolset (another process, a resumed run) has
read nothing yet.
"""
from __future__ import annotations

import functools
import os
import threading
from typing import Annotated, Any, Callable, TypeVar

from pydantic import Field

from ...tools import Tool, tool
from .editing import CHANGED, diff, digest, write
from .paths import FileRefused, Workspace, parts_of
from .reading import body, lines_of, text_of, window
from .search import grep, substitute

__all__ = ["FileToolset"]

F = TypeVar("F", bound=Callable[..., Any])


def plain_errors(method: F) -> F:
    """What the file system refuses (permissions, a full disk) becomes a FileRefused in its own short words,
    without the path an OSError's text carries."""
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except OSError as error:
            raise FileRefused(f"the file system refused: {error.strerror or type(error).__name__}; nothing was "
                              "changed by this call") from None
    return wrapper  # type: ignore[return-value]


Path = Annotated[str, Field(description="a path relative to the workspace, e.g. notes/todo.md")]
Line = Annotated[int, Field(ge=1, description="a line number; the first line is 1")]


class FileToolset:
    """The four file tools over one folder; `.tools` is the list to give an Agent.

    >>> import pathlib, tempfile
    >>> folder = tempfile.mkdtemp(); _ = pathlib.Path(folder, "notes.txt").write_text("tea\\ncoffee\\n")
    >>> files = FileToolset(folder)
    >>> [t.name for t in files.tools]
    ['read_file', 'grep', 'sed', 'echo_into']
    >>> print(files.read_file("notes.txt"))
    notes.txt: lines 1-2 of 2 (the whole file)
         1	tea
         2	coffee
    >>> print(files.sed("notes.txt", "coffee", "milk", 1, 2))
    notes.txt: 1 replacement(s) in lines 1-2; the file has 2 lines. Changed:
         2	milk
    """

    def __init__(self, workspace: str | os.PathLike[str], *, max_bytes: int = 1_000_000, grep_timeout: float = 2.0,
                 max_matches: int = 200, requires_approval: bool | Callable[[Any], bool] = False) -> None:
        for option, value in (("max_bytes", max_bytes), ("max_matches", max_matches), ("grep_timeout", grep_timeout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"{option} must be a number above 0, not {value!r}")
        self.workspace = Workspace(workspace)
        self.max_bytes, self.grep_timeout, self.max_matches = int(max_bytes), float(grep_timeout), int(max_matches)
        self.known: dict[tuple[str, ...], str] = {}  # path parts -> SHA-256 of the bytes last read or written
        self.lock = threading.Lock()  # edits one at a time (the calls of one reply run in threads)
        gate: dict[str, Any] = {"requires_approval": requires_approval} if requires_approval else {}
        rules = ("Paths are relative to the workspace (e.g. notes/todo.md); hidden files, links and anything "
                 "outside it are off limits.")
        self.tools: list[Tool] = [
            tool(self.read_file, name="read_file", description=(
                f"Read a UTF-8 text file, with numbered lines. {rules} Without end_line it shows up to 200 lines "
                "from start_line; the answer says how many lines the file has and how to read on. Read a file "
                "before changing it with sed or echo_into.")),
            tool(self.grep, name="grep", description=(
                "Search text files for a regular expression (Python re syntax), line by line; answers "
                f"'path:line: text' for each match, at most {self.max_matches}. path_pattern is required: a glob "
                "relative to the workspace; one without a folder ('*.md') matches in every folder, 'docs/*.md' "
                "only in docs, 'src/**/*.py' anywhere under src, '*' every file.")),
            tool(self.sed, name="sed", side_effects=True, **gate, description=(
                "Replace a regular expression (Python re syntax; \\1 in the replacement for a group) in lines "
                f"start_line to end_line of a file, line by line. {rules} Read the file with read_file first; "
                "if it has changed since, read it again.")),
            tool(self.echo_into, name="echo_into", side_effects=True, **gate, description=(
                "Write content as the whole new text of a file, replacing everything it had. Read an existing "
                f"file with read_file first. A new file may be created in a folder that exists. {rules}")),
        ]
        self.tools[2].preview = lambda args: self._preview(self._sed, args)  # type: ignore[attr-defined]
        self.tools[3].preview = lambda args: self._preview(self._echo, args)  # type: ignore[attr-defined]

    @plain_errors
    def read_file(self, path: Path, start_line: Line = 1, end_line: Line | None = None) -> str:
        """Numbered lines start_line..end_line of a text file (read_file's description says the rest)."""
        parts = parts_of(self.workspace.relative(path))
        if end_line is not None and end_line < start_line:
            raise FileRefused(f"end_line ({end_line}) must not be before start_line ({start_line})")
        data, _ = self.workspace.read(parts, self.max_bytes)
        text = text_of(data)
        with self.lock:
            self.known[parts] = digest(data)
        return window("/".join(parts), text, start_line, end_line)

    @plain_errors
    def grep(self, pattern: Annotated[str, Field(description="a regular expression, e.g. TODO|FIXME")],
             path_pattern: Annotated[str, Field(description="which files: a glob such as *.md or src/**/*.py")]) -> str:
        """The lines matching a regular expression in the files matching path_pattern."""
        return grep(self.workspace, pattern, self.workspace.relative(path_pattern), limit=self.max_bytes,
                    timeout=self.grep_timeout, max_matches=self.max_matches)

    @plain_errors
    def sed(self, path: Path, pattern: Annotated[str, Field(description="a regular expression, e.g. v(\\d+)")],
            replacement: Annotated[str, Field(description="what replaces each match; \\1 is the first group")],
            start_line: Line, end_line: Line) -> str:
        """Replace a regular expression in a range of lines of a file this toolset has read."""
        with self.lock:
            parts, old, before, after, note = self._sed(path, pattern, replacement, start_line, end_line)
            self._write(parts, old, after)
            return note

    @plain_errors
    def echo_into(self, path: Path, content: Annotated[str, Field(description="the whole new text of the file")]
                  ) -> str:
        """Replace the whole text of a file this toolset has read, or create a new file."""
        with self.lock:
            parts, old, before, after, note = self._echo(path, content)
            self._write(parts, old, after)
            return note

    def _current(self, parts: tuple[str, ...]) -> tuple[os.stat_result, str]:
        """The stat and text of a file about to be edited: read before, and unchanged since."""
        if parts not in self.known:
            raise FileRefused("read this file with read_file first: an edit needs a read, so that you see what you "
                              "change")
        try:
            data, old = self.workspace.read(parts, self.max_bytes)
        except FileRefused as refused:
            raise FileRefused(f"{CHANGED} ({refused})") from None
        if digest(data) != self.known[parts]:
            raise FileRefused(CHANGED)
        return old, text_of(data)

    def _sed(self, path: str, pattern: str, replacement: str, start_line: int, end_line: int) -> tuple[Any, ...]:
        """What sed would do: (parts, old stat, text before, text after, the answer)."""
        parts, start, end = parts_of(self.workspace.relative(path)), start_line, end_line
        if end < start:
            raise FileRefused(f"end_line ({end}) must not be before start_line ({start})")
        old, before = self._current(parts)
        lines = lines_of(before)
        if start > len(lines):
            raise FileRefused(f"start_line {start} is past the end: the file has {len(lines):,} lines")
        end = min(end, len(lines))
        bodies = [body(line) for line in lines[start - 1:end]]
        done = substitute(pattern, replacement, bodies, self.grep_timeout)
        if not sum(count for _, count in done):
            raise FileRefused(f"no match for {pattern!r} in lines {start}-{end}, so nothing changed: read those "
                              "lines with read_file and adjust the pattern")
        for index, (text, _) in enumerate(done, start - 1):
            lines[index] = text + lines[index][len(body(lines[index])):]
        after = "".join(lines)
        self._encoded(after)
        changed = [f"{n:>6}\t{text[:300]}" for n, (text, count) in enumerate(done, start) if count][:20]
        note = (f"{'/'.join(parts)}: {sum(c for _, c in done)} replacement(s) in lines {start}-{end}; the file has "
                f"{len(lines_of(after)):,} lines. Changed:\n" + "\n".join(changed))
        return parts, old, before, after, note

    def _echo(self, path: str, content: str) -> tuple[Any, ...]:
        """What echo_into would do: (parts, old stat or None, text before, text after, the answer)."""
        parts = parts_of(self.workspace.relative(path))
        self._encoded(content)
        new = parts not in self.known and self._missing(parts)
        old, before = (None, "") if new else self._current(parts)
        note = f"{'/'.join(parts)}: {'created' if new else 'written'}, {len(lines_of(content)):,} lines"
        return parts, old, before, content, note

    def _missing(self, parts: tuple[str, ...]) -> bool:
        """Whether nothing has this name yet (so echo_into may create it)."""
        with self.workspace.folder(parts[:-1]) as folder:
            return folder.lstat(parts[-1]) is None

    def _encoded(self, text: str) -> bytes:
        """The new text as the bytes to write, or FileRefused: text files only, within the size limit."""
        if "\0" in text:
            raise FileRefused("the new text has a NUL character: only text files are written")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise FileRefused("the new text has characters UTF-8 cannot hold (lone surrogates)") from None
        if len(data) > self.max_bytes:
            raise FileRefused(f"the new text is over this toolset's limit of {self.max_bytes:,} bytes")
        return data

    def _write(self, parts: tuple[str, ...], old: os.stat_result | None, text: str) -> None:
        """Write the text, and remember its hash: the next edit starts from it."""
        data = self._encoded(text)
        write(self.workspace, parts, data, old)
        self.known[parts] = digest(data)

    def _preview(self, plan: Callable[..., tuple[Any, ...]], args: Any) -> str:
        """The diff a person approves, or why the call will be refused."""
        try:
            with self.lock:
                parts, _, before, after, _ = plan(**args.model_dump())
        except FileRefused as refused:
            return f"This call will be refused: {refused}"
        return diff("/".join(parts), before, after)
