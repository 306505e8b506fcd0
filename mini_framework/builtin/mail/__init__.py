"""The builtin `send_email` (a package while it is split by job; for now all of it is in tool.py)."""
from __future__ import annotations

from .tool import (
    Backend,
    Entry,
    Ledger,
    MailError,
    NotSent,
    Outbox,
    SMTPSender,
    check_address,
    compose,
    make_send_email,
    message_key,
)

__all__ = ["Backend", "Entry", "Ledger", "MailError", "NotSent", "Outbox", "SMTPSender", "check_address", "compose",
           "make_send_email", "message_key"]
