"""Budget (a feature): what long results, long histories and repeated calls cost, and how to pay less.

    tokens.py     token counts, offline (tiktoken only if its files are already cached)
    spill.py      a too-long tool result saved to a file, the model shown its head and tail
    trimming.py   a history fitted to a token budget, tool calls kept with their answers
    cache.py      a tool's result reused for the same arguments
    cost.py       what a run's tokens cost
    options.py    the tool options it reads (cache, too_long_to_file, reads_files)
    hooks.py      how it plugs into the loop: CacheHook, SpillHook, TrimHook

Needs: the core (mini_framework/*.py). Nothing else.
"""
from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this folder that defines it; imported on first use (module __getattr__, PEP 562)
_WHERE = {
    "CacheHook": ".hooks",
    "SpillHook": ".hooks",
    "TrimHook": ".hooks",
    "hooks_for": ".hooks",
    "default_hooks": ".hooks",
    "OPTIONS": ".options",
    "ResultCache": ".cache",
    "Price": ".cost",
    "count_tokens": ".tokens",
    "estimate_tokens": ".tokens",
    "message_tokens": ".tokens",
    "trim_history": ".trimming",
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
