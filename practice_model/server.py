"""The practice model's HTTP server: OpenAI's Chat Completions API on 127.0.0.1, stdlib only.

    server = PracticeServer().start()        # background thread, free port
    client = OpenAI(base_url=server.base_url, api_key="anything")
    ...
    server.stop()

Routes: `POST /v1/chat/completions` (JSON, or server-sent events when `stream: true`),
`GET /v1/models`, `GET /v1/models/{id}`. Everything else gets the real API's 404
`Invalid URL (METHOD /path)`. Every error is an OpenAI-shaped JSON body (see `errors.py`).

A chat request is checked (`checks.py`), then measured against its context window (`context.py`:
the real 400 `context_length_exceeded` when prompt plus `max_tokens` does not fit), then looked up
in the server's prompt cache (`caching.py`: `usage.prompt_tokens_details.cached_tokens` is the
prefix it shares with requests answered before, so it depends on what this server has seen).
The persona's reply goes on the wire in OpenAI's shape (`wire.py`), then, when the model name
carries quirk flags, with a provider's deviations (`quirks.py`).

HTTP/1.1 with keep-alive: JSON answers carry `Content-Length`, streams use chunked framing and
one write per event (TCP_NODELAY, so nothing waits for Nagle). Robustness: request bodies are
size-limited (413 over `MAX_BODY_BYTES`, 4 MiB: parsing, hashing and estimating the tokens of a
dense 4 MiB body takes about half a second; the planner's own work is bounded whatever the size)
and read under a socket timeout (408 for a client that stops half-way); a
persona that raises gets a 500 `server_error` while the traceback goes to the
`practice_model` logger only; nothing a client sends can stop the server thread.

Every exchange is recorded (`server.requests`, newest last, bounded in count and in bytes; and a
JSONL file when `log_path` is set), stamped with the time it was answered (`time`, ISO 8601 UTC:
the one thing in the practice model that reads the clock, kept out of every response), with
credentials redacted: the key a client authenticates with never appears in a log (see
`requestlog.py`). What the conversation itself carries is logged as sent, tool-call arguments
included: a secret a user typed, or a model copied into a call, is visible there, as it would be
in a provider's logs.
"""
from __future__ import annotations

import atexit
import datetime as dt
import hmac
import json
import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import caching, checks, context, errors, llamacpp, providers, quirks, wire
from .errors import ApiError
from .personas import Persona, Responder, registry
from .requestlog import RequestLog, bearer, loggable_body, redact_headers

if TYPE_CHECKING:
    from typing_extensions import Self  # for type checkers only: the practice model needs the stdlib alone

log = logging.getLogger("practice_model")

MAX_BODY_BYTES = 4 * 1024 * 1024  # see the module docstring and `benchmarks/bench_practice.py --large`
MAX_LOGGED_BYTES = 16 * 1024 * 1024  # the in-memory request log's budget (oldest entries dropped first)
_DRAIN_LIMIT = 64 * 1024 * 1024  # read and discard oversized bodies up to this, so the 413 arrives


@dataclass
class Response:
    """What to send back: a JSON body, or (when `chunks` is set) an event stream."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[dict[str, Any]] | None = None
    pace: float = 0.0
    """`@tps=N`: the seconds before each streamed piece the model wrote; for a JSON body, before the body."""

    @classmethod
    def error(cls, err: ApiError, request_id: str | None = None) -> Response:
        """An error response, with the error's own headers (e.g. `retry-after`)."""
        headers = dict(err.headers)
        if request_id:
            headers["x-request-id"] = request_id
        return cls(err.status, err.body(), headers)

    def sse_text(self) -> str:
        """The event stream exactly as sent (for the request log)."""
        events = [wire.sse(chunk) for chunk in self.chunks or []] + [wire.sse(None)]
        return b"".join(events).decode("utf-8")


