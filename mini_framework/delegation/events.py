"""The event a sub-agent's events reach the parent's handlers as: `SubAgentEvent`.

    [1]   ▶ researcher({"task":"What is the weather in Paris?"})  call_1
    [1]   researcher ┆ [1] → model: 2 messages, 1 tools
    [1]   researcher ┆ [1]   ▶ get_weather({"city":"Paris"})  call_7
    ...
    [1]   ✓ researcher → Paris: sunny, 22°C.

A sub-agent of a sub-agent nests once more (`researcher ┆ analyst ┆ ...`); `event.innermost` is what
happened, `event.path` where ("researcher → analyst").
"""
from __future__ import annotations

from dataclasses import dataclass

from ..events import Event

__all__ = ["SubAgentEvent"]


@dataclass(frozen=True)
class SubAgentEvent(Event):
    """Something that happened in a sub-agent's run; `iteration` is the parent's request it belongs to.

    >>> from mini_framework.events import FinalAnswer
    >>> print(SubAgentEvent(2, "researcher", SubAgentEvent(1, "analyst", FinalAnswer(3, "42"))))
    [2]   researcher ┆ [1]   analyst ┆ [3] answer: 42
    """

    agent: str  # the sub-agent's name (its tool's name)
    event: Event  # what happened there (its own iteration counts the sub-agent's requests)

    @property
    def innermost(self) -> Event:
        """The event itself, however deep the sub-agent that had it (a TextDelta to print with end="")."""
        return self.event.innermost if isinstance(self.event, SubAgentEvent) else self.event

    @property
    def path(self) -> str:
        """Which sub-agent, from the parent down: "researcher → analyst"."""
        return f"{self.agent} → {self.event.path}" if isinstance(self.event, SubAgentEvent) else self.agent

    def __str__(self) -> str:
        return "\n".join(f"[{self.iteration}]   {self.agent} ┆ {line}" for line in str(self.event).split("\n"))
