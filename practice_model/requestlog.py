"""The practice server's request log: every exchange, credentials redacted, bounded in count and bytes.

    log = RequestLog(max_entries=200, max_bytes=16 * 1024 * 1024, path=None)
    log.add({"time": "2026-05-01T12:00:00.000Z", "method": "POST", "path": "/v1/chat/completions",
             "headers": {...}, "request": {...}, ...}, secrets)
    log.entries()                            # decoded copies, oldest first

Each entry is kept as one compact UTF-8 JSON line (what the JSONL file gets too), not as Python
objects: a request full of tool schemas takes about as many bytes in the log as on the wire,
where the parsed dicts took about nine times more. When the count or the byte total is over its
limit, the oldest entries go first.

What is redacted: credential-like headers (`redact_headers`: Authorization keeps only its scheme),
and the exact strings passed as `secrets` (the server's own key and the bearer key the client
sent) wherever they appear. Nothing else: message text and tool-call arguments are logged as they
were sent, so a lesson can show a secret that a model copied into a call's arguments.

Concessions: `entries()` decodes every kept entry on each call (the log is for looking at, not
for hot paths); an entry that alone is larger than `max_bytes` keeps its method, path, headers
and status, with the request and response bodies replaced by a size note; request bodies over
`MAX_LOGGED_BODY` are never parsed for the log, only noted.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

MAX_LOGGED_BODY = 1024 * 1024           # request bodies larger than this are noted, not logged
SENSITIVE = ("authorization", "cookie", "key", "token", "secret", "auth")


def bearer(headers: Mapping[str, str]) -> str:
    """The key from `Authorization: Bearer <key>` ('' when there is none).

    >>> bearer({"authorization": "Bearer sk-1"}), bearer({"authorization": "Basic xyz"})
    ('sk-1', '')
    """
    value = headers.get("authorization", "") or ""
    scheme, _, key = value.strip().partition(" ")
    return key.strip() if scheme.lower() == "bearer" else ""


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers with anything credential-like replaced by `<redacted>` (the auth scheme is kept).

    >>> redact_headers({"authorization": "Bearer sk-1", "x-api-key": "k", "accept": "*/*"})
    {'authorization': 'Bearer <redacted>', 'x-api-key': '<redacted>', 'accept': '*/*'}
    """
    def hide(value: str) -> str:
        scheme, _, rest = value.partition(" ")
        return f"{scheme} <redacted>" if rest and scheme.lower() in ("bearer", "basic") else "<redacted>"

    return {k: hide(v) if any(s in k.lower() for s in SENSITIVE) else v for k, v in headers.items()}


def loggable_body(raw: bytes) -> Any:
    """A request body for the log: parsed JSON when possible, else text; large bodies only noted.

    >>> loggable_body(b'{"a": 1}'), loggable_body(b"not json"), loggable_body(b"x" * (MAX_LOGGED_BODY + 1))
    ({'a': 1}, 'not json', '<1048577 bytes not logged>')
    """
    if len(raw) > MAX_LOGGED_BODY:
        return f"<{len(raw)} bytes not logged>"
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw.decode("utf-8", "replace")


def encode(entry: dict[str, Any], secrets: Iterable[str] = ()) -> bytes:
    """One entry as a compact JSON line, every secret scrubbed wherever it appears.

    A lone surrogate (JSON may spell one as an escape) is written back as its `\\udXXX` escape, so
    the line stays valid UTF-8 and decodes to the same text.

    >>> encode({"request": "my key is sk-secret-123456"}, ["sk-secret-123456"])
    b'{"request":"my key is <redacted>"}'
    """
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    for secret in secrets:
        text = text.replace(json.dumps(secret, ensure_ascii=False)[1:-1], "<redacted>")
    return text.encode("utf-8", "backslashreplace")


def summarised(entry: dict[str, Any], size: int) -> dict[str, Any]:
    """The entry without its bodies, for one too large to keep whole.

    >>> summarised({"method": "POST", "request": {"x": 1}, "response": "...", "status": 200}, 99)["request"]
    '<entry of 99 bytes: bodies not kept>'
    """
    note = f"<entry of {size} bytes: bodies not kept>"
    return {**entry, "request": note, "response": note}


class RequestLog:
    """The exchanges a server answered, oldest first, at most `max_entries` and `max_bytes` of them."""

    def __init__(self, max_entries: int = 200, max_bytes: int = 16 * 1024 * 1024,
                 path: str | Path | None = None) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.path = Path(path) if path else None
        self._lines: deque[bytes] = deque()
        self._bytes = 0
        self._lock = threading.Lock()

    def add(self, entry: dict[str, Any], secrets: Iterable[str] = ()) -> None:
        """Keep one entry (and append it to the JSONL file), then drop the oldest while over a limit."""
        secrets = list(secrets)
        line = encode(entry, secrets)
        if len(line) > self.max_bytes:
            line = encode(summarised(entry, len(line)), secrets)
        with self._lock:
            if self.path is not None:
                with self.path.open("ab") as f:
                    f.write(line + b"\n")
            if self.max_entries <= 0 or len(line) > self.max_bytes:
                return
            self._lines.append(line)
            self._bytes += len(line)
            while len(self._lines) > self.max_entries or self._bytes > self.max_bytes:
                self._bytes -= len(self._lines.popleft())

    def entries(self, last: int | None = None) -> list[dict[str, Any]]:
        """Decoded copies of the kept entries, oldest first (only the `last` few when given)."""
        with self._lock:
            lines = list(self._lines)[-last:] if last else list(self._lines)
        return [json.loads(line) for line in lines]

    @property
    def size(self) -> int:
        """Bytes the kept entries take (their JSON lines)."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._lines)
