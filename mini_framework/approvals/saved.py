"""A paused run as a signed JSON file: `result.save(path)` in one process, `agent.load(path)` in the next.

    paused = agent.run("给所有客户发一封道歉邮件")      # paused before the sends
    paused.save("paused_run.json")                  # a kernel restart, a deploy, a person's lunch break
    paused = agent.load("paused_run.json")          # in a new process, with the same tools
    paused.find("call_1").approve()
    result = agent.resume(paused)

What is kept: the conversation, the calls waiting and the decisions made so far, the counters
(iterations, usage, repeats, failed tries), the approvals already used, the run's id, and each tool
result as the model read it. Not kept: what tools returned as Python values (`ToolResult.value`),
registered images (the image parts in the conversation stay), and `context` (it only shapes the
system prompt, which is already in the conversation).

A saved run can grant an approval, so it is signed: an HMAC-SHA256 of its content (a checksum only the
holder of the key can compute) under a secret the loading process holds — the `key` you give, else
$MINI_FRAMEWORK_SAVE_KEY, else an owner-only key file made on first use (record.py), so a kernel restart
on the same machine just works. The file names its key (`key_id`, which tells nothing about the key), so
a file signed with another key says so. A file that is
unsigned (as the previous edition wrote them), signed with another key, cut short, edited, or whose
content does not describe a paused run is refused with SavedRunError saying why; nothing runs, and the
file is left where it was. A decision in the file must match the call it decides (its arguments and
binding), so a signed file cannot approve one call and run another.

A paused run is resumed once. `load` takes the run out of its file (renamed to `<name>.loaded` before
it is read), resuming the original in memory renames the files it was saved to, and — because a copy
of the file could still be loaded elsewhere — every approval of a saved run is recorded as spent, across
processes, before its call runs (record.py): of two copies, one runs the call, the other is told no.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..executor import ToolResult
from ..replies import ToolCall
from ..state import RequestUsage, RunResult, RunState, Usage
from .decisions import Decision, Pending, Verdict, binding
from .gate import KEY, ApprovalState
from .record import signing_key, spent_folder

if TYPE_CHECKING:
    from ..tools import Tool

__all__ = ["FORMAT", "SavedRunError", "claim_copies", "key_id", "load", "save"]

TAKEN = ".loaded"  # suffix of a saved run's file once it was loaded or its run resumed
FORMAT = "mini_framework.paused_run/2"
EARLIER = "mini_framework.paused_run/1"  # the previous edition's files: a checksum, no signature
MAX_BYTES = 64 * 1024 * 1024  # a saved run bigger than this is refused rather than read into memory


class SavedRunError(ValueError):
    """A saved run that cannot be resumed; the message says why. Nothing was run."""


# The file's shape, checked field by field when it is read (pydantic names the field that is wrong).
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Function(_Strict):
    model_config = ConfigDict(extra="allow", strict=True)
    name: str
    arguments: str


class _Part(_Strict):
    model_config = ConfigDict(extra="allow", strict=True)
    id: str
    type: str
    function: _Function


class _Message(_Strict):
    model_config = ConfigDict(extra="allow", strict=True)
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[_Part] | None = None
    tool_call_id: str | None = None


class _Call(_Strict):
    id: str
    name: str
    arguments: Any


Count = Field(ge=0, le=10**15)
Time = Field(ge=0, le=10**11)  # a Unix time: not NaN, not before 1970, not after the year 5000


class _Decision(_Strict):
    action: Literal["approve", "edit", "deny"]
    by: str
    at: float = Time
    arguments: dict[str, Any] | None
    reason: str
    verbatim: bool
    bound_to: str
    expires: Annotated[float, Time] | None
    given: dict[str, Any] | None


class _Pending(_Strict):
    call: _Call
    reason: str
    arguments: dict[str, Any] | None
    gated: bool
    kind: Literal["approval", "question"]
    decision: _Decision | None


class _Result(_Strict):
    call: _Call
    content: str
    ok: bool
    failure: Literal["unknown_tool", "invalid_arguments", "gave_up", "exception", "timeout", "repeated", "not_run",
                     "truncated", "bad_media", "denied"] | None
    seconds: float = Field(ge=0, le=10**9)
    repairs: list[str]
    attachments: list[dict[str, Any]]


class _Verdict(_Strict):
    action: Literal["run", "answer", "pause"]
    text: str


class _Usage(_Strict):
    requests: int = Count
    prompt_tokens: int = Count
    completion_tokens: int = Count
    cached_tokens: int = Count
    per_request: list[Annotated[list[Annotated[int, Count]], Field(min_length=3, max_length=3)]]


class _Run(_Strict):
    run_id: str
    messages: list[_Message]
    iteration: int = Count
    usage: _Usage
    results: list[_Result]
    seen: dict[str, Annotated[int, Count]]
    last_result: dict[str, str]
    failures: dict[str, Annotated[int, Count]]
    waiting: list[_Call]
    cut: list[str]
    pending: list[_Pending]
    decided: dict[str, _Verdict]
    approvals: dict[str, _Decision]
    spent: list[str]
    capped: bool
    done: bool


def save(result: RunResult, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
    """Write a paused run to `path`, signed (see the module docstring)."""
    state = result.state if isinstance(result, RunResult) else None
    if state is not None and state.busy:
        raise ValueError("this run is being resumed right now: save it once it pauses again")
    if state is None or not state.pending or state.done:  # the run's own list: `result.pending` can be rebound
        raise ValueError("only a paused run can be saved (result.paused is False): a finished run's "
                         "messages are all there is to keep — json.dump(result.messages, f)")
    if any(not isinstance(p, Pending) for p in state.pending):  # a sub-agent's call (delegation/): its run is
        raise SavedRunError("this run is paused inside a sub-agent, which cannot be saved to a file yet: decide "
                            "its calls and resume it in this process")  # not in the file, so it could not resume
    target = Path(path).absolute()
    if not target.parent.is_dir():
        raise FileNotFoundError(2, "no such folder to save the paused run in", str(target.parent))
    secret = signing_key(key)
    approvals = _approvals(state)
    approvals.record = spent_folder()  # from now on, its approvals are spent across processes
    run = _dump(state, approvals)
    try:
        text = json.dumps({"format": FORMAT, "key": key_id(secret), "signature": sign(run, secret), "run": run},
                          ensure_ascii=False, indent=1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"this run cannot be saved as JSON: {exc} (a message or tool result holds a Python "
                         "object; give the agent plain dicts)") from None
    write_private(target, text)
    if str(target) not in approvals.saved_to:
        approvals.saved_to.append(str(target))  # resuming this run in memory claims the file (claim_copies)


def load(path: str | os.PathLike[str], tools: list[Tool], *, key: bytes | str | None = None) -> RunResult:
    """Take a paused run out of the file `save` wrote (see the module docstring), for an agent with `tools`.
    SavedRunError if it can't be resumed (the file is then left where it was)."""
    where = Path(path)
    taken = where.with_name(where.name + TAKEN)
    secret = signing_key(key)
    try:
        if not stat.S_ISREG(where.stat(follow_symlinks=False).st_mode):
            raise SavedRunError(f"{where.name} is not a regular file: not a saved run")
        os.rename(where, taken)  # atomic: of two loads, one gets the file
    except FileNotFoundError:
        if taken.exists():
            raise SavedRunError(f"the paused run in {where.name} was already loaded (it is now {taken.name}): a "
                                "paused run is resumed once") from None
        raise SavedRunError(f"no saved run at {where}") from None
    try:
        result = _read(taken, tools, where.name, secret)
    except Exception as exc:  # anything wrong with it: refused, and not ours to keep
        os.rename(taken, where)
        if isinstance(exc, SavedRunError):
            raise
        raise SavedRunError(f"{where.name} cannot be resumed: its content is not a paused run "
                            f"({type(exc).__name__})") from None
    return result


