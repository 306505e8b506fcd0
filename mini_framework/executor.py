"""Running the tool calls of one model reply: every call answered exactly once, nothing ever raised.

    executor = Executor([get_weather, add_numbers], timeout=10)
    results = await executor.run(calls)                   # concurrently, results in call order
    messages += [r.message for r in results]              # one role:"tool" message per call id

What can go wrong with a call, and what the model reads back (always a tool message with its id):

    unknown tool          the available tools, and the closest name ("did you mean ...")
    bad arguments         repaired and coerced when possible (arguments.py), else what to fix
    too many bad tries    a final "stop calling it" once a tool's retry budget is spent
    the tool raises       `format_error(exc, call)`: a JSON envelope, no traceback, no secrets
    the tool hangs        a timeout message; the call is abandoned, not waited for
    a bad image           (with a MediaStore) a path outside the allowed folders, a private URL, a
                          file that is not an image: what was refused and why; nothing read or fetched

Anything a tool raises is a failure of that call, `SystemExit` (argparse raises it) included; only
KeyboardInterrupt and cancellation stop a run. A tool that succeeds resets its retry budget.
The calls of one reply run concurrently: async tools as tasks, sync tools in worker threads,
at most `max_concurrency` at a time. The full traceback of a failing tool goes to the
`mini_framework` logger (secrets redacted), never to the model.

Concession: Python cannot kill a thread, nor a coroutine that ignores cancellation: a timed-out
call keeps running in the background and its result is discarded. Give blocking I/O its own
timeout inside the tool too.
"""
from __future__ import annotations

import asyncio
import difflib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Literal

from pydantic import BaseModel

from .arguments import ArgumentsError, prepare_with_repairs
from .budget.cache import ResultCache, cache_key
from .budget.spill import DEFAULT_THRESHOLD, spill
from .concurrency import in_thread, run_sync
from .media.store import Found, Media, MediaError, MediaStore, find_media
from .redaction import redact, redact_secrets
from .replies import ToolCall
from .tools import Tool, as_tool

__all__ = ["Executor", "Failure", "ToolCall", "ToolError", "ToolResult", "describe_exception", "envelope",
           "error_envelope", "result_text", "success_envelope", "to_text", "unknown_tool_message"]

log = logging.getLogger("mini_framework")

Failure = Literal["unknown_tool", "invalid_arguments", "gave_up", "exception", "timeout", "repeated", "not_run",
                  "truncated", "bad_media", "denied"]


class ToolError(Exception):
    """Raise this in a tool for a failure the model should read as is.

    >>> str(ToolError("天气服务暂时不可用，请稍后再试"))
    '天气服务暂时不可用，请稍后再试'
    """


@dataclass
class ToolResult:
    """What happened to one call: the text the model reads, plus what your code may want to know."""

    call: ToolCall
    content: str  # the tool message content
    ok: bool  # False for any failure below
    failure: Failure | None = None  # what went wrong, when not ok
    value: Any = None  # what the function returned (when ok)
    seconds: float = 0.0  # wall time of this call
    repairs: list[str] = field(default_factory=list)  # what was fixed in the arguments before the call ran
    attachments: list[dict[str, Any]] = field(default_factory=list)  # parts a format_result returned beyond text
    media: list[Media] = field(default_factory=list)  # images the tool returned, registered (media.py)
    cached: bool = False  # True: answered from the result cache, the tool did not run (cache.py)

    @property
    def message(self) -> dict[str, Any]:
        """The `role: "tool"` message that answers the call."""
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.content}


# ----------------------------------------------------------------------------- what the model reads

def envelope(status: str, **fields: Any) -> str:
    """A uniform result shape, as JSON text.

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
    except (TypeError, ValueError, RecursionError):
        return redact(exception_text(value))  # its own text, which may carry anything: keys, paths


def result_text(value: Any, call: ToolCall, tool: Tool) -> str | list[dict[str, Any]]:
    """The default `format_result`: the value as text (`to_text`), whatever the tool and call.

    A `format_result(value, call, tool)` may return a string, or a list of content parts
    (`{"type": "text", ...}`, `{"type": "image_url", ...}`): text parts become the tool message,
    the others are sent after the tool messages, in one user message marked as tool output.
    """
    return to_text(value)


def success_envelope(value: Any, call: ToolCall, tool: Tool) -> str:
    """An alternative `format_result`: successes wrapped too, `{"status": "success", "data": ...}`."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return envelope("success", data=value)


