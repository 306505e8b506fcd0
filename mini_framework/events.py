"""What happens during a run, as events: `str(event)` is a one-line description.

    for event in agent.events("北京现在天气怎么样？"):
        print(event)
    [1] → model: 2 messages, 1 tools
    [1] ← model: 1 tool call(s) (52 + 12 tokens)
    [1]   ▶ get_weather({"city":"北京"})  call_1
    ...

Every event carries `iteration`, the model request of the run it belongs to (1-based).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .executor import ToolResult
from .replies import ToolCall
from .text import brief, visible

__all__ = ["CapReached", "Event", "FinalAnswer", "ModelRequest", "ModelResponse", "RunPaused", "TextDelta",
           "ToolFinished", "ToolStarted"]


@dataclass(frozen=True)
class Event:
    """Something that happened during a run."""

    iteration: int  # which model request of the run this belongs to (1-based)


@dataclass(frozen=True)
class ModelRequest(Event):
    """A request is about to be sent."""

    messages: int  # how many messages are sent
    tools: int  # how many tools are offered (0 for the final request at a cap)

    def __str__(self) -> str:
        return f"[{self.iteration}] → model: {self.messages} messages, {self.tools} tools"


@dataclass(frozen=True)
class ModelResponse(Event):
    """A reply arrived (and was read: see replies.py)."""

    message: dict[str, Any]  # the assistant message as stored
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    repairs: tuple[str, ...] = field(default=())  # what was wrong with the reply and how it was fixed

    def __str__(self) -> str:
        calls = self.message.get("tool_calls") or []
        what = f"{len(calls)} tool call(s)" if calls else "an answer"
        fixed = f"; repaired: {'; '.join(self.repairs)}" if self.repairs else ""
        return f"[{self.iteration}] ← model: {what} ({self.prompt_tokens} + {self.completion_tokens} tokens){fixed}"


@dataclass(frozen=True)
class TextDelta(Event):
    """A piece of the model's text as it streams in (`Agent(stream=True)`): print it with `end=""`."""

    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class ToolStarted(Event):
    """A call is about to run."""

    call: ToolCall

    def __str__(self) -> str:
        return f"[{self.iteration}]   ▶ {self.call.name}({brief(self.call.arguments)})  {self.call.id}"


@dataclass(frozen=True)
class ToolFinished(Event):
    """A call was answered: it ran, failed, or was answered without running."""

    result: ToolResult

    def __str__(self) -> str:
        mark = "✓" if self.result.ok else f"✗ {self.result.failure}:"
        return f"[{self.iteration}]   {mark} {self.result.call.name} → {brief(self.result.content)}"


@dataclass(frozen=True)
class CapReached(Event):
    """`max_iterations` requests with tools were made: the next one goes without tools."""

    max_iterations: int

    def __str__(self) -> str:
        return f"[{self.iteration}] cap of {self.max_iterations} iterations reached: asking for an answer without tools"


@dataclass(frozen=True)
class RunPaused(Event):
    """A hook (the approval gate, the checkpoint) paused the run before these calls ran; decide `result.pending`, then
    `agent.resume(result)` continues it (also when the run was watched through `agent.events()`)."""

    calls: tuple[ToolCall, ...]
    result: Any = field(default=None, repr=False, compare=False)  # the paused RunResult

    def __str__(self) -> str:
        names = ", ".join(f"{visible(c.name)} ({visible(c.id)})" for c in self.calls)  # what it is, shown as such
        return f"[{self.iteration}] paused before: {names}"


@dataclass(frozen=True)
class FinalAnswer(Event):
    """The run ended with this text."""

    text: str | None

    def __str__(self) -> str:
        return f"[{self.iteration}] answer: {brief(self.text or '')}"
