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
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Literal

from pydantic import BaseModel

from .arguments import ArgumentsError, prepare_with_repairs
from .concurrency import run_sync
from .hooks import FeatureMissing, Hook, Plan, Run, feature, overrides
from .redaction import redact, redact_secrets
from .replies import ToolCall
from .tools import FEATURE_OPTIONS, Tool, as_tool

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
    media: list[Any] = field(default_factory=list)  # images the tool returned, registered (media feature)
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
NOT_HELD = ("This call did not run: {name} needs a person's decision first, and there is no one to ask here. "
            "Do not retry it; tell the user it needs their approval.")
# The first words of a user message that carries tool output (images, descriptions), not the user's words:
# features that add such a message start it with this, and history trimming keeps it with its tool messages.
TOOL_OUTPUT_LABEL = "Tool output, not a message from the user"


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

    `hooks` wrap each call (hooks.py: `around_call`); `media=` (a MediaStore) and `cache=` (a ResultCache)
    are shorthands for the media and budget features' hooks.
    """

    def __init__(self, tools: Iterable[Any], *, timeout: float | None = 60.0, max_concurrency: int = 8,
                 retry_budget: int = 2, format_error: ErrorFormatter = error_envelope,
                 format_result: ResultFormatter = result_text, hooks: Iterable[Hook] = (), media: Any = None,
                 cache: Any = None) -> None:
        self.tools: dict[str, Tool] = tools_by_name(tools)
        self.timeout = timeout  # default seconds per call; a tool's own `timeout` wins
        self.max_concurrency = max_concurrency  # calls running at the same time, at most
        self.retry_budget = retry_budget  # invalid tries in a row per tool that get a "fix it" answer
        self.format_error = format_error  # exception -> what the model reads
        self.format_result = format_result  # (value, call, tool) -> what the model reads
        self.failures: dict[str, int] = {}  # tool name -> invalid tries since its last success
        hooks = list(hooks)
        if cache is not None:
            hooks.insert(0, feature("budget").CacheHook(cache))
        if media is not None:
            hooks.append(feature("media").MediaHook(media))
        self.hooks = with_option_hooks(hooks, self.tools.values())
        self._around = [h for h in ordered(self.hooks) if overrides(h, "around_call")]

    def plan(self, call: Any, run: Run | None = None) -> Plan:
        """A call on its way to running: its tool found, its arguments repaired and validated (once)."""
        call = _readable(call)
        try:
            tool = self.tools.get(call.name)
        except Exception as exc:  # a bug-shaped call (a name that is not a string): its own failure, never ours
            plan = Plan(call, None, run=run)
            plan.answered = self._failed(call, "exception", self._format_error(exc, call))
            return plan
        plan = Plan(call, tool, run=run)
        if tool is not None:
            try:
                plan.arguments, plan.repairs = prepare_with_repairs(tool, call.arguments)
            except ArgumentsError as problem:
                plan.problem = str(problem)
            except Exception:  # a validator that crashed, arguments nested too deep: this call cannot run
                log.warning("checking the arguments of call %s failed", call.id, exc_info=True)
                plan.problem = f"The arguments of {tool.name} could not be checked. Call it again with simpler values."
                plan.data["crashed"] = True
        return plan

    async def run(self, calls: Iterable[Any], run: Run | None = None) -> list[ToolResult]:
        """Run the calls of one reply concurrently; one result per call, in the calls' order. The hooks decide
        first (`before_calls`), as in an Agent; a call they would hold for a person is answered instead: an
        Executor on its own has no run to pause."""
        if run is None:
            from .state import RunState  # here: the state module builds on this one

            run = Run(RunState([]), None, lambda event: None)
        plans = [self.plan(c, run) for c in calls]
        for hook in ordered(self.hooks):
            if overrides(hook, "before_calls"):
                await hook.before_calls(run, [p for p in plans if p.answered is None and p.held is None])
        for plan in plans:
            if plan.held is not None and plan.answered is None:
                plan.answer(envelope("error", error=NOT_HELD.format(name=plan.call.name)), "denied")
        results = await self.run_plans(plans)
        for hook in reversed(ordered(self.hooks)):
            if overrides(hook, "after_calls"):
                await hook.after_calls(run, results)
        return results

    def run_sync(self, calls: Iterable[Any]) -> list[ToolResult]:
        """`run` for code without an event loop (or inside Jupyter's)."""
        return run_sync(self.run(calls))

    async def run_plans(self, plans: list[Plan]) -> list[ToolResult]:
        """Run planned calls of one reply concurrently (an answered plan is its answer); results in order."""
        limit = asyncio.Semaphore(max(1, self.max_concurrency))
        reply: dict[str, Any] = {}  # what the calls of this reply share (e.g. the media hook's byte budget)
        for plan in plans:
            plan.reply = reply

        async def limited(plan: Plan) -> ToolResult:
            if plan.answered is not None:
                return plan.answered
            async with limit:
                return await self.run_one(plan)

        outcomes = await asyncio.gather(*(limited(p) for p in plans), return_exceptions=True)
        results = []
        for plan, outcome in zip(plans, outcomes):
            if isinstance(outcome, ToolResult):
                results.append(outcome)
            elif isinstance(outcome, (KeyboardInterrupt, asyncio.CancelledError)):
                raise outcome
            else:  # a bug of ours or of a hook: still an answer for this id
                log.error("running call %s failed unexpectedly", plan.call.id, exc_info=outcome)
                results.append(self._failed(plan.call, "exception", self._format_error(outcome, plan.call)))
        return results

    async def run_one(self, plan: Plan | ToolCall) -> ToolResult:
        """One call, start to finish, through the hooks; never raises (except for cancellation)."""
        if not isinstance(plan, Plan):
            plan = self.plan(plan)
        started = time.perf_counter()
        tool = plan.tool
        if tool is None:
            message = unknown_tool_message(plan.call.name, self.tools)
            result = self._invalid(plan.call, "unknown_tool", envelope("error", error=message))
        elif plan.problem is not None:
            result = self._invalid(plan.call, "invalid_arguments", envelope("error", error=plan.problem))
        else:
            plan.format = partial(self._format, plan)
            result = await self._through(plan, 0)
            if plan.note and result.ok:
                result.content = plan.note + result.content
        result.seconds = time.perf_counter() - started
        return result

    async def _through(self, plan: Plan, depth: int) -> ToolResult:
        """The call through the around_call hooks from `depth` inward, the tool itself innermost."""
        if depth == len(self._around):
            return await self._invoke(plan)
        hook = self._around[depth]
        try:
            return await hook.around_call(plan, partial(self._through, plan, depth + 1))
        except (KeyboardInterrupt, asyncio.CancelledError):
            raise
        except BaseException as exc:  # a hook's bug is this call's failure, never the run's
            log.error("hook %s failed on call %s", type(hook).__name__, plan.call.id, exc_info=True)
            return self._failed(plan.call, "exception", self._format_error(exc, plan.call), plan.repairs)

    async def _invoke(self, plan: Plan) -> ToolResult:
        """Run the tool with its validated arguments, within its timeout, and format what it returned."""
        call, tool = plan.call, plan.tool
        assert tool is not None and plan.arguments is not None
        timeout = tool.timeout if tool.timeout is not None else self.timeout
        task = asyncio.ensure_future(self._guarded(tool, plan.arguments))
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if not done:
            task.cancel()  # abandoned: a tool that ignores cancellation runs on, unwatched
            message = (f"{tool.name} did not finish within {timeout:g} s and was stopped. "
                       "Try again later, or tell the user the service is not responding.")
            if tool.acts:  # it may have sent, paid, written already
                message = (f"{tool.name} did not finish within {timeout:g} s: whether it did what it was asked is "
                           "unknown (it may still complete). Do not call it again; tell the user to check "
                           "before anything is retried.")
            return self._failed(call, "timeout", envelope("error", error=message), plan.repairs)
        outcome = task.result()
        if outcome.error is None:
            try:
                content, attachments = self._format(plan, outcome.value)
            except (KeyboardInterrupt, asyncio.CancelledError):
                raise
            except BaseException as exc:  # a formatter's bug (even SystemExit) is reported like the tool's own
                outcome.error = exc
            else:
                self.failures.pop(tool.name, None)  # it works again: a fresh retry budget
                return ToolResult(call, content, ok=True, value=outcome.value, repairs=plan.repairs,
                                  attachments=attachments)
        _scrub(outcome.error)  # the log keeps the traceback, not the keys in the message
        log.warning("tool %s failed (call %s)", tool.name, call.id, exc_info=outcome.error)
        return self._failed(call, "exception", self._format_error(outcome.error, call), plan.repairs)

    def _format(self, plan: Plan, value: Any) -> tuple[str, list[dict[str, Any]]]:
        """A value as (tool message text, other content parts), by `format_result`."""
        assert plan.tool is not None
        return _content(self.format_result(value, plan.call, plan.tool)) if value is not None else ("", [])

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


def ordered(hooks: Iterable[Hook]) -> list[Hook]:
    """Hooks in the order they act: as given, those marked `last` after the others (the approval gate)."""
    hooks = list(hooks)
    return [h for h in hooks if not h.last] + [h for h in hooks if h.last]


def with_option_hooks(hooks: list[Hook], tools: Iterable[Tool]) -> list[Hook]:
    """`hooks`, plus each feature's default hook for a tool option that none of them handles (a tool with
    `requires_approval` gets the approval gate, one with `cache` the result cache). A feature that is not in
    this copy is an error naming the tool and the option: such a tool is refused, never run unguarded."""
    hooks = list(hooks)
    for one in tools:
        for option in one.options:
            if any(option in h.options for h in hooks):
                continue
            folder = FEATURE_OPTIONS[option]
            try:
                hooks += feature(folder).default_hooks(option)
            except FeatureMissing:
                raise FeatureMissing(f"{one.name} has {option}={one.options[option]!r:.40}, which the {folder} feature "
                                     f"handles ({__package__}/{folder}/); it is not in this copy of the framework: "
                                     "copy that folder too, or remove the option") from None
    return hooks


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
            raise ValueError(f"two tools are named {one.name!r} ({found[one.name]!r}, {one!r}); the model could not "
                             f"tell them apart. Rename one, e.g. @tool(name='{one.name}_2'), or prefix a toolset")
        found[one.name] = one
    return found


def _readable(call: Any) -> ToolCall:
    """A call in any shape as a ToolCall; one that cannot be read becomes a call of no tool, answered as such."""
    try:
        return ToolCall.of(call)
    except Exception:
        raw_id = call.get("id") if isinstance(call, dict) else getattr(call, "id", "")
        return ToolCall(raw_id if isinstance(raw_id, str) else "", "unreadable_call", "{}")


def _content(formatted: Any) -> tuple[str, list[dict[str, Any]]]:
    """What a `format_result` returned, as (tool message text, other content parts)."""
    if isinstance(formatted, str):
        return formatted, []
    if not isinstance(formatted, list) or not all(isinstance(p, dict) for p in formatted):
        raise TypeError(f"format_result must return a str or a list of content parts, not {type(formatted).__name__}")
    texts = [str(p.get("text", "")) for p in formatted if p.get("type") == "text"]
    others = [p for p in formatted if p.get("type") != "text"]
    return "\n".join(texts), others
