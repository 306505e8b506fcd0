"""A call a sub-agent paused on, as the parent's `result.pending` lists it: `Delegated`.

    paused = planner.run("Refund order 42 and tell the customer")
    item = paused.find(paused.pending[0].id)   # a Delegated: the refund the `support` sub-agent wants to make
    item.agent, item.details()                 # 'support', what it would do, in full
    item.approve()                             # decided on the sub-agent's own pending call
    planner.resume(paused)                     # resumes the sub-agent, whose gate applies the decision

Deciding works as on any pending call (approve, deny, edit, respond); the sub-agent's own gate checks the
decision against its call when it resumes, and declines what was left undecided.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..replies import ToolCall
from ..text import visible

__all__ = ["Delegated"]


@dataclass
class Delegated:
    """A sub-agent's pending call, seen from the parent. Every attribute of the sub-agent's own pending item
    (call, name, arguments, kind, gated, decision, approve, deny, edit, respond, ...) is reachable here."""

    item: Any  # the sub-agent's own pending item (a Pending): decisions are made on it
    agent: str  # which sub-agent waits: "support", or "support → billing" for a sub-agent's sub-agent
    via: ToolCall  # the parent's call that runs the sub-agent (what the parent's conversation waits on)
    id: str = ""  # for result.find(): the sub-agent's call id (prefixed with `via.id/` if two would clash)

    def __post_init__(self) -> None:
        self.id = self.id or self.item.id  # (a sub-agent's sub-agent's item: the id it had there)
        if isinstance(self.item, Delegated):  # one level deeper: keep the real item, name the whole path
            self.agent, self.item = f"{self.agent} → {self.item.agent}", self.item.item

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "item":  # copy and pickle look for these before __init__ ran
            raise AttributeError(name)
        return getattr(self.item, name)

    @property
    def summary(self) -> str:
        return f"{visible(self.agent)}: {self.item.summary}"

    def details(self) -> str:
        """What the sub-agent's call would do, in full, and which sub-agent asks."""
        return f"Asked by the sub-agent {visible(self.agent)}:\n{self.item.details()}"

    def __repr__(self) -> str:
        return f"Delegated({self.agent}: {self.item!r})"
