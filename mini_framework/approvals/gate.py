"""This feature's hook: the approval gate (and the checkpoint), between a reply's calls and their running.

    Agent(client, model, tools, approver=ask_in_console, audit_log="audit.jsonl")
    # the same as
    Agent(client, model, tools, hooks=[Approvals(approver=ask_in_console, audit_log="audit.jsonl")])

Every Agent whose tools include one with `requires_approval` has this hook, given or not. It is marked
`last`: after every other hook in `before_calls`, innermost around each call, so no hook order skips it.

    before_calls   each call meets the checkpoint (if any): run, answer, or pause. A call of a gated tool
                   whose predicate says so waits for a decision: the approver's, or the run pauses and
                   `result.pending` lists it. Nothing of a reply runs while any of its calls waits.
    resumed        decisions made while the run waited are taken (undecided gated calls are declined)
    around_call    just before a gated call runs, its approval is checked once more against the arguments
                   about to run (binding), then spent, once; a gated call without one is declined

The state of a run's approvals (`ApprovalState`) is what a saved run stores (saved.py).

What a decision can be, and the seams left for what comes next:
    approve / edit         the call runs, once, with the arguments shown; `valid_for=` makes it expire
    deny / respond         it does not run; the model reads why, or the person's own answer (respond)
    preview                a tool's `preview(arguments)` says what the call would do; shown with details()
    a question             a checkpoint's `Verdict.ask(...)` (`questions("ask_user")`): the same kind of pause,
                           `Pending(kind="question")`, answered with respond()
    a sub-agent's pause    any hook may `plan.hold(item)`: a tool that runs an agent can hold the parent's
                           call with the child's paused result, and resuming the parent resumes the child
    a tool list            `attach(agent)` sees every tool before the first request: the place to ask a
                           person to approve the tools a server offers (the MCP lesson builds on it)
"""
from __future__ import annotations

import inspect
import json
import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..executor import ToolResult, envelope
from ..hooks import Hook, Plan, Proceed, Run
from ..replies import ToolCall
from .approvers import Approver, ask
from .audit import AuditLog, arguments_hash
from .decisions import Checkpoint, Decision, Pending, Verdict, binding
from .options import needs_approval

__all__ = ["DECLINED", "UNAPPROVED", "ApprovalState", "Approvals", "default_hooks", "hooks_for"]

log = logging.getLogger("mini_framework")
KEY = "approvals"  # this feature's entry in RunState.features

EVENT = {"approve": "approved", "edit": "edited", "deny": "denied"}  # a decision's name in the audit log
DECLINED = ("A person declined this call, so it did not run.{reason} Do not call it again for this request; "
            "tell the user it was not done.")
UNAPPROVED = ("This call did not run: it needs a person's approval for exactly these arguments, and none covers "
              "it (each approval covers one call, once). Do not retry it; tell the user it needs their approval.")
EXPIRED = ("This call did not run: its approval expired before the run went on. Do not retry it; tell the user it "
           "needs to be approved again.")
EDITED = "A person changed the arguments before this call ran; it ran with {}.\n"


@dataclass
class ApprovalState:
    """A run's approvals: what was decided for the calls waiting, and which approvals were used."""

    decided: dict[str, Verdict] = field(default_factory=dict)  # call id -> the checkpoint's verdict (this reply)
    approvals: dict[str, Decision] = field(default_factory=dict)  # call id -> a person's decision (this reply)
    spent: list[str] = field(default_factory=list)  # bindings of approvals used (each runs one call, once)
    saved_to: list[str] = field(default_factory=list, repr=False)  # files this paused run was saved to (this
    # process only: never read from a file)
    record: str | None = None  # the folder that records spent approvals across processes (saved runs)
    ran: dict[str, Decision] = field(default_factory=dict, repr=False)  # approved calls of this reply that ran