def claim_copies(approvals: ApprovalState) -> None:
    """Before a paused run resumes in memory: take its saved files out of reach of `load`. SavedRunError if
    one of them was loaded already (then that copy is the one to resume)."""
    for name in approvals.saved_to:
        try:
            os.rename(name, name + TAKEN)
        except FileNotFoundError:
            if os.path.exists(name + TAKEN):
                raise SavedRunError(f"this paused run was loaded from {Path(name).name} already: resume that "
                                    "copy, not this one (a paused run is resumed once)") from None
        except OSError:
            continue  # unreadable folder, another file system: the record of spent approvals still holds
    approvals.saved_to = []


def _read(where: Path, tools: list[Tool], name: str, secret: bytes) -> RunResult:
    """Read and check a taken file."""
    try:
        fd = os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:  # not through a symlink swapped in after the check in load()
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise SavedRunError(f"{name} is not a regular file: not a saved run")
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise SavedRunError(f"{name} is over {MAX_BYTES // 2**20} MB: not a saved run of ours")
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        if isinstance(exc, SavedRunError):
            raise
        raise SavedRunError(f"{name} is not a saved run (not JSON: it may have been cut short)") from None
    found = data.get("format") if isinstance(data, dict) else type(data).__name__
    if found == EARLIER:
        raise SavedRunError(f"{name} was saved by the previous edition of mini_framework, without a signature: "
                            "refusing to resume it (anyone who could write the file could have approved a call). "
                            "Run the request again and save the new pause.")
    if not isinstance(data, dict) or found != FORMAT:
        raise SavedRunError(f"{name} is not a saved run of this version (format {found!r:.60}, expected {FORMAT!r})")
    signature = data.get("signature")
    if not isinstance(data.get("run"), dict) or not isinstance(signature, str) \
            or not hmac.compare_digest(signature, sign(data["run"], secret)):
        signer = data.get("key")
        if isinstance(signer, str) and signer != key_id(secret):
            raise SavedRunError(f"{name} was signed with another key than this process's (key {signer!r:.20}, this "
                                f"process has {key_id(secret)!r}): refusing to resume it. Every process that loads "
                                "saved runs needs the same key: see MINI_FRAMEWORK_SAVE_KEY")
        raise SavedRunError(f"{name} was changed after it was saved (its signature does not match): refusing to "
                            "resume it")
    try:
        run = _Run.model_validate(data["run"])
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise SavedRunError(f"{name} cannot be resumed: {field}: {first['msg']}") from None
    return _restore(run, data["run"], {t.name: t for t in tools}, name)


