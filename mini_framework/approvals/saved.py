"""A paused run as a JSON file: `result.save(path)` in one process, `agent.load(path)` in the next.

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

A paused run is resumed once. `load` takes the run out of its file: the file is renamed to
`<name>.loaded` before it is read, so a second load (another worker, a retried job) finds nothing;
and resuming the original in memory renames the files it was saved to, so none of them can be
loaded afterwards. (To load one again on purpose, rename it back; approvals used before are then
used again — that is your decision, not the model's.)

A file that was cut short, edited by hand (its checksum no longer matches), written by another
version, or that does not describe a paused run is refused with SavedRunError saying what is wrong;
nothing runs, and the file is put back. The file holds the whole conversation: it is written
owner-only (0600), atomically.

Concessions: the checksum is a plain sha256, so it catches damage and hand edits, not someone who
recomputes it; keep saved runs where only your service can write.
"""
from __future__ import annotations

import contextlib
import hashlib
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
from .decisions import Decision, Pending, Verdict

if TYPE_CHECKING:
    from ..tools import Tool

__all__ = ["FORMAT", "SavedRunError", "claim_copies", "load", "save"]

TAKEN = ".loaded"  # suffix of a saved run's file once it was loaded or its run resumed

FORMAT = "mini_framework.paused_run/1"
MAX_BYTES = 64 * 1024 * 1024  # a saved run bigger than this is refused rather than read into memory


class SavedRunError(ValueError):
    """A saved run that cannot be resumed; the message says why. Nothing was run."""


# The file's shape, checked field by field when it is read (pydantic names the field that is wrong).
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Call(_Strict):
    id: str
    name: str
    arguments: Any


Count = Field(ge=0, le=10**15)


class _Decision(_Strict):
    action: Literal["approve", "edit", "deny"]
    by: str
    at: float = Field(ge=0, le=10**11)  # a Unix time: not NaN, not before 1970, not after the year 5000
    arguments: dict[str, Any] | None
    reason: str
    verbatim: bool
    bound_to: str


class _Pending(_Strict):
    call: _Call
    reason: str
    arguments: dict[str, Any] | None
    gated: bool
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
    per_request: list[list[int]]


class _Run(_Strict):
    run_id: str
    messages: list[dict[str, Any]]
    iteration: int = Count
    usage: _Usage
    results: list[_Result]
    seen: dict[str, Annotated[int, Count]]
    last_result: dict[str, str]
    failures: dict[str, Annotated[int, Count]]
    waiting: list[_Call]
    pending: list[_Pending]
    decided: dict[str, _Verdict]
    approvals: dict[str, _Decision]
    spent: list[str]
    saved_to: list[str]
    capped: bool
    done: bool


def save(result: RunResult, path: str | os.PathLike[str]) -> None:
    """Write a paused run to `path` (see the module docstring)."""
    if not isinstance(result, RunResult) or result.state is None or not result.paused:
        raise ValueError("only a paused run can be saved (result.paused is False): a finished run's "
                         "messages are all there is to keep — json.dump(result.messages, f)")
    target = Path(path).absolute()
    if not target.parent.is_dir():
        raise FileNotFoundError(2, "no such folder to save the paused run in", str(target.parent))
    if str(target) not in result.state.saved_to:
        result.state.saved_to.append(str(target))  # resuming this run in memory claims the file (claim_copies)
    run = _dump(result.state)
    try:
        text = json.dumps({"format": FORMAT, "checksum": _checksum(run), "run": run}, ensure_ascii=False, indent=1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"this run cannot be saved as JSON: {exc} (a message or tool result holds a Python "
                         "object; give the agent plain dicts)") from None
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:  # mkstemp: already 0600
            f.write(text)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load(path: str | os.PathLike[str], tools: list[Tool]) -> RunResult:
    """Take a paused run out of the file `save` wrote (see the module docstring), for an agent with `tools`.
    SavedRunError if it can't be resumed (the file is then left where it was)."""
    where = Path(path)
    taken = where.with_name(where.name + TAKEN)
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
        result = _read(taken, tools, where.name)
    except SavedRunError:
        os.rename(taken, where)  # not ours to keep: put it back as it was
        raise
    for other in result.state.saved_to if result.state else ():  # other copies of the same paused run
        if Path(other) != where.absolute():
            with contextlib.suppress(OSError):
                os.rename(other, other + TAKEN)
    if result.state:
        result.state.saved_to = []
    return result


def claim_copies(state: RunState) -> None:
    """Before a paused run resumes in memory: take its saved files out of reach of `load`. SavedRunError if
    one of them was loaded already (then that copy is the one to resume)."""
    for name in state.saved_to:
        try:
            os.rename(name, name + TAKEN)
        except FileNotFoundError:
            if os.path.exists(name + TAKEN):
                raise SavedRunError(f"this paused run was loaded from {Path(name).name} already: resume that "
                                    "copy, not this one (a paused run is resumed once)") from None
        except OSError:
            continue  # unreadable folder, another file system: nothing we can claim
    state.saved_to = []


