"""This feature's hook: `Delegation` runs the sub-agent behind each delegating call of a reply.

Every Agent with a tool made by `as_tool(agent)` (or `as_tool(llm_function)`) has it (the tool option
`delegate`). It acts in
`before_calls`, after the approval gate (it is `last`, and places itself after the gate), so a reply
whose own calls wait for a person starts no sub-agent until they are decided. For each delegating call:

    refused             a cycle (planner → researcher → planner), a depth past `max_depth`, or the shared
                        budget spent: the call is answered with why and what to do instead, never run
    run                 the sub-agents of one reply run concurrently; each is a shallow copy of its Agent
                        with max_iterations = min(its own, its even part of what is left of the share - 1),
                        so its requests fit; an LLM function is called with the call's arguments
    its events          reach the parent's handlers as SubAgentEvent (events.py), nested
    its usage           each of its requests is added to the parent's `usage` (so `result.usage.requests`,
                        tokens and `usage.cost(price)` include it); `sub_agent_usage(result)` splits it
    it answers          the call is answered (ok) with its final answer only, bounded (tool.py); its whole
                        RunResult is the ToolResult's `value`, for your code, never for the model
    it pauses           (a gated call inside it, no approver) the parent's call is held with each call the
                        sub-agent waits on (`Delegated`, pending.py): the parent's run pauses and lists them.
                        Resuming the parent resumes the sub-agent, whose own gate applies the decisions
    it fails            whatever it raises (a ProviderError, a bug) is the call's error, through the
                        parent's `format_error`; the parent's run goes on

The shared budget: the sub-agents one parent run starts may make `share × parent.max_iterations` model
requests in all (a sub-agent's own sub-agents count in its requests); each run is granted what it may
make when it starts, and what it did not use is given back when it ends. It lives in the run's state,
so it survives a pause.

Concessions: the parent's `tool_timeout` does not apply (a sub-agent is bounded by its own iterations,
its tools' timeouts and its client's timeout). A streaming sub-agent streams (its TextDelta events arrive
wrapped: print `event.innermost`). `usage.cost(price)` prices every token at one price: with models of
different prices, price each sub-agent's part (`sub_agent_usage`) at its own. A run paused inside a
sub-agent cannot be saved to a file yet (SavedRunError): decide it in this process. A gated delegating
tool is refused (gate the sub-agent's tools instead). The parent's approver and audit log do not see the
sub-agent's calls: give the sub-agent its own (without an approver its pause pauses the parent). An LLM
function's inner events are not forwarded (it takes no handler).
"""
from __future__ import annotations

import asyncio
import copy
import logging
import math
import time
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field

from ..agent import Agent, repeat_key
from ..concurrency import _private_loop
from ..events import Event, ToolStarted
from ..executor import ToolResult, describe_exception, envelope, error_envelope, result_text, to_text
from ..hooks import Hook, Plan, Run
from ..replies import ToolCall
from ..schema import ToolDefinitionError
from ..state import RunResult, Usage
from .events import SubAgentEvent
from .pending import Delegated
from .tool import Delegate, answer_text, bounded

__all__ = ["Delegation", "DelegationState", "default_hooks", "sub_agent_usage"]

log = logging.getLogger("mini_framework")
KEY = "delegation"  # this feature's entry in RunState.features and in a plan's data

# the agents running, from the main one down, as (name, id of the Agent): how a cycle is seen
_CHAIN: ContextVar[tuple[tuple[str, int], ...]] = ContextVar("mini_framework_delegation", default=())

CYCLE = ("{name} was not run: {path} would delegate in a circle (it would hand the task to an agent that is "
         "waiting for this one). Do the task with your own tools, or answer with what you have.")
TOO_DEEP = ("{name} was not run: {path} is more than {limit} level(s) of sub-agents deep. Do the task with your own "
            "tools, or answer with what you have.")
SPENT = ("{name} was not run: the sub-agents of this run have used their share of model requests ({limit}). Stop "
         "calling sub-agents: answer the user with what you have.")


class _FromParent(Exception):
    """Raised through a sub-agent's run by what the parent's event handlers raised: the parent's to raise."""


@dataclass
class DelegationState:
    """A run's sub-agents: the requests they used (or hold while they run or wait), and their usage by name."""

    spent: int = 0
    usage: dict[str, Usage] = field(default_factory=dict)