class Approvals(Hook):
    """The approval gate and the checkpoint (see the module docstring)."""

    last = True
    options = ("requires_approval",)

    def __init__(self, *, approver: Approver | None = None, approval_timeout: float | None = 300.0,
                 audit_log: str | os.PathLike[str] | None = None, checkpoint: Checkpoint | None = None) -> None:
        self.approver = approver  # decides gated calls inline (None: the run pauses for a person)
        self.approval_timeout = approval_timeout  # seconds an approver may take; then the call is declined
        self.checkpoint = checkpoint  # every call passes it before running (None: all run)
        self.audit = AuditLog(audit_log) if audit_log is not None else None
        if self.audit is not None:
            self.audit.check()  # an unwritable path is an error now, not after a paid model request

    # -- before the calls -----------------------------------------------------------------

    async def before_calls(self, run: Run, plans: list[Plan]) -> None:
        state = _state(run)
        verdicts: dict[str, Verdict] = {}
        paused: list[tuple[Plan, Pending]] = []
        for plan in plans:
            call = plan.call
            verdict = state.decided.get(call.id) or await self._ask_checkpoint(call, plan)
            state.decided[call.id] = verdicts[call.id] = verdict
            if verdict.action == "pause":
                item = self._pending(plan, verdict.text, always=True)
                item.kind = verdict.kind
                paused.append((plan, item))
            elif verdict.action == "run" and call.id not in state.approvals:
                item = self._pending(plan, f"{call.name} needs a person's approval")
                if not item.gated:
                    continue
                if not self._audit(run, "requested", call, item.arguments):
                    state.approvals[call.id] = Decision("deny", "gate", time.time(),
                                                        reason="the audit log could not be written")
                    continue
                if self.approver is None:
                    paused.append((plan, item))
                    continue
                decision = await ask(self.approver, item, self.approval_timeout)
                if not self._audit(run, _event(decision), call, decision.arguments or item.arguments,
                                   by=decision.by, reason=decision.reason) and decision.allows:
                    decision = Decision("deny", "gate", time.time(), reason="the audit log could not be written")
                state.approvals[call.id] = decision
                if item.validated is not None:
                    plan.data["edited"] = item.validated
        if paused:
            for plan, item in paused:
                if verdicts[plan.call.id].action == "pause":
                    del state.decided[plan.call.id]  # asked again on resume unless decided
                plan.hold(item)
            return
        for plan in plans:
            verdict = verdicts[plan.call.id]
            if verdict.action == "answer":
                plan.answer(verdict.text, "not_run")
            elif verdict.action == "run":
                self._clear(run, state, plan)

    def _pending(self, plan: Plan, reason: str, *, always: bool = False) -> Pending:
        """The waiting-room record of a call: its validated arguments (for gated tools, or `always`), and
        whether its tool is gated. Anything that goes wrong while checking a gated tool's call keeps it gated."""
        tool, call = plan.tool, plan.call
        if tool is None or ("requires_approval" not in tool.options and not always):
            return Pending(call, reason, tool=tool)
        gated = "requires_approval" in tool.options
        if plan.arguments is None:
            if plan.data.get("crashed"):  # a validator that crashed, arguments nested too deep: only a denial
                return Pending(call, reason, gated=gated, tool=tool)
            return Pending(call, reason, tool=tool)  # it cannot run: answered with what to fix, no one is asked
        if gated:
            gated = needs_approval(tool, plan.arguments)
        return Pending(call, reason, plan.values, gated=gated, tool=tool, validated=plan.arguments,
                       preview=_preview(tool, plan) if gated else None)

    def _clear(self, run: Run, state: ApprovalState, plan: Plan) -> None:
        """Let the call run as approved (noted on the plan for around_call), or answer it: it may not run."""
        call, tool = plan.call, plan.tool
        decision = state.approvals.get(call.id)
        if decision is None:
            if tool is not None and "requires_approval" in tool.options and self._pending(plan, "").gated:
                plan.answered = _declined(call, UNAPPROVED)  # defence in depth: the pause decides these
            return
        if decision.verbatim:
            plan.answer(decision.reason, "not_run")
            return
        if not decision.allows:
            reason = f" Reason: {decision.reason.rstrip('.')}." if decision.reason else ""
            plan.answered = _declined(call, DECLINED.format(reason=reason))
            return
        if decision.arguments is None:  # approved as written (a checkpoint's pause of a call that can't validate)
            if self._pending(plan, "").gated:
                plan.answered = _declined(call, UNAPPROVED)
            return
        if decision.action == "edit":
            edited = plan.data.get("edited") or _edited(tool, decision)
            if edited is None:
                plan.answered = _declined(call, UNAPPROVED)
                return
            plan.arguments = edited  # checked when the person edited it: not validated again
            plan.data.pop("repeat", None)  # it is now another call: counted as what runs
        if decision.expired():
            self._audit(run, "expired", call, decision.arguments, by="gate", reason="the approval expired")
            plan.answered = _declined(call, EXPIRED)
            return
        values = plan.values
        if values is None or values != decision.arguments or binding(call.name, values, call.id) != decision.bound_to \
                or decision.bound_to in state.spent:
            self._audit(run, "denied", call, decision.arguments, by="gate", reason="the approval does not match")
            plan.answered = _declined(call, UNAPPROVED)
            return
        plan.data["approval"] = decision

    # -- around a call, innermost -----------------------------------------------------------

    async def around_call(self, plan: Plan, proceed: Proceed) -> ToolResult:
        decision: Decision | None = plan.data.get("approval")
        tool = plan.tool
        if decision is None:
            if tool is not None and "requires_approval" in tool.options and plan.arguments is not None \
                    and needs_approval(tool, plan.arguments):
                return _declined(plan.call, UNAPPROVED)  # no gate decided it (an Executor on its own): never run
            return await proceed()
        state = _state(plan.run) if plan.run is not None else ApprovalState()
        if plan.values is None or binding(plan.call.name, plan.values, plan.call.id) != decision.bound_to \
                or decision.bound_to in state.spent or not _spend(state, decision.bound_to, plan):
            if plan.run is not None:
                self._audit(plan.run, "denied", plan.call, decision.arguments, by="gate",
                            reason="the approval was used already")
            return _declined(plan.call, UNAPPROVED)
        state.spent.append(decision.bound_to)  # used once
        state.ran[plan.call.id] = decision  # on record in after_calls, in call order, before anything else
        result = await proceed()
        if decision.action == "edit":
            result.content = EDITED.format(json.dumps(decision.arguments, ensure_ascii=False)) + result.content
        return result

    async def after_calls(self, run: Run, results: list[ToolResult]) -> None:
        state = _state(run)
        for result in results:  # the first after_calls hook to act (innermost first): before any event is said
            decision = state.ran.pop(result.call.id, None)
            if decision is not None:
                self._audit(run, "executed" if result.ok else "failed", result.call, decision.arguments,
                            by=decision.by, failure=result.failure)
        state.decided, state.approvals, state.ran = {}, {}, {}

    # -- resuming -----------------------------------------------------------------------------

    def resumed(self, run: Run) -> None:
        from .saved import claim_copies  # here: saved.py builds on this module

        state = _state(run)
        claim_copies(state)  # a saved copy of this run can no longer be loaded and resumed again
        for item in run.state.pending:
            if not isinstance(item, Pending):
                continue
            item.closed = True  # deciding it after this point is an error, not a silent no-op
            decision = item.decision
            if decision is None and item.gated:  # deny by default
                decision = Decision("deny", "default (no decision)", time.time(), reason="no one approved it")
            if decision is not None:
                if not self._audit(run, _event(decision), item.call, decision.arguments or item.arguments,
                                   by=decision.by, reason=decision.reason, at=decision.at) and decision.allows:
                    decision = Decision("deny", "gate", time.time(), reason="the audit log could not be written")
                state.approvals[item.id] = decision
                state.decided[item.id] = Verdict.run()  # the checkpoint is not asked again
                for plan in run.state.plans or ():
                    if plan.call.id == item.id and item.validated is not None and decision.action == "edit":
                        plan.data["edited"] = item.validated

    # -- helpers ------------------------------------------------------------------------------

    async def _ask_checkpoint(self, call: ToolCall, plan: Plan) -> Verdict:
        """The checkpoint's verdict on a call (no checkpoint: run). A checkpoint that fails pauses the run."""
        if self.checkpoint is None:
            return Verdict.run()
        try:
            verdict = self.checkpoint(call, plan.tool)
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:  # fail closed: nothing runs that the checkpoint did not allow
            return Verdict.pause(f"the checkpoint failed: {type(exc).__name__}")
        if not isinstance(verdict, Verdict):
            return Verdict.pause(f"the checkpoint returned {type(verdict).__name__}, not a Verdict")
        if verdict.action not in ("run", "answer", "pause") or not isinstance(verdict.text, str):
            return Verdict.pause(f"the checkpoint returned an unusable verdict: {verdict!r:.100}")
        return verdict

    def _audit(self, run: Run, event: str, call: ToolCall, arguments: Any, *, by: str = "",
               reason: str = "", at: float | None = None, **details: Any) -> bool:
        """One line in the audit log, if there is one. False if it could not be written: a call whose request
        or approval is not on record does not run; a result that is not on record is logged as an error."""
        if self.audit is None:
            return True
        try:
            self.audit.record(event, run=run.state.run_id, call_id=call.id, tool=call.name,
                              arguments_hash=arguments_hash(arguments if arguments is not None else call.arguments),
                              by=by, reason=reason, at=at, **details)
        except (OSError, ValueError, TypeError) as exc:
            log.error("the audit log %s could not be written (%s event of call %s): %s", self.audit.path, event,
                      call.id, exc)
            return False
        return True


