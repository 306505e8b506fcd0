"""Sync and async, both ways: blocking code from a coroutine, and a coroutine from blocking code.

    value = await in_thread(lambda: blocking_call())      # in a daemon thread, awaited
    response = await either_way(client.chat.completions.create, **params)   # OpenAI or AsyncOpenAI
    result = run_sync(agent.arun(question))               # from a script, or inside Jupyter's loop
    await either_way(client.create, blocking_ok=True)     # ...called right on a loop that run_sync made

Blocking functions run in daemon threads, with the caller's `contextvars` (request ids, tracing)
copied in. `run_sync` runs a coroutine on an event loop of its own and, when it is done, gives
tasks left behind (a timed-out tool that ignores cancellation) a moment to finish, then closes
the loop without waiting for them: one stuck task must not hold up the caller.

Concessions: `run_sync` inside a running loop (Jupyter) runs the coroutine on a fresh event loop
in another thread, so objects bound to the caller's loop can't be shared with it. A thread cannot
be stopped: a blocking function that never returns keeps its (daemon) thread.
"""
from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import queue
import threading
from typing import Any, Awaitable, Callable, Coroutine, TypeVar

T = TypeVar("T")

log = logging.getLogger("mini_framework")

SHUTDOWN_GRACE = 0.1  # seconds that tasks left behind at the end of `run_sync` get to finish
_private_loop: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "mini_framework_private_loop", default=None)


class _Workers:
    """Daemon threads that run blocking functions, reused while idle (starting a thread costs more
    than most calls it runs). A busy or hung worker is never waited for: a new one is started, up to
    `max_workers`; past that, jobs wait for a worker to come free (so a storm of hung tools costs at
    most `max_workers` threads, and the calls that wait run into their timeouts instead).

    `idle` counts workers waiting for a job minus jobs not yet taken; it is changed under the lock.
    """

    IDLE_SECONDS = 30.0  # an idle worker exits after this long

    def __init__(self, max_workers: int = 1_000_000) -> None:
        self.max_workers = max_workers  # threads at most
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._live = 0
        self._warned = False

    def submit(self, job: Callable[[], None]) -> None:
        """Run `job()` in an idle worker, or in a new one if none is idle and the limit allows."""
        with self._lock:
            start = self._idle == 0 and self._live < self.max_workers
            if start:
                self._live += 1
            else:
                self._idle -= 1  # an idle worker will take this job (below zero: one that comes free)
            full = self._live >= self.max_workers and not self._warned
            self._warned = self._warned or full
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._serve, name="mini_framework-worker", daemon=True).start()
        if full:
            log.warning("%d worker threads are busy (hung tools?): further blocking calls wait for one",
                        self.max_workers)

    def _serve(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # nobody counts on this worker: it may go
                        self._idle -= 1
                        self._live -= 1
                        return
                continue  # a job was promised to an idle worker just now: stay for it
            job()
            with self._lock:
                self._idle += 1


MAX_TOOL_THREADS = 256  # threads for tools at most: each hung tool keeps one
_tool_workers = _Workers(MAX_TOOL_THREADS)  # for tools, which may hang
_workers = _Workers()  # for everything else (a model request with a sync client): never queued behind tools


def in_thread(function: Callable[[], T], *, tool: bool = False) -> Awaitable[T]:
    """Run a blocking function in a daemon thread, with a copy of the caller's context; await its result.

    Not `asyncio.to_thread`: its pool's threads are joined at interpreter exit, so one hung
    tool would keep a notebook kernel or a service from ever shutting down. `StopIteration`,
    which cannot travel through a future, arrives as a RuntimeError caused by it (as PEP 479
    does for generators). `tool=True` runs it among the tools' threads, at most MAX_TOOL_THREADS
    of them (past that it waits for one to come free); other work never waits behind them.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # cancelled meanwhile (a timeout): nobody wants the outcome
            return
        if error is None:
            future.set_result(value)
        else:
            future.set_exception(error)

    def work() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(function)
        except (StopIteration, StopAsyncIteration) as exc:
            error = RuntimeError(f"{type(exc).__name__} raised in a worker thread")
            error.__cause__ = exc
        except BaseException as exc:  # handed to the awaiting task, which decides
            error = exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the loop is closed (the caller gave up and the run ended): drop it
            pass

    (_tool_workers if tool else _workers).submit(work)
    return future


async def either_way(function: Callable[..., Any], *, blocking_ok: bool = False, **kwargs: Any) -> Any:
    """`function(**kwargs)` awaitable whether it is a coroutine function (an AsyncOpenAI method, whose
    wrappers hide it from a plain check) or a blocking one (an OpenAI method, run in a worker thread).
    `blocking_ok`: on a loop `run_sync` made (see on_private_loop), call a blocking one right there.

    >>> run_sync(either_way(lambda x: x + 1, x=1))
    2
    """
    if inspect.iscoroutinefunction(inspect.unwrap(function)):
        return await function(**kwargs)
    if blocking_ok and on_private_loop():  # the caller waits for this anyway: a thread hop would only cost
        return function(**kwargs)
    return await in_thread(lambda: function(**kwargs))


def run_sync(awaitable: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also where a loop is already running (Jupyter).

    >>> async def two() -> int:
    ...     return 2
    >>> run_sync(two())
    2
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _run_on_new_loop(awaitable)
    outcome: queue.SimpleQueue[tuple[Any, BaseException | None]] = queue.SimpleQueue()

    def work() -> None:  # a loop is running in this thread: use a fresh one in another thread
        try:
            outcome.put((_run_on_new_loop(awaitable), None))
        except BaseException as exc:
            outcome.put((None, exc))

    threading.Thread(target=work, name="mini_framework-run", daemon=True).start()
    value, error = outcome.get()
    if error is not None:
        raise error
    return value


def on_private_loop() -> bool:
    """Whether the running loop is one `run_sync` made for its caller alone: a blocking call made on it
    holds up nothing but that caller (who is waiting for it anyway), so it can skip the thread hop.

    >>> async def check() -> bool:
    ...     return on_private_loop()
    >>> run_sync(check()), asyncio.run(check())
    (True, False)
    """
    try:
        return _private_loop.get() is asyncio.get_running_loop()
    except RuntimeError:  # no running loop
        return False


def _run_on_new_loop(awaitable: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, except that tasks left behind get SHUTDOWN_GRACE seconds, not forever."""
    loop = asyncio.new_event_loop()
    mark = _private_loop.set(loop)  # the main task copies this context, so its code can tell
    try:
        return loop.run_until_complete(awaitable)
    finally:
        try:
            _abandon_leftovers(loop)
        finally:
            _private_loop.reset(mark)
            loop.close()


def _abandon_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is still running on `loop`, wait briefly, and silence tasks that refuse to end."""
    leftovers = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in leftovers:
        task.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.wait(leftovers, timeout=SHUTDOWN_GRACE))
    stuck = [t for t in leftovers if not t.done()]
    if stuck:
        log.warning("%d task(s) ignored cancellation and were abandoned: %s", len(stuck),
                    ", ".join(t.get_name() for t in stuck))
        loop.set_exception_handler(lambda _loop, _context: None)  # "Task was destroyed but it is pending"
    for task in leftovers:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log "exception was never retrieved"
    try:  # an async generator whose `finally` awaits something slow must not hold the caller up either
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), SHUTDOWN_GRACE))
    except (asyncio.TimeoutError, Exception):
        log.warning("async generators left open were not closed within %s s", SHUTDOWN_GRACE)
