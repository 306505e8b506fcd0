"""Running the tool calls of one model reply: every call answered exactly once, nothing ever raised.

    executor = Executor([get_weather, add_numbers], timeout=10)
    results = await executor.run(message.tool_calls)      # concurrently, results in call order
    messages += [r.message for r in results]              # one role:"tool" message per call id

What can go wrong with a call, and what the model reads back (always a tool message with its id):

    unknown tool          the available tools, and the closest name ("did you mean ...")
    bad arguments         repaired and coerced when possible (arguments.py), else what to fix
    too many bad tries    a final "stop calling it" once a tool's retry budget is spent
    the tool raises       `format_error(exc, call)`: a JSON envelope, no traceback, no secrets
    the tool hangs        a timeout message; the call is abandoned

The calls of one reply run concurrently: async tools as tasks, sync tools in worker threads,
at most `max_concurrency` at a time. The full traceback of a failing tool goes to the
`mini_framework` logger, never to the model.

Concession: Python cannot kill a thread, so a sync tool that times out keeps running in the
background; its result is discarded. Give blocking I/O its own timeout inside the tool too.
"""
from __future__ import annotations

import asyncio
import difflib
import functools
import json
import logging
import os
import re
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from pydantic import BaseModel

from .arguments import ArgumentsError, prepare
from .concurrency import in_thread, run_sync
from .tools import Tool, as_tool

log = logging.getLogger("mini_framework")


class ToolError(Exception):
    """Raise this in a tool for a failure the model should read as is.

    >>> str(ToolError("天气服务暂时不可用，请稍后再试"))
    '天气服务暂时不可用，请稍后再试'
    """


def _scrub(exc: BaseException) -> None:
    """Take secrets out of an exception's message, in place, before it is logged."""
    try:
        exc.args = tuple(redact_secrets(a) if isinstance(a, str) else a for a in exc.args)
    except Exception:  # an exception class that won't let its args be replaced: describe_exception still redacts
        pass


class ToolRaised(Exception):
    """Carries what a tool raised out of `asyncio.wait_for`, so it can't be mistaken for a timeout."""

    def __init__(self, original: Exception) -> None:
        super().__init__(original)
        self.original = original


@dataclass(frozen=True)
class ToolCall:
    """One call a model asked for, whatever shape it arrived in."""

    id: str  # the tool_call_id the answer must carry
    name: str  # the function name the model chose (maybe one that does not exist)
    arguments: Any  # as sent: normally a JSON string; some providers send an object

    @classmethod
    def of(cls, call: Any) -> ToolCall:
        """From an SDK object or a dict in the Chat Completions shape.

        >>> ToolCall.of({"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}})
        ToolCall(id='call_1', name='f', arguments='{}')
        """
        if isinstance(call, ToolCall):
            return call
        if isinstance(call, BaseModel):
            call = call.model_dump()
        function = call.get("function") or {}
        return cls(str(call.get("id") or ""), str(function.get("name") or ""), function.get("arguments"))


@dataclass
class ToolResult:
    """What happened to one call: the text the model reads, plus what your code may want to know."""

    call: ToolCall
    content: str  # the tool message content
    ok: bool  # False for any failure below
    failure: str | None = None  # "unknown_tool" | "invalid_arguments" | "gave_up" | "exception" | "timeout"
    value: Any = None  # what the function returned (when ok)
    seconds: float = 0.0  # wall time of this call
    extra: dict[str, Any] = field(default_factory=dict)  # room for later steps (images, spilled files)

    @property
    def message(self) -> dict[str, Any]:
        """The `role: "tool"` message that answers the call."""
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.content}


# ----------------------------------------------------------------------------- what the model reads

def envelope(status: str, **fields: Any) -> str:
    """The article's uniform result shape, as JSON text.

    >>> envelope("error", error="城市不能为空")
    '{"status": "error", "error": "城市不能为空"}'
    """
    return json.dumps({"status": status, **fields}, ensure_ascii=False, default=str)