def _read(where: Path, tools: list[Tool], name: str) -> RunResult:
    """Read and check a taken file."""
    try:
        with open(where, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise SavedRunError(f"{name} is over {MAX_BYTES // 2**20} MB: not a saved run of ours")
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        if isinstance(exc, SavedRunError):
            raise
        raise SavedRunError(f"{name} is not a saved run (not JSON: it may have been cut short)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise SavedRunError(f"{name} is not a saved run of this version (format {found!r:.60}, "
                            f"expected {FORMAT!r})")
    if not isinstance(data.get("run"), dict) or data.get("checksum") != _checksum(data["run"]):
        raise SavedRunError(f"{name} was changed after it was saved (its checksum does not match): "
                            "refusing to resume it")
    try:
        run = _Run.model_validate(data["run"])
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise SavedRunError(f"{name} cannot be resumed: {field}: {first['msg']}") from None
    return _restore(run, {t.name: t for t in tools}, name)


def _restore(run: _Run, tools: dict[str, Tool], name: str) -> RunResult:
    """The RunResult of a checked file, after the checks a schema cannot express."""
    waiting = [ToolCall(c.id, c.name, c.arguments) for c in run.waiting]
    ids = [c.id for c in waiting]
    if not run.pending or run.done:
        raise SavedRunError(f"{name} is not a paused run (nothing is pending)")
    if len(set(ids)) != len(ids) or any(p.call.id not in ids for p in run.pending):
        raise SavedRunError(f"{name} cannot be resumed: its pending calls are not among the calls waiting")
    last = run.messages[-1] if run.messages else {}
    asked = {c.get("id") for c in last.get("tool_calls") or () if isinstance(c, dict)}
    if last.get("role") != "assistant" or not set(ids) <= asked:
        raise SavedRunError(f"{name} cannot be resumed: the conversation does not end with the calls waiting")
    if any(len(r) != 3 for r in run.usage.per_request):
        raise SavedRunError(f"{name} cannot be resumed: usage.per_request holds [prompt, completion, cached] triples")
    for item in run.pending:
        if item.gated and item.call.name not in tools:
            raise SavedRunError(f"{name} waits on {item.call.name}, which this agent does not have: load it "
                                "into an agent with the same tools")
    state = RunState(
        run.messages, iteration=run.iteration,
        usage=Usage(run.usage.requests, run.usage.prompt_tokens, run.usage.completion_tokens, run.usage.cached_tokens,
                    [RequestUsage(*r) for r in run.usage.per_request]),
        results=[ToolResult(ToolCall(r.call.id, r.call.name, r.call.arguments), r.content, r.ok,
                            r.failure, seconds=r.seconds, repairs=r.repairs,
                            attachments=r.attachments) for r in run.results],
        seen=run.seen, last_result=run.last_result, failures=run.failures, waiting=waiting,
        decided={k: Verdict(v.action, v.text) for k, v in run.decided.items()},
        approvals={k: Decision(**d.model_dump()) for k, d in run.approvals.items()},
        spent=run.spent, capped=run.capped, done=run.done, run_id=run.run_id, saved_to=run.saved_to)
    state.pending = [Pending(ToolCall(p.call.id, p.call.name, p.call.arguments), p.reason, p.arguments, p.gated,
                             Decision(**p.decision.model_dump()) if p.decision else None,
                             tool=tools.get(p.call.name)) for p in run.pending]
    return RunResult(None, state.messages, state.results, state.usage, state.iteration, state.capped,
                     state.pending, state)


def _dump(state: RunState) -> dict[str, Any]:
    """The state as JSON-ready values (see the module docstring for what is left out)."""

    def call(c: ToolCall) -> dict[str, Any]:
        return {"id": c.id, "name": c.name, "arguments": c.arguments}

    def decision(d: Decision | None) -> dict[str, Any] | None:
        return None if d is None else {"action": d.action, "by": d.by, "at": d.at, "arguments": d.arguments,
                                       "reason": d.reason, "verbatim": d.verbatim, "bound_to": d.bound_to}

    return {
        "run_id": state.run_id, "messages": state.messages, "iteration": state.iteration,
        "usage": {"requests": state.usage.requests, "prompt_tokens": state.usage.prompt_tokens,
                  "completion_tokens": state.usage.completion_tokens, "cached_tokens": state.usage.cached_tokens,
                  "per_request": [[r.prompt_tokens, r.completion_tokens, r.cached_tokens]
                                  for r in state.usage.per_request]},
        "results": [{"call": call(r.call), "content": r.content, "ok": r.ok, "failure": r.failure,
                     "seconds": r.seconds, "repairs": r.repairs, "attachments": r.attachments} for r in state.results],
        "seen": state.seen, "last_result": state.last_result, "failures": state.failures,
        "waiting": [call(c) for c in state.waiting],
        "pending": [{"call": call(p.call), "reason": p.reason, "arguments": p.arguments, "gated": p.gated,
                     "decision": decision(p.decision)} for p in state.pending],
        "decided": {k: {"action": v.action, "text": v.text} for k, v in state.decided.items()},
        "approvals": {k: decision(d) for k, d in state.approvals.items()},
        "spent": state.spent, "saved_to": state.saved_to, "capped": state.capped, "done": state.done,
    }


def _checksum(run: Any) -> str:
    """A sha256 of the run's canonical JSON: any change to the saved run shows."""
    text = json.dumps(run, sort_keys=True, separators=(",", ":"), default=str)  # ASCII: any string hashes
    return hashlib.sha256(text.encode()).hexdigest()

