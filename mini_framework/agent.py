"""The agent loop: ask the model, run the tools it asks for, repeat until it answers, within limits.

    agent = Agent(client, model, tools=[get_weather], max_iterations=5)
    result = agent.run("北京现在天气怎么样？")
    result.text, result.capped, result.usage.total_tokens

One turn of the loop is one model request (a small state machine over `RunState`):

    ask the model, with tools            ModelRequest, then ModelResponse (the reply read and
                                         repaired by replies.py before anything runs)
    no tool calls in the reply           -> finished                                  FinalAnswer
    tool calls                           -> each checked once (the executor's plan), then the hooks
                                            decide: run it, answer it, or hold it     RunPaused
                                         -> Executor.run_plans: concurrently, answered in call order
                                            ToolStarted / ToolFinished for each call
      the same call (name + arguments)   -> after `max_repeats` runs it is not run again: the
         asked for yet again                model is told to use the result it already has
    `max_iterations` requests made       -> one last request *without* tools, so the run ends
                                            with an answer; the result is flagged `capped`  CapReached

Everything else is a feature that plugs in through hooks (hooks.py): approvals (`approver=`,
`audit_log=`, `checkpoint=`, and any tool with `requires_approval`), media (images tools return;
`image_input=`, `image_fallback=`, `vision=`, `media=`), budget (`max_history_tokens=`, `spill_dir=`,
`result_cache=`, tools with `cache` / `too_long_to_file`), streaming (`stream=True`). These keywords are
shorthands for the features' hooks; `hooks=[...]` adds your own. A paused run's `result.pending` lists
what it waits on; decide each, then `agent.resume(result)`.

Events go to `on_event` callbacks as they happen, or come out of `agent.events(...)`. `run()` works
from plain scripts and inside Jupyter's running event loop; `arun()` is the async version. The client
may be `OpenAI` or `AsyncOpenAI`. An `OpenAI` client is called directly on the loop `run()` makes for
itself (nothing else waits on that loop), and in a worker thread from `arun()` (whose loop is yours).

A reply cut off by `max_tokens` (`finish_reason: "length"`) may hold half-written arguments: its
calls are answered without running ("truncated"), so a cut-off value never reaches a tool.

Concessions: one choice per response (`n=1`). An API error after the SDK's own retries is raised,
and so is a reply that cannot be repaired (ProviderError, see replies.py); either way the exception
carries `partial_result`, the RunResult so far (messages, tool results, usage), so nothing that
already ran is lost. An async tool that blocks the event loop (`time.sleep` inside `async def`)
blocks the whole run, timeouts included: write blocking tools as plain `def`.
"""
from __future__ import annotations

import asyncio
import difflib
import functools
import inspect
import json
import logging
import math
import os
import queue
import threading
import time
from typing import Any, AsyncIterator, Callable, Iterable, Iterator

from .concurrency import either_way, run_sync
from .events import CapReached, Event, FinalAnswer, ModelRequest, ModelResponse, RunPaused, ToolFinished, ToolStarted
from .executor import (
    ErrorFormatter,
    Executor,
    ResultFormatter,
    ToolResult,
    envelope,
    error_envelope,
    ordered,
    result_text,
    tools_by_name,
    with_option_hooks,
)
from .hooks import Hook, Plan, Request, Run, feature, overrides
from .replies import ModelReply, ProviderError, ToolCall, read_reply
from .state import RunResult, RunState, Usage
from .text import as_dict
from .tools import RUN_ID, Tool, tool_guidance

__all__ = ["Agent", "RunResult", "RunState", "Usage"]

# Chat Completions parameters an Agent passes on to every request (those of the OpenAI API reference's
# CreateChatCompletionRequest that the loop does not set itself), and the SDK's per-request options.
REQUEST_OPTIONS = frozenset({
    "audio", "frequency_penalty", "logit_bias", "logprobs", "max_completion_tokens", "max_tokens", "metadata",
    "modalities", "moderation", "parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key",
    "prompt_cache_options", "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier",
    "seed", "service_tier", "stop", "store", "stream_options", "temperature", "tool_choice", "top_logprobs",
    "top_p", "user", "verbosity", "web_search_options"})
