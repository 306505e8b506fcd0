"""The tool option this feature reads: `@tool(requires_approval=True | predicate)`.

    @tool(requires_approval=lambda args: not is_internal(args.to))   # a person decides external mail
    def send_email(to: str, subject: str, body: str) -> str: ...
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..tools import Option, Tool

__all__ = ["OPTIONS", "needs_approval"]


def _check(value: Any, tool: Tool) -> Any:
    if not isinstance(value, bool) and not callable(value):
        raise TypeError("requires_approval must be True, False, or a function of the validated arguments, "
                        f"e.g. lambda args: args.to.endswith('@external.com'); not {value!r:.60}")
    return value


OPTIONS = {"requires_approval": Option(default=False, check=_check, acts=True)}


def needs_approval(tool: Tool, validated: BaseModel) -> bool:
    """Whether a person must approve this call first. A predicate that fails says yes (fail closed).

    >>> from mini_framework import tool
    >>> @tool(requires_approval=lambda args: args.to.endswith("@external.com"))
    ... def send(to: str) -> str:
    ...     '''Send a note.'''
    ...     return "sent"
    >>> [needs_approval(send, send.validate({"to": to})) for to in ("li@external.com", "me@corp.cn")]
    [True, False]
    """
    rule = tool.options.get("requires_approval", False)
    if isinstance(rule, bool):
        return rule
    try:
        return bool(rule(validated))
    except (KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException:  # a rule that fails, even with SystemExit, asks for a person
        return True
