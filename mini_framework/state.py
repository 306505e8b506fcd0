"""What a run is and what it produced: plain data, so it can be inspected, saved and resumed.

    RunState    everything a run needs to continue (the loop in agent.py works on it)
    RunResult   what a run returns: the answer, or the calls a paused run waits on
    Usage       tokens summed over a run's requests

`result.save(path)` writes a paused run to a file that `agent.load(path)` reads back (saved.py).
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from .executor import ToolResult
from .hooks import feature
from .replies import ToolCall
from .text import brief, visible

__all__ = ["RequestUsage", "RunResult", "RunState", "Usage"]


@dataclass(frozen=True)
class RequestUsage:
    """One request's tokens, as the API reported them."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0  # of the prompt tokens, served from the provider's prompt cache


@dataclass
class Usage:
    """Tokens summed over a run's requests, as the API reported them; `per_request` keeps each one."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of prompt_tokens, read from the provider's cache (billed cheaper, see cost.py)
    per_request: list[RequestUsage] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> None:
        """Count one request (a provider that omits `usage` reports 0 tokens for it)."""
        self.requests += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cached_tokens += cached_tokens
        self.per_request.append(RequestUsage(prompt_tokens, completion_tokens, cached_tokens))

    def cost(self, price: Any) -> float:
        """US$ for these tokens at `price` (budget/cost.py), e.g. `result.usage.cost(Price(input=0.15, output=0.6))`."""
        return float(price.cost(self))

    def __str__(self) -> str:
        return (f"{self.requests} requests, {self.prompt_tokens} prompt + {self.completion_tokens} completion "
                f"= {self.total_tokens} tokens")


@dataclass
class RunState:
    """Everything a run needs to continue: plain data, so it can be inspected, saved and resumed."""

    messages: list[dict[str, Any]]  # the conversation so far, as sent to the API
    context: Any = None  # handed to the tools' prompt_injection_builder
    iteration: int = 0  # model requests made
    usage: Usage = field(default_factory=Usage)
    results: list[ToolResult] = field(default_factory=list)  # every tool call of the run, in order
    seen: dict[str, int] = field(default_factory=dict)  # call key -> how often it ran
    last_result: dict[str, str] = field(default_factory=dict)  # call key -> what the model read the last time
    failures: dict[str, int] = field(default_factory=dict)  # tool name -> invalid tries since its last success
    waiting: list[ToolCall] = field(default_factory=list)  # calls of the last reply not answered yet
    cut: list[str] = field(default_factory=list)  # of those, the ids cut off by max_tokens: answered, never run
    pending: list[Any] = field(default_factory=list)  # what the run paused for (hooks' `plan.hold` items)
    features: dict[str, Any] = field(default_factory=dict)  # each feature's state for this run, by its key
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)  # for the audit log and RUN_ID
    capped: bool = False  # True once max_iterations stopped the tool calls
    done: bool = False
    busy: bool = False  # True while a run or resume is working on this state
    plans: list[Any] | None = field(default=None, repr=False)  # the waiting calls, checked (kept while paused)


@dataclass
class RunResult:
    """What a run produced: an answer, or (when `paused`) the calls waiting for a decision."""

    text: str | None  # the final answer (None while paused)
    messages: list[dict[str, Any]]  # the whole conversation, ready to continue or to `show()`
    tool_results: list[ToolResult]  # every call with what the model read back, and timing
    usage: Usage
    iterations: int  # model requests made, the final one included
    capped: bool  # True when max_iterations ended the tool calls
    pending: list[Any] = field(default_factory=list)  # calls a paused run waits on (emptied by resume)
    state: RunState | None = field(default=None, repr=False)  # what `resume` continues from

    def save(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
        """Write this paused run to a signed JSON file (0600, atomically); `agent.load(path)` continues it, also
        in another process. Decisions already made are kept (the approvals feature: approvals/saved.py)."""
        feature("approvals.saved").save(self, path, key=key)

    def find(self, call_id: str) -> Any:
        """The pending call with this id, to decide it (a service gets ids back from its approval page)."""
        for item in self.pending:
            if item.id == call_id:
                return item
        if not self.paused:
            raise LookupError(f"no pending call {call_id!r:.80}: this run is not paused, there is nothing to decide")
        raise LookupError(f"no pending call {call_id!r:.80}; the calls waiting are "
                          + ", ".join(f"{visible(str(p.id))} ({visible(str(p.name))})" for p in self.pending))

    @property
    def paused(self) -> bool:
        """True while the run waits for decisions; `messages` then ends with calls not yet answered:
        resume the run rather than sending them to a model."""
        return bool(self.pending)

    def __repr__(self) -> str:
        calls = ", ".join(r.call.name for r in self.tool_results) or "no tools"
        flags = ", capped" if self.capped else ""
        if self.paused:
            flags += f", paused before {len(self.pending)} call(s)"
        return f"RunResult({self.iterations} iterations{flags}; {calls}; {self.usage}): {brief(self.text or '', 120)}"
