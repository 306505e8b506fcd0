"""A streamed reply, put back together: text as it arrives, then the reply a non-streamed call gives.

    assembler = Assembler()
    for chunk in client.chat.completions.create(..., stream=True):   # or `async for`
        print(assembler.feed(chunk), end="")                        # this chunk's text, "" if none
    reply = read_reply(assembler.finish())                          # a `chat.completion`-shaped dict

How a stream carries a reply (OpenAI's order; the practice model follows it):

    the first chunk    delta {"role": "assistant", "content": ""}
    text               delta {"content": "北京"}, delta {"content": "今天晴"}, ...
    a call opens       delta {"tool_calls": [{"index": 0, "id": "call_x", "type": "function",
                                              "function": {"name": "get_weather", "arguments": ""}}]}
    its arguments      delta {"tool_calls": [{"index": 0, "function": {"arguments": "{\\"ci"}}]}
                       (only `index` says which call a fragment belongs to; parallel calls interleave)
    the end            delta {}, finish_reason "tool_calls" (or "stop", or "length": cut off)
    usage              choices [], usage {...}       (asked for with stream_options.include_usage)

The assembler keeps one slot per `index`, not per arrival; it appends fragments as text and never
parses one (a fragment can end anywhere, inside a `\\u4eac` escape too). `finish()` returns the
`chat.completion` that a non-streamed call would have returned, so `replies.read_reply` reads both
the same way and a streamed run stores the same messages as a non-streamed one.

A call that was cut off never runs. If a call's arguments stop mid-value (an open string, object
or array), because the stream ended early or the provider cut it, the reply says finish_reason
"length", and the agent answers every call of a "length" reply without running it (agent.py,
TRUNCATED), where lenient JSON repair would otherwise have closed the brackets and run it. A stream
that ends without any finish_reason is read the same way: complete calls are kept, a cut one makes
the reply "length".

A hostile or broken stream is bounded: `Assembler(max_bytes=, max_calls=, deadline_seconds=)` (8 MiB of
text, reasoning and arguments, 128 calls, 600 s by default) raise StreamError as soon as one is passed,
so the agent raises before any call runs; the work per chunk does not grow with the chunks before it.

Real providers deviate from OpenAI's shape, each in its own way. `QUIRKS` lists them, one row per
deviation, with where the shape was recorded. A row with a fix repairs each chunk before it is
added up (`on_piece`) or the whole reply at the end (`at_end`); a row without one documents what
the assembler's reading already copes with (null fields, a repeated header, usage on every chunk).
`Assembler(quirks=())` turns the repairs off, to see what each one is for. Chunks come from the SDK's
stream (or, for code that reads the HTTP stream itself, from its server-sent events' data lines as
dicts).

Concessions: one choice (`n=1`; choices other than index 0 are ignored); `refusal`, the legacy
`function_call`, `logprobs` and provider extras other than `reasoning_content` are not kept (as in
replies.py), nor is text sent as a list of parts in a delta; ids are not invented here (a call
without one gets it from `read_reply`, which knows the ids already taken); a provider that cuts a
multi-byte character in two before it writes the JSON (sending U+FFFD) has already lost it.
"""
from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeGuard

from ..replies import ProviderError, _arguments_text, _as_dict, _field

__all__ = ["DEADLINE_SECONDS", "MAX_BYTES", "MAX_CALLS", "QUIRKS", "Assembler", "Piece", "Quirk", "Slot",
           "StreamError", "assemble", "complete"]


MAX_BYTES = 8 * 2**20  # of a reply's text, reasoning and arguments (UTF-8), by default
MAX_CALLS = 128  # tool calls in one reply, by default
DEADLINE_SECONDS = 600.0  # for a whole stream, by default


class StreamError(ProviderError):
    """The stream cannot be read: an error event, a line that is not JSON, a delta that is not an object.

    >>> str(StreamError("a data line is not JSON", "data: {oops"))
    'a data line is not JSON; the provider sent "data: {oops"'
    """


