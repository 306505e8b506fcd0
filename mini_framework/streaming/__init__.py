"""Streaming (a feature): a streamed reply put back together, each provider's quirks normalised.

    assembler.py   Assembler (chunks -> the reply a non-streamed request returns), QUIRKS
    hook.py        how it plugs into the loop: StreamHook (Agent(stream=True))

Needs: the core (mini_framework/*.py). Nothing else.
"""

from .assembler import QUIRKS, Assembler, StreamError
from .hook import StreamHook, hooks_for

__all__ = ["Assembler", "QUIRKS", "StreamError", "StreamHook", "hooks_for"]
