"""Sync and async, both ways: blocking code from a coroutine, and a coroutine from blocking code.

    value = await in_thread(lambda: blocking_call())      # in a daemon thread, awaited
    result = run_sync(agent.arun(question))               # from a script, or inside Jupyter's loop

Concession: `run_sync` inside a running loop (Jupyter) runs the coroutine on a fresh event loop
in another thread, so objects bound to the caller's loop can't be shared with it.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")


def in_thread(function: Callable[[], T]) -> Awaitable[T]:
    """Run a blocking function in a daemon thread and await its result.

    Not `asyncio.to_thread`: its pool's threads are joined at interpreter exit, so one hung
    tool would keep a notebook kernel or a service from ever shutting down.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], Any]) -> None:
        if not future.done():  # it may have been cancelled by a timeout meanwhile
            outcome()

    def work() -> None:
        try:
            outcome = functools.partial(future.set_result, function())
        except BaseException as exc:  # handed to the awaiting task, which decides
            outcome = functools.partial(future.set_exception, exc)
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:  # the loop is gone (the call timed out and the run ended): drop the result
            pass

    threading.Thread(target=work, name="tool", daemon=True).start()
    return future


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code, also where a loop is already running (Jupyter).

    >>> async def two() -> int:
    ...     return 2
    >>> run_sync(two())
    2
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:
        return asyncio.run(awaitable)  # type: ignore[arg-type]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop is running here: use a fresh one elsewhere
        return pool.submit(asyncio.run, awaitable).result()  # type: ignore[arg-type]
