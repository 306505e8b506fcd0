"""Decisions before a call runs: the checkpoint's verdicts, and a person's approval of gated tools.

    @tool(requires_approval=True)                  # or a predicate: lambda args: not args.to.endswith("@corp.cn")
    def send_email(to: str, subject: str, body: str) -> str: ...

    agent = Agent(client, model, tools=[send_email], audit_log="audit.jsonl")
    result = agent.run("给张三发邮件，说会议改到周五")    # pauses before send_email runs
    item = result.pending[0]                        # item.id, item.name, item.arguments, item.summary
    item.approve()                                  # or item.deny("not today"), or item.edit({...})
    result = agent.resume(result)                   # approved calls run; declined ones are answered

What a decision is bound to: `binding(name, arguments, call_id)`, a sha256 over the tool's name, the
validated arguments in canonical JSON, and the call's id. Just before a gated call runs, the agent
computes it again for the arguments that are about to run and compares; a changed argument, another
call id, or an approval that was already used once means the call does not run. Nothing a model
writes can produce a decision: decisions come only from `Pending` methods called by your code, or
from the `approver` you gave the Agent.

Deny by default: a gated call with no decision when the run resumes is declined ("no one approved
it"); an approver that raises, returns None, or returns anything but True declines.

The audit log (`AuditLog`) is one JSON line per event: requested, approved, edited, denied, executed,
failed, with the time, run, call id, tool, the arguments' hash, the decision and who made it. It
stores hashes and reasons, not arguments; reasons pass through `redact_secrets`.

Concessions: the binding is a hash, not a signature: it stops a model, a changed argument and a
replayed call, not someone who can edit your saved run file and recompute it (keep saved runs where
your service's secrets are). `ask_in_console` uses `input()`: it works in a terminal and in Jupyter
(the kernel shows an input box); where no one can type (CI, nbval, a server) it declines.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import inspect
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal

from ..concurrency import in_thread
from ..redaction import redact_secrets
from ..replies import ToolCall

if TYPE_CHECKING:
    from ..tools import Tool

AUDIT_KEY_VARIABLE = "MINI_FRAMEWORK_AUDIT_KEY"  # if set, argument fingerprints are keyed (HMAC)

__all__ = ["AuditLog", "Decision", "Pending", "Verdict", "ask_in_console", "binding", "read_audit", "scripted"]


# ----------------------------------------------------------------------------- the checkpoint's verdicts


@dataclass(frozen=True)
class Verdict:
    """What the checkpoint decided for one call: run it, answer it without running it, or pause the run.

    A "run" verdict does not approve a gated tool: that still takes a person's decision.
    """

    action: Literal["run", "answer", "pause"]
    text: str = ""  # the answer the model reads ("answer"), or why the run waits ("pause")

    @classmethod
    def run(cls) -> Verdict:
        return cls("run")

    @classmethod
    def answer(cls, text: str) -> Verdict:
        return cls("answer", text)

    @classmethod
    def pause(cls, reason: str = "") -> Verdict:
        return cls("pause", reason)


Checkpoint = Callable[[ToolCall, "Tool | None"], "Verdict | Awaitable[Verdict]"]


# ----------------------------------------------------------------------------- a person's decision


def binding(name: str, arguments: dict[str, Any], call_id: str) -> str:
    """What an approval is bound to: the tool, its validated arguments (key order ignored), the call id.

    >>> binding("send_email", {"to": "a@example.com", "body": "hi"}, "call_1") == \\
    ...     binding("send_email", {"body": "hi", "to": "a@example.com"}, "call_1")
    True
    >>> binding("send_email", {"to": "b@example.com", "body": "hi"}, "call_1")[:12] != \\
    ...     binding("send_email", {"to": "a@example.com", "body": "hi"}, "call_1")[:12]
    True
    """
    text = json.dumps([name, arguments, call_id], sort_keys=True, separators=(",", ":"))  # ASCII: any string hashes
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Decision:
    """A person's decision on one pending call."""

    action: Literal["approve", "edit", "deny"]
    by: str  # who or what decided: "user", "approver:ask_in_console", "default (no decision)"
    at: float  # when (Unix time)
    arguments: dict[str, Any] | None = None  # what runs: the approved or edited arguments (None when denied)
    reason: str = ""  # why it was denied (the model reads it)
    verbatim: bool = False  # True: `reason` is the whole answer the model reads (Pending.answer)
    bound_to: str = ""  # binding(name, arguments, call id) of what was approved ("" when denied)

    @property
    def allows(self) -> bool:
        return self.action != "deny"