def to_text(value: Any) -> str:
    """A tool's return value as tool message content: strings as they are, the rest as JSON.

    >>> to_text({"temperature": 22}), to_text("晴"), to_text(3.0)
    ('{"temperature": 22}', '晴', '3.0')
    """
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def success_envelope(value: Any) -> str:
    """An alternative `format_result`: successes wrapped too, `{"status": "success", "data": ...}`."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return envelope("success", data=value)


_SECRETS = re.compile(r"(?i)(sk-[A-Za-z0-9_-]{8,}|bearer\s+[A-Za-z0-9._~+/=-]{8,}"
                      r"|(?:api[_-]?key|token|secret|password|passwd)\s*[=:]\s*['\"]?[^\s'\",;&]+)")
_SOURCE_FILE = re.compile(r"(?:[A-Za-z]:)?[\\/][^\s'\"]*\.pyw?(?::\d+)?")
_PRIVATE_DIRS = tuple(sorted({str(Path(p).resolve()) for p in (
    sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"], Path(__file__).parent)}, key=len, reverse=True))


def redact_secrets(text: str) -> str:
    """Text with API keys, tokens and passwords taken out (what the local log may keep: paths).

    >>> redact_secrets("POST /v1?api_key=abc123def456 failed")
    'POST /v1?[redacted] failed'
    """
    text = _SECRETS.sub("[redacted]", text)
    for name, value in os.environ.items():  # the configured key itself, whatever its shape
        if len(value) >= 12 and ("KEY" in name or "TOKEN" in name or "SECRET" in name) and value in text:
            text = text.replace(value, "[redacted]")
    return text


def redact(text: str) -> str:
    """What a model may read: no secrets, no paths of this installation, no source file paths.

    >>> redact("401 for key sk-abc123def456ghi789 in /srv/app/weather.py:12, reading /data/a.csv")
    '401 for key [redacted] in <source file>, reading /data/a.csv'
    """
    text = redact_secrets(text)
    for folder in _PRIVATE_DIRS:
        text = re.sub(re.escape(folder) + r"[^\s'\"]*", "<internal>", text)
    return _SOURCE_FILE.sub("<source file>", text)  # where the code lives is no business of the model


def describe_exception(exc: BaseException, tool_name: str) -> str:
    """One sentence about a failure, for the model: the message a ToolError carries, else type and text.

    >>> describe_exception(KeyError("city"), "get_weather")
    "get_weather failed: KeyError 'city'. Check the arguments, or tell the user it did not work."
    """
    if isinstance(exc, ToolError):
        return redact(str(exc))[:2000]
    text = redact(str(exc)).strip()[:500]
    what = f"{type(exc).__name__} {text}".strip()
    return f"{tool_name} failed: {what}. Check the arguments, or tell the user it did not work."


def error_envelope(exc: BaseException, call: ToolCall) -> str:
    """The default `format_error`: an exception as `{"status": "error", "error": ...}`, safe to show a model."""
    return envelope("error", error=describe_exception(exc, call.name))


def unknown_tool_message(name: str, available: Iterable[str]) -> str:
    """The answer to a call of a tool that does not exist: the real tools, and the closest name.

    >>> unknown_tool_message("get_current_weather", ["get_weather", "add_numbers"])
    "Unknown tool 'get_current_weather'. Available tools: get_weather, add_numbers. Did you mean 'get_weather'?"
    """
    names = list(available)
    text = f"Unknown tool {name!r}. Available tools: {', '.join(names) if names else 'none'}."
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"{text} Did you mean {close[0]!r}?" if close else f"{text} Use one of these, or answer without a tool."


# ----------------------------------------------------------------------------- running calls

ErrorFormatter = Callable[[BaseException, ToolCall], str]
ResultFormatter = Callable[[Any], str]


class Executor:
    """Runs tool calls against a set of tools. Keep one per run: it counts each tool's failed tries.

    >>> from mini_framework.tools import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     '''Add two integers.'''
    ...     return a + b
    >>> [r.content for r in Executor([add]).run_sync([ToolCall("call_1", "add", '{"a": 2, "b": "三"}')])]
    ['5']
    """

    def __init__(
        self,
        tools: Iterable[Any],
        *,
        timeout: float | None = 60.0,
        max_concurrency: int = 8,
        retry_budget: int = 2,
        format_error: ErrorFormatter = error_envelope,
        format_result: ResultFormatter = to_text,
    ) -> None:
        self.tools: dict[str, Tool] = {t.name: t for t in map(as_tool, tools)}
        self.timeout = timeout  # default seconds per call; a tool's own `timeout` wins
        self.max_concurrency = max_concurrency  # calls running at the same time, at most
        self.retry_budget = retry_budget  # invalid tries per tool that get a "fix it" answer
        self.format_error = format_error  # exception -> what the model reads
        self.format_result = format_result  # return value -> what the model reads
        self.failures: dict[str, int] = {}  # tool name -> invalid tries so far

    async def run(self, calls: Iterable[Any]) -> list[ToolResult]:
        """Run the calls of one reply concurrently; one result per call, in the calls' order."""
        calls = [ToolCall.of(c) for c in calls]
        limit = asyncio.Semaphore(max(1, self.max_concurrency))

        async def limited(call: ToolCall) -> ToolResult:
            async with limit:
                return await self.run_one(call)

        outcomes = await asyncio.gather(*(limited(c) for c in calls), return_exceptions=True)
        return [o if isinstance(o, ToolResult) else self._failed(c, "exception", error_envelope(o, c))
                for c, o in zip(calls, outcomes)]

    def run_sync(self, calls: Iterable[Any]) -> list[ToolResult]:
        """`run` for code without an event loop (or inside Jupyter's)."""
        return run_sync(self.run(calls))

    async def run_one(self, call: ToolCall) -> ToolResult:
        """One call, start to finish; never raises."""
        started = time.perf_counter()
        result = await self._attempt(call)
        result.seconds = time.perf_counter() - started
        return result

    async def _attempt(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            return self._invalid(call, envelope("error", error=unknown_tool_message(call.name, self.tools)),
                                 "unknown_tool")
        try:
            validated = prepare(tool, call.arguments)
        except ArgumentsError as problem:
            return self._invalid(call, envelope("error", error=str(problem)), "invalid_arguments")
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        try:
            args, kwargs = tool.bind(validated)
            value = await asyncio.wait_for(self._invoke(tool, args, kwargs), timeout)
            return ToolResult(call, self.format_result(value), ok=True, value=value)
        except asyncio.TimeoutError:  # only our deadline: a tool's own TimeoutError arrives as ToolRaised
            message = (f"{tool.name} did not finish within {timeout:g} s and was stopped. "
                       "Try again later, or tell the user the service is not responding.")
            return self._failed(call, "timeout", envelope("error", error=message))
        except Exception as exc:  # the tool's own bug or its upstream's: the model gets the envelope
            exc = exc.original if isinstance(exc, ToolRaised) else exc
            _scrub(exc)  # the log keeps the traceback, not the keys in the message
            log.warning("tool %s failed (call %s)", tool.name, call.id, exc_info=exc)
            return self._failed(call, "exception", self._format_error(exc, call))

    async def _invoke(self, tool: Tool, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Await an async tool; run a sync one in a worker thread. What the tool raises comes out as ToolRaised."""
        try:
            if tool.is_async:
                return await tool.func(*args, **kwargs)
            result = await in_thread(lambda: tool.func(*args, **kwargs))
            return await result if asyncio.iscoroutine(result) else result
        except Exception as exc:  # incl. TimeoutError, which must not look like our own deadline
            raise ToolRaised(exc) from exc

    def _format_error(self, exc: BaseException, call: ToolCall) -> str:
        """`format_error`, falling back to the default envelope if a custom one fails itself."""
        try:
            return self.format_error(exc, call)
        except Exception:
            log.warning("format_error failed for call %s; using the default envelope", call.id, exc_info=True)
            return error_envelope(exc, call)

    def _invalid(self, call: ToolCall, content: str, failure: str) -> ToolResult:
        """A call the model got wrong: count it against the tool's budget, and stop it when spent."""
        tries = self.failures[call.name] = self.failures.get(call.name, 0) + 1
        if tries > self.retry_budget:
            message = (f"{call.name!r} has now failed {tries} times because of how it was called. Do not call "
                       f"it again in this conversation: answer the user with what you have, and say what went wrong.")
            return self._failed(call, "gave_up", envelope("error", error=message))
        return self._failed(call, failure, content)

    @staticmethod
    def _failed(call: ToolCall, failure: str, content: str) -> ToolResult:
        return ToolResult(call, content, ok=False, failure=failure)
