"""Workspace confinement: which paths a model may name, and reaching them without following a link.

    parts_of("docs/plan.md")        -> ("docs", "plan.md"), or FileRefused saying why and what to do
    Workspace(root).read(parts, n)  -> (bytes, stat) of a regular file inside, links never followed
    Workspace(root).folder(parts)   a folder inside, reached component by component (editing.py writes there)
    Workspace(root).relative(path)  "/srv/ws/logs/x.txt" -> "logs/x.txt": the workspace's own absolute paths

A path is refused before the disk is touched when any spelling of it (as sent, URL-decoded up to three
times, and each of those NFKC-normalised) has: a control or invisible character (NUL, bidi overrides,
zero-width marks), a space other than " ", a leading / or \\ (absolute), a ':' (a drive letter, a Windows
stream), a leading '~', a '..' component, a component starting with '.' (hidden files and folders), a
component ending in a dot or a space (Windows drops them), a Windows device name (CON, NUL, COM1, ...).
So "%2e%2e/x", "．．/x" (fullwidth dots), "\u2025/x" (the two-dot leader) and "a\\..\\b" are all '..'.
Both / and \\ separate components. An absolute path that starts with the workspace's own path (and a
separator) is first made relative (`Workspace.relative`), then checked like any other: "/srv/ws/../etc"
still has its '..', and "/srv/ws_other/x" is not inside "/srv/ws". A path must be in NFC (an NFD "café" is
a different file from the "café" it looks like); other NFKC differences are allowed (a Chinese
"报告（终稿）.md" keeps its fullwidth brackets), and editing.py refuses to create a file whose
NFKC-casefolded name equals a different existing sibling's. Look-alikes across scripts (a Cyrillic "о" for
a Latin "o") need the Unicode confusables table: not here.

On the disk (POSIX: Linux, macOS): every folder is opened from the workspace root with
O_DIRECTORY|O_NOFOLLOW relative to its parent's descriptor, and a file is lstat-ed, then opened with
O_NOFOLLOW|O_NONBLOCK in that folder and fstat-ed: the same inode, a regular file, one hard link (a second
link may be a hard link made from outside: it cannot be told from inside), at most `limit` bytes. So no
symbolic link is ever followed, inside or out, whenever it was swapped in; a FIFO never blocks the call.

Windows (no O_NOFOLLOW, no dir_fd): the same name checks; each component is lstat-ed and refused if it is a
link or a junction (a reparse point), then the file is opened by its full path and fstat-ed against the
lstat. A link swapped in between the check and the open can be followed there: a weaker, check-then-use
guarantee. The same weaker walk runs anywhere `POSIX` is False (the tests run it on Linux too).
"""
from __future__ import annotations

import os
import re
import stat
import unicodedata
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ...executor import ToolError

__all__ = ["MAX_PATH", "POSIX", "FileRefused", "Folder", "Workspace", "parts_of"]

