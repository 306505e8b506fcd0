"""Streaming (a feature): a streamed reply put back together, each provider's quirks normalised.

    assembler.py   Assembler (chunks -> the reply a non-streamed request returns), QUIRKS
    hook.py        how it plugs into the loop: StreamHook (Agent(stream=True))

Needs: the core (mini_framework/*.py). Nothing else.
"""
from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this folder that defines it; imported on first use (module __getattr__, PEP 562)
_WHERE = {
    "StreamHook": ".hook",
    "hooks_for": ".hook",
    "QUIRKS": ".assembler",
    "Assembler": ".assembler",
    "StreamError": ".assembler",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value  # found once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