def _restore(run: _Run, raw: dict[str, Any], tools: dict[str, Tool], name: str) -> RunResult:
    """The RunResult of a checked file, after the checks a schema cannot express."""
    waiting = [ToolCall(c.id, c.name, c.arguments) for c in run.waiting]
    ids = [c.id for c in waiting]
    if not run.pending or run.done:
        raise SavedRunError(f"{name} is not a paused run (nothing is pending)")
    if len(set(ids)) != len(ids) or any(p.call.id not in ids for p in run.pending):
        raise SavedRunError(f"{name} cannot be resumed: its pending calls are not among the calls waiting")
    last = run.messages[-1] if run.messages else None
    asked = {c.id: c.function for c in ((last.tool_calls if last is not None else None) or ())}
    if last is None or last.role != "assistant" or not set(ids) <= set(asked):
        raise SavedRunError(f"{name} cannot be resumed: the conversation does not end with the calls waiting")
    if any(asked[c.id].name != c.name or asked[c.id].arguments != c.arguments for c in waiting):
        raise SavedRunError(f"{name} cannot be resumed: a waiting call is not the call in the conversation")
    for item in run.pending:
        if item.gated and item.call.name not in tools:
            raise SavedRunError(f"{name} waits on {item.call.name}, which this agent does not have: load it "
                                "into an agent with the same tools")
        tool = tools.get(item.call.name)
        expected = _checked(tool, item.call.arguments)  # what this agent would run for the call
        if item.arguments is not None and item.arguments != expected:
            raise SavedRunError(f"{name} cannot be resumed: the arguments shown for call {item.call.id!r:.60} are "
                                "not what its call would run")
        decision = item.decision
        if decision is not None and decision.action != "deny":
            _check_decision(name, item.call, decision, expected, tool)
    for call_id, decision in run.approvals.items():
        call = next((c for c in waiting if c.id == call_id), None)
        if call is None:
            raise SavedRunError(f"{name} cannot be resumed: a decision is for a call that is not waiting")
        if decision.action != "deny":
            tool = tools.get(call.name)
            _check_decision(name, _Call(id=call.id, name=call.name, arguments=call.arguments), decision,
                            _checked(tool, call.arguments), tool)
    state = RunState(
        raw["messages"], iteration=run.iteration,
        usage=Usage(run.usage.requests, run.usage.prompt_tokens, run.usage.completion_tokens, run.usage.cached_tokens,
                    [RequestUsage(*r) for r in run.usage.per_request]),
        results=[ToolResult(ToolCall(r.call.id, r.call.name, r.call.arguments), r.content, r.ok,
                            r.failure, seconds=r.seconds, repairs=r.repairs,
                            attachments=r.attachments) for r in run.results],
        seen=run.seen, last_result=run.last_result, failures=run.failures, waiting=waiting, cut=run.cut,
        capped=run.capped, done=run.done, run_id=run.run_id)
    state.features[KEY] = ApprovalState(
        decided={k: Verdict(v.action, v.text) for k, v in run.decided.items()},
        approvals={k: Decision(**d.model_dump()) for k, d in run.approvals.items()},
        spent=run.spent, record=spent_folder())
    state.pending = [Pending(ToolCall(p.call.id, p.call.name, p.call.arguments), p.reason, p.arguments, p.gated,
                             Decision(**p.decision.model_dump()) if p.decision else None,
                             tool=tools.get(p.call.name), kind=p.kind) for p in run.pending]
    return RunResult(None, state.messages, state.results, state.usage, state.iteration, state.capped,
                     state.pending, state)


