"""Threads and event loops: nothing hangs on a stuck task, nothing leaks a thread per call."""
from __future__ import annotations

import asyncio
import contextvars
import threading
import time

import pytest

from mini_framework.concurrency import in_thread, run_sync


def test_run_sync_does_not_wait_forever_for_a_task_that_ignores_cancellation():
    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(0.01)
            except asyncio.CancelledError:
                pass

    async def main() -> str:
        asyncio.ensure_future(stubborn())  # left behind, like a timed-out tool
        await asyncio.sleep(0)
        return "answer"

    done = []
    thread = threading.Thread(target=lambda: done.append(run_sync(main())), daemon=True)
    thread.start()
    thread.join(5)
    assert done == ["answer"]


def test_run_sync_returns_values_and_raises_errors_also_inside_a_running_loop():
    async def fails() -> None:
        raise KeyError("x")

    async def inside() -> int:
        with pytest.raises(KeyError):
            run_sync(fails())
        return run_sync(asyncio.sleep(0, result=3))

    assert asyncio.run(inside()) == 3


def test_in_thread_carries_context_and_stopiteration():
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")

    async def main() -> tuple[str, BaseException]:
        var.set("copied")
        seen = await in_thread(var.get)
        try:
            await in_thread(lambda: next(iter([])))
        except RuntimeError as exc:
            return seen, exc
        raise AssertionError("no error")

    seen, error = asyncio.run(main())
    assert seen == "copied" and isinstance(error.__cause__, StopIteration)


def test_worker_threads_are_reused_not_started_per_call():
    async def many() -> None:
        for _ in range(50):
            await in_thread(lambda: None)

    asyncio.run(many())  # warm up
    before = threading.active_count()
    asyncio.run(many())
    assert threading.active_count() <= before + 1


def test_a_hung_worker_does_not_block_the_next_call():
    release = threading.Event()

    async def main() -> str:
        hung = asyncio.ensure_future(in_thread(release.wait))
        try:
            return await asyncio.wait_for(in_thread(lambda: "free"), 5)
        finally:
            release.set()
            await hung

    started = time.perf_counter()
    assert asyncio.run(main()) == "free" and time.perf_counter() - started < 5