SDK_OPTIONS = frozenset({"extra_body", "extra_headers", "extra_query", "timeout"})
TOOLS_ONLY = ("tool_choice", "parallel_tool_calls")  # the API refuses these in a request without tools
STREAM_ONLY = ("stream_options",)  # and this one in a request that does not stream

# The Agent's keyword shorthands -> the feature folder whose hooks they set up, in the order those hooks act
# (budget outermost around a call, then media; the approval gate always acts last, see hooks.py).
SHORTHANDS = {
    "result_cache": "budget", "spill_dir": "budget", "max_history_tokens": "budget",
    "image_input": "media", "image_fallback": "media", "vision": "media", "media": "media",
    "stream": "streaming",
    "checkpoint": "approvals", "approver": "approvals", "approval_timeout": "approvals", "audit_log": "approvals",
}
DEFAULT_ON = ("media",)  # features every Agent has when their folder is there (images tools return are handled)

CAPPED_WITHOUT_ANSWER = "(The run stopped at its iteration limit before the model gave an answer.)"
TRUNCATED = ("The reply was cut off (finish_reason \"length\") while this call was being written, so it did not "
             "run: its arguments may be incomplete. Call it again, with shorter arguments if you can.")

EventHandler = Callable[[Event], Any]
log = logging.getLogger("mini_framework")


# ----------------------------------------------------------------------------- the agent


