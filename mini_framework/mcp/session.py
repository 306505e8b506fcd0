"""One MCP server process and the official SDK's client for it, on an event loop in a thread of its own.

    session = Session(["python", "-m", "mcp_server_time"], name="time", env=None)
    listed = session.open()                 # start, handshake, list the tools (blocking; bounded)
    result = await session.call("convert_time", {...})      # from any event loop, or any thread's
    session.close()                         # the SDK stops the process (stdin closed, then TERM, KILL)

Why a thread: `with stdio_tools(...)` must work in a script, in `async with`, and inside Jupyter's running
loop, and an Agent may run its tools on a loop of its own (`run_sync`). The SDK's client is bound to the
loop it was made on, so it gets one that lives as long as the server: a call from elsewhere is handed
over with `run_coroutine_threadsafe`, and cancelling the caller (a tool timeout) cancels the request.

What can go wrong, and what the caller gets (an `MCPServerError` naming the server, never a hang):
- the command cannot start; the server ends, or never answers the handshake within `startup_timeout`;
- the server writes garbage: lines that are not JSON-RPC are skipped (the SDK logs them), bytes that are
  not UTF-8 are replaced (U+FFFD), so one bad byte cannot end the session;
- the server dies mid-call: the call fails at once ("the server ended"), later calls too.
The server's stderr goes to a pipe this side drains, not to the notebook: its last STDERR_KEPT bytes are kept
(a server that floods stderr fills neither memory nor the disk) and its last lines are quoted in errors.
The SDK starts the server in a process group of its own and stops it; on Linux, what is left of that group
afterwards (a child the server forked and forgot) is killed too.

Concessions: a call the server never answers waits for the tool's timeout (the executor's), not less.
Elsewhere than Linux, a server's forgotten children are left to the system (the SDK kills them only when
the server itself will not stop); a process that leaves the group on purpose (a daemon) escapes anywhere.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import re
import signal
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from ..text import visible
from .errors import MCPServerError

__all__ = ["MAX_LISTED", "Session", "minimal_environment"]

MAX_LISTED = 10_000  # tools a server may list before it is refused (a request carries at most 128)
MAX_PAGES = 100  # tools/list pages followed at most
STDERR_KEPT = 64 * 1024  # bytes of the server's stderr kept for error messages (the rest is dropped as it comes)
CLOSE_SECONDS = 10.0  # how long close() waits for the SDK to stop the process (it escalates to SIGKILL in ~4 s)
_PASSED_ON = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "TEMP", "TMP",
              "SYSTEMROOT", "SYSTEMDRIVE", "PATHEXT", "COMSPEC", "WINDIR", "APPDATA", "LOCALAPPDATA", "USERPROFILE")


def minimal_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a server's process gets: where programs and home are, the locale, and `extra`; never the parent's
    other variables (API keys, tokens, passwords).

    >>> env = minimal_environment({"GIT_AUTHOR_NAME": "Ada"})     # whatever the parent has in LLM_API_KEY
    >>> "LLM_API_KEY" in env, env["GIT_AUTHOR_NAME"], "PATH" in env
    (False, 'Ada', True)
    """
    env = {k: os.environ[k] for k in _PASSED_ON if k in os.environ and not os.environ[k].startswith("()")}
    env.update(extra or {})
    return env


