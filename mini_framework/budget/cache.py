"""Tool results kept for a while: the same call within its time-to-live is answered from memory.

    @tool(cache=600)                       # keep results for 10 minutes
    def get_weather(city: str) -> str: ...

The key is the tool's name plus its *validated* arguments as canonical JSON, so the model's
`{"city": "北京", "unit": "c"}` and `{"unit": "c", "city": "北京"}` are one key, and so are "3" and 3
for an `int` parameter. A raw-string key would miss both.

Some tools must never be cached: one that sends, pays or deletes would skip an action the user
asked for a second time. `@tool(cache=...)` is refused (ToolDefinitionError) on a tool that requires
approval or says `side_effects=True`.

Only successful text results are kept (no errors, timeouts or images). A hit is a ToolResult with
`cached=True`, visible in the run's events and `result.tool_results`.

Concessions: in memory, per Agent (kept across its runs), bounded (least recently used entries go
first); two identical calls of one reply both run, since they start together.
"""
from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

from pydantic import BaseModel

__all__ = ["ResultCache", "cache_key"]


def cache_key(name: str, validated: BaseModel) -> str:
    """The key of a call: tool name + validated arguments, key order and spelling of numbers ignored.

    >>> from pydantic import create_model
    >>> Args = create_model("Args", city=(str, ...), days=(int, 1))
    >>> cache_key("forecast", Args(days="3", city="北京")) == cache_key("forecast", Args(city="北京", days=3))
    True
    """
    values = json.dumps(validated.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return f"{name}\x00{values}"


@dataclass(frozen=True)
class Entry:
    content: str  # what the model read
    value: Any  # what the tool returned
    expires: float  # on the cache's clock


class ResultCache:
    """Results by call key, each until its time-to-live runs out; at most `max_items`.

    >>> clock = [0.0]
    >>> cache = ResultCache(clock=lambda: clock[0])
    >>> cache.put("k", 60, "晴", "晴"); cache.get("k").content
    '晴'
    >>> clock[0] = 61.0; cache.get("k") is None, cache.hits, cache.misses
    (True, 1, 1)
    """

    def __init__(self, max_items: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        if isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 1:
            raise ValueError(f"max_items must be a whole number of at least 1, not {max_items!r}")
        self.max_items = max_items
        self.clock = clock
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Entry | None:
        """The live entry for `key`, or None (an expired one is dropped)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.expires > self.clock():
                self._entries.move_to_end(key)
                self.hits += 1
                return entry
            self._entries.pop(key, None)
            self.misses += 1
            return None

    def put(self, key: str, ttl: float, content: str, value: Any) -> None:
        """Keep a result for `ttl` seconds."""
        with self._lock:
            self._entries[key] = Entry(content, value, self.clock() + ttl)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_items:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (e.g. after the data behind a tool changed)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