@dataclass
class Pending:
    """A call a paused run waits on. Decide it (`approve`, `deny`, `edit`), then `agent.resume(result)`.

    `arguments` are the validated arguments as JSON-ready values, exactly what would run.
    """

    call: ToolCall
    reason: str  # why the run waits: "send_email needs a person's approval", or what the checkpoint said
    arguments: dict[str, Any] | None = None  # validated arguments (None if the tool is unknown or they don't validate)
    gated: bool = False  # True: the tool requires approval (else the checkpoint paused it)
    decision: Decision | None = None  # None: undecided
    tool: Tool | None = field(default=None, repr=False, compare=False)  # for edit(); set by the Agent
    closed: bool = field(default=False, repr=False)  # True once the run was resumed: deciding now is an error

    @property
    def id(self) -> str:
        return self.call.id

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def summary(self) -> str:
        """One line for a list of pending calls: long values shortened, saying how much is hidden. A person
        deciding must see `arguments` in full (what `ask_in_console` prints)."""
        values = self.arguments if self.arguments is not None else self.call.arguments
        if isinstance(values, dict):
            shown = ", ".join(f"{k}={_short(v)}" for k, v in values.items())
        else:
            shown = _short(values)
        return f"{self.name}({shown})"

    def details(self) -> str:
        """Everything a person needs to decide: the tool and every argument in full, as indented JSON."""
        values = self.arguments if self.arguments is not None else self.call.arguments
        return f"{self.name} (call {self.id}):\n" + json.dumps(values, indent=2, ensure_ascii=False, default=str)

    def approve(self, by: str = "user") -> None:
        """Let the call run, with the arguments shown, when the run resumes."""
        if self.arguments is None and not self.gated:  # a checkpoint's pause of a call that can't be checked
            self._decide(Decision("approve", by, time.time()))  # it runs as written: the executor answers it
            return
        self._decide(Decision("approve", by, time.time(), self._arguments(), bound_to=self._bind(self._arguments())))

    def deny(self, reason: str = "", by: str = "user") -> None:
        """Don't run the call; the model is told a person declined it (and why, if you say)."""
        if not isinstance(reason, str):
            raise TypeError(f"deny() takes the reason as text, not {type(reason).__name__}")
        self._decide(Decision("deny", by, time.time(), reason=reason))

    def edit(self, arguments: dict[str, Any], by: str = "user") -> None:
        """Run the call with these arguments instead (checked by the tool now; they are what runs)."""
        if self.tool is None:
            raise ValueError(f"{self.name} is not a tool of this agent: its call cannot be edited, only denied")
        if not isinstance(arguments, dict):
            raise TypeError(f"edit() takes the new arguments as a dict, e.g. {{'to': 'li@example.com'}}; "
                            f"not {type(arguments).__name__}")
        from ..arguments import prepare  # here: arguments.py imports tools.py, which this module serves

        validated = prepare(self.tool, arguments)  # ArgumentsError (a ValueError) names what is wrong
        values = validated.model_dump(mode="json")
        self._decide(Decision("edit", by, time.time(), values, bound_to=self._bind(values)))

    # the checkpoint's words for the same two decisions
    def run(self) -> None:
        """`approve()`: let the call run when the run resumes."""
        self.approve()

    def answer(self, text: str) -> None:
        """Answer the call with exactly `text` instead of running it (e.g. "Use the cached weather: 晴")."""
        if not isinstance(text, str):
            raise TypeError(f"answer() takes the text the model reads, not {type(text).__name__}")
        self._decide(Decision("deny", "user", time.time(), reason=text, verbatim=True))

    def _arguments(self) -> dict[str, Any]:
        if self.arguments is None:
            raise ValueError(f"{self.name}'s arguments could not be checked, so they cannot be approved: deny it")
        return self.arguments

    def _bind(self, arguments: dict[str, Any]) -> str:
        return binding(self.name, arguments, self.id)

    def _decide(self, decision: Decision) -> None:
        if self.closed:
            raise ValueError(f"call {self.id} ({self.name}) was already resumed: decide the calls of the "
                             "latest paused result instead")
        self.decision = decision


# ----------------------------------------------------------------------------- approvers


Approver = Callable[[Pending], "bool | None | Awaitable[bool | None]"]


def ask_in_console(item: Pending) -> bool:
    """An approver that asks at the keyboard: y approves, anything else declines (also no keyboard at all)."""
    print(f"\nThe model wants to run {item.details()}")
    try:
        answer = input("Run it? [y/N] ")
    except (EOFError, OSError, RuntimeError) as exc:  # no stdin: CI, nbval ("StdinNotImplementedError"), servers
        item.deny(f"no one could be asked ({type(exc).__name__})", by="approver:ask_in_console")
        return False
    if answer.strip().lower() in ("y", "yes", "是", "好"):
        return True
    item.deny(answer.strip()[:200] or "declined at the console", by="person at the console")
    return False


def scripted(*answers: bool | str | dict[str, Any]) -> Approver:
    """An approver for tests and demos: one answer per call, in order; True approves, a string denies with
    that reason, a dict edits the arguments. When the answers run out, it declines.

    >>> approver = scripted(True, "too many recipients")
    >>> item = Pending(ToolCall("call_1", "send_email", "{}"), "", arguments={"to": "a@example.com"}, gated=True)
    >>> approver(item), approver(item), approver(item)
    (True, False, False)
    """
    left = list(answers)
    lock = threading.Lock()

    def approve(item: Pending) -> bool:
        with lock:
            answer = left.pop(0) if left else "the script had no answer left"
        if answer is True:
            return True
        if isinstance(answer, dict):
            item.edit(answer, by="approver:scripted")
            return True
        item.deny(str(answer) if answer is not False else "", by="approver:scripted")
        return False

    approve.__name__ = "scripted"  # what the audit log names as the decider: "approver:scripted"
    return approve


