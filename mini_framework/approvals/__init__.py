"""Approvals (a feature): a person decides before a gated call runs; paused runs saved and resumed.

    options.py     the tool option it reads: requires_approval (and needs_approval, the predicate's verdict)
    decisions.py   the checkpoint's verdicts, the calls a paused run waits on, a person's decisions
    approvers.py   code that decides on the spot: ask_in_console, scripted
    audit.py       one JSON line per approval event
    gate.py        how it plugs into the loop: the Approvals hook (the gate and the checkpoint)
    saved.py       a paused run as a signed JSON file, loaded again in another process
    record.py      the signing key, and the record of spent approvals across processes

Needs: the core (mini_framework/*.py). Nothing else.
"""
from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this folder that defines it; imported on first use (module __getattr__, PEP 562)
_WHERE = {
    "OPTIONS": ".options",
    "needs_approval": ".options",
    "Checkpoint": ".decisions",
    "Decision": ".decisions",
    "Pending": ".decisions",
    "Verdict": ".decisions",
    "binding": ".decisions",
    "Approver": ".approvers",
    "ask": ".approvers",
    "ask_in_console": ".approvers",
    "scripted": ".approvers",
    "AuditLog": ".audit",
    "arguments_hash": ".audit",
    "read_audit": ".audit",
    "Approvals": ".gate",
    "ApprovalState": ".gate",
    "hooks_for": ".gate",
    "default_hooks": ".gate",
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