MAX_PATH = 1024  # characters in a path a model sends
POSIX = ({os.open, os.stat} <= os.supports_dir_fd and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY"))
NOFOLLOW, NONBLOCK, BINARY = (getattr(os, f"O_{flag}", 0) for flag in ("NOFOLLOW", "NONBLOCK", "BINARY"))
_DEVICE = re.compile(r"(?i)(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?")
_INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


class FileRefused(ToolError):
    """A file call this toolset will not carry out; the message says why and what to do instead."""


def parts_of(path: str) -> tuple[str, ...]:
    """The components of a path a model sent, once every spelling of it passes (the module docstring).

    >>> parts_of("./docs\\\\plan.md")
    ('docs', 'plan.md')
    >>> parts_of("docs/%2e%2e/%2e%2e/etc/passwd")
    Traceback (most recent call last):
    ...
    mini_framework.builtin.files.paths.FileRefused: '..' is not allowed: paths stay inside the workspace (found once ...
    """
    if not isinstance(path, str) or not path.strip():
        raise FileRefused("give a path relative to the workspace, e.g. notes/todo.md")
    if len(path) > MAX_PATH:
        raise FileRefused(f"the path is longer than {MAX_PATH} characters")
    for spelling in reversed(_spellings(path)):  # the most decoded first: what the path would mean
        if problem := _problem(spelling):
            raise FileRefused(problem if problem == _problem(path) else f"{problem} (found once the path is "
                                                                         "URL-decoded or Unicode-normalised)")
    if unicodedata.normalize("NFC", path) != path:
        raise FileRefused("the path is not in Unicode NFC form (it may look like another file's name): write it "
                          "with composed characters")
    parts = tuple(part for part in re.split(r"[/\\]", path) if part not in ("", "."))
    if not parts:
        raise FileRefused("that is the workspace folder itself: name a file in it, e.g. notes/todo.md")
    return parts


def _spellings(path: str) -> list[str]:
    """The path as sent, URL-decoded up to three times, and each of those in NFKC."""
    decoded = [path]
    for _ in range(3):
        decoded.append(urllib.parse.unquote(decoded[-1]))
    return list(dict.fromkeys(v for s in decoded for v in (s, unicodedata.normalize("NFKC", s))))


def _problem(spelling: str) -> str | None:
    """Why this spelling of a path is refused, or None."""
    if any(unicodedata.category(c) in _INVISIBLE or (c.isspace() and c != " ") for c in spelling):
        return ("a path with control or invisible characters (NUL, tabs, bidi marks, zero-width or unusual spaces) "
                "is not allowed")
    if spelling.startswith(("/", "\\")):
        return "an absolute path is not allowed: give a path relative to the workspace, e.g. notes/todo.md"
    if ":" in spelling:
        return "a ':' (a drive letter, a Windows stream) is not allowed: give a path relative to the workspace"
    if spelling.startswith("~"):
        return "'~' (a home folder) is not allowed: give a path relative to the workspace"
    for part in re.split(r"[/\\]", spelling):
        if part == "..":
            return "'..' is not allowed: paths stay inside the workspace"
        if part.startswith(".") and part != ".":
            return f"hidden files and folders (names starting with '.', like {part[:40]!r}) are off limits"
        if part not in ("", ".") and part != part.rstrip(". "):
            return "a name ending in a dot or a space is not allowed (Windows reads it as another name)"
        if _DEVICE.fullmatch(part):
            return f"{part[:20]!r} is a Windows device name, not a file"
        if len(part.encode("utf-8", "replace")) > 255:
            return "a name longer than 255 bytes is not allowed"
    return None


@dataclass
class Folder:
    """A folder inside the workspace: an open descriptor (POSIX), or a checked path (the weaker walk)."""

    fd: int | None
    path: str

    def name(self, name: str) -> str:
        """What to pass with `dir_fd=self.fd` for an entry of this folder."""
        return name if self.fd is not None else os.path.join(self.path, name)

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry's own stat (a link's, not its target's), or None when there is none."""
        try:
            return os.stat(self.name(name), dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def entries(self) -> list[str]:
        """The names in this folder."""
        return os.listdir(self.fd if self.fd is not None and os.listdir in os.supports_fd else self.path)


def _is_link(st: os.stat_result) -> bool:
    """A symbolic link, or (Windows) a junction or any other reparse point."""
    return stat.S_ISLNK(st.st_mode) or bool(getattr(st, "st_file_attributes", 0) & stat.FILE_ATTRIBUTE_REPARSE_POINT)


def refusal(st: os.stat_result | None, limit: int) -> str | None:
    """Why a file with this lstat is not read or edited, or None."""
    if st is None:
        return "there is no such file (grep with a path_pattern such as '*' lists what there is)"
    if _is_link(st):
        return "it is a symbolic link, and links are not followed (its target may be outside the workspace)"
    if stat.S_ISDIR(st.st_mode):
        return "it is a folder, not a file (grep with a path_pattern such as 'folder/*' looks inside)"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file (a device, a FIFO or a socket), so it is not read"
    if st.st_nlink > 1:
        return "it has more than one hard link (a hard link may lead outside the workspace), so it is not used"
    if st.st_size > limit:
        return f"it is {st.st_size:,} bytes, over this toolset's limit of {limit:,}, so it is neither read nor searched"
    return None


class Workspace:
    """The one folder the tools may use, and the walk that stays inside it."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.realpath(os.fspath(root))  # a link given as the workspace itself is the user's choice
        if not os.path.isdir(self.root):
            raise ValueError(f"the workspace {os.fspath(root)!r} is not a folder")
        self.prefixes = tuple({os.path.join(p, "") for p in (self.root, os.path.abspath(os.fspath(root)))})

    def relative(self, path: str) -> str:
        """An absolute path that starts with the workspace's own path (a spilled result's reminder names its file
        so) as the relative path after it, which then meets every check; any other path as it is."""
        for prefix in self.prefixes if isinstance(path, str) else ():
            if path.startswith(prefix) and path[len(prefix):]:
                return path[len(prefix):]
        return path

    @contextmanager
    def folder(self, parts: tuple[str, ...]) -> Iterator[Folder]:
        """The folder `parts` names, reached from the root without following any link (closed afterwards)."""
        if not POSIX:
            path = self.root
            for part in parts:
                path = os.path.join(path, part)
                if (why := _not_a_folder(_lstat(path))) is not None:
                    raise FileRefused(f"the folder {part[:60]!r} cannot be used: {why}")
            yield Folder(None, path)
            return
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts:
                try:
                    inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW, dir_fd=fd)
                except OSError:
                    why = _not_a_folder(Folder(fd, "").lstat(part)) or "it cannot be opened"
                    raise FileRefused(f"the folder {part[:60]!r} cannot be used: {why}") from None
                os.close(fd)
                fd = inner
            yield Folder(fd, "")
        finally:
            os.close(fd)

    def read(self, parts: tuple[str, ...], limit: int) -> tuple[bytes, os.stat_result]:
        """The bytes of a regular file inside the workspace, and its fstat; FileRefused for anything else."""
        with self.folder(parts[:-1]) as folder:
            before = folder.lstat(parts[-1])
            if (why := refusal(before, limit)) is not None:
                raise FileRefused(f"cannot use this file: {why}")
            try:
                fd = os.open(folder.name(parts[-1]), os.O_RDONLY | NOFOLLOW | NONBLOCK | BINARY, dir_fd=folder.fd)
            except OSError as error:
                raise FileRefused(f"cannot open this file ({error.strerror or 'refused'})") from None
            try:
                st = os.fstat(fd)
                if before is None or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino) or refusal(st, limit):
                    raise FileRefused("the file was replaced while it was being opened: try again")
                chunks, size = [], 0
                while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
                    chunks.append(chunk)
                    size += len(chunk)
            finally:
                os.close(fd)
        if size > limit:
            raise FileRefused(f"the file grew past this toolset's limit of {limit:,} bytes while it was read")
        return b"".join(chunks), st


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _not_a_folder(st: os.stat_result | None) -> str | None:
    """Why an entry is not a folder the walk goes into, or None."""
    if st is None:
        return "there is no such folder (a file can be created only in a folder that exists)"
    if _is_link(st):
        return "it is a symbolic link, and links are not followed"
    return None if stat.S_ISDIR(st.st_mode) else "it is not a folder"