@dataclass
class Piece:
    """One chunk's choice as plain values: what the quirk rows repair, then the assembler adds up."""

    content: Any = None  # this chunk's text (None: none)
    reasoning: Any = None  # DeepSeek's `reasoning_content` delta
    calls: list[dict[str, Any]] = field(default_factory=list)  # `tool_calls` deltas, copied: rows may edit them
    finish_reason: Any = None

    @classmethod
    def of(cls, choice: Any) -> Piece:
        """From a chunk's choice, an SDK object or a dict (the caller's objects are never changed).

        >>> Piece.of({"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{"}}]}})
        Piece(content=None, reasoning=None, calls=[{'index': 0, 'function': {'arguments': '{'}}], finish_reason=None)
        """
        delta = _field(choice, "delta")
        raw = _field(delta, "tool_calls") or []
        if isinstance(raw, dict) or hasattr(raw, "model_dump"):
            raw = [raw]
        if not isinstance(raw, (list, tuple)):
            raise StreamError("delta.tool_calls is not a list", raw)
        calls = []
        for entry in raw:
            if entry is not None:
                call = dict(_as_dict(entry, "a tool call delta"))
                if call.get("function") is not None:
                    call["function"] = dict(_as_dict(call["function"], "a tool call delta's function"))
                calls.append(call)
        return cls(_field(delta, "content"), _field(delta, "reasoning_content"), calls,
                   _field(choice, "finish_reason"))


@dataclass
class Slot:
    """One tool call being assembled: the first id and name it was given, its argument fragments."""

    index: int
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    _scanned: tuple[int, Scan, bool] = field(default=(0, (0, False, False), False), repr=False, compare=False)
    """How many fragments `scanned()` has read, where its scan stopped, and whether one was not blank."""

    @property
    def arguments(self) -> str:
        """The fragments so far, joined (a copy each time: for the end, not for every chunk)."""
        return "".join(self.parts)

    def keep(self, arguments: str) -> None:
        """Replace the fragments by whole arguments (a repair at the end)."""
        self.parts, self._scanned = [arguments], (0, (0, False, False), False)

    def scanned(self) -> tuple[Scan, bool]:
        """Where a scan of the arguments so far stops, and whether they are more than blanks; each fragment is
        read once, however often this is asked (a stream of many fragments stays linear).

        >>> Slot(0, parts=[" ", '{"a": [']).scanned()
        ((2, False, False), True)
        """
        done, state, text = self._scanned
        for part in self.parts[done:]:
            state, text = scan(part, state), text or bool(part.strip())
        self._scanned = (len(self.parts), state, text)
        return state, text

    def closed(self) -> bool:
        """Whether the arguments so far end where a JSON value can end (scanning only new fragments).

        >>> slot = Slot(0, parts=['{"city": "北'])
        >>> slot.closed(), slot.parts.append('京"}'), slot.closed()
        (False, None, True)
        """
        return is_closed(self.scanned()[0])