class PracticeServer:
    """An OpenAI-compatible practice model on a local port; see the module docstring."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, api_key: str | None = None,
                 log_path: str | Path | None = None,
                 personas: Mapping[str, Persona | Responder] | Iterable[Persona] | None = None,
                 max_body_bytes: int = MAX_BODY_BYTES, timeout: float = 15.0, max_logged: int = 200,
                 max_logged_bytes: int = MAX_LOGGED_BYTES) -> None:
        self.host, self.port, self._requested_port = host, port, port
        self.api_key = api_key or None
        self.log_path = Path(log_path) if log_path else None
        self._log = RequestLog(max_logged, max_logged_bytes, self.log_path)
        self.personas = registry(personas)
        self.max_body_bytes = max_body_bytes
        self.timeout = timeout
        self._lock = threading.RLock()
        self._responders: dict[Persona, Responder] = {}
        self.prompt_cache = caching.PromptCache()
        """The prefixes this server has seen (`usage.prompt_tokens_details.cached_tokens`; `caching.py`)."""
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> Self:
        """Listen and serve in a daemon thread (idempotent); with `port=0` the OS picks a free port."""
        with self._lock:
            if self._httpd is None:
                handler = type("Handler", (_Handler,), {"timeout": self.timeout})
                httpd = _HTTPServer((self.host, self._requested_port), handler)
                httpd.practice = self
                self._httpd, self.port = httpd, httpd.server_address[1]
                self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                                name=f"practice-model:{self.port}", daemon=True)
                self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and close open connections (idempotent)."""
        with self._lock:
            httpd, self._httpd = self._httpd, None
            if httpd is None:
                return
            httpd.shutdown()
            httpd.server_close()
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            if self._thread is not None:
                self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server is listening."""
        return self._httpd is not None

    @property
    def base_url(self) -> str:
        """What to give an OpenAI client: `http://127.0.0.1:PORT/v1`."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The logged exchanges, oldest first (decoded copies; at most `max_logged` of them, in at most
        `max_logged_bytes` of compact JSON)."""
        return self._log.entries()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"PracticeServer({self.base_url!r}, {state}, models={list(self.personas)})"

    # -- answering --------------------------------------------------------------------------

    def dispatch(self, method: str, target: str, headers: Mapping[str, str], raw: bytes,
                 body_error: ApiError | None = None) -> Response:
        """Answer one request (no sockets involved: the handler reads, this decides)."""
        path = urlsplit(target).path
        seed = f"{method} {path} " + raw.decode("utf-8", "replace")
        request_id = wire.request_id(seed)
        try:
            self._authorize(headers)
            if body_error is not None:
                raise body_error
            if path == "/v1/chat/completions" and method == "POST":
                response = self._chat(raw)
            elif path == "/v1/models" and method == "GET":
                response = Response(200, {"object": "list", "data": [_model(name) for name in self.personas]})
            elif path.startswith("/v1/models/") and method == "GET":
                name = path[len("/v1/models/"):]
                if name not in self.personas:
                    raise errors.model_not_found(name)
                response = Response(200, _model(name))
            else:
                raise errors.invalid_url(method, path)
        except ApiError as err:
            return Response.error(err, request_id)
        except Exception:
            log.exception("practice model: error while answering %s %s", method, path)
            return Response.error(errors.server_error(), request_id)
        response.headers.setdefault("x-request-id", request_id)
        return response

    def _authorize(self, headers: Mapping[str, str]) -> None:
        """With an `api_key`, demand `Authorization: Bearer <that key>` (401 otherwise)."""
        if self.api_key is None:
            return
        given = bearer(headers)
        if not given:
            raise errors.missing_api_key()
        if not hmac.compare_digest(given.encode("utf-8", "replace"), self.api_key.encode("utf-8", "replace")):
            raise errors.incorrect_api_key(given)

    def _chat(self, raw: bytes) -> Response:
        """`POST /v1/chat/completions`: parse, check (the context window too), look up the prompt cache, ask the
        persona, put the reply on the wire."""
        body = checks.parse(raw)
        persona = checks.check(body, self.personas, raw)
        flags = providers.parse_model(body["model"]) or providers.Flags(persona.name)
        if flags.quirk == "llamacpp":
            llamacpp.refuse(body)       # what llama.cpp's server answers 500 to (`llamacpp.py`)
        thinking = providers.thinking(flags, body)
        facts = wire.facts(body)        # ids, usage and limits: fixed before the persona sees (and may change) the body
        context.check(body, facts, context.window(persona, flags), flags.wording)
        blocks = caching.prompt_blocks(body).blocks if facts.prompt_tokens >= caching.MINIMUM else []
        plain = providers.without_quirks(body["model"])         # quirk flags keep the unflagged answer's ids
        seed = facts.seed if plain == body["model"] else wire.canonical({**body, "model": plain})
        facts = replace(facts, cached_tokens=self.prompt_cache.cached(blocks), wording=flags.wording, seed=seed)
        streamed = body.get("stream") is True
        history = {"messages": list(body["messages"])}     # as sent: the persona may change the body
        reply = self._responder(persona)(body)      # `model` may carry flags: the persona's name does not
        if flags.quirk == "llamacpp":
            reply = llamacpp.decide(reply, body)    # the small model calls only what tool_choice forces
        self.prompt_cache.remember(blocks)          # only what was answered (a 429 leaves nothing behind)
        rows = quirks.active(flags, thinking)       # a provider's deviations on the wire (`quirks.py`)
        ctx = quirks.context(history, reply, seed, thinking)
        reply = quirks.cut(reply, history) if flags.cut and flags.quirk != "llamacpp" else reply  # its grammar
        # writes the arguments whole, whatever max_tokens says
        pace = 1 / flags.tps if flags.tps else 0.0     # `@tps=N`: N word pieces a second
        if streamed:
            return Response(200, chunks=quirks.on_stream(wire.stream(facts, reply), ctx, rows), pace=pace)
        waited = pace * sum(map(_written, wire.stream(facts, reply))) if pace else 0.0
        return Response(200, quirks.on_body(wire.completion(facts, reply), ctx, rows), pace=waited)

    def _responder(self, persona: Persona) -> Responder:
        """The persona's responder for this server, built on first use (failures are not cached)."""
        with self._lock:
            if persona not in self._responders:
                self._responders[persona] = persona.build()
            return self._responders[persona]

    # -- the request log --------------------------------------------------------------------

    def record(self, method: str, target: str, headers: Mapping[str, str], raw: bytes,
               response: Response) -> None:
        """Log one exchange in memory (and to the JSONL file), with every credential redacted."""
        entry = {
            "time": utc_now(), "method": method, "path": target, "headers": redact_headers(headers),
            "request": loggable_body(raw), "status": response.status,
            "response": response.sse_text() if response.chunks is not None else response.body,
        }
        # A key echoed elsewhere (in a message, say) is scrubbed too. Short "keys" such as
        # "practice" or "ollama" are placeholders, not secrets, and would scrub ordinary words.
        self._log.add(entry, [s for s in (self.api_key, bearer(headers)) if s and len(s) >= 12])


