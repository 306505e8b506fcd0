"""The agent loop: ask the model, run the tools it asks for, repeat until it answers, within limits.

    agent = Agent(client, model, tools=[get_weather], max_iterations=5)
    result = agent.run("北京现在天气怎么样？")
    result.text, result.capped, result.usage.total_tokens

One turn of the loop is one model request (a small state machine over `RunState`):

    ask the model, with tools            ModelRequest, then ModelResponse (the reply read and
                                         repaired by replies.py before anything runs)
    no tool calls in the reply           -> finished                                  FinalAnswer
    tool calls                           -> each passes the checkpoint (if any): run it, answer it
                                            without running it, or pause the run      RunPaused
                                         -> Executor.run: concurrently, answered in call order
                                            ToolStarted / ToolFinished for each call
      the same call (name + arguments)   -> after `max_repeats` runs it is not run again: the
         asked for yet again                model is told to use the result it already has
    `max_iterations` requests made       -> one last request *without* tools, so the run ends
                                            with an answer; the result is flagged `capped`  CapReached

Tools made with `requires_approval` never run without a person's decision for that exact call
(approvals.py): the run pauses before the reply's calls run and returns a RunResult whose
`pending` lists the calls waiting; decide each (`item.approve()`, `.deny(reason)`, `.edit(args)`),
then `agent.resume(result)`. An `approver` decides inline instead; `audit_log` records each step;
`result.save(path)` and `agent.load(path)` carry a paused run across a restart (saved.py). Events go to
`on_event` callbacks as they happen, or come out of `agent.events(...)`; with `stream=True` the
requests stream and the text arrives piece by piece as TextDelta events, while the run's messages are
the same as without streaming (streaming.py assembles each reply). `run()` works from plain
scripts and inside Jupyter's running event loop; `arun()` is the async version. The client may be
`OpenAI` (called in a worker thread) or `AsyncOpenAI`.

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
import contextlib
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

from .approvals import saved
from .approvals.decisions import (
    Approver,
    AuditLog,
    Checkpoint,
    Decision,
    Pending,
    Verdict,
    arguments_hash,
    ask,
    binding,
)
from .arguments import ArgumentsError, prepare
from .budget.cache import ResultCache
from .budget.trimming import trim_history
from .concurrency import either_way, in_thread, run_sync
from .display import as_dict
from .events import (
    CapReached,
    Event,
    FinalAnswer,
    ModelRequest,
    ModelResponse,
    RunPaused,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from .executor import (
    ErrorFormatter,
    Executor,
    Failure,
    ResultFormatter,
    ToolResult,
    envelope,
    error_envelope,
    result_text,
    tools_by_name,
)
from .media.sources import MediaPolicy
from .media.store import MediaStore
from .media.vision import CONVERSATION, ImageFallback, Vision, conversation_ids
from .replies import ModelReply, ProviderError, ToolCall, read_reply
from .state import RunResult, RunState, Usage
from .streaming.assembler import Assembler
from .tools import RUN_ID, Tool, tool_guidance

__all__ = ["Agent", "Pending", "RunResult", "RunState", "Usage", "Verdict"]

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

CAPPED_WITHOUT_ANSWER = "(The run stopped at its iteration limit before the model gave an answer.)"

EventHandler = Callable[[Event], Any]
log = logging.getLogger("mini_framework")


# ----------------------------------------------------------------------------- the agent


class Agent:
    """A model, some tools, and the loop between them. See the module docstring."""

    def __init__(
        self,
        client: Any,
        model: str,
        tools: Iterable[Any] = (),
        *,
        instructions: str | None = None,
        max_iterations: int = 8,
        max_repeats: int = 2,
        tool_timeout: float | None = 60.0,
        max_concurrency: int = 8,
        retry_budget: int = 2,
        format_error: ErrorFormatter = error_envelope,
        format_result: ResultFormatter = result_text,
        checkpoint: Checkpoint | None = None,
        approver: Approver | None = None,
        approval_timeout: float | None = 300.0,
        audit_log: str | os.PathLike[str] | None = None,
        on_event: EventHandler | None = None,
        image_input: bool | None = None,
        image_fallback: ImageFallback | None = None,
        vision: Any = None,
        media: MediaPolicy | None = None,
        result_cache: ResultCache | None = None,
        spill_dir: str | os.PathLike[str] | None = None,
        max_history_tokens: int | None = None,
        stream: bool = False,
        **request_options: Any,
    ) -> None:
        check_options(request_options)
        check_settings(max_iterations=max_iterations, max_repeats=max_repeats, tool_timeout=tool_timeout,
                       max_concurrency=max_concurrency, retry_budget=retry_budget)
        if isinstance(tools, (str, bytes, dict)) or isinstance(tools, Tool) or callable(tools):
            raise TypeError("tools must be a list of tools, e.g. tools=[get_weather]")
        self.client = client  # an OpenAI or AsyncOpenAI client (see connect())
        self.model = model
        self.tools: list[Tool] = list(tools_by_name(tools).values())  # two tools with one name: ValueError
        self.result_cache = result_cache if result_cache is not None else ResultCache()  # for @tool(cache=...)
        self.spill_dir = spill_dir  # for @tool(too_long_to_file=...): None, the temporary folder
        if max_history_tokens is not None and (isinstance(max_history_tokens, bool)
                                               or not isinstance(max_history_tokens, int) or max_history_tokens < 1):
            raise ValueError(f"max_history_tokens must be a whole number of tokens, not {max_history_tokens!r}")
        self.max_history_tokens = max_history_tokens  # each request's history trimmed to this (trimming.py)
        if not isinstance(stream, bool):
            raise TypeError(f"stream must be True or False, not {stream!r:.40}")
        self.stream = stream  # requests with stream=True: text arrives as TextDelta events (streaming.py)
        self.media = MediaStore(media)  # the images tools return, by media_id (kept across runs, bounded)
        self.vision = Vision.for_model(model, self.media, image_input=image_input, fallback=image_fallback,
                                       describer=vision)  # how images reach this model
        self.tools += [t for t in self.vision.offered_tools() if t.name not in {x.name for x in self.tools}]
        self.instructions = instructions  # the system prompt; the tools' best practices are appended
        self.max_iterations = max_iterations  # model requests that may call tools, per run
        self.max_repeats = max_repeats  # runs of one identical call before it is refused
        self.tool_timeout = tool_timeout
        self.max_concurrency = max_concurrency
        self.retry_budget = retry_budget
        self.format_error = format_error
        self.format_result = format_result
        self.checkpoint = checkpoint  # every call passes it before running (None: all run)
        self.approver = approver  # decides gated calls inline (None: the run pauses for a person)
        self.approval_timeout = approval_timeout  # seconds an approver may take; then the call is declined
        self.audit = AuditLog(audit_log) if audit_log is not None else None  # one JSON line per approval event
        if self.audit is not None:
            self.audit.check()  # an unwritable path is an error now, not after a paid model request
        self.handlers: list[EventHandler] = [on_event] if on_event else []
        self.request_options = request_options  # e.g. temperature=0, tool_choice="required"
        self.specs = [t.to_openai_tool() for t in self.tools]  # built once

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
        """Continue a paused run once its `pending` calls are decided (undecided ones meet the checkpoint again)."""
        return run_sync(self.aresume(paused, on_event=on_event))

    async def aresume(self, paused: RunResult, *, on_event: EventHandler | None = None) -> RunResult:
        """`resume`, for async code."""
        if not isinstance(paused, RunResult):
            raise TypeError(f"resume() takes the RunResult of a paused run (from run(), or RunPaused.result), "
                            f"not {type(paused).__name__}")
        state = paused.state
        with _RESUMING:  # two threads resuming one run: exactly one gets it
            if state is None or not paused.paused or state.busy:
                raise ValueError("only a paused run can be resumed, once: this one is finished or already being "
                                 "resumed (see result.paused)")
            state.busy = True
        try:
            saved.claim_copies(state)  # a saved copy of this run can no longer be loaded and resumed again
        except saved.SavedRunError:
            state.busy = False
            raise
        for item in paused.pending:
            item.closed = True  # deciding it after this point is an error, not a silent no-op
            decision = item.decision
            if decision is None and item.gated:  # deny by default
                decision = Decision("deny", "default (no decision)", time.time(), reason="no one approved it")
            if decision is not None:
                if not self._audit(state, EVENT[decision.action], item.call, decision.arguments or item.arguments,
                                   by=decision.by, reason=decision.reason, at=decision.at) and decision.allows:
                    decision = Decision("deny", "gate", time.time(), reason="the audit log could not be written")
                state.approvals[item.id] = decision
                state.decided[item.id] = Verdict.run()  # the checkpoint is not asked again
        paused.pending.clear()  # the same list as state.pending: a second resume() now sees nothing to do
        return await self.proceed(state, on_event, claimed=True)

    def load(self, path: str | os.PathLike[str]) -> RunResult:
        """A paused run that `result.save(path)` wrote, ready to be decided and resumed by this agent (it
        needs the same tools). A damaged or edited file raises SavedRunError; nothing runs."""
        return saved.load(path, self.tools)

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

    async def proceed(self, state: RunState, on_event: EventHandler | None = None, *,
                      claimed: bool = False) -> RunResult:
        """Take steps until the run is done or paused (`claimed`: the caller already set `state.busy`)."""
        handlers = self.handlers + ([on_event] if on_event else [])

        def emit(event: Event) -> None:
            for handler in handlers:
                handler(event)

        executor = self._executor(state)
        with _RESUMING:
            if state.busy and not claimed:
                raise ValueError("this run is already running (a run's state is worked on by one call at a time)")
            state.busy = True
        run = RUN_ID.set(state.run_id)  # tools, predicates, approvers and checkpoints may count per run
        try:
            if state.waiting:  # a resumed run: answer the calls it paused on first
                await self.answer_calls(state, executor, emit)
            while not state.done and not state.pending:
                await self.step(state, executor, emit)
        except Exception as exc:
            try:
                exc.partial_result = self.result(state)  # type: ignore[attr-defined]
            except Exception:  # an exception class that takes no attributes: raised as it is
                pass
            raise
        finally:
            RUN_ID.reset(run)
            state.busy = False
        result = self.result(state)
        if state.pending:  # said once the run can be resumed (a handler may resume it right away)
            emit(RunPaused(state.iteration, tuple(p.call for p in state.pending), result))
        return result

    async def step(self, state: RunState, executor: Executor, emit: EventHandler) -> None:
        """One model request, and the tool calls it asks for."""
        final = state.iteration >= self.max_iterations
        state.iteration += 1
        if final:
            state.capped = True
            emit(CapReached(state.iteration, self.max_iterations))
        reply = await self.ask_model(state, emit, with_tools=bool(self.tools) and not final)
        message = reply.message
        if final and reply.calls:  # asked for tools anyway: unanswered calls would break the history
            message = {"role": "assistant", "content": message.get("content") or CAPPED_WITHOUT_ANSWER}
        state.messages.append(message)
        if final or not reply.calls:
            state.done = True
            emit(FinalAnswer(state.iteration, message.get("content")))
            return
        state.waiting = list(reply.calls)
        if reply.finish_reason == "length":  # cut off by max_tokens: the arguments may be half-written
            state.decided.update({call.id: TRUNCATED for call in reply.calls})
        await self.answer_calls(state, executor, emit)

    async def ask_model(self, state: RunState, emit: EventHandler, with_tools: bool) -> ModelReply:
        """Send the conversation; return the reply, read and repaired, its usage counted."""
        self.vision.prepare(state.messages)  # no image part where the model cannot take it
        messages = state.messages  # the run keeps everything; a request may carry less
        if self.max_history_tokens is not None:  # older turns left out whole, the current one never
            tools = self.specs if with_tools else None
            messages = trim_history(messages, self.max_history_tokens, tools=tools).messages
        params: dict[str, Any] = {"model": self.model, "messages": messages}
        options = {k: v for k, v in self.request_options.items() if k not in STREAM_ONLY}
        if with_tools:
            params.update(tools=self.specs, **options)
        else:
            params.update({k: v for k, v in options.items() if k not in TOOLS_ONLY})
        emit(ModelRequest(state.iteration, len(state.messages), len(self.specs) if with_tools else 0))
        if self.stream:
            params.update(stream=True, stream_options=self.request_options.get("stream_options",
                                                                              {"include_usage": True}))
        started = time.perf_counter()
        try:
            create = self.client.chat.completions.create
            response = await either_way(create, **for_this_sdk(create, params))
            if self.stream:
                response = await self._assemble(response, state.iteration, emit)
        except RecursionError:
            raise ProviderError("the reply is nested too deeply to read", "(not shown)") from None
        taken = {_call_id(c) for m in state.messages for c in (m.get("tool_calls") or ())}
        reply = read_reply(response, {t for t in taken if isinstance(t, str)}, state.iteration)
        state.usage.add(reply.prompt_tokens, reply.completion_tokens, reply.cached_tokens)
        emit(ModelResponse(state.iteration, reply.message, reply.prompt_tokens, reply.completion_tokens,
                           time.perf_counter() - started, tuple(reply.repairs)))
        return reply

    async def _assemble(self, stream: Any, iteration: int, emit: EventHandler) -> dict[str, Any]:
        """Read a streamed reply chunk by chunk, saying each piece of text as it comes (TextDelta); return
        the `chat.completion` the same request would have returned without streaming (streaming.py)."""
        assembler = Assembler()
        async for chunk in _chunks(stream):
            text = assembler.feed(chunk)
            if text:
                emit(TextDelta(iteration, text))
        return assembler.finish()

    async def answer_calls(self, state: RunState, executor: Executor, emit: EventHandler) -> None:
        """Decide the waiting calls, then answer each: run, answered, declined, or refused as a repeat.
        A call that waits for a person (a gated tool without a decision, or a checkpoint's pause) stops
        the run with `state.pending` set, before any call of the reply runs."""
        verdicts: dict[str, Verdict] = {}
        paused: list[Pending] = []
        for call in state.waiting:
            verdict = state.decided.get(call.id) or await self._ask_checkpoint(call)
            state.decided[call.id] = verdicts[call.id] = verdict
            if verdict.action == "pause":
                paused.append(self._pending(call, verdict.text, always=True))
            elif verdict.action == "run" and call.id not in state.approvals:
                item = self._pending(call, f"{call.name} needs a person's approval")
                if not item.gated or self._repeated(state, item):  # a repeat is refused without asking anyone
                    continue
                if not self._audit(state, "requested", call, item.arguments):
                    state.approvals[call.id] = Decision("deny", "gate", time.time(),
                                                        reason="the audit log could not be written")
                    continue
                if self.approver is None:
                    paused.append(item)
                    continue
                decision = await ask(self.approver, item, self.approval_timeout)
                if not self._audit(state, EVENT[decision.action], call, decision.arguments or item.arguments,
                                   by=decision.by, reason=decision.reason) and decision.allows:
                    decision = Decision("deny", "gate", time.time(), reason="the audit log could not be written")
                state.approvals[call.id] = decision
        if paused:
            for item in paused:
                if verdicts[item.id].action == "pause":
                    del state.decided[item.id]  # asked again on resume unless decided
            state.pending = paused  # proceed() says RunPaused once the state is free to resume
            return
        to_run: list[ToolCall] = []
        answered: dict[str, ToolResult] = {}
        for call in state.waiting:
            verdict = verdicts[call.id]
            cleared = self._clear(state, call, executor) if verdict.action == "run" else None
            if isinstance(cleared, ToolCall):
                to_run.append(cleared)
                emit(ToolStarted(state.iteration, cleared))
            elif isinstance(cleared, ToolResult):
                answered[call.id] = cleared
            else:
                failure: Failure = "truncated" if verdict is TRUNCATED else "not_run"
                answered[call.id] = ToolResult(call, verdict.text, ok=False, failure=failure)
        ran = {r.call.id: r for r in await self.run_tools(state, executor, to_run)}
        results = [answered.get(call.id) or ran[call.id] for call in state.waiting]
        for result in results:
            approval = state.approvals.get(result.call.id)
            if approval is not None and approval.allows and result.failure not in ("denied", "not_run"):
                if approval.action == "edit":
                    result.content = EDITED.format(json.dumps(approval.arguments, ensure_ascii=False)) + result.content
                self._audit(state, "executed" if result.ok else "failed", result.call, approval.arguments,
                            by=approval.by, failure=result.failure)
            emit(ToolFinished(state.iteration, result))
        state.results += results
        state.messages += [r.message for r in results]
        await self.vision.deliver(results, state.messages)
        state.waiting, state.decided, state.approvals = [], {}, {}

    def _pending(self, call: ToolCall, reason: str, *, always: bool = False) -> Pending:
        """The waiting-room record of a call: its validated arguments (for gated tools, or `always`), and
        whether its tool is gated. Anything that goes wrong while checking a gated tool's call keeps it gated."""
        tool = next((t for t in self.tools if t.name == call.name), None)
        if tool is None or (tool.requires_approval is False and not always):
            return Pending(call, reason, tool=tool)
        gated = tool.requires_approval is not False
        try:
            values = prepare(tool, call.arguments).model_dump(mode="json")
            if gated:
                gated = tool.needs_approval(tool.validate(values))
        except ArgumentsError:  # it cannot run: answered with what to fix (see _clear), no one is asked
            return Pending(call, reason, tool=tool)
        except Exception:  # a validator that crashed, arguments nested too deep: only a denial is possible
            return Pending(call, reason, gated=gated, tool=tool)
        return Pending(call, reason, values, gated=gated, tool=tool)

    def _repeated(self, state: RunState, item: Pending) -> bool:
        """Whether run_tools will refuse this call as a repeat (so no one is asked to approve it)."""
        arguments = item.call.arguments if item.arguments is None else json.dumps(item.arguments, ensure_ascii=False)
        return state.seen.get(f"{item.name} {canonical(arguments)}", 0) >= self.max_repeats

    def _clear(self, state: RunState, call: ToolCall, executor: Executor) -> ToolCall | ToolResult:
        """The call to run, as approved; or the answer to a call that may not run. Every call passes here
        just before it runs: a gated call runs only with an unused approval bound to these arguments."""
        decision = state.approvals.get(call.id)
        tool = next((t for t in self.tools if t.name == call.name), None)
        if decision is None:
            if tool is None or tool.requires_approval is False:
                return call
            item = self._pending(call, "")
            if item.gated and item.arguments is not None and self._repeated(state, item):  # refused as a repeat
                key = f"{call.name} {canonical(json.dumps(item.arguments, ensure_ascii=False))}"
                state.seen[key] += 1
                return repeated_call(call, state.seen[key] - 1, state.last_result.get(key))
            if item.gated:
                return _declined(call, UNAPPROVED)  # defence in depth: the pause decides these
            if item.arguments is None:  # invalid: answered here, so a second validation can't let it through
                try:
                    prepare(tool, call.arguments)
                    problem = "the arguments could not be checked"
                except ArgumentsError as exc:
                    problem = str(exc)
                except Exception:
                    problem = "the arguments could not be checked"
                return executor.refuse(call, problem)
            return ToolCall(call.id, call.name, json.dumps(item.arguments, ensure_ascii=False))
        if decision.verbatim:
            return ToolResult(call, decision.reason, ok=False, failure="not_run")
        if not decision.allows:
            reason = f" Reason: {decision.reason.rstrip('.')}." if decision.reason else ""
            return _declined(call, DECLINED.format(reason=reason))
        if decision.arguments is None:  # approved as written (a checkpoint's pause of a call that can't validate)
            return call if not self._pending(call, "").gated else _declined(call, UNAPPROVED)
        try:
            values = prepare(tool, decision.arguments).model_dump(mode="json") if tool else None
        except Exception:
            values = None
        if values is None or binding(call.name, values, call.id) != decision.bound_to \
                or decision.bound_to in state.spent:
            self._audit(state, "denied", call, decision.arguments, by="gate", reason="the approval does not match")
            return _declined(call, UNAPPROVED)
        state.spent.append(decision.bound_to)  # used once
        return ToolCall(call.id, call.name, json.dumps(values, ensure_ascii=False))

    def _audit(self, state: RunState, event: str, call: ToolCall, arguments: Any, *, by: str = "",
               reason: str = "", at: float | None = None, **details: Any) -> bool:
        """One line in the audit log, if there is one. False if it could not be written: a call whose request
        or approval is not on record does not run; a result that is not on record is logged as an error."""
        if self.audit is None:
            return True
        try:
            self.audit.record(event, run=state.run_id, call_id=call.id, tool=call.name,
                              arguments_hash=arguments_hash(arguments if arguments is not None else call.arguments),
                              by=by, reason=reason, at=at, **details)
        except (OSError, ValueError, TypeError) as exc:
            log.error("the audit log %s could not be written (%s event of call %s): %s", self.audit.path, event,
                      call.id, exc)
            return False
        return True

    async def _ask_checkpoint(self, call: ToolCall) -> Verdict:
        """The checkpoint's verdict on a call (no checkpoint: run). A checkpoint that fails pauses the run."""
        if self.checkpoint is None:
            return Verdict.run()
        try:
            verdict = self.checkpoint(call, next((t for t in self.tools if t.name == call.name), None))
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:  # fail closed: nothing runs that the checkpoint did not allow
            return Verdict.pause(f"the checkpoint failed: {type(exc).__name__}")
        if not isinstance(verdict, Verdict):
            return Verdict.pause(f"the checkpoint returned {type(verdict).__name__}, not a Verdict")
        if verdict.action not in ("run", "answer", "pause") or not isinstance(verdict.text, str):
            return Verdict.pause(f"the checkpoint returned an unusable verdict: {verdict!r:.100}")
        return verdict

    async def run_tools(self, state: RunState, executor: Executor, calls: list[ToolCall]) -> list[ToolResult]:
        """Run calls of one reply; an identical call seen too often is answered without running it."""
        fresh: list[ToolCall] = []
        refused: dict[int, ToolResult] = {}
        for i, call in enumerate(calls):
            key = f"{call.name} {canonical(call.arguments)}"
            state.seen[key] = state.seen.get(key, 0) + 1
            if state.seen[key] > self.max_repeats:
                refused[i] = repeated_call(call, state.seen[key] - 1, state.last_result.get(key))
            else:
                fresh.append(call)
        seen = CONVERSATION.set(conversation_ids(state.messages))  # what image_understand may look at
        try:
            ran = iter(await executor.run(fresh))
        finally:
            CONVERSATION.reset(seen)
        results = [refused[i] if i in refused else next(ran) for i in range(len(calls))]
        for call, result in zip(calls, results):
            if result.failure != "repeated":
                state.last_result[f"{call.name} {canonical(call.arguments)}"] = result.content
        return results

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
                            format_result=self.format_result, media=self.media, cache=self.result_cache,
                            spill_dir=self.spill_dir, can_read_files=any(t.reads_files for t in self.tools))
        executor.failures = state.failures
        return executor