class Delegation(Hook):
    """Runs sub-agents for their delegating calls (see the module docstring)."""

    last = True
    options = ("delegate",)

    def attach(self, agent: Agent) -> None:
        for one in agent.tools:
            if "delegate" in one.options and "requires_approval" in one.options:
                raise ToolDefinitionError(f"{one.name} runs a sub-agent and requires approval: gate the sub-agent's "
                                          "own tools instead (their calls pause this run, and are approved here)")
        agent.hooks.remove(self)  # after the gate in before_calls, whatever the order the hooks came in
        agent.hooks.append(self)

    async def before_calls(self, run: Run, plans: list[Plan]) -> None:
        mine = [p for p in plans if p.tool is not None and "delegate" in p.tool.options and p.arguments is not None]
        if not mine or any(p.held is not None for p in run.state.plans or ()):
            return  # a call of this reply waits for a person: no sub-agent starts before it is decided
        fresh = [p for p in mine if KEY not in p.data]  # the others are sub-agents paused earlier: resumed
        for n, plan in enumerate(fresh):
            self._start(run, plan, len(fresh) - n)
        limit = asyncio.Semaphore(run.agent.max_concurrency if run.agent is not None else 8)

        async def one(plan: Plan) -> None:
            async with limit:
                if len(mine) > 1:  # a blocking client called right on the loop would run them one by one
                    _private_loop.set(None)  # (this task's own context: the caller's is untouched)
                await self._run(run, plan)

        outcomes = await asyncio.gather(*(one(p) for p in mine if KEY in p.data), return_exceptions=True)
        for outcome in outcomes:  # (what a handler of the parent raised): once every sub-agent is done, none left
            if isinstance(outcome, BaseException):  # behind running
                raise outcome
        waiting = [item for p in mine if isinstance(p.held, list) for item in p.held]
        clashes = Counter(item.id for item in waiting)
        for item in waiting:
            if clashes[item.id] > 1:  # two sub-agents' calls with one id: each still found by its own
                item.id = f"{item.via.id}/{item.id}"

    def _start(self, run: Run, plan: Plan, starting: int) -> None:
        """Refuse the call (a cycle, too deep, the budget spent), or grant its sub-agent a share of what is left
        of the budget (split evenly among the `starting` sub-agents that start with it) and make its copy."""
        assert plan.tool is not None
        spec: Delegate = plan.tool.options["delegate"]
        state: DelegationState = run.feature_state(KEY, DelegationState)
        limit = _limit(run, spec)
        left = limit - state.spent
        refusal = _refusal(spec, _CHAIN.get() or (("", id(run.agent)),), limit, left)
        if refusal is not None:
            plan.answer(envelope("error", error=refusal), "not_run")
            return
        child, allowed = None, 0  # an LLM function: what it uses is counted once it has used it
        if isinstance(spec.agent, Agent):
            even = left if left == math.inf else max(1, left // starting)  # (inf // 1 is nan)
            allowed = int(min(spec.agent.max_iterations + 1, even))
            child = copy.copy(spec.agent)  # its own max_iterations: concurrent and nested uses never race
            child.max_iterations = allowed - 1  # so its requests, the last one without tools included, fit
        state.spent += allowed
        plan.data[KEY] = (child, None, allowed)
        if run.agent is not None:
            key = repeat_key(plan)  # counted as a call that ran, for the loop's repeat guard
            run.state.seen[key] = run.state.seen.get(key, 0) + 1

    async def _run(self, run: Run, plan: Plan) -> None:
        """Run, or resume, the sub-agent of one call, and answer or hold the call with what it did."""
        assert plan.tool is not None and plan.arguments is not None
        spec: Delegate = plan.tool.options["delegate"]
        state: DelegationState = run.feature_state(KEY, DelegationState)
        child, paused, allowed = plan.data[KEY]
        run.emit(ToolStarted(run.state.iteration, plan.call))
        token = _CHAIN.set((*(_CHAIN.get() or (("", id(run.agent)),)), (spec.name, id(spec.agent))))
        started = time.perf_counter()

        def forward(event: Event) -> None:
            try:
                run.emit(SubAgentEvent(run.state.iteration, spec.name, event))
            except Exception as exc:  # the parent's own handler failed (or nobody reads its events() any more)
                raise _FromParent from exc

        result: RunResult | None = None
        try:
            if child is None:  # an LLM function, called with the validated arguments
                args, kwargs = plan.tool.bind(plan.arguments)
                answer = await spec.agent.arun(*args, **kwargs)
                usage, value = getattr(answer, "usage", None), getattr(answer, "value", answer)
                text = bounded(to_text(value), spec.max_answer_chars)
            elif paused is None:
                task = plan.arguments.model_dump()["task"]
                result = await child.arun(task, context=run.state.context, on_event=forward)
            else:
                result = await child.aresume(paused, on_event=forward)
        except _FromParent as exc:
            raise exc.__cause__ from None  # type: ignore[misc]  # the parent's, as if it had raised there
        except Exception as exc:  # the sub-agent's failure is this call's error, never the parent's
            used = self._count(run, state, spec, plan, _usage_of(exc))
            state.spent += used - allowed
            del plan.data[KEY]
            log.warning("sub-agent %s failed (call %s): %s", spec.name, plan.call.id,
                        describe_exception(exc, spec.name))
            plan.answered = ToolResult(plan.call, _error_text(run, exc, plan.call), ok=False, failure="exception",
                                       seconds=time.perf_counter() - started)
            return
        finally:
            _CHAIN.reset(token)
        if result is not None:
            usage, value, text = result.usage, result, answer_text(result, spec.max_answer_chars)
        used = self._count(run, state, spec, plan, usage if isinstance(usage, Usage) else None)
        if result is not None and result.paused:
            plan.data[KEY] = (child, result, allowed)
            plan.hold([Delegated(item, spec.name, plan.call) for item in result.pending])
            return
        del plan.data[KEY]
        state.spent += used - allowed  # what it did not use is given back (more, if its sub-agents overspent)
        plan.answered = ToolResult(plan.call, _answer(run, plan, text), ok=True, value=value,
                                   seconds=time.perf_counter() - started)

    @staticmethod
    def _count(run: Run, state: DelegationState, spec: Delegate, plan: Plan, usage: Usage | None) -> int:
        """Add the sub-agent's requests not counted yet to the parent's usage; how many it made in all."""
        if usage is None:
            return 0
        counted = plan.data.get("counted", 0)
        mine = state.usage.setdefault(spec.name, Usage())
        for one in usage.per_request[counted:]:
            for total in (run.state.usage, mine):
                total.add(one.prompt_tokens, one.completion_tokens, one.cached_tokens)
        plan.data["counted"] = len(usage.per_request)
        return len(usage.per_request)


def _refusal(spec: Delegate, chain: tuple[tuple[str, int], ...], limit: float, left: float) -> str | None:
    """Why this sub-agent may not start below `chain` (the agents running, as (name, id)), with `left` of the
    budget's `limit` requests left: a cycle, too deep, the budget spent; or None."""
    names = [n or (spec.name if i == id(spec.agent) else "(main agent)") for n, i in chain]
    path = " → ".join([*names, spec.name])
    if any(i == id(spec.agent) for _, i in chain):
        return CYCLE.format(name=spec.name, path=path)
    if len(chain) > spec.max_depth:
        return TOO_DEEP.format(name=spec.name, path=path, limit=spec.max_depth)
    return SPENT.format(name=spec.name, limit=limit) if left < 1 else None


def _limit(run: Run, spec: Delegate) -> float:
    """The requests all sub-agents of this run may make (math.inf: no shared limit)."""
    if spec.share is None or run.agent is None:
        return math.inf
    return math.floor(spec.share * run.agent.max_iterations)


def _usage_of(exc: BaseException) -> Usage | None:
    """What a failed sub-agent used: its partial result's usage, or an LLM function's runs' (LLMFunctionError)."""
    partial = getattr(exc, "partial_result", None)
    runs = [partial] if isinstance(partial, RunResult) else getattr(exc, "results", None)
    if not isinstance(runs, list) or not runs:
        return None
    total = Usage()
    for one in (r.usage.per_request for r in runs if isinstance(r, RunResult)):
        for request in one:
            total.add(request.prompt_tokens, request.completion_tokens, request.cached_tokens)
    return total


def _answer(run: Run, plan: Plan, text: str) -> str:
    """The answer as the parent's `format_result` shapes a tool's text (e.g. success_envelope); text if it can't."""
    if run.agent is None or run.agent.format_result is result_text or plan.tool is None:
        return text
    try:
        shaped = run.agent.format_result(text, plan.call, plan.tool)
    except Exception:
        log.warning("format_result failed for call %s; the answer goes as text", plan.call.id, exc_info=True)
        return text
    return shaped if isinstance(shaped, str) else text


def _error_text(run: Run, exc: BaseException, call: ToolCall) -> str:
    """What the parent model reads of a sub-agent's failure: the parent's `format_error`, else the default."""
    try:
        text = run.agent.format_error(exc, call) if run.agent is not None else error_envelope(exc, call)
        if isinstance(text, str):
            return text
    except Exception:
        log.warning("format_error failed for call %s; using the default envelope", call.id, exc_info=True)
    return error_envelope(exc, call)


def sub_agent_usage(result: RunResult) -> dict[str, Usage]:
    """The part of `result.usage` each sub-agent made, by name (its own sub-agents included): price each at
    its model's price, and the rest (`result.usage` minus these) at the parent's."""
    state = result.state.features.get(KEY) if result.state is not None else None
    return dict(state.usage) if isinstance(state, DelegationState) else {}


def default_hooks(option: str) -> list[Hook]:
    """The hook for a tool with `delegate` (made by as_tool)."""
    return [Delegation()]