def _written(chunk: dict[str, Any]) -> bool:
    """Whether a streamed chunk carries a piece the model wrote (text, reasoning or a tool call's part).

    >>> _written({"choices": [{"delta": {"content": "你好"}}]}), _written({"choices": [{"delta": {"role": "assistant",
    ...          "content": ""}}]}), _written({"choices": []})
    (True, False, False)
    """
    return any(choice["delta"].get(key) for choice in chunk.get("choices") or []
               for key in ("content", "reasoning_content", "tool_calls"))


def utc_now() -> str:
    """The current time in UTC, ISO 8601 with milliseconds: '2026-05-01T12:34:56.789Z' (for the request log only:
    nothing that goes back to a client depends on the clock)."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _model(name: str) -> dict[str, Any]:
    """An OpenAI `model` object for a persona."""
    return {"id": name, "object": "model", "created": wire.CREATED, "owned_by": "practice"}


# ---------------------------------------------------------------------------------------------
# The HTTP layer.


class _Disconnected(Exception):
    """The client went away mid-request; there is nobody to answer."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128
    practice: PracticeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("practice model: connection error from %s", client_address, exc_info=sys.exc_info())


class _Handler(BaseHTTPRequestHandler):
    """Reads a request off the socket, lets `PracticeServer.dispatch` decide, writes the answer."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.practice._lock:
            self.server.practice._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.practice._lock:
            self.server.practice._connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # every method is routed; unknown ones get the API's 404
            return self._serve
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("practice model: " + format, *args)

    def _serve(self) -> None:
        """Handle one request on this connection."""
        practice = self.server.practice
        headers = {k.lower(): v for k, v in self.headers.items()}
        body_error: ApiError | None = None
        try:
            raw = self._read_body(practice.max_body_bytes)
        except ApiError as err:
            raw, body_error = b"", err
            self.close_connection = True
        except (_Disconnected, OSError):
            self.close_connection = True
            return
        response = practice.dispatch(self.command, self.path, headers, raw, body_error)
        try:
            practice.record(self.command, self.path, headers, raw, response)
        except Exception:
            log.exception("practice model: could not write the request log")
        try:
            self._write(response)
        except OSError:
            self.close_connection = True

    def _read_body(self, limit: int) -> bytes:
        """The request body per its framing: `Content-Length`, chunked, or none."""
        encoding = self.headers.get("transfer-encoding")
        if encoding is not None:
            if encoding.strip().lower() != "chunked":
                raise errors.bad_framing(f"unsupported Transfer-Encoding {encoding.strip()!r}")
            return self._read_chunked(limit)
        lengths = set(self.headers.get_all("content-length") or [])
        if not lengths:
            return b""
        length = lengths.pop().strip()
        if lengths or not (length.isascii() and length.isdigit()):
            raise errors.bad_framing("invalid Content-Length header")
        size = int(length)
        if size > limit:
            if size <= _DRAIN_LIMIT:
                self._drain(size)
            raise errors.body_too_large(limit)
        return self._read_exactly(size)

    def _read_exactly(self, size: int) -> bytes:
        """`size` bytes, or 408 on a stalled client / `_Disconnected` on a closed one."""
        try:
            data = self.rfile.read(size)
        except TimeoutError:
            raise errors.timed_out() from None
        if len(data) < size:
            raise _Disconnected()
        return data

    def _drain(self, size: int) -> None:
        """Read and discard `size` bytes (so the client sees our 413 instead of a reset)."""
        while size > 0:
            size -= len(self._read_exactly(min(size, 1 << 16)))

    def _read_chunked(self, limit: int) -> bytes:
        """A `Transfer-Encoding: chunked` body, size-limited."""
        body = bytearray()
        while True:
            line = self._line()
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                raise errors.bad_framing("invalid chunk size") from None
            if size < 0:
                raise errors.bad_framing("invalid chunk size")
            if size == 0:
                for _ in range(100):  # trailers, up to the blank line
                    if self._line() in (b"\r\n", b"\n"):
                        return bytes(body)
                raise errors.bad_framing("too many trailer lines")
            if len(body) + size > limit:
                raise errors.body_too_large(limit)
            body += self._read_exactly(size)
            if self._line() not in (b"\r\n", b"\n"):
                raise errors.bad_framing("chunk not followed by CRLF")

    def _line(self) -> bytes:
        """One framing line (at most 1 KiB)."""
        try:
            line = self.rfile.readline(1024)
        except TimeoutError:
            raise errors.timed_out() from None
        if not line:
            raise _Disconnected()
        if not line.endswith(b"\n"):
            raise errors.bad_framing("line too long")
        return line

    def _head(self, status: int, headers: dict[str, str]) -> bytes:
        """Status line and headers, ready to send."""
        lines = [f"HTTP/1.1 {status} {self.responses.get(status, ('Error',))[0]}",
                 "Server: practice-model", f"Date: {self.date_time_string()}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if self.close_connection:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")

    def _write(self, response: Response) -> None:
        """Send a JSON body in one write, or a stream one event per write."""
        self.log_request(response.status)
        if response.chunks is None:
            if response.pace:
                time.sleep(response.pace)  # `@tps=N`: as long as the stream would have taken
            body = wire.dumps(response.body, pretty=True)
            headers = {"Content-Type": "application/json", "Content-Length": str(len(body)), **response.headers}
            head_only = getattr(self, "command", None) == "HEAD"
            self.wfile.write(self._head(response.status, headers) + (b"" if head_only else body))
            return
        chunked = self.request_version != "HTTP/1.0"
        self.close_connection = self.close_connection or not chunked
        headers = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
                   **({"Transfer-Encoding": "chunked"} if chunked else {}), **response.headers}
        self.wfile.write(self._head(response.status, headers))
        for chunk in [*response.chunks, None]:
            if response.pace and chunk is not None and _written(chunk):
                time.sleep(response.pace)  # `@tps=N`: one word piece at a time
            event = wire.sse(chunk)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event) if chunked else event)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol errors found by `http.server` itself (bad request line, huge headers): JSON too."""
        self.close_connection = True
        err = ApiError(code, message or self.responses.get(code, ("Error",))[0])
        try:
            self._write(Response.error(err))
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------
# One server per process, for notebooks.