TRUNCATED = Verdict("answer", "The reply was cut off (finish_reason \"length\") while this call was being "
                             "written, so it did not run: its arguments may be incomplete. Call it again, "
                             "with shorter arguments if you can.")


EVENT = {"approve": "approved", "edit": "edited", "deny": "denied"}  # a decision's name in the audit log
DECLINED = ("A person declined this call, so it did not run.{reason} Do not call it again for this request; "
            "tell the user it was not done.")
UNAPPROVED = ("This call did not run: it needs a person's approval for exactly these arguments, and none covers "
              "it (each approval covers one call, once). Do not retry it; tell the user it needs their approval.")
EDITED = "A person changed the arguments before this call ran; it ran with {}.\n"


async def _chunks(stream: Any) -> AsyncIterator[Any]:
    """The chunks of an SDK stream, from async code: an AsyncStream as it is; a (blocking) Stream read in
    one worker thread that hands each chunk over, so the event loop never waits on the network."""
    if hasattr(stream, "__aiter__"):
        async for chunk in stream:
            yield chunk
        return
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for chunk in stream:
                loop.call_soon_threadsafe(inbox.put_nowait, ("chunk", chunk))
                if stop.is_set():
                    break
        except BaseException as exc:  # raised again in the loop's thread, below
            loop.call_soon_threadsafe(inbox.put_nowait, ("error", exc))
        else:
            loop.call_soon_threadsafe(inbox.put_nowait, ("end", None))

    reader = asyncio.ensure_future(in_thread(pump))
    try:
        while True:
            kind, item = await inbox.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()
        close = getattr(stream, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()  # the HTTP response: a stream given up on is not read to its end
        reader.cancel()


def _declined(call: ToolCall, text: str) -> ToolResult:
    """The answer to a call that was not allowed to run."""
    return ToolResult(call, envelope("error", error=text), ok=False, failure="denied")


_RESUMING = threading.Lock()  # makes "is this state busy? then it is mine" one step


class _Abandoned(Exception):
    """Raised into a run whose events() iterator nobody reads any more."""


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
    settings = [name for name in inspect.signature(Agent.__init__).parameters
                if name not in ("self", "request_options")]
    for name in options:
        if name in REQUEST_OPTIONS or name in SDK_OPTIONS:
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