class Agent:
    """A model, some tools, and the loop between them. See the module docstring.

    Keyword options beyond the loop's own settings are the features' shorthands (SHORTHANDS: approver,
    audit_log, checkpoint, approval_timeout, image_input, image_fallback, vision, media, result_cache,
    spill_dir, max_history_tokens, stream) or request parameters (temperature=0, tool_choice=...).
    """

    def __init__(self, client: Any, model: str, tools: Iterable[Any] = (), *, instructions: str | None = None,
                 max_iterations: int = 8, max_repeats: int = 2, tool_timeout: float | None = 60.0,
                 max_concurrency: int = 8, retry_budget: int = 2, format_error: ErrorFormatter = error_envelope,
                 format_result: ResultFormatter = result_text, hooks: Iterable[Hook] = (),
                 on_event: EventHandler | None = None, **options: Any) -> None:
        check_options(options)
        check_settings(max_iterations=max_iterations, max_repeats=max_repeats, tool_timeout=tool_timeout,
                       max_concurrency=max_concurrency, retry_budget=retry_budget)
        if isinstance(tools, (str, bytes, dict)) or isinstance(tools, Tool) or callable(tools):
            raise TypeError("tools must be a list of tools, e.g. tools=[get_weather]")
        if not isinstance(options.get("stream", False), bool):
            raise TypeError(f"stream must be True or False, not {options['stream']!r:.40}")
        self.client = client  # an OpenAI or AsyncOpenAI client (see connect())
        self.model = model
        self.tools: list[Tool] = list(tools_by_name(tools).values())  # two tools with one name: ValueError
        self.instructions = instructions  # the system prompt; the tools' best practices are appended
        self.max_iterations = max_iterations  # model requests that may call tools, per run
        self.max_repeats = max_repeats  # runs of one identical call before it is refused
        self.tool_timeout = tool_timeout
        self.max_concurrency = max_concurrency
        self.retry_budget = retry_budget
        self.format_error = format_error
        self.format_result = format_result
        self.handlers: list[EventHandler] = [on_event] if on_event else []
        self.request_options = {k: v for k, v in options.items() if k not in SHORTHANDS}  # e.g. temperature=0
        given = {k: v for k, v in options.items() if k in SHORTHANDS and v is not None and (k, v) != ("stream", False)}
        self.hooks: list[Hook] = list(hooks) + self._feature_hooks(given)
        self.hooks = with_option_hooks(self.hooks, self.tools)  # a tool's option no hook handles: its feature's
        for hook in ordered(self.hooks):
            hook.attach(self)
        self.specs = [t.to_openai_tool() for t in self.tools]  # built once (after hooks offered theirs)
        self._points = {point: [h for h in ordered(self.hooks) if overrides(h, point)]
                        for point in ("before_request", "send", "before_calls", "after_calls", "resumed")}

    def _feature_hooks(self, given: dict[str, Any]) -> list[Hook]:
        """The hooks of each feature a shorthand asks for (or that is on by default), in SHORTHANDS order."""
        hooks: list[Hook] = []
        for folder in dict.fromkeys(SHORTHANDS.values()):
            settings = {k: v for k, v in given.items() if SHORTHANDS[k] == folder}
            if not settings and folder not in DEFAULT_ON:
                continue
            try:
                module = feature(folder)
            except ImportError:
                if settings:
                    raise  # asked for by name: say which folder is missing
                continue  # on by default where it is there; this copy went without it
            hooks += module.hooks_for(self, **settings)
        return hooks

    def offer(self, extra: Tool) -> None:
        """Add a tool a feature brings (the media feature's image_understand), unless one has its name."""
        if extra.name not in {t.name for t in self.tools}:
            self.tools.append(extra)

    def __getattr__(self, name: str) -> Any:
        """What a hook exposes on the agent (`agent.vision` from the media feature)."""
        for hook in self.__dict__.get("hooks", ()):
            exposed = hook.expose()
            if name in exposed:
                return exposed[name]
        raise AttributeError(f"'Agent' object has no attribute {name!r}")

    def hook(self, kind: type[Any]) -> Any:
        """The agent's hook of this class, or None: `agent.hook(MediaHook).store`."""
        return next((h for h in self.hooks if isinstance(h, kind)), None)

    # -- entry points ---------------------------------------------------------------------

    def run(self, prompt: str | list[Any], *, context: Any = None, on_event: EventHandler | None = None) -> RunResult:
        """Run to the final answer (or a pause). `prompt` is a question, or a conversation to continue;
        `context` goes to the tools' `prompt_injection_builder`."""
        return run_sync(self.arun(prompt, context=context, on_event=on_event))

    async def arun(self, prompt: str | list[Any], *, context: Any = None,
                   on_event: EventHandler | None = None) -> RunResult:
        """`run`, for async code."""
        return await self.proceed(self.start(prompt, context), on_event)

    def resume(self, paused: RunResult, *, on_event: EventHandler | None = None) -> RunResult:
        """Continue a paused run once its `pending` calls are decided (what is undecided is asked again, or
        declined: each feature says)."""
        return run_sync(self.aresume(paused, on_event=on_event))

    async def aresume(self, paused: RunResult, *, on_event: EventHandler | None = None) -> RunResult:
        """`resume`, for async code."""
        if not isinstance(paused, RunResult):
            raise TypeError(f"resume() takes the RunResult of a paused run (from run(), or RunPaused.result), "
                            f"not {type(paused).__name__}")
        state = paused.state
        with _RESUMING:  # two threads resuming one run: exactly one gets it
            if state is None or not state.pending or state.done or state.busy:
                raise ValueError("only a paused run can be resumed, once: this one is finished or already being "
                                 "resumed (see result.paused)")
            state.busy = True
        run = Run(state, self, self._emitter(on_event))
        try:
            for hook in self._points["resumed"]:
                hook.resumed(run)
        except BaseException:
            state.busy = False
            raise
        state.pending.clear()  # a second resume() now sees nothing to do
        if paused.pending is not state.pending:
            paused.pending.clear()
        return await self.proceed(state, on_event, claimed=True)

    def load(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> RunResult:
        """A paused run that `result.save(path)` wrote, ready to be decided and resumed by this agent (it
        needs the same tools). A damaged, edited or unsigned file raises SavedRunError; nothing runs."""
        return feature("approvals.saved").load(path, self.tools, key=key)

    def events(self, prompt: str | list[Any], *, context: Any = None) -> Iterator[Event]:
        """The run's events as they happen, from sync code: `for event in agent.events(q): print(event)`."""
        inbox: queue.SimpleQueue[Event | BaseException | None] = queue.SimpleQueue()
        demand = threading.Semaphore(0)  # one permit per event the reader asked for: the run never runs ahead
        abandoned = threading.Event()

        def deliver(event: Event) -> None:
            demand.acquire()
            if abandoned.is_set():  # nobody is reading any more: stop here
                raise _Abandoned
            inbox.put(event)

        def work() -> None:
            try:
                self.run(prompt, context=context, on_event=deliver)
            except _Abandoned:
                pass
            except BaseException as exc:  # re-raised in the caller's thread below
                inbox.put(exc)
            inbox.put(None)

        threading.Thread(target=work, name="mini_framework-events", daemon=True).start()
        try:
            while True:
                demand.release()
                item = inbox.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            abandoned.set()
            demand.release()  # wake a run waiting to deliver, so it sees it was abandoned

    async def aevents(self, prompt: str | list[Any], *, context: Any = None) -> AsyncIterator[Event]:
        """The run's events as they happen, from async code: `async for event in agent.aevents(q): ...`."""
        inbox: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.ensure_future(self.arun(prompt, context=context, on_event=inbox.put_nowait))
        task.add_done_callback(lambda _: inbox.put_nowait(None))
        while True:
            event = await inbox.get()
            if event is None:
                break
            yield event
        task.result()  # raise what the run raised, if anything

    # -- the state machine ----------------------------------------------------------------

    def start(self, prompt: str | list[Any], context: Any = None) -> RunState:
        """A fresh state: the system prompt (instructions + the tools' guidance) and the conversation."""
        if isinstance(prompt, str):
            messages = [{"role": "user", "content": prompt}]
        else:
            messages = [dict(as_dict(m)) for m in prompt]
        parts = [self.instructions, tool_guidance(self.tools, context)]
        system = "\n\n".join(p for p in parts if p)
        if system and not any(m.get("role") in ("system", "developer") for m in messages):
            messages.insert(0, {"role": "system", "content": system})
        return RunState(messages, context=context)

    def _emitter(self, on_event: EventHandler | None) -> Callable[[Event], None]:
        handlers = self.handlers + ([on_event] if on_event else [])

        def emit(event: Event) -> None:
            for handler in handlers:
                handler(event)

        return emit

    async def proceed(self, state: RunState, on_event: EventHandler | None = None, *,
                      claimed: bool = False) -> RunResult:
        """Take steps until the run is done or paused (`claimed`: the caller already set `state.busy`)."""
        run = Run(state, self, self._emitter(on_event))
        executor = self._executor(state)
        with _RESUMING:
            if state.busy and not claimed:
                raise ValueError("this run is already running (a run's state is worked on by one call at a time)")
            state.busy = True
        token = RUN_ID.set(state.run_id)  # tools, predicates, approvers and checkpoints may count per run
        try:
            if state.waiting:  # a resumed run: answer the calls it paused on first
                await self.answer_calls(run, executor)
            while not state.done and not state.pending:
                await self.step(run, executor)
        except Exception as exc:
            try:
                exc.partial_result = self.result(state)  # type: ignore[attr-defined]
            except Exception:  # an exception class that takes no attributes: raised as it is
                pass
            raise
        finally:
            RUN_ID.reset(token)
            state.busy = False
        result = self.result(state)
        if state.pending:  # said once the run can be resumed (a handler may resume it right away)
            run.emit(RunPaused(state.iteration, tuple(getattr(p, "call", p) for p in state.pending), result))
        return result

    async def step(self, run: Run, executor: Executor) -> None:
        """One model request, and the tool calls it asks for."""
        state = run.state
        final = state.iteration >= self.max_iterations
        state.iteration += 1
        if final:
            state.capped = True
            run.emit(CapReached(state.iteration, self.max_iterations))
        reply = await self.ask_model(run, with_tools=bool(self.tools) and not final)
        message = reply.message
        if final and reply.calls:  # asked for tools anyway: unanswered calls would break the history
            message = {"role": "assistant", "content": message.get("content") or CAPPED_WITHOUT_ANSWER}
        state.messages.append(message)
        if final or not reply.calls:
            state.done = True
            run.emit(FinalAnswer(state.iteration, message.get("content")))
            return
        state.waiting = list(reply.calls)
        state.cut = [c.id for c in reply.calls] if reply.finish_reason == "length" else []
        state.plans = None
        await self.answer_calls(run, executor)

    async def ask_model(self, run: Run, with_tools: bool) -> ModelReply:
        """Send the conversation (through the hooks); return the reply, read and repaired, its usage counted."""
        state = run.state
        options = {k: v for k, v in self.request_options.items() if k not in STREAM_ONLY}
        params: dict[str, Any] = {}
        if with_tools:
            params.update(tools=self.specs, **options)
        else:
            params.update({k: v for k, v in options.items() if k not in TOOLS_ONLY})
        request = Request(state.messages, params, state.iteration)
        for hook in self._points["before_request"]:
            await hook.before_request(run, request)
        run.emit(ModelRequest(state.iteration, len(state.messages), len(self.specs) if with_tools else 0))
        started = time.perf_counter()
        try:
            response = await self._send_through(run, request, 0)
        except RecursionError:
            raise ProviderError("the reply is nested too deeply to read", "(not shown)") from None
        taken = {_call_id(c) for m in state.messages for c in (m.get("tool_calls") or ())}
        reply = read_reply(response, {t for t in taken if isinstance(t, str)}, state.iteration)
        state.usage.add(reply.prompt_tokens, reply.completion_tokens, reply.cached_tokens)
        run.emit(ModelResponse(state.iteration, reply.message, reply.prompt_tokens, reply.completion_tokens,
                               time.perf_counter() - started, tuple(reply.repairs)))
        return reply

    async def _send_through(self, run: Run, request: Request, depth: int) -> Any:
        """The request through the hooks' `send` from `depth` inward; the SDK call innermost."""
        senders = self._points["send"]
        if depth < len(senders):
            return await senders[depth].send(run, request, lambda r: self._send_through(run, r, depth + 1))
        create = self.client.chat.completions.create
        params = {"model": self.model, "messages": request.messages, **request.params}
        return await either_way(create, blocking_ok=True, **for_this_sdk(create, params))

    async def answer_calls(self, run: Run, executor: Executor) -> None:
        """Plan the waiting calls (each checked once), let the hooks decide, then run and answer them all. A
        call a hook holds stops the run with `state.pending` set, before any call of the reply runs."""
        state = run.state
        if state.plans is None or [p.call.id for p in state.plans] != [c.id for c in state.waiting]:
            state.plans = [executor.plan(call, run) for call in state.waiting]
        plans: list[Plan] = state.plans
        for plan in plans:
            plan.run, plan.held = run, None
            if plan.call.id in state.cut:
                plan.answer(TRUNCATED, "truncated")
            elif plan.answered is None and plan.arguments is not None:
                key = repeat_key(plan)
                if state.seen.get(key, 0) >= self.max_repeats:  # refused without asking anyone
                    state.seen[key] += 1
                    plan.answered = repeated_call(plan.call, state.seen[key] - 1, state.last_result.get(key))
        for hook in self._points["before_calls"]:
            await hook.before_calls(run, [p for p in plans if p.answered is None and p.held is None])
        held = [i for p in plans if p.held is not None for i in (p.held if isinstance(p.held, list) else [p.held])]
        if held:
            state.pending = held  # proceed() says RunPaused once the state is free to resume
            return
        for plan in plans:
            if plan.answered is None and plan.arguments is not None:
                key = repeat_key(plan)
                state.seen[key] = state.seen.get(key, 0) + 1
            if plan.answered is None or plan.answered.failure == "repeated":  # a repeat: asked for, refused
                run.emit(ToolStarted(state.iteration, plan.call))
        results = await executor.run_plans(plans)
        for plan, result in zip(plans, results):
            if result.failure != "repeated" and plan.arguments is not None:
                state.last_result[repeat_key(plan)] = result.content
        state.results += results
        state.messages += [r.message for r in results]
        state.waiting, state.cut, state.plans = [], [], None
        for hook in reversed(self._points["after_calls"]):  # innermost first: the gate records what ran
            await hook.after_calls(run, results)
        for result in results:
            run.emit(ToolFinished(state.iteration, result))

    def result(self, state: RunState) -> RunResult:
        """The RunResult of a finished or paused state."""
        text = None
        if state.done and state.messages:
            text = state.messages[-1].get("content")
        return RunResult(text, state.messages, state.results, state.usage, state.iteration, state.capped,
                         state.pending, state)

    def _executor(self, state: RunState) -> Executor:
        """An executor for this run; it counts failed tries in the state, so a resumed run keeps counting."""
        executor = Executor(self.tools, timeout=self.tool_timeout, max_concurrency=self.max_concurrency,
                            retry_budget=self.retry_budget, format_error=self.format_error,
                            format_result=self.format_result, hooks=self.hooks)
        executor.failures = state.failures
        return executor


_RESUMING = threading.Lock()  # makes "is this state busy? then it is mine" one step


class _Abandoned(Exception):
    """Raised into a run whose events() iterator nobody reads any more."""


def repeat_key(plan: Plan) -> str:
    """What makes two calls the same call: the tool and its validated arguments, key order ignored."""
    if "repeat" not in plan.data:  # once per call: arguments do not change once checked
        values = plan.values
        plan.data["repeat"] = f"{plan.call.name} {canonical(values if values is not None else plan.call.arguments)}"
    key: str = plan.data["repeat"]
    return key


def _call_id(call: Any) -> Any:
    """The id of a stored tool call, a dict or an SDK object."""
    if isinstance(call, dict):
        return call.get("id")
    return getattr(call, "id", None)


def for_this_sdk(create: Callable[..., Any], params: dict[str, Any]) -> dict[str, Any]:
    """`params`, with those the installed SDK's `create` does not name moved into `extra_body`, which it sends
    as they are: an older openai package raises TypeError for a newer parameter (openai-python#2499).

    >>> def create(*, model, messages, extra_body=None): ...
    >>> for_this_sdk(create, {"model": "m", "messages": [], "prompt_cache_key": "faq"})
    {'model': 'm', 'messages': [], 'extra_body': {'prompt_cache_key': 'faq'}}
    """
    named = _named_parameters(getattr(create, "__func__", create))  # the function under a bound method: cached
    unknown = [k for k in params if named is not None and k not in named and k not in SDK_OPTIONS]
    if not unknown:
        return params
    moved = {k: v for k, v in params.items() if k not in unknown}
    moved["extra_body"] = {**{k: params[k] for k in unknown}, **(params.get("extra_body") or {})}
    return moved


@functools.lru_cache(maxsize=64)
def _named_parameters(function: Callable[..., Any]) -> frozenset[str] | None:
    """The keyword parameters a function names; None when it takes any (**kwargs) or can't be read."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters)


def check_settings(**settings: Any) -> None:
    """Refuse setting values that would make a run misbehave later (a NaN cap never stops a loop).

    >>> check_settings(max_iterations=float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: max_iterations must be a whole number of at least 0, not nan
    """
    minimum = {"max_iterations": 0, "max_repeats": 1, "max_concurrency": 1, "retry_budget": 0}
    for name, least in minimum.items():
        if name in settings:
            value = settings[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} must be a whole number of at least {least}, not {value!r}")
    timeout = settings.get("tool_timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not math.isfinite(timeout) or timeout <= 0):
        raise ValueError(f"tool_timeout must be a number of seconds above 0, or None for no limit; not {timeout!r}")


def check_options(options: dict[str, Any]) -> None:
    """Refuse an option that is neither an Agent setting nor a request parameter, naming the closest one.

    >>> check_options({"max_iteration": 5})
    Traceback (most recent call last):
    ...
    TypeError: Agent() got an unknown option 'max_iteration'; did you mean 'max_iterations'?
      (A provider's own request parameters go in extra_body={...}.)
    """
    settings = [name for name in inspect.signature(Agent.__init__).parameters if name not in ("self", "options")]
    settings += list(SHORTHANDS)
    for name in options:
        if name in REQUEST_OPTIONS or name in SDK_OPTIONS or name in SHORTHANDS:
            continue
        close = difflib.get_close_matches(name, [*settings, *REQUEST_OPTIONS, *SDK_OPTIONS], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else "."
        raise TypeError(f"Agent() got an unknown option {name!r}{hint}\n"
                        "  (A provider's own request parameters go in extra_body={...}.)")


def canonical(arguments: Any) -> str:
    """Arguments in a form where equal calls compare equal ('{"b":1, "a":2}' == '{"a": 2, "b": 1}').

    >>> canonical('{"b": 1, "a": 2}') == canonical({"a": 2, "b": 1})
    True
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return arguments.strip()
    try:
        return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):
        return repr(type(arguments))


def repeated_call(call: ToolCall, times: int, previous: str | None) -> ToolResult:
    """The answer to a call the model already made `times` times: not run again; use what you have."""
    message = (f"You already called {call.name} with these same arguments {times} times. It was not run again. "
               "Do not repeat this call: use the result you already have and answer the user.")
    return ToolResult(call, envelope("error", error=message, previous_result=previous), ok=False, failure="repeated")
