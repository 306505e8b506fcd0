"""What an MCP tool returned, as the value a framework tool returns: text, and images only where it sent images.

    value = tool_value(result, max_chars=1_000_000)   # a CallToolResult's JSON -> str | (str, ImgUrl, ...)

An MCP result is a list of content blocks. Each becomes what the rest of the framework already handles:

    text            its text (blocks joined by blank lines)
    image           an ImgUrl with a data: URL: the media feature sniffs its bytes, checks its size and
                    registers it under a media_id, as for any tool that returns an image
    audio           a line saying it was sent and not shown
    resource_link   a line with its name and URI: nothing is fetched because a server said so
    resource        an embedded resource: its text if it has text, else a line saying what it was
    structuredContent  used only when there is no content block (it is JSON text then)

`isError: true` becomes a ToolError: the model reads the server's message, as for any failing tool.
Text beyond `max_chars` is cut here, with a line saying how much there was; what is left is spilled to a
file like any long result (the budget feature's `too_long_to_file`, on for MCP tools).
"""
from __future__ import annotations

import json
from typing import Any

from ..executor import ToolError
from ..media.types import ImgUrl
from ..text import brief

__all__ = ["MAX_IMAGES", "tool_value"]

MAX_IMAGES = 8  # image blocks kept from one result; the media feature limits their sizes


def tool_value(result: dict[str, Any], max_chars: int = 1_000_000) -> Any:
    """One CallToolResult (as JSON) -> a tool's return value; raises ToolError when the server says it failed.

    >>> tool_value({"content": [{"type": "text", "text": "17:30"}, {"type": "resource_link",
    ...             "uri": "file:///etc/passwd", "name": "passwd"}]})
    '17:30\\n\\n[a link to a resource, not fetched: passwd <file:///etc/passwd>]'
    >>> tool_value({"content": [{"type": "text", "text": "no such note"}], "isError": True})
    Traceback (most recent call last):
    mini_framework.executor.ToolError: no such note
    """
    blocks: list[Any] = result["content"] if isinstance(result.get("content"), list) else []
    texts: list[str] = []
    images: list[ImgUrl] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image" and len(images) < MAX_IMAGES:
            images.append(ImgUrl(f"data:{_mime(block)};base64,{block.get('data', '')}"))
        elif kind == "image":
            texts.append(f"[an image left out: more than {MAX_IMAGES} in one result]")
        elif kind == "audio":
            texts.append(f"[audio ({_mime(block)}, {len(str(block.get('data', ''))) * 3 // 4:,} bytes), not shown]")
        elif kind == "resource_link":
            texts.append(f"[a link to a resource, not fetched: {_named(block)}]")
        elif kind == "resource":
            texts.append(_embedded(block.get("resource")))
        else:
            texts.append(f"[a content block of an unknown type {brief(kind, 40)}, left out]")
    if not blocks and "structuredContent" in result:
        texts.append(json.dumps(result["structuredContent"], ensure_ascii=False, default=str))
    text = _capped("\n\n".join(texts), max_chars)
    if result.get("isError"):
        raise ToolError(text or "the tool failed and said nothing about why")
    if images:
        return (text, *images) if text else tuple(images)
    return text


def _mime(block: dict[str, Any]) -> str:
    """A block's mimeType if it is a plain `type/subtype`, else a neutral one (the bytes are sniffed anyway)."""
    mime = str(block.get("mimeType") or "")
    ok = mime.count("/") == 1 and all(c.isalnum() or c in "/.+-" for c in mime) and len(mime) < 100
    return mime if ok else "application/octet-stream"


def _named(block: dict[str, Any]) -> str:
    return f"{brief(block.get('name') or '(no name)', 80)} <{brief(block.get('uri') or '', 200)}>"


def _embedded(resource: Any) -> str:
    """An embedded resource: its text, or one line about a blob."""
    if not isinstance(resource, dict):
        return "[an embedded resource with nothing in it]"
    if "text" in resource:
        return str(resource["text"])
    size = len(str(resource.get("blob", ""))) * 3 // 4
    return f"[an embedded resource ({_mime(resource)}, {size:,} bytes), not shown: {brief(resource.get('uri'), 200)}]"


def _capped(text: str, max_chars: int) -> str:
    """`text`, cut to `max_chars` with a line saying so."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n\n[cut: the server sent {len(text):,} characters; the first {max_chars:,} are here]"
