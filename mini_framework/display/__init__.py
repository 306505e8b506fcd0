"""Display (for people): a conversation drawn the way the API sees it, JSON made readable.

    transcript.py   show(messages) -> a Transcript (HTML in Jupyter, text elsewhere); dump(obj)

Needs: the core (mini_framework/*.py). Nothing plugs into the loop: these are for notebooks and logs.
"""
from .transcript import Transcript, dump, show

__all__ = ["Transcript", "dump", "show"]
