"""The context window: how many tokens one request may use, and the real 400 when it asks for more.

A model reads the whole prompt and writes its reply into one window of tokens. A request whose
prompt (`wire.prompt_tokens`: messages and tool definitions) plus the completion it reserves
(`max_completion_tokens` or `max_tokens`, when set) does not fit is refused before any model
runs: OpenAI answers 400 `context_length_exceeded` ("This model's maximum context length is
16384 tokens. However, your messages resulted in 50020 tokens. ...", see
`errors.context_length_exceeded`), and with the `@deepseek` flag DeepSeek answers in its own words
(`providers.context_length_exceeded`).

    window(persona, parse_model("practice"))             -> 16384
    window(persona, parse_model("practice@ctx=4096"))    -> 4096     one request, another window

Every persona has a `context_window` (`personas.Persona`), by default `DEFAULT_WINDOW`, 16,384
tokens. The number is chosen to make a lesson's point visible: the course's own
conversations stay far below it (the largest request of lessons 00-09 is under 1,000 tokens),
while one tool result of 200,000 characters (about 50,000 tokens) overflows it. A real model's
window is larger (128,000 tokens for gpt-4o), and the same overflow happens there a few logs later.

Concessions: the tokens are the practice model's estimate, not a real tokenizer's; with `n > 1`
the completion is reserved once (the real rule is not established); the window is checked after
every other check of the request (where the real API checks it is not established); a
`max_tokens` above a model's own output limit is not refused on its own. `GET /v1/models/{id}`
does not report the window, because the real API has no field for it.
"""
from __future__ import annotations

from typing import Any

from . import errors, providers, wire
from .personas import DEFAULT_WINDOW, Persona
from .providers import Flags

__all__ = ["DEFAULT_WINDOW", "check", "window"]


def window(persona: Persona, flags: Flags) -> int:
    """The window of one request: the `@ctx=N` flag, else the persona's `context_window`.

    >>> from practice_model.personas import DEFAULT_PERSONAS
    >>> practice = DEFAULT_PERSONAS["practice"]
    >>> window(practice, Flags("practice")), window(practice, Flags("practice", window=4096))
    (16384, 4096)
    """
    return flags.window if flags.window is not None else persona.context_window


def check(request: dict[str, Any], facts: wire.Facts, size: int, wording: str = providers.DEFAULT) -> None:
    """Refuse a request whose prompt plus reserved completion exceeds `size` tokens, in the provider's words.

    >>> body = {"model": "practice", "messages": [{"role": "user", "content": "x" * 800}], "max_tokens": 10}
    >>> check(body, wire.facts(body), 200)
    Traceback (most recent call last):
    ...
    practice_model.errors.ApiError: 400 This model's maximum context length is 200 tokens. However, you \
requested 217 tokens (207 in the messages, 10 in the completion). Please reduce the length of the messages or \
completion.
    """
    completion = facts.limit
    if facts.prompt_tokens + (completion or 0) <= size:
        return
    if wording == "deepseek":
        raise providers.context_length_exceeded(size, facts.prompt_tokens, completion or 0)
    functions = wire.tool_tokens(request)       # only counted for the refusal, which names them apart
    raise errors.context_length_exceeded(size, facts.prompt_tokens - functions, functions, completion)
