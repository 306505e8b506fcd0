"""The idempotency ledger: which messages were sent, by key, in memory and in a JSON-lines file (`sent.jsonl` in
the outbox folder; for SMTPSender a file you name, or memory only).

It records "sending" before the backend is called and "sent" after (or "failed" when nothing left). An entry
left at "sending" (the process died mid-send, or the connection broke while the message was handed over) means
*possibly sent*. Processes sharing a file take turns through flock on POSIX; on Windows only the threads of one
process do.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator, Literal

from .errors import NotSent

if sys.platform != "win32":
    import fcntl

__all__ = ["Entry", "Ledger"]

log = logging.getLogger("mini_framework")


@dataclass(frozen=True)
class Entry:
    """One line of the ledger: what happened to one message."""

    key: str  # message_key(...)
    state: Literal["sending", "sent", "failed"]  # "failed": nothing left, it may be tried again
    at: str  # when, ISO 8601 local time with its offset, to the second
    message_id: str  # the Message-ID header
    receipt: str = ""  # what the backend answered: where the .eml was saved, or the SMTP server's reply


@dataclass
class _Shared:
    """What every Ledger of one file in this process shares: a lock, and the keys being sent right now."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: dict[str, threading.Event] = field(default_factory=dict)


_FILES: dict[str, _Shared] = {}
_FILES_LOCK = threading.Lock()


class Ledger:
    """Which messages were sent, by key: in memory, and appended to a JSON-lines file when given a path.

    Use `last` and `record` inside `with ledger.locked():`, which also reads what others appended.

    >>> ledger = Ledger()
    >>> with ledger.locked():
    ...     ledger.record(Entry("k1", "sent", "2026-01-05T09:30:00+08:00", "<1@example.com>"))
    ...     ledger.last("k1").state, ledger.last("k2")
    ('sent', None)
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, label: str = "the ledger of sent e-mails"):
        self.path = Path(path).absolute() if path is not None else None
        self.label = label  # how error messages name it (never by its absolute path)
        self.entries: dict[str, Entry] = {}  # key -> its latest entry
        self._read_to = 0  # bytes of the file read into `entries`
        self._file_id: tuple[int, int] | None = None  # (device, inode) read from: a new file is read afresh
        self._partial = False  # the file ends in half a line (a writer died): start ours on a new line
        self._fd: int | None = None  # the open file, while locked
        if self.path is None:
            self.shared = _Shared()
        else:
            with _FILES_LOCK:
                self.shared = _FILES.setdefault(str(self.path), _Shared())

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the ledger: threads of this process take turns, and, through flock, other processes."""
        with self.shared.lock:
            if self.path is None:
                yield
                return
            fd = self._open()
            try:
                if sys.platform != "win32":
                    fcntl.flock(fd, fcntl.LOCK_EX)
                self._refresh(fd)
                self._fd = fd
                yield
            finally:
                self._fd = None
                os.close(fd)  # releases the flock

    def last(self, key: str) -> Entry | None:
        """The latest entry for `key`, or None if it was never tried."""
        return self.entries.get(key)

    def record(self, entry: Entry) -> None:
        """Add an entry (inside `locked()`); on disk, and flushed there, before this returns. OSError if not."""
        self.entries[entry.key] = entry
        if self._fd is None:
            return
        line = ("\n" if self._partial else "") + json.dumps(asdict(entry), ensure_ascii=False) + "\n"
        data = line.encode("utf-8")
        if os.write(self._fd, data) != len(data):
            raise OSError("the disk is full")
        os.fsync(self._fd)
        self._partial = False
        self._read_to = os.fstat(self._fd).st_size

    def clear(self) -> None:
        """Forget every message, so that each may be sent again (on purpose: this is what stops duplicates)."""
        with self.locked():
            self.entries.clear()
            if self._fd is not None:
                os.ftruncate(self._fd, 0)
                self._read_to, self._partial = 0, False

    def _open(self) -> int:
        """The ledger file, opened for reading and appending (folder 0700 and file 0600 when created here)."""
        assert self.path is not None
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except (FileExistsError, NotADirectoryError):
            raise NotSent(f"{self.label} cannot be used: a file stands where its folder should be. Nothing was "
                          "sent; tell the user.") from None
        except PermissionError:
            raise NotSent(f"{self.label} is not writable: nothing was sent; tell the user.") from None
        except OSError as error:
            raise NotSent(f"{self.label} cannot be written ({error.strerror or type(error).__name__}): nothing "
                          "was sent; tell the user.") from None

    def _refresh(self, fd: int) -> None:
        """Read the lines appended since last time (all of them if the file is new or was emptied)."""
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != self._file_id or info.st_size < self._read_to:
            self._file_id, self._read_to, self._partial = (info.st_dev, info.st_ino), 0, False
            self.entries.clear()
        if info.st_size <= self._read_to:
            return
        os.lseek(fd, self._read_to, os.SEEK_SET)
        chunks, wanted = [], info.st_size - self._read_to
        while wanted > 0 and (chunk := os.read(fd, min(wanted, 1 << 20))):
            chunks.append(chunk)
            wanted -= len(chunk)
        data = b"".join(chunks)
        complete = data[: data.rfind(b"\n") + 1]
        for line in complete.splitlines():
            try:
                entry = Entry(**json.loads(line))
            except (ValueError, TypeError):
                log.warning("%s: skipped a line that is not a ledger entry", self.label)
                continue
            self.entries[entry.key] = entry
        self._read_to += len(complete)
        self._partial = len(complete) < len(data)