def exception_text(exc: Any) -> str:
    """`str(exc)`, or a placeholder for an exception (or any value) whose `__str__` itself fails.

    >>> class Broken(Exception):
    ...     def __str__(self):
    ...         raise ValueError
    >>> exception_text(KeyError("city")), exception_text(Broken())
    ("'city'", '(its message could not be read)')
    """
    try:
        return str(exc)
    except (KeyboardInterrupt, asyncio.CancelledError):
        raise
    except BaseException:  # even SystemExit from a hostile __str__ is only an unreadable message
        return "(its message could not be read)"


def describe_exception(exc: BaseException, tool_name: str) -> str:
    """One sentence about a failure, for the model: the message a ToolError carries, else type and text.

    >>> describe_exception(KeyError("city"), "get_weather")
    "get_weather failed: KeyError 'city'. Check the arguments, or tell the user it did not work."
    """
    if isinstance(exc, ToolError):
        return redact(exception_text(exc))[:2000]
    text = redact(exception_text(exc)).strip()[:500]
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
    names = [str(n) for n in available]
    name = str(name)
    text = f"Unknown tool {name!r}. Available tools: {', '.join(names) if names else 'none'}."
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"{text} Did you mean {close[0]!r}?" if close else f"{text} Use one of these, or answer without a tool."


_TEXT_ATTRIBUTES = ("cmd", "output", "stdout", "stderr", "filename", "filename2", "msg", "reason", "text")


def _scrub(exc: BaseException) -> None:
    """Take secrets out of an exception and the ones it was raised from, in place, before it is logged:
    the messages, and the attributes that exceptions such as CalledProcessError print."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 20:
        seen.add(id(current))
        try:
            current.args = tuple(_scrubbed(a) for a in current.args)
            for name in _TEXT_ATTRIBUTES:
                value = getattr(current, name, None)
                if isinstance(value, (str, bytes, list, tuple)):
                    setattr(current, name, _scrubbed(value))
        except Exception:  # an exception class that won't let its fields be replaced: what the model reads is
            pass          # redacted anyway (describe_exception)
        current = current.__cause__ or current.__context__


def _scrubbed(value: Any) -> Any:
    """A string (or bytes, or a command line as a list) with secrets taken out; anything else as it is."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, bytes):
        return redact_secrets(value.decode("utf-8", "replace"))
    if isinstance(value, (list, tuple)):
        return type(value)(_scrubbed(v) for v in value)
    return value


# ----------------------------------------------------------------------------- running calls

ErrorFormatter = Callable[[BaseException, ToolCall], str]
ResultFormatter = Callable[[Any, ToolCall, Tool], "str | list[dict[str, Any]]"]
LAST_RESORT = envelope("error", error="The tool failed, and so did describing the failure.")
MAX_IMAGES = 16  # images one tool result may return
# The first words of a user message that carries tool output (images, descriptions), not the user's words:
# features that add such a message start it with this, and history trimming keeps it with its tool messages.
TOOL_OUTPUT_LABEL = "Tool output, not a message from the user"
LOADING_SLOTS = 4  # images read or fetched at the same time, per executor