def _check_decision(name: str, call: _Call, decision: _Decision, expected: dict[str, Any] | None,
                    tool: Tool | None) -> None:
    """A decision that lets a call run must be bound to that call and to what would run: for an approval, the
    call's arguments as this agent's tool checks them (`expected`); for an edit, the edit as checked."""
    if decision.arguments is None and decision.action == "approve" and not decision.bound_to:
        return  # a checkpoint's approval of a call as written (no arguments could be checked)
    runs = expected if decision.action == "approve" else \
        _checked(tool, decision.given if decision.given is not None else decision.arguments)
    if decision.arguments is None or decision.arguments != runs \
            or decision.bound_to != binding(call.name, decision.arguments, call.id):
        raise SavedRunError(f"{name} cannot be resumed: the decision on call {call.id!r:.60} does not match the "
                            "call it decides")


def _checked(tool: Tool | None, arguments: Any) -> dict[str, Any] | None:
    """Arguments as `tool` checks them (JSON-ready values, what a person approves), or None if they can't be."""
    if tool is None:
        return None
    from ..arguments import prepare  # here: arguments.py builds on the tools this module guards

    try:
        return prepare(tool, arguments).model_dump(mode="json", by_alias=True)
    except Exception:  # invalid, or a validator that crashed: nothing can be approved for it
        return None


def _approvals(state: RunState) -> ApprovalState:
    approvals: ApprovalState | None = state.features.get(KEY)
    if approvals is None:
        approvals = state.features[KEY] = ApprovalState()
    return approvals


def _dump(state: RunState, approvals: ApprovalState) -> dict[str, Any]:
    """The state as JSON-ready values (see the module docstring for what is left out)."""

    def call(c: ToolCall) -> dict[str, Any]:
        return {"id": c.id, "name": c.name, "arguments": c.arguments}

    def decision(d: Decision | None) -> dict[str, Any] | None:
        return None if d is None else {"action": d.action, "by": d.by, "at": d.at, "arguments": d.arguments,
                                       "reason": d.reason, "verbatim": d.verbatim, "bound_to": d.bound_to,
                                       "expires": d.expires, "given": d.given}

    pending = [p for p in state.pending if isinstance(p, Pending)]
    return {
        "run_id": state.run_id, "messages": state.messages, "iteration": state.iteration,
        "usage": {"requests": state.usage.requests, "prompt_tokens": state.usage.prompt_tokens,
                  "completion_tokens": state.usage.completion_tokens, "cached_tokens": state.usage.cached_tokens,
                  "per_request": [[r.prompt_tokens, r.completion_tokens, r.cached_tokens]
                                  for r in state.usage.per_request]},
        "results": [{"call": call(r.call), "content": r.content, "ok": r.ok, "failure": r.failure,
                     "seconds": r.seconds, "repairs": r.repairs, "attachments": r.attachments} for r in state.results],
        "seen": state.seen, "last_result": state.last_result, "failures": state.failures,
        "waiting": [call(c) for c in state.waiting], "cut": state.cut,
        "pending": [{"call": call(p.call), "reason": p.reason, "arguments": p.arguments, "gated": p.gated,
                     "kind": p.kind, "decision": decision(p.decision)} for p in pending],
        "decided": {k: {"action": v.action, "text": v.text} for k, v in approvals.decided.items()},
        "approvals": {k: decision(d) for k, d in approvals.approvals.items()},
        "spent": approvals.spent, "capped": state.capped, "done": state.done,
    }


def key_id(secret: bytes) -> str:
    """A name for a signing key, stored beside the signature, so a file signed with another key says so (it
    tells nothing about the key: an HMAC of a fixed text under it).

    >>> key_id(b"0123456789abcdef") == key_id(b"0123456789abcdef") != key_id(b"another key, 16+ b")
    True
    """
    return hmac.new(secret, b"mini_framework saved-run key", hashlib.sha256).hexdigest()[:12]


def sign(content: Any, secret: bytes) -> str:
    """An HMAC-SHA256 of the content's canonical JSON under `secret`: any change, or another key, shows.

    >>> sign({"b": 1, "a": [2]}, b"k" * 16) == sign({"a": [2], "b": 1}, b"k" * 16)
    True
    """
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)  # ASCII: any string hashes
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()


def write_private(target: Path, text: str) -> None:
    """Write `text` to `target` atomically, readable by its owner only (0600): a temporary file beside it,
    then one rename; a failure leaves the old file as it was and no temporary file behind."""
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:  # mkstemp: already 0600
            f.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

