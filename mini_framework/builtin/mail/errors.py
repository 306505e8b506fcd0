"""The two failures of sending: MailError (the model reads it as is; it may say the e-mail may have gone) and
NotSent (nothing left, so trying again later is safe).

    >>> issubclass(NotSent, MailError)
    True
"""
from __future__ import annotations

from ...executor import ToolError

__all__ = ["MailError", "NotSent"]

class MailError(ToolError):
    """A failure the model reads as is: nothing was sent, or (it says so) it may have been."""


class NotSent(MailError):
    """A failure before the message left: nothing was sent, so trying again later is safe."""
