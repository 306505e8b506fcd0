"""Writing a file safely: stale writes refused by hash, the bytes replaced atomically, a diff to approve.

    digest(data)                        the SHA-256 of a file's bytes: what a read remembers
    write(workspace, parts, data, old)  replace the file `old` describes (or create one when old is None)
    diff(name, before, after)           a unified diff, bounded: the preview a person approves

How a write goes (POSIX), inside the folder reached without following links (paths.py): a temporary file
".mf-<random>.tmp" is created there with O_CREAT|O_EXCL|O_NOFOLLOW, written, given the old file's mode
(permission bits; the owner is not kept), fsync-ed; then the target is lstat-ed again and must still be the
regular file, the same inode, that was read and hashed, or nothing is written ("file has been changed"); then
os.replace puts the new file in its place (rename never follows a link at the target: a link swapped in
after that last check is itself replaced, its target untouched), and the folder is fsync-ed. A new file is
linked into place with os.link, which fails if the name appeared meanwhile (a plain check-then-replace
where hard links are not supported). Guaranteed: no byte is written outside the workspace or through a
link, and a reader sees the old file or the new one, never half of one. Not guaranteed: a process writing
the file between the last check and the rename (microseconds) loses its write; the check is not a lock. A
process killed mid-write leaves its hidden temporary file behind (the tools never show hidden files).

Windows gets the weaker walk of paths.py (each component lstat-ed, then used by its full path), the same
last check and os.replace (MoveFileEx, which replaces a link rather than writing through it), and os.chmod
for the mode. A junction swapped in for a folder between the walk and the write can be followed there.
"""
from __future__ import annotations

import difflib
import hashlib
import os
import secrets
import stat
import unicodedata

from .paths import BINARY, NOFOLLOW, FileRefused, Folder, Workspace, refusal

__all__ = ["CHANGED", "DIFF_LINES", "diff", "digest", "write"]

DIFF_LINES = 80  # lines of a preview's diff
CHANGED = ("the file has been changed since you read it (by someone else, or it was replaced), so nothing was "
           "written: read it again with read_file and make your edit on what it says now")


def digest(data: bytes) -> str:
    """The SHA-256 of a file's bytes, as hex.

    >>> digest(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


def write(workspace: Workspace, parts: tuple[str, ...], data: bytes, old: os.stat_result | None) -> None:
    """Put `data` in the file: replacing the one `old` describes (fstat of what was read), or a new file."""
    with workspace.folder(parts[:-1]) as folder:
        name = parts[-1]
        if old is None and (clash := _look_alike(folder, name)):
            raise FileRefused(f"a file named {clash[:80]!r} is already there and its name looks the same: use "
                              "that name (read it with read_file first), or choose a clearly different one")
        temp = f".mf-{secrets.token_hex(8)}.tmp"
        fd = os.open(folder.name(temp), os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | BINARY,
                     0o600 if old else 0o666, dir_fd=folder.fd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                if old is not None and hasattr(os, "fchmod"):
                    os.fchmod(fd, stat.S_IMODE(old.st_mode))
                os.fsync(fd)
            finally:
                os.close(fd)
            if old is not None and not hasattr(os, "fchmod"):
                os.chmod(folder.name(temp), stat.S_IMODE(old.st_mode))
            _put(folder, temp, name, old)
        except BaseException:
            try:
                os.unlink(folder.name(temp), dir_fd=folder.fd)
            except OSError:
                pass
            raise
        if folder.fd is not None:
            try:
                os.fsync(folder.fd)  # the rename itself, on the disk
            except OSError:
                pass


def _put(folder: Folder, temp: str, name: str, old: os.stat_result | None) -> None:
    """The last check, then the temporary file takes the name."""
    now = folder.lstat(name)
    if old is None:
        if now is not None:
            raise FileRefused("a file of that name appeared meanwhile: read it with read_file before writing it")
        try:
            os.link(folder.name(temp), folder.name(name), src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        except FileExistsError:
            raise FileRefused("a file of that name appeared meanwhile: read it with read_file first") from None
        except OSError:  # no hard links on this file system: check, then replace
            if folder.lstat(name) is not None:
                raise FileRefused("a file of that name appeared meanwhile: read it with read_file first") from None
            os.replace(folder.name(temp), folder.name(name), src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
            return
        os.unlink(folder.name(temp), dir_fd=folder.fd)
        return
    if now is None or refusal(now, 1 << 62) or (now.st_dev, now.st_ino) != (old.st_dev, old.st_ino):
        raise FileRefused(CHANGED)
    os.replace(folder.name(temp), folder.name(name), src_dir_fd=folder.fd, dst_dir_fd=folder.fd)


def _look_alike(folder: Folder, name: str) -> str | None:
    """A different name already in the folder that is the same as `name` once NFKC-normalised and casefolded."""
    key = unicodedata.normalize("NFKC", name).casefold()
    for index, entry in enumerate(folder.entries()):
        if index > 100_000:
            break
        if entry != name and unicodedata.normalize("NFKC", entry).casefold() == key:
            return entry
    return None


def diff(name: str, before: str, after: str) -> str:
    """What an edit changes, as a unified diff of at most DIFF_LINES lines.

    >>> print(diff("notes.txt", "a\\nb\\n", "a\\nB\\n"))
    --- notes.txt
    +++ notes.txt (after the edit)
    @@ -1,2 +1,2 @@
     a
    -b
    +B
    """
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), name, f"{name} (after the edit)",
                                      lineterm=""))
    if not lines:
        return f"{name}: no change"
    cut = f"\n… {len(lines) - DIFF_LINES:,} more lines of the diff" if len(lines) > DIFF_LINES else ""
    return "\n".join(line[:300] for line in lines[:DIFF_LINES]) + cut
