"""What the provider replied, seen from the client's side: each reply's finish_reason and call ids.

    agent.client = Recorder(agent.client)      # the gauntlet does this for you
    agent.client.cut_ids                       # ids of calls in replies cut off by max_tokens

The agent's events say what it did with a reply; only the reply itself says it was cut off
(finish_reason "length"), so the recorder sits between the agent and the client and looks at each one,
streamed or not, sync or async, and passes it on unchanged.

Concessions: a streamed call without an id (some vLLM versions) cannot be named here; replies are
read with getattr, so a client returning plain dicts is not looked into.
"""
from __future__ import annotations

import inspect
from types import SimpleNamespace
from typing import Any, AsyncIterator, Iterator


class Recorder:
    """A client that passes every request on and notes what came back."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.replies = 0
        self.cut_ids: set[str] = set()
        create = client.chat.completions.create
        if inspect.iscoroutinefunction(create):
            async def acreate(**params: Any) -> Any:
                return self._watch(await create(**params))
            self.chat = SimpleNamespace(completions=SimpleNamespace(create=acreate))
        else:
            def screate(**params: Any) -> Any:
                return self._watch(create(**params))
            self.chat = SimpleNamespace(completions=SimpleNamespace(create=screate))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)  # base_url, api_key, ... as the client has them

    def _watch(self, response: Any) -> Any:
        if hasattr(response, "__aiter__"):
            return _AsyncWatched(response, self)
        if hasattr(response, "__next__") or type(response).__name__ == "Stream":
            return _Watched(response, self)
        self.replies += 1
        for choice in getattr(response, "choices", None) or ():
            calls = getattr(getattr(choice, "message", None), "tool_calls", None) or ()
            self.note(getattr(choice, "finish_reason", None), [getattr(c, "id", None) for c in calls])
        return response

    def note(self, finish_reason: Any, ids: list[Any]) -> None:
        """One reply's (or one chunk's) finish_reason and call ids."""
        if finish_reason == "length":
            self.cut_ids.update(i for i in ids if isinstance(i, str) and i)


def _chunk(recorder: Recorder, chunk: Any, ids: list[Any]) -> None:
    """Collect a chunk's call ids; at its finish_reason, note them."""
    for choice in getattr(chunk, "choices", None) or ():
        delta = getattr(choice, "delta", None)
        ids += [getattr(c, "id", None) for c in (getattr(delta, "tool_calls", None) or ())]
        if getattr(choice, "finish_reason", None):
            recorder.note(choice.finish_reason, ids)


class _Watched:
    """A sync stream, passed on chunk by chunk."""

    def __init__(self, stream: Any, recorder: Recorder) -> None:
        self.stream, self.recorder = stream, recorder
        self.ids: list[Any] = []
        recorder.replies += 1

    def __iter__(self) -> Iterator[Any]:
        for chunk in self.stream:
            _chunk(self.recorder, chunk, self.ids)
            yield chunk

    def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if callable(close):
            close()


class _AsyncWatched:
    """An async stream, passed on chunk by chunk."""

    def __init__(self, stream: Any, recorder: Recorder) -> None:
        self.stream, self.recorder = stream, recorder
        self.ids: list[Any] = []
        recorder.replies += 1

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for chunk in self.stream:
            _chunk(self.recorder, chunk, self.ids)
            yield chunk

    async def close(self) -> None:
        close = getattr(self.stream, "close", None)
        if callable(close):
            await close()
