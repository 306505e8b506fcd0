"""What a practice persona decides to say, before it is put on the wire.

A persona (the planner, or one of its misbehaving variants) looks at a validated
request body and returns a `Reply`: either some text, or some tool calls, never both
empty. `wire.py` turns a `Reply` into a `chat.completion` body or a stream of
`chat.completion.chunk` events; ids, usage and timestamps are added there, not here.

Keeping this contract tiny lets every persona stay a pure function of the request,
which is what makes the practice model deterministic.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PlannedCall:
    """One tool call the persona wants to make.

    `arguments` is the exact text that goes into `function.arguments` on the wire. It is
    normally compact JSON, but a persona may put anything there (broken JSON, a number
    word where a number belongs) to reproduce a pitfall.

    >>> PlannedCall.of("get_weather", {"city": "北京"}).arguments
    '{"city":"北京"}'
    """

    name: str
    arguments: str

    @classmethod
    def of(cls, name: str, arguments: dict[str, Any]) -> PlannedCall:
        """Build a call whose arguments are serialised the way real models send them."""
        return cls(name, json.dumps(arguments, ensure_ascii=False, separators=(",", ":")))


@dataclass(frozen=True)
class Reply:
    """A persona's decision for one completion: text, tool calls, or both.

    >>> Reply(content="你好").finish_reason
    'stop'
    >>> Reply(tool_calls=(PlannedCall.of("f", {}),)).finish_reason
    'tool_calls'
    """

    content: str | None = None
    tool_calls: tuple[PlannedCall, ...] = field(default_factory=tuple)
    cut: bool = False
    """The output ran out before the reply was finished (the `@cut` flag, `quirks.cut`): finish_reason "length"."""

    @property
    def finish_reason(self) -> str:
        """`length` when cut, `tool_calls` when the reply calls tools, else `stop`."""
        return "length" if self.cut else "tool_calls" if self.tool_calls else "stop"
