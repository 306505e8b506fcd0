"""Approvers: code that decides a pending call on the spot, instead of pausing the run for a person.

    Agent(client, model, tools, approver=ask_in_console)      # y at the keyboard approves
    Agent(client, model, tools, approver=scripted(True, "not to that address"))   # tests and demos

Only True approves; False, None, anything else, an exception or no answer within `approval_timeout`
declines. A sync approver runs in a worker thread, so one waiting at the keyboard does not stop the
event loop. `ask_in_console` uses `input()`: it works in a terminal and in Jupyter (an input box);
where no one can type (CI, nbval, a server) it declines.
"""
from __future__ import annotations

import asyncio
import inspect
import threading
import time
from typing import Any, Awaitable, Callable

from ..concurrency import in_thread
from .decisions import Decision, Pending

__all__ = ["Approver", "ask", "ask_in_console", "scripted"]


Approver = Callable[[Pending], "bool | None | Awaitable[bool | None]"]


def ask_in_console(item: Pending) -> bool:
    """An approver that asks at the keyboard: y approves, anything else declines (also no keyboard at all)."""
    print(f"\nThe model wants to run {item.details()}")  # every character shown as what it is (visible())
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

    >>> from mini_framework.replies import ToolCall
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
    if item.decision is not None and not item.decision.allows:
        return item.decision  # it declined (or answered) on its own, whatever it returned after that
    if verdict is not True:
        return declined("the approver did not approve it")
    if item.decision is None:
        if item.arguments is None and item.gated:  # checking its arguments failed: nothing can be approved
            return declined("its arguments could not be checked, so it cannot be approved")
        item.approve(by=f"approver:{name}")
    assert item.decision is not None
    return item.decision