_shared: PracticeServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> PracticeServer:
    """The process-wide practice server: started on first use, stopped when the process exits.

    `connect()` uses it in a Jupyter kernel, so the server lives and dies with the kernel.
    """
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = PracticeServer(port=_preferred_port())
            atexit.register(_shared.stop)
            try:
                return _shared.start()
            except OSError:  # the preferred port is taken: any free one will do
                log.warning("practice model: port %s is busy, using a free one", _shared._requested_port)
                _shared = PracticeServer()
                atexit.register(_shared.stop)
        return _shared.start()


def _preferred_port() -> int:
    """`PRACTICE_PORT` from the environment (a fixed port is handy in a classroom), else 0: any free port."""
    try:
        return max(0, int(os.environ.get("PRACTICE_PORT", "0")))
    except ValueError:
        return 0


def last_request(shown_headers: Iterable[str] = ("authorization", "content-type")) -> str:
    """The latest exchange of the shared practice server, readable: what was sent, and the status.

    Only the named headers are shown (the SDK's own headers change with its version). With a
    real provider configured there is no practice log, and the text says so.
    """
    entries = _shared._log.entries(last=1) if _shared is not None else []
    if not entries:
        return "(no request has gone to the practice model in this process)"
    entry = entries[-1]
    headers = {k.lower(): v for k, v in entry["headers"].items()}
    lines = [f"{entry['method']} {entry['path']} → {entry['status']}"]
    lines += [f"{name}: {headers[name]}" for name in shown_headers if name in headers]
    lines.append(json.dumps(entry["request"], indent=2, ensure_ascii=False))
    return "\n".join(lines)
