"""This feature's hook: `Agent(stream=True)` streams each request and puts the reply back together.

The text arrives piece by piece as TextDelta events while the run's messages are the same as without
streaming (assembler.py turns the chunks into the reply a non-streamed request returns). A blocking
SDK stream is read in one worker thread that hands each chunk over, so the event loop never waits on
the network; a stream given up on is closed.
"""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Any, AsyncGenerator

from ..concurrency import in_thread
from ..events import TextDelta
from ..hooks import Hook, Request, Run, Send
from .assembler import Assembler, StreamError

__all__ = ["StreamHook", "hooks_for"]


class StreamHook(Hook):
    """Each request with `stream=True` (and usage in the last chunk unless `stream_options` says otherwise)."""

    async def send(self, run: Run, request: Request, send: Send) -> Any:
        asked = run.agent.request_options if run.agent is not None else {}
        options = asked.get("stream_options", {"include_usage": True})
        request.params.update(stream=True, stream_options=options)
        stream = await send(request)
        assembler = Assembler()
        async with contextlib.aclosing(chunks(stream)) as incoming:  # a cap that trips closes the stream now
            while True:
                try:  # the deadline holds between chunks too: keep-alive comments never reach the assembler
                    chunk = await asyncio.wait_for(incoming.__anext__(), _left(assembler.deadline))
                except StopAsyncIteration:
                    break
                except asyncio.TimeoutError:
                    raise StreamError(f"the stream took longer than deadline_seconds={assembler.deadline_seconds:g}",
                                      "no chunk in time") from None
                text = assembler.feed(chunk)
                if text:
                    run.emit(TextDelta(request.iteration, text))
        return assembler.finish()


async def chunks(stream: Any) -> AsyncGenerator[Any, None]:
    """The chunks of an SDK stream, from async code: an AsyncStream as it is; a (blocking) Stream read in
    one worker thread that hands each chunk over, so the event loop never waits on the network."""
    if hasattr(stream, "__aiter__"):
        async for chunk in stream:
            yield chunk
        return
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for chunk in stream:
                loop.call_soon_threadsafe(inbox.put_nowait, ("chunk", chunk))
                if stop.is_set():
                    break
        except BaseException as exc:  # raised again in the loop's thread, below
            loop.call_soon_threadsafe(inbox.put_nowait, ("error", exc))
        else:
            loop.call_soon_threadsafe(inbox.put_nowait, ("end", None))

    reader = asyncio.ensure_future(in_thread(pump))
    try:
        while True:
            kind, item = await inbox.get()
            if kind == "end":
                return
            if kind == "error":
                raise item
            yield item
    finally:
        stop.set()
        close = getattr(stream, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()  # the HTTP response: a stream given up on is not read to its end
        reader.cancel()


def _left(deadline: float | None) -> float | None:
    """Seconds until `deadline` (a monotonic time), at least 0; None for no deadline."""
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def hooks_for(agent: Any, *, stream: bool = False) -> list[Hook]:
    """The streaming hook, for `Agent(stream=True)`."""
    return [StreamHook()] if stream else []
