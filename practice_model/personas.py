"""The practice model's personas: which "brain" answers for which model name.

A learner picks a persona the way they would pick a real model: `model="practice-loop"`.
Each registry entry says what the persona is, whether it accepts images, and how to build
its responder. Building happens once per server, lazily, so

- a persona can keep per-server state in its closure (`practice-flaky` counts attempts per
  conversation with `Attempts`), and two servers never share it;
- importing this module never imports the planner: a broken or missing planner turns into a
  500 `server_error` for the request that needed it, not a crash.

A responder is `(request: dict) -> Reply`; it may raise `ApiError` to refuse (429, 503, ...). It
gets the parsed body itself, not a copy: the answer's ids, usage and limits were read from it
before (`wire.facts`), so changing it changes nothing but the responder's own view.
Adding a persona is one `Persona(...)` line in `DEFAULT_PERSONAS`. The built-in personas answer
`response_format` (`structured.py` shapes their final text into JSON); a persona made with
`Persona.of` answers as it likes.
"""
from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .reply import Reply
from .wire import canonical_json

Responder = Callable[[dict[str, Any]], Reply]
DEFAULT_WINDOW = 16_384
"""Tokens: every built-in persona's context window (`context.py` says why this number)."""


@dataclass(frozen=True)
class Persona:
    """One model name the practice server answers to."""

    name: str
    """The model id: what goes in `model=` and what `/v1/models` lists."""
    description: str
    """One line for humans (the CLI banner, `GET /v1/models/{id}` has no room for it)."""
    build: Callable[[], Responder]
    """Called once per server on first use; returns the responder (which may close over state)."""
    vision: bool = False
    """Whether `image_url` content parts are accepted (else the real "Invalid content type" 400)."""
    context_window: int = DEFAULT_WINDOW
    """Tokens one request may use, prompt plus reserved completion (`context.py`; `@ctx=N` overrides it)."""

    def __post_init__(self) -> None:
        window = self.context_window
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"persona {self.name!r}: context_window must be a whole number of tokens, 1 or more, "
                             f"not {window!r}")

    @classmethod
    def of(cls, name: str, respond: Responder, description: str = "", vision: bool = False,
           context_window: int = DEFAULT_WINDOW) -> Persona:
        """A stateless persona from a plain function (handy in tests).

        >>> Persona.of("echo", lambda req: Reply(content="hi")).build()({}).content
        'hi'
        >>> Persona.of("tiny", lambda req: Reply(content="hi"), context_window=4096).context_window
        4096
        """
        return cls(name, description or name, lambda: respond, vision, context_window)


class Attempts:
    """A thread-safe counter per conversation, for personas that fail the first N tries.

    >>> a = Attempts(); req = {"messages": [{"role": "user", "content": "hi"}]}
    >>> a.next(req), a.next(req), a.next({"messages": []})
    (1, 2, 1)
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def next(self, request: dict[str, Any]) -> int:
        """Count one more attempt at this conversation and return the count (1 on the first)."""
        key = conversation_key(request)
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]


def conversation_key(request: dict[str, Any]) -> str:
    """A stable hash of the messages (what makes two requests "the same conversation")."""
    return hashlib.sha256(canonical_json(request.get("messages")).encode()).hexdigest()[:32]


def _planner() -> Responder:
    """The deterministic planner, imported on first use (final answers shaped by `response_format`)."""
    from .planner import plan
    from .structured import structured

    return structured(plan)


def _pitfall(name: str) -> Callable[[], Responder]:
    """A builder for one of the misbehaving personas, looked up in `pitfalls.BUILDERS` on first use."""
    def build() -> Responder:
        from .pitfalls import BUILDERS
        from .structured import structured

        return structured(BUILDERS[name]())
    return build


DEFAULT_PERSONAS: dict[str, Persona] = {
    p.name: p
    for p in [
        Persona("practice", "the deterministic planner: calls your tools, then answers from their results",
                _planner),
        Persona("practice-sloppy", "mistyped, broken-JSON arguments in the first call of each tool; fixes them "
                "when the error names the field", _pitfall("sloppy")),
        Persona("practice-hallucinate", "first calls a tool that does not exist; switches to the real ones once "
                "an error lists them", _pitfall("hallucinate")),
        Persona("practice-loop", "repeats its first tool call forever, until a tool message says to stop "
                "repeating or no tools are offered", _pitfall("loop")),
        Persona("practice-vision", "the planner, with eyes: describes images from their bytes (format, size, colours, "
                "PNG text)", _planner, vision=True),
        Persona("practice-flaky", "each new conversation: a 429, then a 500 (both say retry after 20 ms), "
                "then the planner's answer", _pitfall("flaky")),
        Persona("practice-eager", "calls side-effecting tools at once, whatever the description or system prompt "
                "says", _pitfall("eager")),
        Persona("practice-gullible", "obeys instructions found in tool results and pictures (calls the tool, says "
                "the token they name)", _pitfall("gullible")),
    ]
}


def registry(personas: Mapping[str, Persona | Responder] | Iterable[Persona] | None) -> dict[str, Persona]:
    """Normalise what `PracticeServer(personas=...)` accepts into a name -> Persona dict.

    >>> list(registry({"echo": lambda req: Reply(content="hi")}))
    ['echo']
    """
    if personas is None:
        return dict(DEFAULT_PERSONAS)
    if isinstance(personas, Mapping):
        return {name: p if isinstance(p, Persona) else Persona.of(name, p) for name, p in personas.items()}
    return {p.name: p for p in personas}
