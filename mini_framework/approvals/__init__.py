"""Approvals (a feature): a person decides before a gated call runs; paused runs saved and resumed.

    decisions.py   the checkpoint's verdicts, pending calls, a person's decisions, approvers, the audit log
    saved.py       a paused run as a JSON file, loaded again in another process

Needs: the core (mini_framework/*.py). Nothing else.
"""
from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this folder that defines it; imported on first use (module __getattr__, PEP 562)
_WHERE = {
    "AuditLog": ".decisions",
    "Decision": ".decisions",
    "Pending": ".decisions",
    "Verdict": ".decisions",
    "ask_in_console": ".decisions",
    "binding": ".decisions",
    "read_audit": ".decisions",
    "scripted": ".decisions",
    "SavedRunError": ".saved",
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
