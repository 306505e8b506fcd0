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

from .approvers import Approver, ask, ask_in_console, scripted
from .audit import AuditLog, arguments_hash, read_audit
from .decisions import Checkpoint, Decision, Pending, Verdict, binding, questions
from .gate import Approvals, ApprovalState, default_hooks, hooks_for
from .options import OPTIONS, needs_approval
from .saved import SavedRunError

__all__ = ["ApprovalState", "Approvals", "Approver", "AuditLog", "Checkpoint", "Decision", "OPTIONS", "Pending",
           "SavedRunError", "Verdict", "arguments_hash", "ask", "ask_in_console", "binding", "default_hooks",
           "hooks_for", "needs_approval", "questions", "read_audit", "scripted"]