async def ask(approver: Approver, item: Pending, timeout: float | None = None) -> Decision:
    """Let `approver` decide `item` within `timeout` seconds. Only True approves (with the edit the approver
    made, if any); False, None, anything else, an exception or no answer in time declines. A sync approver
    runs in a worker thread, so one waiting at the keyboard does not stop the event loop."""
    name = getattr(approver, "__name__", type(approver).__name__)

    def declined(reason: str) -> Decision:
        item.decision = Decision("deny", f"approver:{name}", time.time(), reason=reason)
        return item.decision

    async def answer() -> Any:
        if inspect.iscoroutinefunction(approver):
            return await approver(item)
        result = await in_thread(lambda: approver(item))  # an async __call__ comes back as a coroutine: awaited
        return await result if inspect.isawaitable(result) else result

    try:
        verdict = await asyncio.wait_for(answer(), timeout)
    except asyncio.TimeoutError:
        return declined(f"no decision within {timeout:g} s")
    except Exception as exc:
        return declined(f"the approver failed ({type(exc).__name__}), so the call was not run")
    if verdict is not True:
        if item.decision is not None and not item.decision.allows:
            return item.decision  # it declined with its own reason
        return declined("the approver did not approve it")
    if item.decision is None or not item.decision.allows:
        item.approve(by=f"approver:{name}")
    assert item.decision is not None
    return item.decision


# ----------------------------------------------------------------------------- the audit log


class AuditLog:
    """Appends one JSON line per approval event to a file (created 0600; lines from threads never mix).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "audit.jsonl")
    >>> AuditLog(path).record("denied", run="r1", call_id="call_1", tool="send_email", arguments_hash="ab12",
    ...                       by="user", reason="not today")
    >>> [(e["event"], e["by"], e["reason"]) for e in read_audit(path)]
    [('denied', 'user', 'not today')]
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def record(self, event: str, *, run: str, call_id: str, tool: str, arguments_hash: str, by: str = "",
               reason: str = "", at: float | None = None, **details: Any) -> None:
        """Append one event. Raises OSError if the file cannot be written (the agent stops rather than
        running a gated tool without a record)."""
        entry = {"time": _iso(at if at is not None else time.time()), "event": event, "run": run,
                 "call_id": redact_secrets(call_id)[:200], "tool": tool, "arguments_hash": arguments_hash,
                 "by": redact_secrets(by)[:200], "reason": redact_secrets(reason)[:500], **details}
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            self._append(line.encode("utf-8", "backslashreplace"))  # a lone surrogate becomes a JSON \\u escape

    def check(self) -> None:
        """Make sure the log can be written now (created if missing), rather than at the first gated call."""
        with self._lock:
            self._append(b"")

    def _append(self, data: bytes) -> None:
        if self.path.is_dir():
            raise IsADirectoryError(21, "the audit log path is a folder", str(self.path))
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)  # never through a symlink
        fd = os.open(self.path, flags, 0o600)
        try:
            if data:
                os.write(fd, data)
        finally:
            os.close(fd)


def read_audit(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The events of an audit log, oldest first (a line that is not JSON is skipped, not fatal)."""
    events = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def arguments_hash(arguments: Any) -> str:
    """A short fingerprint of arguments for the audit log (the log never holds the arguments themselves).

    A plain hash of a short secret (a 6-digit PIN) can be guessed by trying them all: set the environment
    variable MINI_FRAMEWORK_AUDIT_KEY to a secret of yours and the fingerprint becomes an HMAC under it.

    >>> arguments_hash({"b": 1, "a": 2}) == arguments_hash({"a": 2, "b": 1})
    True
    """
    text = json.dumps(arguments, sort_keys=True, default=str).encode()  # ASCII: any string hashes
    key = os.environ.get(AUDIT_KEY_VARIABLE, "")
    digest = hmac.new(key.encode(), text, hashlib.sha256) if key else hashlib.sha256(text)
    return digest.hexdigest()[:16]


def _iso(seconds: float) -> str:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
    except (OverflowError, ValueError, OSError):
        return "(an impossible time)"


def _short(value: Any, limit: int = 60) -> str:
    r"""A value for a one-line summary: line breaks shown as ⏎, and a shortened one says how much is hidden.

    >>> _short("abcdefghij" * 3, limit=10), _short(3), _short("第一行\n第二行")
    ("'abcdefghi…' (+21 characters)", '3', "'第一行⏎第二行'")
    """
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    flat = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    shown = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    hidden = f" (+{len(flat) - len(shown) + 1} characters)" if shown != flat else ""
    return (repr(shown) if isinstance(value, str) else shown) + hidden