class Session:
    """A running MCP server: `open()` it, `await call(...)` its tools from anywhere, `close()` it once."""

    def __init__(self, argv: Sequence[str], *, name: str, env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike[str] | None = None, startup_timeout: float = 10.0) -> None:
        self.argv, self.name, self.cwd = list(argv), name, cwd
        self.env = minimal_environment(env)
        self.startup_timeout = startup_timeout
        self.server_info: dict[str, Any] = {}
        self.instructions: str | None = None
        self.ended: str | None = None  # why the session cannot take calls any more
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._late = False
        self._garbled, self._first_garbled = 0, ""  # lines from the server the SDK could not read
        self._groups: list[int] = []  # the server's process group (its pid: the SDK starts a new session)
        self._stderr = bytearray()  # the last STDERR_KEPT bytes the server wrote to stderr
        self._stderr_done = threading.Event()  # set when its stderr reached end-of-file

    # ------------------------------------------------------------------ lifecycle

    @property
    def started(self) -> bool:
        """Whether open() was called (a Session runs its server once)."""
        return self._thread is not None

    def open(self) -> list[dict[str, Any]]:
        """Start the server, shake hands, and return its whole tool list (each tool as the server's JSON)."""
        try:
            import mcp  # noqa: F401 - the optional `mcp` extra: say so now, not from the session's thread
        except ImportError:
            raise ImportError("MCP servers need the official SDK: pip install -e \".[mcp]\" in this repository, "
                              "or pip install \"mcp>=2.3,<3\"") from None
        _quiet_sdk_logs()
        ready: concurrent.futures.Future[list[dict[str, Any]]] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True, name=f"mcp-{self.name}"[:40])
        self._thread.start()
        try:
            return ready.result(timeout=self.startup_timeout + CLOSE_SECONDS)
        except concurrent.futures.TimeoutError:
            self.close()
            raise self.error(f"did not answer within {self.startup_timeout:g} s") from None
        except MCPServerError:
            self.close()
            raise

    def close(self) -> None:
        """Stop the server (also after a failure; a second close does nothing). Waits at most CLOSE_SECONDS."""
        self.ended = self.ended or "it was closed"
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already finished
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(CLOSE_SECONDS)
        for group in self._groups:  # the server's own process group: whatever is left of it
            with contextlib.suppress(OSError):  # gone already (ProcessLookupError), or not ours to signal
                os.killpg(group, signal.SIGKILL)
        self._groups = []

    def _serve(self, ready: concurrent.futures.Future[list[dict[str, Any]]]) -> None:
        """The session's thread: its own event loop, for as long as the server runs."""
        try:
            asyncio.run(self._main(ready))
        except BaseException as exc:  # noqa: B036 - whatever escapes, the caller of open() hears of it
            if not ready.done():
                ready.set_exception(self.error(self.reason(exc)))

    async def _main(self, ready: concurrent.futures.Future[list[dict[str, Any]]]) -> None:
        """The session's thread: connect, list, then wait for close() while calls come in."""
        from mcp import Client, StdioServerParameters  # the optional `mcp` extra: imported when a server starts
        from mcp.client.stdio import stdio_client

        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        late = self._loop.call_later(self.startup_timeout, self._too_late, asyncio.current_task())
        errlog: TextIO | None = None
        try:
            params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=self.env,
                                           cwd=None if self.cwd is None else os.fspath(self.cwd),
                                           encoding_error_handler="replace")
            errlog = self._stderr_pipe()
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, cache=None, message_handler=self._on_message) as client:
                self._groups = _spawned_here()
                errlog.close()  # the server has its copy; ours would keep the pipe open after it ends
                self._describe(client)
                listed = await self._list(client)
                late.cancel()
                self._client = client
                ready.set_result(listed)
                await self._stop.wait()
        except BaseException as exc:  # noqa: B036 - the thread's last word: report it, never raise into nowhere
            late.cancel()
            reason = f"did not answer within {self.startup_timeout:g} s" if self._late else self.reason(exc)
            reason += self._garbage()
            self.ended = self.ended or reason
            if not ready.done():
                ready.set_exception(self.error(reason))
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._client = None
            if errlog is not None:
                errlog.close()  # (a server that could not be started)

    def _stderr_pipe(self) -> TextIO:
        """The write end of a pipe for the server's stderr; a thread keeps the last STDERR_KEPT bytes read."""
        read_end, write_end = os.pipe()

        def drain() -> None:
            with open(read_end, "rb", buffering=0) as pipe:
                while chunk := pipe.read(65536):
                    self._stderr += chunk
                    del self._stderr[:-STDERR_KEPT]
            self._stderr_done.set()

        threading.Thread(target=drain, daemon=True, name=f"mcp-stderr-{self.name}"[:40]).start()
        return open(write_end, "w", encoding="utf-8", errors="replace")

    def _too_late(self, task: asyncio.Task[Any] | None) -> None:
        """The start-up took longer than `startup_timeout`: stop waiting (the SDK then stops the process)."""
        self._late = True
        if task is not None:
            task.cancel()

    def _describe(self, client: Any) -> None:
        """Keep what the server said about itself (shown to the person who approves it; never trusted)."""
        info = client.server_info
        self.server_info = info.model_dump(mode="json", exclude_none=True) if info is not None else {}
        self.instructions = client.instructions

    async def _list(self, client: Any) -> list[dict[str, Any]]:
        """Every page of the server's tool list, as plain JSON (what is fingerprinted and approved)."""
        tools: list[dict[str, Any]] = []
        cursor = None
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
            if len(tools) > MAX_LISTED:
                raise self.error(f"lists more than {MAX_LISTED:,} tools")
            cursor = page.next_cursor
            if not cursor:
                return tools
        raise self.error(f"sends more than {MAX_PAGES} pages of tools")

    async def _on_message(self, message: Any) -> None:
        """Lines the SDK could not read (a changed list needs no notice: it is read before and after each call)."""
        if isinstance(message, Exception):  # a line that is not JSON-RPC: skipped, and counted for errors
            self._garbled += 1
            if self._garbled == 1:
                found = re.search(r"input_value=(.{0,120}?), input_type", str(message))
                self._first_garbled = found.group(1) if found else " ".join(str(message).split())[:120]

    def _garbage(self) -> str:
        """'; it wrote 2 lines that are not JSON-RPC, the first: ...' (for an error), or ''."""
        if not self._garbled:
            return ""
        return (f"; it wrote {self._garbled} line(s) that are not JSON-RPC, the first: "
                f"{visible(self._first_garbled)}")

    # ------------------------------------------------------------------ calls

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call one tool and return the SDK's CallToolResult; any failure is an MCPServerError. Cancelling the
        caller (the executor's timeout) cancels the request."""
        return await self._submit(self._call(tool, arguments))

    async def relist(self) -> list[dict[str, Any]]:
        """The server's tool list now."""
        return await self._submit(self._relist())

    async def _submit(self, work: Any) -> Any:
        loop = self._loop
        if self.ended or loop is None or loop.is_closed():
            work.close()
            raise self.error(f"cannot take calls: {self.ended or 'it is not running'}")
        try:
            future = asyncio.run_coroutine_threadsafe(work, loop)
        except RuntimeError:  # the loop stopped in between
            work.close()
            raise self.error(f"cannot take calls: {self.ended or 'it stopped'}") from None
        return await asyncio.wrap_future(future)  # cancelling this cancels the request on the session's loop

    async def _call(self, tool: str, arguments: dict[str, Any]) -> Any:
        client = self._client
        if client is None:
            raise self.error(f"cannot take calls: {self.ended or 'it is not running'}")
        try:
            return await client.call_tool(tool, arguments)  # the executor's timeout cancels it
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: B036 - an SDK error, a dead pipe, a malformed answer
            reason = self.reason(exc)
            if reason == "it ended":
                self.ended = reason = "it ended during a call"
            raise self.error(reason) from None

    async def _relist(self) -> list[dict[str, Any]]:
        client = self._client
        if client is None:
            raise self.error(f"cannot list tools: {self.ended or 'it is not running'}")
        try:
            return await self._list(client)
        except MCPServerError:
            raise
        except Exception as exc:
            raise self.error(self.reason(exc)) from None

    # ------------------------------------------------------------------ errors

    def reason(self, exc: BaseException) -> str:
        """One line for what went wrong: the innermost exception of an ExceptionGroup, without a traceback."""
        while getattr(exc, "exceptions", None):  # an ExceptionGroup (a built-in from Python 3.11)
            exc = exc.exceptions[0]  # type: ignore[attr-defined]
        if isinstance(exc, MCPServerError):
            return exc.reason
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
            return f"did not answer within {self.startup_timeout:g} s" if self._client is None else "timed out"
        if isinstance(exc, FileNotFoundError):
            return f"could not be started: no program {self.argv[0]!r}"
        if isinstance(exc, OSError):
            return f"could not be started: {exc.strerror or exc}"
        text = re.sub(r"\s*For further information visit \S+", "", " ".join(str(exc).split()))[:300]  # pydantic's
        if "Connection closed" in text:
            return "ended before it answered" if self._client is None else "it ended"
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    def error(self, reason: str) -> MCPServerError:
        """An MCPServerError naming this server, with the last lines it wrote to stderr."""
        return MCPServerError(self.name, reason, self.stderr_tail())

    def stderr_tail(self, lines: int = 5) -> str:
        """The last lines the server wrote to stderr (tracebacks included: they are for you, not the model)."""
        if self._client is None:  # it ended (or never ran): what it wrote last is read to the end first
            self._stderr_done.wait(0.5)
        text = bytes(self._stderr[-4000:]).decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])


def _spawned_here() -> list[int]:
    """The processes this thread started (Linux: /proc/self/task/<tid>/children), else none."""
    try:
        listed = Path(f"/proc/self/task/{threading.get_native_id()}/children").read_text()
    except (OSError, AttributeError):
        return []
    return [int(pid) for pid in listed.split()]


def _quiet_sdk_logs() -> None:
    """The SDK logs (with tracebacks) each line a server garbles; with no handler of yours, Python's last
    resort prints them into the notebook. A NullHandler on its logger keeps them for handlers you add."""
    sdk = logging.getLogger("mcp")
    if not sdk.handlers:
        sdk.addHandler(logging.NullHandler())