@dataclass
class _Outcome:
    """What running a tool's function came to: a value, or what it raised."""

    value: Any = None
    error: BaseException | None = None


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
        format_result: ResultFormatter = result_text,
        media: MediaStore | None = None,
        cache: ResultCache | None = None,
        spill_dir: str | os.PathLike[str] | None = None,
        can_read_files: bool = False,
    ) -> None:
        self.tools: dict[str, Tool] = tools_by_name(tools)
        self.timeout = timeout  # default seconds per call; a tool's own `timeout` wins
        self.max_concurrency = max_concurrency  # calls running at the same time, at most
        self.retry_budget = retry_budget  # invalid tries in a row per tool that get a "fix it" answer
        self.format_error = format_error  # exception -> what the model reads
        self.format_result = format_result  # (value, call, tool) -> what the model reads
        self.failures: dict[str, int] = {}  # tool name -> invalid tries since its last success
        self.media = media  # where returned images are read and registered; None: images are not looked for
        self.cache = cache  # results of tools made with @tool(cache=seconds); None: nothing is reused
        self.spill_dir = spill_dir  # where too-long text results go (None: the temporary folder)
        self.can_read_files = can_read_files  # whether the model has a tool to read a spilled result
        self.round_bytes = 0
        self.loading: asyncio.Semaphore | None = None

    async def run(self, calls: Iterable[Any]) -> list[ToolResult]:
        """Run the calls of one reply concurrently; one result per call, in the calls' order."""
        calls = [_readable(c) for c in calls]
        limit = asyncio.Semaphore(max(1, self.max_concurrency))
        self.round_bytes = 0  # bytes of images loaded for this reply's calls (bounded by the media policy)
        self.loading = asyncio.Semaphore(LOADING_SLOTS)  # bound to this run's event loop: made here, dropped after

        async def limited(call: ToolCall) -> ToolResult:
            async with limit:
                return await self.run_one(call)

        try:
            outcomes = await asyncio.gather(*(limited(c) for c in calls), return_exceptions=True)
        finally:
            self.loading = None
        results = []
        for call, outcome in zip(calls, outcomes):
            if isinstance(outcome, ToolResult):
                results.append(outcome)
            else:  # a bug of ours or a KeyboardInterrupt-free surprise: still an answer for this id
                log.error("running call %s failed unexpectedly", call.id, exc_info=outcome)
                results.append(self._failed(call, "exception", self._format_error(outcome, call)))
        return results

    def run_sync(self, calls: Iterable[Any]) -> list[ToolResult]:
        """`run` for code without an event loop (or inside Jupyter's)."""
        return run_sync(self.run(calls))

    async def run_one(self, call: ToolCall) -> ToolResult:
        """One call, start to finish; never raises (except for cancellation)."""
        started = time.perf_counter()
        result = await self._attempt(call)
        result.seconds = time.perf_counter() - started
        return result

    async def _attempt(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            message = unknown_tool_message(call.name, self.tools)
            return self._invalid(call, "unknown_tool", envelope("error", error=message))
        try:
            validated, repairs = prepare_with_repairs(tool, call.arguments)
        except ArgumentsError as problem:
            return self._invalid(call, "invalid_arguments", envelope("error", error=str(problem)))
        key = cache_key(tool.name, validated) if tool.cache and self.cache is not None else None
        if key is not None and self.cache is not None and (hit := self.cache.get(key)) is not None:
            return ToolResult(call, hit.content, ok=True, value=hit.value, repairs=repairs, cached=True)
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        task = asyncio.ensure_future(self._guarded(tool, validated))
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not done:
            task.cancel()  # abandoned: a tool that ignores cancellation runs on, unwatched
            message = (f"{tool.name} did not finish within {timeout:g} s and was stopped. "
                       "Try again later, or tell the user the service is not responding.")
            if tool.side_effects or tool.requires_approval is not False:  # it may have sent, paid, written already
                message = (f"{tool.name} did not finish within {timeout:g} s: whether it did what it was asked is "
                           "unknown (it may still complete). Do not call it again; tell the user to check "
                           "before anything is retried.")
            return self._failed(call, "timeout", envelope("error", error=message), repairs)
        outcome = task.result()
        if outcome.error is None:
            value, found = _find_media(outcome.value) if self.media is not None else (outcome.value, [])
            media, problems = await self._load_media(found, tool.name)
            if not media and not problems:
                value = outcome.value  # an older tool's {"path": ...} that is not an image: plain data
            try:
                content, attachments = _content(self.format_result(value, call, tool)) if value is not None \
                    else ("", [])
            except (KeyboardInterrupt, asyncio.CancelledError):
                raise
            except BaseException as exc:  # a formatter's bug (even SystemExit) is reported like the tool's own
                outcome.error = exc
            else:
                self.failures.pop(tool.name, None)  # it works again: a fresh retry budget
                lines = [content] if content else []
                lines += [f"[image {m.label()}]" for m in media]
                if problems:
                    message = (f"{tool.name} returned an image that cannot be used: {'; '.join(problems)}. Use "
                               "an image inside the allowed folders or at a public http(s) URL, or tell the user.")
                    return ToolResult(call, envelope("error", error=message, output="\n".join(lines) or None),
                                      ok=False, failure="bad_media", value=outcome.value, repairs=repairs,
                                      media=media)
                if tool.too_long_to_file and isinstance(outcome.value, str) and not media and not attachments:
                    lines = [await self._spilled("\n".join(lines), tool)]
                if key is not None and self.cache is not None and not media and not attachments and tool.cache:
                    self.cache.put(key, tool.cache, "\n".join(lines), outcome.value)
                return ToolResult(call, "\n".join(lines), ok=True, value=outcome.value, repairs=repairs,
                                  attachments=attachments, media=media)
        _scrub(outcome.error)  # the log keeps the traceback, not the keys in the message
        log.warning("tool %s failed (call %s)", tool.name, call.id, exc_info=outcome.error)
        return self._failed(call, "exception", self._format_error(outcome.error, call), repairs)

    async def _spilled(self, text: str, tool: Tool) -> str:
        """A long text result cut for the model, the full text saved to a file (spill.py), in a thread."""
        limit = DEFAULT_THRESHOLD if tool.too_long_to_file is True else int(tool.too_long_to_file)
        cut = await in_thread(partial(spill, text, tool.name, threshold=limit, folder=self.spill_dir,
                                      can_read_files=self.can_read_files))
        return text if cut is None else cut.content

    async def _load_media(self, found: list[Found], tool_name: str) -> tuple[list[Media], list[str]]:
        """Read and register the images a tool returned, concurrently: (registered, why others were refused).
        An older tool's {"path": ...} that cannot be read is not an image after all, and no problem."""
        store = self.media
        if store is None or not found:
            return [], []
        if len(found) > MAX_IMAGES:
            return [], [f"{len(found)} images in one result, more than {MAX_IMAGES}"]

        def load(item: Found) -> Media | str | None:
            try:
                return store.load(item, tool_name)
            except MediaError as error:
                return redact(str(error)) if item.explicit else None
            except Exception as error:  # a bug of ours: refused, logged, never raised into the run
                log.warning("loading an image from %s failed", tool_name, exc_info=True)
                return f"an image could not be read ({type(error).__name__})" if item.explicit else None

        budget = store.policy.max_round_bytes
        over = f"the images of this reply's calls add up to more than {budget:,} bytes"
        slots = self.loading or asyncio.Semaphore(LOADING_SLOTS)  # run_one called on its own: its own slots

        async def one(item: Found) -> Media | str | None:
            async with slots:  # a few images in memory at a time, and none read past the budget
                if self.round_bytes > budget:
                    return over
                try:  # each fetch has its own deadline; this one also covers a hung name lookup
                    outcome = await asyncio.wait_for(in_thread(partial(load, item)), store.policy.timeout + 5)
                except asyncio.TimeoutError:
                    return "loading the image took too long" if item.explicit else None
                if isinstance(outcome, Media):
                    self.round_bytes += len(outcome.data)
                    if self.round_bytes > budget:  # the results keep their images: memory, too
                        return over
                return outcome

        outcomes = await asyncio.gather(*(one(item) for item in found))
        media = [o for o in outcomes if isinstance(o, Media)]
        problems = list(dict.fromkeys(o for o in outcomes if isinstance(o, str)))
        return media, problems

    @staticmethod
    async def _guarded(tool: Tool, validated: BaseModel) -> _Outcome:
        """Run the tool; whatever it raises comes back as the outcome (cancellation and Ctrl-C excepted)."""
        try:
            return _Outcome(value=await tool.invoke(validated))
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:  # SystemExit and GeneratorExit too: a tool failure like any other
            cause = exc.__cause__
            if isinstance(exc, RuntimeError) and isinstance(cause, (StopIteration, StopAsyncIteration)):
                return _Outcome(error=cause)  # raised by the tool, wrapped on its way (PEP 479, in_thread)
            return _Outcome(error=exc)

    def _format_error(self, exc: BaseException, call: ToolCall) -> str:
        """`format_error`, falling back to the default envelope, and to a fixed text if even that fails."""
        try:
            text = self.format_error(exc, call)
            if isinstance(text, str):
                return text
            log.warning("format_error returned %s, not text, for call %s; using the default envelope",
                        type(text).__name__, call.id)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException:
            log.warning("format_error failed for call %s; using the default envelope", call.id, exc_info=True)
        try:
            return error_envelope(exc, call)
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException:
            return LAST_RESORT

    def refuse(self, call: ToolCall, problem: str) -> ToolResult:
        """The answer to a call whose arguments were found invalid before it reached the executor (the
        approval gate checks them first): the model reads `problem`, and the tool's retry budget counts it."""
        return self._invalid(call, "invalid_arguments", envelope("error", error=problem))

    def _invalid(self, call: ToolCall, failure: Failure, content: str) -> ToolResult:
        """A call the model got wrong: count it against the tool's budget, and stop it when spent."""
        tries = self.failures[call.name] = self.failures.get(call.name, 0) + 1
        if tries > self.retry_budget:
            message = (f"{call.name!r} has now failed {tries} times because of how it was called. Do not call "
                       f"it again in this conversation: answer the user with what you have, and say what went wrong.")
            return self._failed(call, "gave_up", envelope("error", error=message))
        return self._failed(call, failure, content)

    @staticmethod
    def _failed(call: ToolCall, failure: Failure, content: str, repairs: list[str] | None = None) -> ToolResult:
        return ToolResult(call, content, ok=False, failure=failure, repairs=repairs or [])


def tools_by_name(tools: Iterable[Any]) -> dict[str, Tool]:
    """Tools (or plain functions) by name; two tools with one name are an error, not a silent overwrite.

    >>> def ping() -> str:
    ...     '''Check the service.'''
    >>> list(tools_by_name([ping]))
    ['ping']
    """
    found: dict[str, Tool] = {}
    for item in tools:
        one = as_tool(item)
        if one.name in found:
            raise ValueError(f"two tools are named {one.name!r}; the model could not tell them apart. "
                             f"Give one of them another name, e.g. @tool(name='{one.name}_2')")
        found[one.name] = one
    return found


def _readable(call: Any) -> ToolCall:
    """A call in any shape as a ToolCall; one that cannot be read becomes a call of no tool, answered as such."""
    try:
        return ToolCall.of(call)
    except Exception:
        raw_id = call.get("id") if isinstance(call, dict) else getattr(call, "id", "")
        return ToolCall(raw_id if isinstance(raw_id, str) else "", "unreadable_call", "{}")


def _find_media(value: Any) -> tuple[Any, list[Found]]:
    """`find_media`, where a value that breaks the search (a cycle, a hostile __eq__) simply holds no images."""
    try:
        return find_media(value)
    except Exception:
        log.warning("looking for images in a tool result failed; it is sent as it is", exc_info=True)
        return value, []


def _content(formatted: Any) -> tuple[str, list[dict[str, Any]]]:
    """What a `format_result` returned, as (tool message text, other content parts)."""
    if isinstance(formatted, str):
        return formatted, []
    if not isinstance(formatted, list) or not all(isinstance(p, dict) for p in formatted):
        raise TypeError(f"format_result must return a str or a list of content parts, not {type(formatted).__name__}")
    texts = [str(p.get("text", "")) for p in formatted if p.get("type") == "text"]
    others = [p for p in formatted if p.get("type") != "text"]
    return "\n".join(texts), others
