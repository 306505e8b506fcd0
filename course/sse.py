"""Raw server-sent events to chunks, for the course's code that reads the HTTP stream itself.

    for chunk in read_sse(iter(lambda: response.read1(65536), b"")):   # http.client, httpx, sockets
        assembler.feed(chunk)                                          # mini_framework.Assembler

The framework takes chunks from the OpenAI SDK (which reads the event stream itself); this reader
is for the tests, the benchmarks and lesson 11, which look at the bytes on the wire.
"""
from __future__ import annotations

import codecs
import io
import json
import re
from typing import Any, Iterable, Iterator

from mini_framework.streaming.assembler import StreamError

__all__ = ["read_sse"]

_BREAK = re.compile(r"\r\n|\r|\n")  # a line ends at any of the three (the SSE standard)


def read_sse(blocks: Iterable[bytes | str]) -> Iterator[dict[str, Any]]:
    """The chunks of a raw event stream, split anywhere (inside a UTF-8 character too), up to `data: [DONE]`.

    Comments (`: keep-alive`) and empty events are skipped; an event cut off by the end of the stream
    (no blank line after it) is dropped, as the SSE standard says. A `data:` line that is not JSON
    raises StreamError quoting it. (The OpenAI SDK raises `json.JSONDecodeError` from its iterator for
    such a line, after the chunks before it, and an `openai.APIError` for an `{"error": ...}` event.)

    >>> stream = 'data: {"choices": []}\\n\\n: keep-alive\\n\\ndata: [DONE]\\n\\n'.encode()
    >>> list(read_sse([stream[:9], stream[9:]]))
    [{'choices': []}]
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = io.StringIO()  # the start of a line not ended yet (a long line in small reads: each read copied once)
    data: list[str] = []  # the data lines of the event so far
    after_cr = False  # the text so far ends with "\r": a "\n" first in the next read is part of that line break
    for block in blocks:
        try:
            text = block if isinstance(block, str) else decoder.decode(block)
        except UnicodeDecodeError as error:
            raise StreamError("the stream is not UTF-8", repr(block[max(0, error.start - 20):error.end + 20])) from None
        if not text:
            continue  # a read that ended inside a character
        if after_cr and text.startswith("\n"):
            text = text[1:]
        after_cr = text.endswith("\r")
        *ended, rest = _BREAK.split(text)  # only this read's text: the earlier pieces are not split again
        for piece in ended:
            if line.tell():
                line.write(piece)
                piece, line = line.getvalue(), io.StringIO()
            if piece:
                name, _, value = piece.partition(":")
                if name == "data":
                    data.append(value[1:] if value.startswith(" ") else value)
                continue
            event, data = "\n".join(data), []
            if event == "[DONE]":
                return
            if event:
                yield _sse_json(event)
        line.write(rest)


def _sse_json(event: str) -> dict[str, Any]:
    """One event's data as a chunk; StreamError if it is not a JSON object or carries an error."""
    try:
        chunk = json.loads(event)
    except (ValueError, RecursionError):
        raise StreamError("a data line of the stream is not JSON", "data: " + event) from None
    if not isinstance(chunk, dict):
        raise StreamError("a data line of the stream is not a JSON object", "data: " + event)
    if chunk.get("error"):
        raise StreamError("the stream carried an error", chunk["error"])
    return chunk
