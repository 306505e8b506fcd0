"""Show a conversation the way the API sees it: roles, tool calls with their ids, results beside calls.

`show(messages)` returns a `Transcript`: Jupyter renders it as HTML, everything else prints
plain text. Messages may be plain dicts or SDK objects (`ChatCompletionMessage`), and a whole
`ChatCompletion` is accepted too. Each tool result is placed beside the call it answers (matched
by `tool_call_id`), so a wrong or missing id is visible at a glance:

- a call nobody answered is marked "no result" (the API rejects the next request);
- a tool message whose id matches no call is shown on its own, marked as unmatched.

Concession: images are shown as a placeholder with their size, never inlined.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any, Iterable

from ..text import as_dict

MAX_TEXT = 2_000  # characters of one message shown before eliding the rest


def content_text(content: Any) -> str:
    """The readable text of a message's `content` (string, None, or a list of parts).

    >>> content_text([{"type": "text", "text": "look:"}, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}])
    'look: [image https://x/y.png]'
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_part_text(part) for part in content)
    return str(content)


def _part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return str(part)
    if part.get("type") == "text":
        return str(part.get("text", ""))
    if part.get("type") == "image_url":
        url = str((part.get("image_url") or {}).get("url", ""))
        if url.startswith("data:"):
            return f"[image {url.split(';', 1)[0][5:]}, {len(url) * 3 // 4 // 1024} KB inline]"
        return f"[image {url}]"
    return f"[{part.get('type', 'part')}]"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"… ({len(text) - MAX_TEXT} more characters)"


@dataclass
class Row:
    """One line of the transcript: who spoke and what, or one tool call with its result."""

    role: str
    text: str = ""
    call_id: str | None = None
    call: str | None = None  # "name(arguments)" for a tool call
    result: str | None = None  # the answering tool message, or None if unanswered
    note: str | None = None  # a warning such as "no result"
    same_message: bool = False  # a call after the text (or the calls) of the same assistant message


def transcript_rows(messages: Iterable[Any]) -> list[Row]:
    """Flatten messages into rows, pairing every tool call with the tool message that answers it."""
    items = [as_dict(m) for m in messages]
    answers: dict[Any, dict[str, Any]] = {}
    for m in items:
        if m.get("role") == "tool":
            answers.setdefault(m.get("tool_call_id"), m)
    called: set[Any] = set()
    rows: list[Row] = []
    for message in items:
        role = str(message.get("role", "?"))
        if role == "tool":
            call_id = message.get("tool_call_id")
            note = ("answers no tool call" if call_id not in called
                    else "a second answer to the same call" if answers.get(call_id) is not message else None)
            if note:
                rows.append(Row("tool", _clip(content_text(message.get("content"))), call_id=call_id, note=note))
            continue
        text = content_text(message.get("content"))
        calls = message.get("tool_calls") or []
        if text or not calls:
            rows.append(Row(role, _clip(text)))
        for number, call in enumerate(calls):
            call_id = call.get("id")
            function = call.get("function") or {}
            called.add(call_id)
            answer = answers.get(call_id)
            rows.append(Row(
                "assistant",
                call_id=call_id,
                call=f"{function.get('name')}({function.get('arguments', '')})",
                result=None if answer is None else _clip(content_text(answer.get("content"))),
                note=None if answer is not None else "no result",
                same_message=bool(text) or number > 0,
            ))
    return rows


_COLOURS = {"system": "#6b7280", "developer": "#6b7280", "user": "#1d4ed8", "assistant": "#047857", "tool": "#b45309"}


class Transcript:
    """A printable, Jupyter-renderable view of a conversation. Build it with `show()`."""

    def __init__(self, rows: list[Row]):
        self.rows = rows

    def __str__(self) -> str:
        lines = []
        for row in self.rows:
            if row.call is not None:
                who = " " * len("[assistant] ") if row.same_message else "[assistant] "
                lines.append(f"{who}→ {row.call}  id={row.call_id}")
                lines.append(f"{'':12}← {row.result}" if row.result is not None else f"{'':12}⚠ {row.note}")
            elif row.note:
                lines.append(f"[{row.role}] ⚠ {row.note} (tool_call_id={row.call_id}): {row.text}")
            else:
                lines.append(f"[{row.role}] {row.text}")
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        cells = []
        for row in self.rows:
            colour = _COLOURS.get(row.role, "#111827")
            style = f"color:{colour};font-weight:600;padding:2px 8px;vertical-align:top"
            who = f'<td style="{style}">{"" if row.same_message else html.escape(row.role)}</td>'
            if row.call is not None:
                result = (f"← {html.escape(row.result)}" if row.result is not None
                          else f'<span style="color:#b91c1c">⚠ {html.escape(row.note or "")}</span>')
                body = (f"<code>→ {html.escape(row.call)}</code>"
                        f'<div style="color:#6b7280;font-size:85%">id={html.escape(str(row.call_id))}</div>'
                        f'<div style="color:{_COLOURS["tool"]};white-space:pre-wrap">{result}</div>')
            elif row.note:
                body = (f'<span style="color:#b91c1c">⚠ {html.escape(row.note)} '
                        f"(tool_call_id={html.escape(str(row.call_id))})</span>: {html.escape(row.text)}")
            else:
                body = f'<span style="white-space:pre-wrap">{html.escape(row.text)}</span>'
            cells.append(f'<tr>{who}<td style="text-align:left;padding:2px 8px">{body}</td></tr>')
        return f'<table style="border-collapse:collapse">{"".join(cells)}</table>'


def show(conversation: Any) -> Transcript:
    """A transcript of a list of messages, a single message, or a `ChatCompletion`.

    >>> print(show([{"role": "user", "content": "北京天气？"},
    ...             {"role": "assistant", "content": None, "tool_calls": [
    ...                 {"id": "call_1", "type": "function",
    ...                  "function": {"name": "get_weather", "arguments": '{"city":"北京"}'}}]},
    ...             {"role": "tool", "tool_call_id": "call_1", "content": '{"condition":"晴"}'}]))
    [user] 北京天气？
    [assistant] → get_weather({"city":"北京"})  id=call_1
                ← {"condition":"晴"}
    """
    if hasattr(conversation, "choices"):  # a ChatCompletion: show its message(s)
        conversation = [choice.message for choice in conversation.choices]
    elif isinstance(conversation, dict) or hasattr(conversation, "model_dump"):
        conversation = [conversation]
    return Transcript(transcript_rows(conversation))


def dump(obj: Any) -> str:
    """Pretty JSON for a dict or an SDK object (as it came over the wire), with Chinese kept readable.

    >>> print(dump({"city": "北京"}))
    {
      "city": "北京"
    }
    """
    if hasattr(obj, "model_dump"):  # an SDK object: the fields that came over the wire, nulls included
        obj = obj.model_dump(mode="json", exclude_unset=True)
    return json.dumps(obj, indent=2, ensure_ascii=False)
