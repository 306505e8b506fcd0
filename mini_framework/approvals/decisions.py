"""Decisions before a call runs: the checkpoint's verdicts, the calls a paused run waits on, a person's decision.

    @tool(requires_approval=True)                  # or a predicate: lambda args: not is_internal(args.to, "corp.cn")
    def send_email(to: str, subject: str, body: str) -> str: ...

    agent = Agent(client, model, tools=[send_email], audit_log="audit.jsonl")
    result = agent.run("给张三发邮件，说会议改到周五")    # pauses before send_email runs
    item = result.pending[0]                        # item.id, item.name, item.arguments, item.summary
    item.approve()                                  # or item.deny("not today"), item.edit({...}), item.respond("...")
    result = agent.resume(result)                   # approved calls run; declined ones are answered

What a decision is bound to: `binding(name, arguments, call_id)`, a sha256 over the tool's name, the
validated arguments in canonical JSON, and the call's id. Just before a gated call runs, the gate
computes it again for the arguments that are about to run and compares; a changed argument, another
call id, or an approval that was already used once means the call does not run. Nothing a model
writes can produce a decision: decisions come only from `Pending` methods called by your code, or
from the `approver` you gave the Agent.

Deny by default: a gated call with no decision when the run resumes is declined ("no one approved
it"); an approver that raises, returns None, or returns anything but True declines. An approval can
expire (`approve(valid_for=seconds)`): past its time it is declined, not run.

What a person is shown is what it is: ids, names and values pass through `visible()` (text.py), so an
id holding line breaks or terminal escapes cannot draw a harmless call over the real one.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal

from pydantic import BaseModel

from ..replies import ToolCall
from ..text import visible

if TYPE_CHECKING:
    from ..tools import Tool

__all__ = ["Checkpoint", "Decision", "Pending", "Verdict", "binding", "questions"]


# ----------------------------------------------------------------------------- the checkpoint's verdicts


@dataclass(frozen=True)
class Verdict:
    """What the checkpoint decided for one call: run it, answer it without running it, or pause the run.

    A "run" verdict does not approve a gated tool: that still takes a person's decision.
    """

    action: Literal["run", "answer", "pause"]
    text: str = ""  # the answer the model reads ("answer"), or why the run waits ("pause")
    kind: Literal["approval", "question"] = "approval"  # a pause's kind: "question" when the model asked something

    @classmethod
    def run(cls) -> Verdict:
        return cls("run")

    @classmethod
    def answer(cls, text: str) -> Verdict:
        return cls("answer", text)

    @classmethod
    def pause(cls, reason: str = "") -> Verdict:
        return cls("pause", reason)

    @classmethod
    def ask(cls, question: str = "") -> Verdict:
        """Pause the run for a question the model asked the person: `item.respond(answer)` is what it reads."""
        return cls("pause", question, "question")


Checkpoint = Callable[[ToolCall, "Tool | None"], "Verdict | Awaitable[Verdict]"]


def questions(*names: str) -> Checkpoint:
    """A checkpoint for the tools through which a model asks the person something (a clarifying question):
    their calls pause the run like an approval does, as `Pending(kind="question")`; the person's answer is
    `item.respond(text)`, and the model reads it as the tool's result. Every other call runs.

    >>> check = questions("ask_user")
    >>> check(ToolCall("c1", "ask_user", '{"question": "张三的邮箱是什么？"}'), None).kind
    'question'
    >>> check(ToolCall("c2", "get_order", "{}"), None).action
    'run'
    """
    asking = frozenset(names)

    def checkpoint(call: ToolCall, tool: Tool | None) -> Verdict:
        return Verdict.ask(f"{call.name} asks you something") if call.name in asking else Verdict.run()

    return checkpoint


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
    reason: str = ""  # why it was denied (the model reads it); with `verbatim`, the whole answer
    verbatim: bool = False  # True: `reason` is the whole answer the model reads (respond / answer)
    bound_to: str = ""  # binding(name, arguments, call id) of what was approved ("" when denied)
    expires: float | None = None  # Unix time after which an approval no longer counts (None: never)
    given: dict[str, Any] | None = None  # an edit as the person gave it, before validation (for a loaded run)

    @property
    def allows(self) -> bool:
        return self.action != "deny"

    def expired(self, now: float | None = None) -> bool:
        """Whether this approval ran out before it was used."""
        return self.allows and self.expires is not None and (now if now is not None else time.time()) > self.expires


@dataclass
class Pending:
    """A call a paused run waits on. Decide it (`approve`, `deny`, `edit`, `respond`), then `agent.resume(result)`.

    `arguments` are the validated arguments as JSON-ready values, exactly what would run.
    """

    call: ToolCall
    reason: str  # why the run waits: "send_email needs a person's approval", or what the checkpoint said
    arguments: dict[str, Any] | None = None  # validated arguments (None if the tool is unknown or they don't validate)
    gated: bool = False  # True: the tool requires approval (else the checkpoint paused it)
    decision: Decision | None = None  # None: undecided
    tool: Tool | None = field(default=None, repr=False, compare=False)  # for edit(); set by the gate
    closed: bool = field(default=False, repr=False)  # True once the run was resumed: deciding now is an error
    kind: Literal["approval", "question"] = "approval"  # "question": the model asked the person something
    validated: BaseModel | None = field(default=None, repr=False, compare=False)  # what runs (in memory)
    preview: str | None = field(default=None, repr=False)  # what the call would do, by the tool's preview()

    @property
    def id(self) -> str:
        return self.call.id

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def summary(self) -> str:
        """One line for a list of pending calls: long values shortened, saying how much is hidden, and every
        hidden or cursor-moving character shown as its escape. A person deciding must see `details()`."""
        values = self.arguments if self.arguments is not None else self.call.arguments
        if isinstance(values, dict):
            shown = ", ".join(f"{visible(str(k))}={_short(v)}" for k, v in values.items())
        else:
            shown = _short(values)
        return f"{visible(self.name)}({shown})"

    def details(self) -> str:
        """Everything a person needs to decide: the tool, the call's id, every argument in full as indented
        JSON, and what the call would do (its preview), all shown visibly (see `visible`)."""
        values = self.arguments if self.arguments is not None else self.call.arguments
        text = json.dumps(values, indent=2, ensure_ascii=False, default=str)
        lines = [f"{visible(self.name)} (call {visible(self.id)}):", *(visible(line) for line in text.split("\n"))]
        if self.preview:
            lines += ["What it will do:", *(visible(line) for line in self.preview.split("\n"))]
        return "\n".join(lines)

    def approve(self, by: str = "user", *, valid_for: float | None = None) -> None:
        """Let the call run, with the arguments shown, when the run resumes (within `valid_for` seconds, if
        given: an approval left overnight is not redeemable next week)."""
        expires = _expiry(valid_for)
        if self.arguments is None and not self.gated:  # a checkpoint's pause of a call that can't be checked
            self._decide(Decision("approve", by, time.time(), expires=expires))  # it runs as written: the executor
            return                                                                # answers it
        values = self._arguments()
        self._decide(Decision("approve", by, time.time(), values, bound_to=self._bind(values), expires=expires))

    def deny(self, reason: str = "", by: str = "user") -> None:
        """Don't run the call; the model is told a person declined it (and why, if you say)."""
        if not isinstance(reason, str):
            raise TypeError(f"deny() takes the reason as text, not {type(reason).__name__}")
        self._decide(Decision("deny", by, time.time(), reason=reason))

    def edit(self, arguments: dict[str, Any], by: str = "user", *, valid_for: float | None = None) -> None:
        """Run the call with these arguments instead (checked by the tool now, once; they are what runs)."""
        if self.tool is None:
            raise ValueError(f"{self.name} is not a tool of this agent: its call cannot be edited, only denied")
        if not isinstance(arguments, dict):
            raise TypeError(f"edit() takes the new arguments as a dict, e.g. {{'to': 'li@example.com'}}; "
                            f"not {type(arguments).__name__}")
        from ..arguments import prepare  # here: arguments.py imports tools.py, which this module serves

        validated = prepare(self.tool, arguments)  # ArgumentsError (a ValueError) names what is wrong
        values = validated.model_dump(mode="json", by_alias=True)
        self._decide(Decision("edit", by, time.time(), values, bound_to=self._bind(values),
                              expires=_expiry(valid_for), given=json.loads(json.dumps(arguments, default=str))))
        self.validated = validated

    def respond(self, text: str, by: str = "user") -> None:
        """Answer in the tool's place: the call does not run, and the model reads `text` as its result (a
        person's reply to a question the model asked, or "use yesterday's figures instead")."""
        if not isinstance(text, str):
            raise TypeError(f"respond() takes the text the model reads, not {type(text).__name__}")
        self._decide(Decision("deny", by, time.time(), reason=text, verbatim=True))

    # the checkpoint's words for the same decisions
    def run(self) -> None:
        """`approve()`: let the call run when the run resumes."""
        self.approve()

    def answer(self, text: str) -> None:
        """`respond(text)`: answer the call with exactly `text` instead of running it."""
        self.respond(text)

    def _arguments(self) -> dict[str, Any]:
        if self.arguments is None:
            raise ValueError(f"{self.name}'s arguments could not be checked, so they cannot be approved: deny it")
        return self.arguments

    def _bind(self, arguments: dict[str, Any]) -> str:
        return binding(self.name, arguments, self.id)

    def _decide(self, decision: Decision) -> None:
        if self.closed:
            raise ValueError(f"call {visible(self.id)} ({visible(self.name)}) was already resumed: decide the calls "
                             "of the latest paused result instead")
        self.decision = decision


def _expiry(valid_for: float | None) -> float | None:
    """When an approval given now for `valid_for` seconds runs out."""
    if valid_for is None:
        return None
    if isinstance(valid_for, bool) or not isinstance(valid_for, (int, float)) or not 0 < valid_for < math.inf:
        raise ValueError(f"valid_for is a number of seconds above 0, not {valid_for!r}")
    return time.time() + valid_for


def _short(value: Any, limit: int = 60) -> str:
    r"""A value for a one-line summary: line breaks shown as ⏎, and a shortened one says how much is hidden.

    >>> _short("abcdefghij" * 3, limit=10), _short(3), _short("第一行\n第二行")
    ("'abcdefghi…' (+21 characters)", '3', "'第一行⏎第二行'")
    """
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    flat = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "⏎")
    shown = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    hidden = f" (+{len(flat) - len(shown) + 1} characters)" if shown != flat else ""
    return visible(repr(shown) if isinstance(value, str) else shown) + hidden  # a list's strings too