def _state(run: Run) -> ApprovalState:
    state: ApprovalState = run.feature_state(KEY, ApprovalState)
    return state


def _event(decision: Decision) -> str:
    """A decision's name in the audit log."""
    return "responded" if decision.verbatim else EVENT[decision.action]


def _declined(call: ToolCall, text: str) -> ToolResult:
    """The answer to a call that was not allowed to run."""
    return ToolResult(call, envelope("error", error=text), ok=False, failure="denied")


def _edited(tool: Any, decision: Decision) -> Any:
    """An edit's arguments as Python values, for a run loaded from a file (in memory they are kept as checked):
    the edit as the person gave it, checked once more, must give what was approved."""
    from ..arguments import prepare  # here: arguments.py builds on the tools this module guards

    try:
        validated = prepare(tool, decision.given if decision.given is not None else decision.arguments)
    except Exception:
        return None
    return validated


def _preview(tool: Any, plan: Plan) -> str | None:
    """What the call would do, by the tool's own `preview(arguments)` if it has one (never raises)."""
    show: Callable[[Any], Any] | None = getattr(tool, "preview", None)
    if not callable(show):
        return None
    try:
        return str(show(plan.arguments))[:4000]
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as exc:  # even SystemExit (argparse in a preview): the call still waits for a person
        return f"(its preview failed: {type(exc).__name__})"


def _spend(state: ApprovalState, bound_to: str, plan: Plan) -> bool:
    """Record an approval as used, across processes when this run was ever saved (record.py): False if some
    process used it already."""
    if state.record is None:
        return True
    from .record import spend  # here: only runs that were saved need it

    run_id = plan.run.state.run_id if plan.run is not None else ""
    return spend(state.record, run_id, bound_to)


def hooks_for(agent: Any, *, checkpoint: Checkpoint | None = None, approver: Approver | None = None,
              approval_timeout: float | None = 300.0, audit_log: str | os.PathLike[str] | None = None) -> list[Hook]:
    """The gate, with the Agent's shorthands."""
    return [Approvals(approver=approver, approval_timeout=approval_timeout, audit_log=audit_log,
                      checkpoint=checkpoint)]


def default_hooks(option: str) -> list[Hook]:
    """The gate for a tool with `requires_approval` (no approver: the run pauses for a person)."""
    return [Approvals()]
