"""Text for people and for logs, from values that may be anything: one line, cut, and shown as it is.

    quote(value)      JSON on one line, cut to a length (never raises)
    brief(value)      one line for people: whitespace collapsed, cut
    visible(text)     every hidden or cursor-moving character shown as its escape
    as_dict(message)  a message as a plain dict, whether a dict or an SDK object
    json_object(text) the dict a JSON text holds, or None (not JSON, or not an object)
"""
from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["as_dict", "brief", "json_object", "quote", "visible"]


def quote(value: Any, limit: int = 60) -> str:
    """`value` as JSON on one line, cut to about `limit` characters; never raises, whatever the value.

    >>> quote("北京"), quote("x" * 100, 5), quote([1, 2, 3, 4], 8)
    ('"北京"', '"xxxxx…" (100 characters)', '[1, 2, 3…')
    """
    if isinstance(value, str) and len(value) > limit:  # cut first: a 1 MB string is never encoded whole
        return json.dumps(value[:limit], ensure_ascii=False)[:-1] + f'…" ({len(value)} characters)'
    if hasattr(value, "model_dump"):
        try:
            value = value.model_dump(warnings=False)
        except Exception:
            value = repr(value)
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, TypeError, RecursionError):
        text = "(nested too deeply to show)"
    return text if len(text) <= limit else text[:limit] + "…"


# Characters Python counts as printable that show as nothing (Unicode's default-ignorable code points that are
# letters or marks: Hangul fillers, the combining grapheme joiner, variation selectors; and the braille blank).
_BLANK = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]")


def visible(text: str) -> str:
    r"""Text from a model or a provider, safe to show a person: every character that moves the cursor, hides
    itself or reorders what follows (control characters, ANSI escapes, line and paragraph separators, bidi
    overrides, zero-width and blank characters) is shown as its \u escape, so what is shown is what it is.

    >>> print(visible("call_1\x1b[2K\rsend_email(to='boss')"), visible("invoice\u202egpj.exe"), visible("北京"))
    call_1\u001b[2K\u000dsend_email(to='boss') invoice\u202egpj.exe 北京
    >>> print(visible("li\u3164@example.com"))
    li\u3164@example.com
    """
    if text.isprintable() and not _BLANK.search(text):
        return text
    return "".join(ch if ch.isprintable() and not _BLANK.match(ch)
                   else f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}" for ch in text)


def brief(value: Any, limit: int = 80) -> str:
    """`value` on one line for people: a string as it is (whitespace collapsed), anything else as JSON.

    >>> brief('{"city":  "北京"}'), brief({"a": 1}), brief("x" * 100, 10)
    ('{"city": "北京"}', '{"a": 1}', 'xxxxxxxxx…')
    """
    text = value if isinstance(value, str) else quote(value, limit=limit * 4)
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_dict(message: Any) -> dict[str, Any]:
    """A message as a plain dict, whether it is a dict or an SDK model.

    >>> as_dict({"role": "user", "content": "hi"})["content"]
    'hi'
    """
    if isinstance(message, dict):
        return message
    if hasattr(message, "model_dump"):
        return message.model_dump(exclude_none=True)
    raise TypeError(f"not a chat message: {type(message).__name__}")


def json_object(text: Any) -> dict[str, Any] | None:
    """The object (a dict) that JSON `text` holds; None when it holds something else or is not JSON.

    >>> json_object('{"city": "北京"}'), json_object("[1]"), json_object("{city: 北京}")
    ({'city': '北京'}, None, None)
    """
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None
