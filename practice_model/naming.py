"""The practice model's names, and what each one stands for when a real provider answers instead.

A persona name is "practice" or "practice-<persona>", optionally followed by the server's flags
("practice@ctx=4096", "practice-eager@deepseek"). A real provider knows none of them, so a program
that runs the same code offline and against a provider (mini_framework's `connect()`) asks
`stands_for(name)` which of the provider's models to use in its place:

    "text"    the provider's chat model (LLM_MODEL)
    "vision"  the provider's model that takes images (LLM_VISION_MODEL), for practice-vision
    None      not a practice name: the provider's own, used as given

    >>> stands_for("practice-sloppy"), stands_for("practice-vision@ctx=8192"), stands_for("deepseek-chat")
    ('text', 'vision', None)

The rule is by prefix, not by the personas that exist: "practice-typo" is still a practice name
(which the server answers with the real API's 404 for an unknown model).
"""
from __future__ import annotations

DEFAULT_MODEL = "practice"  # the well-behaved persona: what a client gets when it names none
VISION_MODEL = "practice-vision"  # the persona that sees images


def stands_for(model: str) -> str | None:
    """"vision" for practice-vision, "text" for the other practice names, None for any other name.

    >>> stands_for("practice"), stands_for("practice@deepseek"), stands_for("practiced"), stands_for("gpt-4.1")
    ('text', 'text', None, None)
    """
    base = str(model).split("@", 1)[0]
    if base == VISION_MODEL:
        return "vision"
    if base == DEFAULT_MODEL or base.startswith(DEFAULT_MODEL + "-"):
        return "text"
    return None