class Assembler:
    """Chunks in, one at a time; text deltas out; `finish()` gives the whole reply as a `chat.completion`.

    >>> a = Assembler()
    >>> a.feed({"choices": [{"delta": {"content": "北"}}]}), a.feed({"choices": [{"delta": {"content": "京"}}]})
    ('北', '京')
    >>> a.feed({"choices": [{"delta": {}, "finish_reason": "stop"}]})
    ''
    >>> a.finish()["choices"][0]
    {'index': 0, 'message': {'role': 'assistant', 'content': '北京'}, 'finish_reason': 'stop'}

    Caps (None turns one off): `max_bytes` of text, reasoning and arguments together, counted in UTF-8
    (default MAX_BYTES, 8 MiB); `max_calls` tool calls in the reply (default MAX_CALLS, 128); and
    `deadline_seconds` for the whole stream from the assembler's creation (default DEADLINE_SECONDS, 600),
    on the monotonic clock. Going over one raises StreamError naming it, before the reply exists, so no
    call of it runs. The deadline is checked as chunks arrive: a stream that sends nothing at all is the
    HTTP client's read timeout's to end, and one that sends only keep-alive comments (which the SDK
    drops before any chunk) is neither's.

    >>> Assembler(max_calls=1).feed({"choices": [{"delta": {"tool_calls": [
    ...     {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}},
    ...     {"index": 1, "id": "b", "function": {"name": "f", "arguments": "{}"}}]}}]})
    Traceback (most recent call last):
    ...
    mini_framework.streaming.assembler.StreamError: the reply has more than max_calls=1 tool calls; ...
    """

    def __init__(self, quirks: Iterable[Quirk] | None = None, *, max_bytes: int | None = MAX_BYTES,
                 max_calls: int | None = MAX_CALLS, deadline_seconds: float | None = DEADLINE_SECONDS) -> None:
        self.quirks = tuple(QUIRKS if quirks is None else quirks)
        self.max_bytes, self.max_calls = _whole("max_bytes", max_bytes), _whole("max_calls", max_calls)
        self.deadline_seconds = _seconds("deadline_seconds", deadline_seconds)
        self.started = time.monotonic()
        self.deadline = None if self.deadline_seconds is None else self.started + self.deadline_seconds
        self.size = 0  # bytes of text, reasoning and arguments so far (UTF-8)
        self.slots: dict[int, Slot] = {}  # by index
        self.alias: dict[int, int] = {}  # an index a provider reused -> the slot its latest call went to
        self.ids: dict[str, int] = {}  # each call's (first) id -> its index, kept as slots get them
        self.top = -1  # the highest index in use (-1: none yet)
        self.finish_reason: str | None = None
        self.usage: Any = None
        self.repairs: list[str] = []  # what was repaired, as in ModelReply.repairs
        self.head: dict[str, Any] = {}  # id, created, model: from the first chunk that has them
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._saw_text = False
        self._noted: set[str] = set()  # the repairs noted, to look up without a search

    @property
    def text(self) -> str:
        """The text so far."""
        return "".join(self._text)

    def feed(self, chunk: Any) -> str:
        """Add one `chat.completion.chunk` (an SDK object or a dict); return its text delta ("" if none)."""
        if self.deadline is not None and (now := time.monotonic()) > self.deadline:
            raise StreamError(f"the stream took longer than deadline_seconds={self.deadline_seconds:g}",
                              f"chunks for {now - self.started:.1f} s")
        if _field(chunk, "error"):
            raise StreamError("the stream carried an error", _field(chunk, "error"))
        for key in ("id", "created", "model"):
            if key not in self.head and _field(chunk, key):
                self.head[key] = _field(chunk, key)
        if _field(chunk, "usage") is not None:
            self.usage = _field(chunk, "usage")  # the last one counts: some providers send a running total
        choices = _field(chunk, "choices") or []
        if not isinstance(choices, (list, tuple)):
            raise StreamError("the chunk's choices are not a list", choices)
        choice = next((c for c in choices if _field(c, "index") in (0, None)), None)
        if choice is None:
            return ""  # the usage chunk, or Azure's content-filter chunk
        piece = Piece.of(choice)
        for quirk in self.quirks:
            if quirk.on_piece is not None:
                self.note(quirk.on_piece(piece, self))
        return self._add(piece)

    def _add(self, piece: Piece) -> str:
        """Add a (repaired) piece: text, reasoning, call deltas by index, the finish reason."""
        for delta in piece.calls:
            index = delta.get("index")
            if not _is_index(index):
                raise StreamError("a tool call delta has no index", delta)
            slot = self.slots.get(index)
            if slot is None:
                if self.max_calls is not None and len(self.slots) >= self.max_calls:
                    raise StreamError(f"the reply has more than max_calls={self.max_calls} tool calls", delta)
                slot = self.slots[index] = Slot(index)
                self.top = max(self.top, index)
            function = delta.get("function") or {}
            if isinstance(delta.get("id"), str) and delta["id"] and not slot.id:
                slot.id = delta["id"]  # the first id given; later ones are repeats or noise
                self.ids[slot.id] = index
            if isinstance(function.get("name"), str) and function["name"] and not slot.name:
                slot.name = function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, str) and arguments:
                self._count(arguments)
                slot.parts.append(arguments)
            elif arguments is not None and not isinstance(arguments, str):
                raise StreamError("a tool call's arguments are not text", arguments)
        if isinstance(piece.reasoning, str):
            self._count(piece.reasoning)
            self._reasoning.append(piece.reasoning)
        if isinstance(piece.finish_reason, str) and piece.finish_reason:
            self.finish_reason = piece.finish_reason
        if isinstance(piece.content, str):
            self._count(piece.content)
            self._saw_text = True
            self._text.append(piece.content)
            return piece.content
        return ""

    def _count(self, text: str) -> None:
        """Add text's UTF-8 size to the reply's; StreamError past max_bytes (nothing past it is kept)."""
        self.size += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise StreamError(f"the reply is larger than max_bytes={self.max_bytes:,} (its text, reasoning and "
                              f"arguments in UTF-8)", f"{self.size:,} bytes so far")

    def finish(self) -> dict[str, Any]:
        """The whole reply as the non-streamed `chat.completion` would have it; a cut-off call makes it "length"."""
        for quirk in self.quirks:
            if quirk.at_end is not None:
                self.note(quirk.at_end(self))
        calls = [self.slots[i] for i in sorted(self.slots)]
        self._check_cut_off(calls)
        empty = "" if self._saw_text and not calls else None  # OpenAI's shape: null beside calls or when silent
        message: dict[str, Any] = {"role": "assistant", "content": self.text or empty}
        if calls:
            message["tool_calls"] = [_call_part(slot) for slot in calls]
        if "".join(self._reasoning):
            message["reasoning_content"] = "".join(self._reasoning)
        response = {**self.head, "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}]}
        if self.usage is not None:
            usage = self.usage
            response["usage"] = usage.model_dump(exclude_unset=True) if hasattr(usage, "model_dump") else usage
        return response

    def _check_cut_off(self, calls: list[Slot]) -> None:
        """A call whose arguments stop mid-value makes the reply "length"; so does a bare header at a silent end."""
        ended = self.finish_reason is not None
        cut = [s for s in calls if not complete(s.arguments) or (not ended and not s.arguments.strip())]
        names = ", ".join(f"{s.name or '?'} (index {s.index})" for s in cut)
        if cut and self.finish_reason != "length":
            said = f"finish_reason {self.finish_reason!r}" if ended else "the stream ended without a finish_reason"
            self.note(f"{said}, but the arguments of {names} are unfinished: read as \"length\" (cut off), so "
                      f"no call of this reply runs")
            self.finish_reason = "length"
        elif not ended:
            self.finish_reason = "tool_calls" if calls else None
            self.note("the stream ended without a finish_reason" + (": its calls are complete, read as "
                                                                     "\"tool_calls\"" if calls else ""))

    def note(self, repair: str) -> None:
        """Record a repair once (a quirk on every chunk is one repair)."""
        if repair and repair not in self._noted:
            self._noted.add(repair)
            self.repairs.append(repair)


def assemble(chunks: Iterable[Any], quirks: Iterable[Quirk] | None = None) -> dict[str, Any]:
    """All the chunks of a stream, assembled: the reply as a `chat.completion` dict.

    >>> head = {"index": 0, "id": "call_1", "function": {"name": "get_weather", "arguments": ""}}
    >>> reply = assemble([{"choices": [{"delta": {"tool_calls": [head]}}]},
    ...     {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"city": "北'}}]}}]},
    ...     {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": '京"}'}}]}}]},
    ...     {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}])
    >>> reply["choices"][0]["message"]["tool_calls"][0]["function"]
    {'name': 'get_weather', 'arguments': '{"city": "北京"}'}
    """
    assembler = Assembler(quirks)
    for chunk in chunks:
        assembler.feed(chunk)
    return assembler.finish()


def _call_part(slot: Slot) -> dict[str, Any]:
    """A slot as an entry of the message's `tool_calls` (no `id` key when none came: read_reply gives one)."""
    part: dict[str, Any] = {"id": slot.id} if slot.id else {}
    return {**part, "type": "function", "function": {"name": slot.name, "arguments": slot.arguments}}


# ----------------------------------------------------------------------------- cut off or complete

Scan = tuple[int, bool, bool]  # where a scan of JSON text stopped: depth, inside a string, next character escaped
_SPECIAL = re.compile(r'[\\"{}\[\]]')


def scan(text: str, state: Scan = (0, False, False)) -> Scan:
    """Carry a bracket-and-string scan of JSON text on over `text` (a count, not a parse: it never fails).

    >>> scan('{"a": ["x'), scan('"]}', scan('{"a": ["x'))
    ((2, True, False), (0, False, False))
    """
    depth, in_string, escaped = state
    skip = 0 if escaped else -1
    for match in _SPECIAL.finditer(text):
        at, char = match.start(), match.group()
        if at == skip:
            continue
        if in_string:
            if char == "\\":
                skip = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        else:
            depth -= 1
    return depth, in_string, skip == len(text)


def is_closed(state: Scan) -> bool:
    """Whether a scan stopped outside any string, object or array (too many closing brackets counts as closed:
    malformed, not cut; arguments.py repairs or refuses it, as for a non-streamed reply)."""
    depth, in_string, escaped = state
    return not in_string and not escaped and depth <= 0


def complete(arguments: str) -> bool:
    """Whether whole arguments end where a JSON value can end: no open string, object or array.

    >>> complete('{"city": "北京"}'), complete('{"city": "北'), complete('{"a": [1, 2'), complete('{"q": "\\\\"}"}')
    (True, False, False, True)
    """
    return is_closed(scan(arguments))


# ----------------------------------------------------------------------------- the quirk rows


@dataclass(frozen=True)
class Quirk:
    """One way a provider's stream deviates from OpenAI's, where that was recorded, and its repair."""

    name: str
    seen_in: str  # which providers or servers
    source: str  # where the shape was recorded (an issue thread or the provider's documentation)
    on_piece: Callable[[Piece, Assembler], str] | None = None  # repairs each piece; returns a note or ""
    at_end: Callable[[Assembler], str] | None = None  # repairs the assembled reply; returns a note or ""


def _arguments_as_object(piece: Piece, assembler: Assembler) -> str:
    """Arguments sent as a JSON object become its JSON text (replies.py's rule for non-streamed replies).

    >>> piece = Piece(calls=[{"index": 0, "function": {"name": "f", "arguments": {"city": "北京"}}}])
    >>> _arguments_as_object(piece, Assembler()), piece.calls[0]["function"]["arguments"]
    ('tool_calls[0]: arguments sent as an object: sent as JSON text', '{"city": "北京"}')
    """
    notes = []
    for delta in piece.calls:
        function = delta.get("function") or {}
        if function.get("arguments") is not None and not isinstance(function["arguments"], str):
            function["arguments"], note = _arguments_text(function["arguments"], f"tool_calls[{delta.get('index')}]")
            notes.append(note)
    return "; ".join(notes)


def _missing_index(piece: Piece, assembler: Assembler) -> str:
    """No `index`: a delta with an id not seen yet opens a call, one with a known id goes to that call, a
    name after a complete call opens one too; anything else continues the last call.

    >>> piece = Piece(calls=[{"id": "c1", "function": {"name": "f", "arguments": '{"x": 1}'}},
    ...                      {"id": "c2", "function": {"name": "f", "arguments": '{"x": 2}'}}])
    >>> _missing_index(piece, Assembler()), [d["index"] for d in piece.calls]
    ('tool call deltas without an index: placed by their id and name', [0, 1])
    """
    if all(_is_index(d.get("index")) for d in piece.calls):
        return ""
    known: dict[str, int] = {}  # ids first seen in this piece (the assembler keeps the earlier ones: no search)
    top = assembler.top  # the highest index in use
    last = top if assembler.slots else None
    for delta in piece.calls:
        if not _is_index(delta.get("index")):
            call_id = delta.get("id") if isinstance(delta.get("id"), str) and delta.get("id") else None
            name = (delta.get("function") or {}).get("name")
            seen = known.get(call_id, assembler.ids.get(call_id)) if call_id else None
            if seen is not None:
                delta["index"] = seen
            elif last is None or call_id or (name and _done(assembler, piece, last)):
                delta["index"] = top + 1
            else:
                delta["index"] = last
            if call_id:
                known[call_id] = delta["index"]
        last = delta["index"]
        top = max(top, last)
    return "tool call deltas without an index: placed by their id and name"


def _done(assembler: Assembler, piece: Piece, index: int) -> bool:
    """Whether the call at `index` has a name and complete, non-empty arguments (counting this piece's deltas);
    what the slot has is scanned once, not joined again for every piece."""
    slot = assembler.slots.get(index, Slot(index))
    here = [d.get("function") or {} for d in piece.calls if d.get("index") == index]
    name = slot.name or next((f["name"] for f in here if f.get("name")), "")
    state, text = slot.scanned()
    for arguments in (f["arguments"] for f in here if isinstance(f.get("arguments"), str)):
        state, text = scan(arguments, state), text or bool(arguments.strip())
    return bool(name) and text and is_closed(state)


def _whole(name: str, value: Any) -> int | None:
    """A cap that counts: a positive int, or None (no cap).

    >>> _whole("max_calls", 0)
    Traceback (most recent call last):
    ...
    ValueError: max_calls must be a positive whole number or None, not 0
    """
    if value is None:
        return None
    if not _is_index(value):
        raise TypeError(f"{name} must be a positive whole number or None, not {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive whole number or None, not {value!r}")
    return value


def _seconds(name: str, value: Any) -> float | None:
    """A time cap: a positive number of seconds, or None (no cap)."""
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a positive number of seconds or None, not {value!r}")
    if math.isnan(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number of seconds or None, not {value!r}")
    return float(value)


def _is_index(value: Any) -> TypeGuard[int]:
    """Whether a delta's `index` is usable (an int, not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _new_id_at_index(piece: Piece, assembler: Assembler) -> str:
    """A different id at an index in use: a new call if the call there is complete and this delta names a
    function and brings arguments (the provider reused the index); otherwise the same call, which keeps its
    first id.

    >>> a = Assembler()
    >>> _ = a.feed({"choices": [{"delta": {"tool_calls": [
    ...     {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}}]})
    >>> piece = Piece(calls=[{"index": 0, "id": "b", "function": {"name": "g", "arguments": "{}"}}])
    >>> _new_id_at_index(piece, a), piece.calls[0]["index"]
    ("tool_calls index 0 was used again for a new call (id 'b'): placed at index 1", 1)
    """
    notes = []
    for delta in piece.calls:
        sent = delta.get("index")
        if not _is_index(sent):
            continue
        index = delta["index"] = assembler.alias.get(sent, sent)
        slot, call_id = assembler.slots.get(index), delta.get("id")
        if slot is None or not slot.id or not isinstance(call_id, str) or not call_id or call_id == slot.id:
            continue
        function = delta.get("function") or {}
        if function.get("name") and function.get("arguments") and slot.scanned()[1] and slot.closed():
            used = max(assembler.top, *(d["index"] for d in piece.calls if _is_index(d.get("index"))))
            assembler.alias[sent] = delta["index"] = used + 1
            notes.append(f"tool_calls index {sent} was used again for a new call (id {call_id!r}): placed at "
                         f"index {delta['index']}")
        else:
            del delta["id"]
            notes.append(f"tool_calls[{index}] came with a new id on a later chunk: kept its first id {slot.id!r}")
    return "; ".join(notes)


def _stop_with_calls(assembler: Assembler) -> str:
    """finish_reason "stop" (or "end_turn") although the reply has tool calls: "tool_calls".

    >>> a = Assembler()
    >>> a.slots[0], a.finish_reason = Slot(0, "c", "f", ["{}"]), "stop"
    >>> _stop_with_calls(a), a.finish_reason
    ('finish_reason \\'stop\\' with tool calls: read as "tool_calls"', 'tool_calls')
    """
    if assembler.slots and assembler.finish_reason in ("stop", "end_turn"):
        note = f"finish_reason {assembler.finish_reason!r} with tool calls: read as \"tool_calls\""
        assembler.finish_reason = "tool_calls"
        return note
    return ""


def _cumulative_arguments(assembler: Assembler) -> str:
    """Every fragment repeats all the arguments so far: the last one is the arguments. Only when the joined
    fragments are not JSON and each fragment extends the one before (a normal stream never has both).

    >>> a = Assembler()
    >>> a.slots[0] = Slot(0, "c", "f", ['{"q', '{"q": "x', '{"q": "x"}'])
    >>> _cumulative_arguments(a), a.slots[0].arguments
    ('tool_calls[0]: each fragment repeated the arguments so far: kept the last', '{"q": "x"}')
    """
    notes = []
    for slot in assembler.slots.values():
        parts = [p for p in slot.parts if p.strip()]
        if len(parts) > 1 and all(b.startswith(a) for a, b in zip(parts, parts[1:])) \
                and not _is_json(slot.arguments) and _is_json(parts[-1]):
            slot.keep(parts[-1])
            notes.append(f"tool_calls[{slot.index}]: each fragment repeated the arguments so far: kept the last")
    return "; ".join(notes)


def _repeated_arguments(assembler: Assembler) -> str:
    """The whole arguments sent again after the fragments (or twice): the repeat is dropped. Only when the
    joined text is not JSON but is one JSON object followed by the same object again.

    >>> a = Assembler()
    >>> a.slots[0] = Slot(0, "c", "f", ['{"q":', ' "x"}', '{"q": "x"}'])
    >>> _repeated_arguments(a), a.slots[0].arguments
    ('tool_calls[0]: the arguments came twice: kept one', '{"q": "x"}')
    """
    notes = []
    for slot in assembler.slots.values():
        if len(slot.parts) < 2 or not slot.parts[-1].lstrip().startswith(("{", "[")):
            continue  # the repeat arrives as one fragment that opens an object
        text = slot.arguments
        if _is_json(text):
            continue
        try:
            first, end = json.JSONDecoder().raw_decode(text, len(text) - len(text.lstrip()))
            again = json.loads(text[end:])
        except (ValueError, RecursionError):
            continue
        if again == first:
            slot.keep(text[:end])
            notes.append(f"tool_calls[{slot.index}]: the arguments came twice: kept one")
    return "; ".join(notes)


def _is_json(text: str) -> bool:
    """Whether text is one JSON value (used on whole arguments at the end, never on a fragment)."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


QUIRKS: tuple[Quirk, ...] = (
    # Rows with a repair, in the order they run.
    Quirk("arguments sent as an object", "TGI, llama.cpp's llama-server (2026), Ollama's native /api/chat",
          # Recorded in non-streamed replies: TGI https://github.com/huggingface/text-generation-inference/issues/2461,
          # llama-server https://github.com/ggml-org/llama.cpp/issues/20198 (a flag since #20202), Ollama's native
          # API (not a chunk stream; an adapter may pass its object on) recorded in
          # https://github.com/g0t4/ask-openai.nvim/blob/main/lua/ask-openai/prediction/tools/ollama-tool-call.md.
          # In a stream an object can only be a whole value, so it is read as that value's JSON text.
          "https://github.com/huggingface/text-generation-inference/issues/2461", on_piece=_arguments_as_object),
    Quirk("no index on tool call deltas", "Ollama before 0.4.7, Gemini's OpenAI compatibility layer",
          # Ollama: https://github.com/ollama/ollama/issues/7881 (fixed in 0.4.7); Gemini:
          # https://github.com/openai/openai-python/issues/2806 (the SDK's helper crashes),
          # https://github.com/open-webui/computer/issues/224 (indexless deltas, arguments split across them).
          "https://github.com/ollama/ollama/issues/7881", on_piece=_missing_index),
    Quirk("a new id at an index in use", "Ollama 0.20 (every call at index 0); Poolside, vLLM's harmony path "
          "(a new id on later chunks of the same call)",
          # Reused index: https://github.com/ollama/ollama/issues/15457 and #15497 (each call arrives whole, with
          # its own id, all at index 0). New id on every chunk: https://github.com/poolsideai/pool/issues/9 (the
          # header has one id, every later chunk another), https://github.com/vllm-project/vllm/pull/23522
          # (review: `id=make_tool_call_id()` per chunk). A complete call at that index tells the two apart.
          "https://github.com/ollama/ollama/issues/15457", on_piece=_new_id_at_index),
    Quirk("the arguments so far in every fragment", "DeepSeek, Baidu Qianfan (reported), proxies that resend",
          # Reported in https://github.com/NousResearch/hermes-agent/pull/35718 for DeepSeek and Qianfan (the
          # thread describes the shape but records no raw chunk; its streaming-time heuristic was reverted in
          # #35860 for clobbering normal streams, hence this row only acts at the end, on text that is not JSON).
          # Complete values in every chunk: https://github.com/NousResearch/hermes-agent/pull/5384 (codex-lb).
          "https://github.com/NousResearch/hermes-agent/pull/35718", at_end=_cumulative_arguments),
    Quirk("the whole arguments repeated at the end", "GLM behind some OpenAI-compatible servers, gateways",
          # https://github.com/anomalyco/opencode/pull/17339 (GLM-style streams resend the full JSON in a later
          # chunk), https://github.com/elizaOS/eliza/pull/16973 (fragments, then the re-serialised arguments).
          "https://github.com/anomalyco/opencode/pull/17339", at_end=_repeated_arguments),
    Quirk("finish_reason \"stop\" with tool calls", "Gemini's compatibility layer (streaming only), vLLM, "
          "Ollama via LiteLLM, OpenAI itself for a named tool_choice",
          # https://github.com/googleapis/python-genai/issues/2868 (stream "stop", non-stream "tool_calls"),
          # https://github.com/vllm-project/vllm/pull/9209, https://github.com/BerriAI/litellm/issues/35663,
          # "end_turn": https://github.com/BerriAI/litellm/issues/12481. OpenAI answers a named tool_choice
          # with "stop" (https://github.com/vllm-project/vllm/pull/25054), streamed or not; replies.py keeps
          # the non-streamed one as sent, and the agent decides by the calls, not by this field.
          "https://github.com/googleapis/python-genai/issues/2868", at_end=_stop_with_calls),
    # Rows the assembler's reading already copes with; each has a test built from the recorded shape.
    Quirk("name, arguments, id or type null or empty on later chunks", "DashScope (Qwen), SiliconFlow",
          # DashScope qwen-max: later deltas carry "id": "", "function": {} (recorded in
          # https://www.itsvse.com/forum.php?goto=lastpost&mod=redirect&tid=10981); "id": null, "type": null,
          # no name: https://github.com/Younis-Ahmed/qwen-ai-provider/pull/7. Null and "" count as absent.
          "https://github.com/Younis-Ahmed/qwen-ai-provider/pull/7"),
    Quirk("the header repeated on later chunks", "llama.cpp before #13800, GLM-5 on vLLM-Ascend",
          # https://github.com/ggml-org/llama.cpp/pull/13800 (the name was "repeated over and over"),
          # https://github.com/vllm-project/vllm-ascend/issues/8327 (id and name sent again with the last
          # fragment). The first id and name are kept; names are never concatenated.
          "https://github.com/ggml-org/llama.cpp/pull/13800"),
    Quirk("no tool call ids", "vLLM (streamed only)",
          # https://github.com/vllm-project/vllm/issues/18412. The assembled call has no id; read_reply gives
          # it call_<round>_<n>, the rule it applies to non-streamed replies.
          "https://github.com/vllm-project/vllm/issues/18412"),
    Quirk("ids like functions.get_weather:0", "Kimi K2 (Moonshot, and vLLM/SGLang serving it)",
          # The id format is the model's own (https://github.com/MoonshotAI/Kimi-K2/blob/main/docs/
          # tool_call_guidance.md, https://github.com/sgl-project/sglang/pull/9606) and must come back
          # unchanged in tool_call_id (https://github.com/vybestack/llxprt-code/issues/712, quoting Moonshot's
          # docs). Kept as sent.
          "https://github.com/vybestack/llxprt-code/issues/712"),
    Quirk("a whole call in one chunk", "Ollama's /v1, Mistral, GLM-4.6 on vLLM, Groq",
          # https://github.com/ollama/ollama/issues/11633, https://github.com/anomalyco/opencode/issues/49692,
          # https://github.com/GoogleCloudPlatform/kubectl-ai/pull/559, https://github.com/ogx-ai/ogx/pull/630.
          "https://github.com/GoogleCloudPlatform/kubectl-ai/pull/559"),
    Quirk("content \"\" instead of null beside tool calls", "GLM on vLLM, Ollama's /v1",
          # Chunks with "content": "" and tool_calls: https://github.com/GoogleCloudPlatform/kubectl-ai/pull/559.
          # The stored message has content null when there is no text and there are calls (OpenAI's shape),
          # "" only when a reply without calls said nothing.
          "https://github.com/GoogleCloudPlatform/kubectl-ai/pull/559"),
    Quirk("reasoning_content deltas", "DeepSeek thinking mode (and Qwen3 on vLLM)",
          # https://api-docs.deepseek.com/guides/thinking_mode: reasoning_content beside content; with tool calls
          # it must be sent back in later requests (replies.py keeps it on the message).
          "https://api-docs.deepseek.com/guides/thinking_mode"),
    Quirk("a chunk with no choices", "Azure OpenAI (content-filter results first), OpenAI's usage chunk",
          # Azure: https://github.com/AbanteAI/archive-old-cli-mentat/issues/429; the usage chunk: OpenAI's
          # stream_options.include_usage ("the choices field will always be an empty array").
          "https://github.com/AbanteAI/archive-old-cli-mentat/issues/429"),
    Quirk("usage on every chunk", "SiliconFlow (Qwen), DashScope",
          # A running total on each chunk: https://github.com/Younis-Ahmed/qwen-ai-provider/pull/7. The last
          # usage seen counts.
          "https://github.com/Younis-Ahmed/qwen-ai-provider/pull/7"),
)
"""Each provider deviation, where it was recorded, and how it is repaired (see the comment on each row)."""
