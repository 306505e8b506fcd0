"""The audit log: one JSON line per approval event, for the people who ask later what ran and who allowed it.

    Agent(client, model, tools, audit_log="audit.jsonl")
    [(e["event"], e["tool"], e["by"]) for e in read_audit("audit.jsonl")]

Events: requested, approved, edited, denied, responded, expired, executed, failed — with the time, run, call
id, tool, the arguments' fingerprint, the decision and who made it. It stores fingerprints and reasons,
not arguments; reasons pass through `redact_secrets`. The file is created 0600 and never written
through a symlink; lines from threads never mix.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

from ..redaction import redact_secrets

AUDIT_KEY_VARIABLE = "MINI_FRAMEWORK_AUDIT_KEY"  # if set, argument fingerprints are keyed (HMAC)

__all__ = ["AUDIT_KEY_VARIABLE", "AuditLog", "arguments_hash", "read_audit"]


class AuditLog:
    """Appends one JSON line per approval event to a file (created 0600; lines from threads never mix).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "audit.jsonl")
    >>> AuditLog(path).record("denied", run="r1", call_id="call_1", tool="send_email", arguments_hash="ab12",
    ...                       by="user", reason="not today")
    >>> [(e["event"], e["by"], e["reason"]) for e in read_audit(path)]
    [('denied', 'user', 'not today')]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def record(self, event: str, *, run: str, call_id: str, tool: str, arguments_hash: str, by: str = "",
               reason: str = "", at: float | None = None, **details: Any) -> None:
        """Append one event. Raises OSError if the file cannot be written (the agent stops rather than
        running a gated tool without a record)."""
        entry = {"time": _iso(at if at is not None else time.time()), "event": event, "run": run,
                 "call_id": redact_secrets(call_id)[:200], "tool": tool, "arguments_hash": arguments_hash,
                 "by": redact_secrets(by)[:200], "reason": redact_secrets(reason)[:500], **details}
        line = _printable(json.dumps(entry, ensure_ascii=False, default=str)) + "\n"
        with self._lock:
            self._append(line.encode("utf-8"))

    def check(self) -> None:
        """Make sure the log can be written now (created if missing), rather than at the first gated call."""
        with self._lock:
            self._append(b"")

    def _append(self, data: bytes) -> None:
        if self.path.is_dir():
            raise IsADirectoryError(21, "the audit log path is a folder", str(self.path))
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)  # never through a symlink
        fd = os.open(self.path, flags | getattr(os, "O_NONBLOCK", 0), 0o600)  # a FIFO: an error, not a hang
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(22, "the audit log path is not a regular file (a FIFO, a device)", str(self.path))
            if data:
                os.write(fd, data)
        finally:
            os.close(fd)


def read_audit(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The events of an audit log, oldest first (a line that is not JSON is skipped, not fatal)."""
    events = []
    for line in Path(path).read_text(encoding="utf-8").split("\n"):  # not splitlines(): an id may hold U+2028
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def arguments_hash(arguments: Any) -> str:
    """A short fingerprint of arguments for the audit log (the log never holds the arguments themselves).

    A plain hash of a short secret (a 6-digit PIN) can be guessed by trying them all: set the environment
    variable MINI_FRAMEWORK_AUDIT_KEY to a secret of yours and the fingerprint becomes an HMAC under it.

    >>> arguments_hash({"b": 1, "a": 2}) == arguments_hash({"a": 2, "b": 1})
    True
    """
    text = json.dumps(arguments, sort_keys=True, default=str).encode()  # ASCII: any string hashes
    key = os.environ.get(AUDIT_KEY_VARIABLE, "")
    digest = hmac.new(key.encode(), text, hashlib.sha256) if key else hashlib.sha256(text)
    return digest.hexdigest()[:16]


def _printable(line: str) -> str:
    r"""A JSON line with every character that is not printable (C1 controls, bidi overrides, line separators,
    zero-width characters, lone surrogates) as its JSON \u escape: the same JSON, and `cat audit.jsonl` in a
    terminal shows what is there (Chinese stays readable).

    >>> _printable('{"call_id": "c\u202e1", "by": "王经理"}')
    '{"call_id": "c\\u202e1", "by": "王经理"}'
    """
    if line.isprintable():
        return line
    out = []
    for ch in line:
        if ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:  # JSON writes characters beyond the BMP as a surrogate pair
            high, low = divmod(ord(ch) - 0x10000, 0x400)
            out.append(f"\\u{0xd800 + high:04x}\\u{0xdc00 + low:04x}")
    return "".join(out)


def _iso(seconds: float) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
    except (OverflowError, ValueError, OSError):
        return "(an impossible time)"
