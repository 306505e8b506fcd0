"""Agent-loop overhead per tool round trip, four frameworks side by side: `python benchmarks/bench_frameworks.py`.

Needs the `bench` extra: `pip install -e ".[dev,bench]"` (openai-agents, pydantic-ai, langchain).
Options: `--runs 100` (measured rounds), `--warmup 10`, `--trips 11` (N for the slope), `--slope-runs 30`,
`--profile-runs 200`, `--no-profile`.

What is compared, all against one in-process practice server (`PracticeServer`, 127.0.0.1), in one process:

    ours            mini_framework.Agent     `Agent.run` (sync, `OpenAI` client: the documented use) and
                                             `await Agent.arun` (`AsyncOpenAI` client, like the others)
    openai-agents   agents.Agent             `OpenAIChatCompletionsModel` + `AsyncOpenAI`; `await Runner.run`
                                             and `Runner.run_sync`; tracing disabled
    pydantic-ai     pydantic_ai.Agent        `OpenAIChatModel` + `OpenAIProvider(openai_client=AsyncOpenAI)`;
                                             `await agent.run` and `agent.run_sync`
    langchain       langchain.agents         `create_agent(ChatOpenAI(base_url=...), tools)` (LangChain 1.x's
                    .create_agent            recommended agent loop, a compiled LangGraph graph: model node
                                             <-> tool node); `await agent.ainvoke` and `agent.invoke`

The same question ("北京现在天气怎么样？"), the same model (`practice`, the deterministic planner), and the same
single tool: one plain function `get_weather(city: str) -> str` with one docstring, handed to each framework in
its own documented way (our `Agent(tools=[fn])`, `function_tool(fn)`, `Agent(tools=[fn])`,
`langchain_core.tools.tool(fn, parse_docstring=True)`), so every framework sends the same name, description and
parameter description. The tool is a no-op that times its own body. Each run is one tool round trip = two model
requests; every run is checked for exactly that (see "Checks" below).

How overhead is measured (the same way for every framework):

    overhead = wall time of the run - model time - tool time

- wall time: `perf_counter` around the entry point. Async entry points run inside one long-lived event loop and
  are timed inside a coroutine on it (loop entry excluded); sync entry points are timed around the call.
- model time: measured at the HTTP transport. Every framework gets an `openai` SDK client that *we* built, with
  an `httpx2` client (the HTTP library this `openai` version uses) whose transport is wrapped: a request's time
  runs from the transport's `handle_request` (before the request is written) until the last byte of the
  response body has been read. So model time = HTTP on loopback + the practice server's work. The openai SDK's
  own work (building the request, parsing the response into pydantic models) is *not* model time: it counts as
  overhead for all four alike (all four use the same SDK; its share is a column of its own, see below).
  The server's own handling time (inside `PracticeServer.dispatch`) is shown too, for comparison. The server is
  a thread of this process, so while it works it competes for the GIL with whatever the framework does.
  The HTTP stack is the same for all four: each framework's `OpenAI`/`AsyncOpenAI` client gets our `httpx2`
  clients (LangChain's `ChatOpenAI` via `http_client=` / `http_async_client=`).
- tool time: the tool's body, timed by itself (a few microseconds); hopping to a worker thread to run it, and
  validating its arguments, is framework overhead.

Two further columns help read it: "of which openai SDK" (time inside the SDK's `chat.completions.create`, sync
or async, plus LangChain's separate `LegacyAPIResponse.parse`, minus the HTTP time; measured by wrapping those
methods on their classes) and "framework only" = overhead - that, which is what `bench_agent.py` calls
overhead. The SDK's share grows with the conversation: it walks every message of every request.

Fairness measures: runs are interleaved round-robin over all variants (A B C D ... A B C D ..., the starting
variant rotated each round so no variant always follows the same one), after a warm-up of all of them; before
every run (untimed) the garbage collector runs, after the warm-up everything alive is `gc.freeze()`-d, and after
every run the shared event loop is drained of leftover tasks (counted and reported: work a framework defers past
its return would not be in its wall time). Every sync entry point finds that same loop set as the thread's
event loop (openai-agents' and pydantic-ai's `run_sync` reuse it; ours makes its own). Every client uses the
SDK's default retries, `timeout=60`, `trust_env=False` and keep-alive (no new connections after the warm-up).

Per extra round trip: a benchmark persona (`bench-trips-K`, added to the server here) calls `get_weather` for K
different cities, one call per reply, then answers; the model itself decides to stop, so no framework's
iteration cap or error path is involved (`practice-loop` only stops when capped, and the others end a capped
run with an exception: MaxTurnsExceeded, UsageLimitExceeded, GraphRecursionError). Limits are raised where the
default is below N+1 requests (ours `max_iterations`, openai-agents `max_turns`); pydantic-ai (50 requests) and
LangGraph (10007 steps) need nothing. Slope = (median overhead at N trips - median at 1 trip) / (N - 1).

Checks: per run, requests counted at our transport and at the server (`dispatch` calls) must both be trips+1,
the tool body must have run `trips` times, and the answer must be the expected one. Printed per variant.

Only loopback: API keys are dummies, tracing/telemetry is off (openai-agents `set_tracing_disabled(True)`,
LangSmith tracing off, no logfire), and a guard on `socket.connect`/`getaddrinfo` refuses any non-loopback
address (the number of refused attempts is printed at the end; it should be 0).

Context printed after the tables: the openai SDK's own cost per request (create() minus transport time), and the
costs of the mechanisms in our sync path (`run_sync` = an event loop per run; `in_thread` = a worker thread per
blocking call) next to their stdlib counterparts. Last: cProfile of our `Agent.run` (`--profile-runs` runs; only
the calling thread is visible to cProfile) and of `await Agent.arun` with an `AsyncOpenAI` client (everything but
the tool in one thread), top 25 by cumulative time, self time per run by package, and per-run counts of threads
started, event loops created and thread hops. The machine may be shared: its load average is printed at the start
and the end. A report, not a timed test.
"""
from __future__ import annotations

import os

# Before anything that might read them: dummy credentials, no tracing or telemetry anywhere.
for _name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LOGFIRE_TOKEN", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"):
    os.environ.pop(_name, None)
os.environ.update({
    "OPENAI_API_KEY": "sk-dummy-loopback-only",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "OPENAI_AGENTS_DONT_LOG_MODEL_DATA": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGSMITH_TRACING_V2": "false",
    "LOGFIRE_SEND_TO_LOGFIRE": "false",
    "LOGFIRE_IGNORE_NO_CONFIG": "1",
})

import argparse  # noqa: E402
import asyncio  # noqa: E402
import cProfile  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import io  # noqa: E402
import ipaddress  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

# ----------------------------------------------------------------------------- loopback only

REFUSED: list[str] = []


def _loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if host in (None, "", "localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


_real_connect, _real_connect_ex, _real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo


def _check_address(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address[0]):
        REFUSED.append(repr(address))
        raise ConnectionRefusedError(f"bench_frameworks: only loopback allowed, refused {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_address(self, address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(self, address)
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if not _loopback(host):
        REFUSED.append(f"getaddrinfo({host!r})")
        raise socket.gaierror(socket.EAI_NONAME, f"bench_frameworks: only loopback allowed, refused {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo  # type: ignore[assignment]

import httpx2  # noqa: E402
from openai import AsyncOpenAI, OpenAI  # noqa: E402
from openai._legacy_response import LegacyAPIResponse  # noqa: E402
from openai.resources.chat.completions import AsyncCompletions, Completions  # noqa: E402
from timing import load, median_us  # noqa: E402  (benchmarks/timing.py)

from mini_framework import Agent  # noqa: E402
from mini_framework.concurrency import in_thread, run_sync  # noqa: E402
from practice_model import DEFAULT_PERSONAS, Persona, PlannedCall, PracticeServer, Reply  # noqa: E402

try:
    import agents as oa
    import langchain.agents
    import pydantic_ai
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel
    from langchain_core.tools import tool as lc_tool
    from langchain_openai import ChatOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
except ImportError as exc:  # pragma: no cover - a hint, not a feature
    sys.exit(f"{exc}: install the benchmark extra first: pip install -e '.[dev,bench]'")

oa.set_tracing_disabled(True)

QUESTION = "北京现在天气怎么样？"
KEY = "sk-dummy-loopback-only"
CITIES = ["北京", "上海", "广州", "深圳", "杭州", "成都", "武汉", "西安", "南京", "重庆", "天津", "苏州", "长沙",
          "青岛"]

# ----------------------------------------------------------------------------- counters


@dataclass
class Meter:
    """Model time as seen at one client's HTTP transport."""

    requests: int = 0
    seconds: float = 0.0
    sent_bytes: int = 0

    def reset(self) -> None:
        self.requests, self.seconds, self.sent_bytes = 0, 0.0, 0

    def done(self, start: float) -> None:
        self.requests += 1
        self.seconds += time.perf_counter() - start


class _TimedSyncStream(httpx2.SyncByteStream):
    """The response body; the request's time ends when its last byte has been read (or it is closed)."""

    def __init__(self, inner: Any, meter: Meter, start: float) -> None:
        self._inner, self._meter, self._start, self._counted = inner, meter, start, False

    def _done(self) -> None:
        if not self._counted:
            self._counted = True
            self._meter.done(self._start)

    def __iter__(self) -> Any:
        for chunk in self._inner:
            yield chunk
        self._done()

    def close(self) -> None:
        self._done()
        self._inner.close()


class _TimedAsyncStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, meter: Meter, start: float) -> None:
        self._inner, self._meter, self._start, self._counted = inner, meter, start, False

    def _done(self) -> None:
        if not self._counted:
            self._counted = True
            self._meter.done(self._start)

    async def __aiter__(self) -> Any:
        async for chunk in self._inner:
            yield chunk
        self._done()

    async def aclose(self) -> None:
        self._done()
        await self._inner.aclose()


class TimedTransport(httpx2.BaseTransport):
    def __init__(self, meter: Meter) -> None:
        self._inner, self._meter = httpx2.HTTPTransport(), meter

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        start = time.perf_counter()
        self._meter.sent_bytes += int(request.headers.get("content-length", 0))
        response = self._inner.handle_request(request)
        response.stream = _TimedSyncStream(response.stream, self._meter, start)
        return response

    def close(self) -> None:
        self._inner.close()


class AsyncTimedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, meter: Meter) -> None:
        self._inner, self._meter = httpx2.AsyncHTTPTransport(), meter

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        start = time.perf_counter()
        self._meter.sent_bytes += int(request.headers.get("content-length", 0))
        response = await self._inner.handle_async_request(request)
        response.stream = _TimedAsyncStream(response.stream, self._meter, start)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def sync_http(meter: Meter) -> httpx2.Client:
    return httpx2.Client(transport=TimedTransport(meter), trust_env=False, timeout=60)


def async_http(meter: Meter) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=AsyncTimedTransport(meter), trust_env=False, timeout=60)


@dataclass
class ServerStats:
    """Requests the server answered, and the time spent in `PracticeServer.dispatch` (parse, plan, reply)."""

    requests: int = 0
    seconds: float = 0.0


SERVER = ServerStats()


@dataclass
class ToolStats:
    calls: int = 0
    seconds: float = 0.0


TOOL = ToolStats()


@dataclass
class SdkStats:
    """Time inside the openai SDK's `chat.completions.create` (sync and async) and `LegacyAPIResponse.parse`
    (LangChain's `with_raw_response` path parses after `create` returns), HTTP included; outermost calls only."""

    seconds: float = 0.0
    depth: int = 0


SDK = SdkStats()


def _sdk_timed(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)  # `inspect.unwrap` still finds a coroutine function where there was one
    def timed(*args: Any, **kwargs: Any) -> Any:
        if SDK.depth:
            return function(*args, **kwargs)
        SDK.depth += 1
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SDK.seconds += time.perf_counter() - start
            SDK.depth -= 1

    return timed


def _sdk_timed_async(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    async def timed(*args: Any, **kwargs: Any) -> Any:
        if SDK.depth:
            return await function(*args, **kwargs)
        SDK.depth += 1
        start = time.perf_counter()
        try:
            return await function(*args, **kwargs)
        finally:
            SDK.seconds += time.perf_counter() - start
            SDK.depth -= 1

    return timed


# Patched on the classes, before any client exists, so every framework's calls go through them (LangChain's
# `with_raw_response` wrapper picks up `create` when it is first built).
Completions.create = _sdk_timed(Completions.create)  # type: ignore[method-assign]
AsyncCompletions.create = _sdk_timed_async(AsyncCompletions.create)  # type: ignore[method-assign]
LegacyAPIResponse.parse = _sdk_timed(LegacyAPIResponse.parse)  # type: ignore[method-assign]


def get_weather(city: str) -> str:
    """查询指定城市当前的天气情况

    Args:
        city: 城市名称，例如北京、上海
    """
    start = time.perf_counter()
    text = '{"temperature": 22, "condition": "晴"}'  # a no-op: the answer is fixed
    TOOL.calls += 1
    TOOL.seconds += time.perf_counter() - start
    return text


# ----------------------------------------------------------------------------- the server


def trips_persona(k: int) -> Callable[[dict[str, Any]], Reply]:
    """`bench-trips-K`: one get_weather call per reply (a different city each time), an answer after K results."""

    def respond(request: dict[str, Any]) -> Reply:
        done = sum(1 for m in request["messages"] if m.get("role") == "tool")
        if done < k:
            return Reply(tool_calls=(PlannedCall.of("get_weather", {"city": CITIES[done % len(CITIES)]}),))
        return Reply(content=trips_answer(k))

    return respond


def trips_answer(k: int) -> str:
    return f"查了 {k} 个城市的天气：都是晴，22°C。"


def start_server(trips: int) -> PracticeServer:
    personas = dict(DEFAULT_PERSONAS)
    for k in sorted({1, trips}):
        personas[f"bench-trips-{k}"] = Persona.of(f"bench-trips-{k}", trips_persona(k))
    server = PracticeServer(personas=personas).start()
    dispatch = server.dispatch

    def counted_dispatch(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return dispatch(*args, **kwargs)
        finally:
            SERVER.seconds += time.perf_counter() - start
            SERVER.requests += 1

    server.dispatch = counted_dispatch  # type: ignore[method-assign]
    return server


# ----------------------------------------------------------------------------- the four frameworks


@dataclass
class Variant:
    framework: str
    entry: str
    kind: str  # "sync" or "async"
    meter: Meter
    call: Callable[[str], Any]  # sync: runs; async: returns the coroutine
    answer: Callable[[Any], Any]  # the final text from the result

    @property
    def label(self) -> str:
        return f"{self.framework:<13} {self.entry}"


def build_variants(base_url: str, model: str, limit: int) -> list[Variant]:
    """Every framework and entry point, for one model name; `limit` = the most requests a run may need."""
    variants: list[Variant] = []

    m = Meter()
    ours_sync = Agent(OpenAI(base_url=base_url, api_key=KEY, http_client=sync_http(m)), model,
                      tools=[get_weather], max_iterations=limit)
    ours_async = Agent(AsyncOpenAI(base_url=base_url, api_key=KEY, http_client=async_http(m)), model,
                       tools=[get_weather], max_iterations=limit)
    variants += [Variant("ours", "Agent.run", "sync", m, ours_sync.run, lambda r: r.text),
                 Variant("ours", "await Agent.arun", "async", m, ours_async.arun, lambda r: r.text)]

    m = Meter()
    oa_model = OpenAIChatCompletionsModel(model, AsyncOpenAI(base_url=base_url, api_key=KEY, http_client=async_http(m)))
    oa_agent = oa.Agent(name="weather", model=oa_model, tools=[oa.function_tool(get_weather)])
    variants += [Variant("openai-agents", "await Runner.run", "async", m,
                         lambda q: oa.Runner.run(oa_agent, q, max_turns=limit), lambda r: r.final_output),
                 Variant("openai-agents", "Runner.run_sync", "sync", m,
                         lambda q: oa.Runner.run_sync(oa_agent, q, max_turns=limit), lambda r: r.final_output)]

    m = Meter()
    provider = OpenAIProvider(openai_client=AsyncOpenAI(base_url=base_url, api_key=KEY, http_client=async_http(m)))
    pa_agent = pydantic_ai.Agent(OpenAIChatModel(model, provider=provider), tools=[get_weather])
    assert limit <= 50, "pydantic-ai's default request_limit is 50"
    variants += [Variant("pydantic-ai", "await agent.run", "async", m, pa_agent.run, lambda r: r.output),
                 Variant("pydantic-ai", "agent.run_sync", "sync", m, pa_agent.run_sync, lambda r: r.output)]

    m = Meter()
    llm = ChatOpenAI(model=model, base_url=base_url, api_key=KEY, http_client=sync_http(m),
                     http_async_client=async_http(m), use_responses_api=False)
    graph = langchain.agents.create_agent(llm, tools=[lc_tool(get_weather, parse_docstring=True)])
    variants += [Variant("langchain", "await agent.ainvoke", "async", m,
                         lambda q: graph.ainvoke({"messages": [{"role": "user", "content": q}]}),
                         lambda r: r["messages"][-1].content),
                 Variant("langchain", "agent.invoke", "sync", m,
                         lambda q: graph.invoke({"messages": [{"role": "user", "content": q}]}),
                         lambda r: r["messages"][-1].content)]
    return variants


# ----------------------------------------------------------------------------- measuring

LOOP = asyncio.new_event_loop()


@dataclass
class Sample:
    wall: float
    model: float
    server: float
    tool: float
    sdk: float  # inside the openai SDK, HTTP excluded
    requests: int
    server_requests: int
    tool_calls: int
    sent_bytes: int
    answer: Any
    leftover_tasks: int

    @property
    def overhead(self) -> float:
        return self.wall - self.model - self.tool

    @property
    def overhead_with_http(self) -> float:
        """Everything but the server's own work and the tool: also counts the HTTP client and the socket hops."""
        return self.wall - self.server - self.tool

    @property
    def framework_only(self) -> float:
        """Overhead without the openai SDK's own work (what every framework here pays alike)."""
        return self.overhead - self.sdk


async def _timed(coroutine_function: Callable[[str], Any], question: str) -> tuple[Any, float]:
    start = time.perf_counter()
    result = await coroutine_function(question)
    return result, time.perf_counter() - start


async def _drain() -> int:
    """Let tasks a run left behind finish (bounded); return how many there were."""
    me = asyncio.current_task()
    left = [t for t in asyncio.all_tasks() if t is not me]
    for _ in range(100):
        if not any(not t.done() for t in left):
            break
        await asyncio.sleep(0)
    return len(left)


def measure(variant: Variant, question: str) -> Sample:
    variant.meter.reset()
    TOOL.calls, TOOL.seconds = 0, 0.0
    SDK.seconds, SDK.depth = 0.0, 0
    server_requests, server_seconds = SERVER.requests, SERVER.seconds
    asyncio.set_event_loop(LOOP)  # every sync entry point finds the same default loop (ours resets it)
    gc.collect()
    if variant.kind == "sync":
        start = time.perf_counter()
        result = variant.call(question)
        wall = time.perf_counter() - start
    else:
        result, wall = LOOP.run_until_complete(_timed(variant.call, question))
    asyncio.set_event_loop(LOOP)
    leftover = LOOP.run_until_complete(_drain())  # nothing a run left on the shared loop runs in the next one
    return Sample(wall, variant.meter.seconds, SERVER.seconds - server_seconds, TOOL.seconds,
                  SDK.seconds - variant.meter.seconds, variant.meter.requests, SERVER.requests - server_requests,
                  TOOL.calls, variant.meter.sent_bytes,
                  variant.answer(result), leftover)


def interleaved(jobs: list[tuple[Variant, str]], rounds: int) -> list[list[Sample]]:
    """`rounds` rounds of every job, round-robin, the starting job rotated each round."""
    out: list[list[Sample]] = [[] for _ in jobs]
    for r in range(rounds):
        for i in range(len(jobs)):
            j = (r + i) % len(jobs)
            variant, question = jobs[j]
            out[j].append(measure(variant, question))
    return out


def ms(values: list[float], q: str = "median") -> float:
    if q == "median":
        return statistics.median(values) * 1000
    return statistics.quantiles(values, n=10)[-1] * 1000  # p90


def check(samples: list[Sample], trips: int, expected: Callable[[Any], bool]) -> str:
    bad = [s for s in samples if (s.requests, s.server_requests, s.tool_calls) != (trips + 1, trips + 1, trips)
           or not expected(s.answer)]
    leftovers = sum(s.leftover_tasks for s in samples)
    first = samples[0]
    text = (f"{len(samples) - len(bad)}/{len(samples)} runs ok: {first.requests} requests at the transport, "
            f"{first.server_requests} at the server, {first.tool_calls} tool call(s), answer {str(first.answer)!r}")
    if bad:
        b = bad[0]
        text += f"; FAILED e.g. {b.requests}/{b.server_requests} requests, {b.tool_calls} calls, {str(b.answer)!r}"
    if leftovers:
        text += f"; {leftovers} leftover task(s) drained after runs"
    return text


# ----------------------------------------------------------------------------- report sections


def machine_info() -> None:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    model = ""
    try:
        model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                     if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"machine: {cpus} CPUs (nproc){', ' + model if model else ''}; Python {platform.python_version()} "
          f"({platform.python_implementation()}); {platform.platform()}")
    names = ["mini-framework", "openai", "httpx2", "pydantic", "openai-agents", "pydantic-ai-slim", "langchain",
             "langchain-core", "langchain-openai", "langgraph"]
    versions = []
    for name in names:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    print("packages: " + ", ".join(versions))
    import mini_framework
    print(f"mini_framework under test: {Path(mini_framework.__file__).parent}, {git_state()}; {load()}")


def git_state() -> str:
    """Which code of ours is measured: the commit, and whether mini_framework/ differs from it."""
    import mini_framework
    here = Path(mini_framework.__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()

    try:
        if not git("rev-parse", "--show-toplevel"):
            return "not in a git checkout"
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", ".").splitlines()
    except (OSError, subprocess.SubprocessError):
        return "unknown (no git)"
    return f"commit {head or '?'}" + (f" + {len(dirty)} uncommitted change(s) in mini_framework/ (measured as is)"
                                     if dirty else ", mini_framework/ clean")



def wire_check(server: PracticeServer, variants: list[Variant]) -> None:
    """One run of each, before anything is timed: what went over the wire."""
    print("\nWire check (one run each, from the server's request log):")
    print("| framework     entry point           | requests | stream | tools offered | tool spec strict | bytes sent |")
    print("|-------------------------------------|---------:|--------|---------------|------------------|-----------:|")
    for v in variants:
        before = len(server.requests)
        s = measure(v, QUESTION)
        log = server.requests[before:]
        streams = sorted({str(e["request"].get("stream", "absent")) for e in log})
        tools = sorted({len(e["request"].get("tools") or []) for e in log})
        strict = sorted({str((e["request"].get("tools") or [{}])[0].get("function", {}).get("strict", "absent"))
                         for e in log})
        print(f"| {v.label:<35} | {len(log):8d} | {'/'.join(streams):<6} | {'/'.join(map(str, tools)):<13} | "
              f"{'/'.join(strict):<16} | {s.sent_bytes:10d} |")


def main_table(variants: list[Variant], samples: list[list[Sample]], runs: int) -> None:
    print(f"\n1. One tool round trip (2 model requests) per run: '{QUESTION}', model 'practice'; {runs} interleaved "
          "runs each; ms, median unless marked")
    print("| framework     entry point           |    wall | model (HTTP) | server |  tool | overhead | overhead p90 | "
          "of which openai SDK | framework only | wall-server-tool |")
    print("|-------------------------------------|--------:|-------------:|-------:|------:|---------:|-------------:|"
          "--------------------:|---------------:|-----------------:|")
    for v, ss in zip(variants, samples):
        print(f"| {v.label:<35} | {ms([s.wall for s in ss]):7.3f} | {ms([s.model for s in ss]):12.3f} | "
              f"{ms([s.server for s in ss]):6.3f} | {ms([s.tool for s in ss]):5.3f} | "
              f"{ms([s.overhead for s in ss]):8.3f} | {ms([s.overhead for s in ss], 'p90'):12.3f} | "
              f"{ms([s.sdk for s in ss]):19.3f} | {ms([s.framework_only for s in ss]):14.3f} | "
              f"{ms([s.overhead_with_http for s in ss]):16.3f} |")
    print("overhead = wall - model (HTTP) - tool. 'of which openai SDK' = time inside the SDK's create() (and, for "
          "LangChain's raw responses, parse()) minus HTTP:\nthe same SDK for all four. 'framework only' = overhead - "
          "that (per run, then the median). 'wall-server-tool' also counts the HTTP client (httpx2, the same for\nall) "
          "as overhead: a cross-check that the ranking does not depend on where HTTP is cut.")
    print("\nChecks (every run: requests at our transport and at the server, tool calls, answer):")
    for v, ss in zip(variants, samples):
        print(f"  {v.label:<35} {check(ss, 1, lambda a: isinstance(a, str) and '22' in a)}")

    for title, key in (("overhead", lambda s: s.overhead), ("framework only", lambda s: s.framework_only)):
        value = {v.label: ms([key(s) for s in ss]) for v, ss in zip(variants, samples)}
        others = {v.label: value[v.label] for v in variants if v.framework != "ours"}
        fastest = min(others, key=others.get)
        print(f"\nOurs vs the fastest other, median {title} per run:")
        for v in variants:
            if v.framework != "ours":
                continue
            kind = {o.label: value[o.label] for o in variants if o.framework != "ours" and o.kind == v.kind}
            fastest_kind = min(kind, key=kind.get)
            name = " ".join(v.label.split())
            print(f"  {name:<22} {value[v.label]:7.3f} ms = {value[v.label] / others[fastest]:.2f}× "
                  f"the fastest other ({' '.join(fastest.split())}, {others[fastest]:.3f}); "
                  f"{value[v.label] / kind[fastest_kind]:.2f}× the fastest other {v.kind} entry point "
                  f"({' '.join(fastest_kind.split())}, {kind[fastest_kind]:.3f})")


def slope_table(base_url: str, trips: int, rounds: int) -> None:
    limit = trips + 5
    one = build_variants(base_url, "bench-trips-1", limit)
    many = build_variants(base_url, f"bench-trips-{trips}", limit)
    jobs = [(v, QUESTION) for pair in zip(one, many) for v in pair]
    interleaved(jobs, 2)  # warm-up
    samples = interleaved(jobs, rounds)
    print(f"\n2. Per extra round trip: persona bench-trips-K (K get_weather calls, one per reply, then an answer), "
          f"K = 1 and K = {trips}; {rounds} interleaved runs each; ms, medians")
    print(f"| framework     entry point           | overhead K=1 | overhead K={trips:<2} | per extra round trip | "
          f"framework only, per extra round trip | model per request |")
    print("|-------------------------------------|-------------:|--------------:|---------------------:|"
          "-------------------------------------:|------------------:|")
    for i, v in enumerate(one):
        s1, sn = samples[2 * i], samples[2 * i + 1]
        o1, on = ms([s.overhead for s in s1]), ms([s.overhead for s in sn])
        f1, fn = ms([s.framework_only for s in s1]), ms([s.framework_only for s in sn])
        per_request = ms([s.model / s.requests for s in sn])
        print(f"| {v.label:<35} | {o1:12.3f} | {on:13.3f} | {(on - o1) / (trips - 1):20.3f} | "
              f"{(fn - f1) / (trips - 1):37.3f} | {per_request:17.3f} |")
    print("Checks:")
    for i, v in enumerate(one):
        print(f"  {v.label:<35} K=1: {check(samples[2 * i], 1, lambda a: a == trips_answer(1))}")
        print(f"  {'':<35} K={trips}: {check(samples[2 * i + 1], trips, lambda a: a == trips_answer(trips))}")


def context(base_url: str) -> None:
    """What parts of every run cost, outside any framework."""
    print("\n3. Context (median µs)")
    m = Meter()
    client = OpenAI(base_url=base_url, api_key=KEY, http_client=sync_http(m))
    spec = {"type": "function", "function": {  # the tool as ours sends it (see the wire check)
        "name": "get_weather", "description": "查询指定城市当前的天气情况",
        "parameters": {"type": "object",
                       "properties": {"city": {"type": "string", "description": "城市名称，例如北京、上海"}},
                       "required": ["city"]}}}
    params = {"model": "practice", "messages": [{"role": "user", "content": QUESTION}], "tools": [spec]}
    sdk = []
    for _ in range(220):
        m.reset()
        start = time.perf_counter()
        client.chat.completions.create(**params)
        sdk.append(time.perf_counter() - start - m.seconds)
    print(f"  openai SDK's own work per request, sync create() minus transport time:              "
          f"{statistics.median(sdk[20:]) * 1e6:8.1f}  (every framework pays this per request, inside 'overhead')")
    am = Meter()
    aclient = AsyncOpenAI(base_url=base_url, api_key=KEY, http_client=async_http(am))

    async def async_sdk() -> list[float]:
        out = []
        for _ in range(220):
            am.reset()
            start = time.perf_counter()
            await aclient.chat.completions.create(**params)
            out.append(time.perf_counter() - start - am.seconds)
        return out

    print(f"  openai SDK's own work per request, async create() minus transport time:             "
          f"{statistics.median(LOOP.run_until_complete(async_sdk())[20:]) * 1e6:8.1f}")

    async def nothing() -> None:
        return None

    print(f"  mini_framework.concurrency.run_sync(empty coroutine) (Agent.run: once per run):    "
          f"{median_us(lambda: run_sync(nothing()), 300):8.1f}")
    print(f"  asyncio.run(empty coroutine), for comparison:                                      "
          f"{median_us(lambda: asyncio.run(nothing()), 300):8.1f}")
    asyncio.set_event_loop(LOOP)

    async def hops(n: int) -> None:
        for _ in range(n):
            await in_thread(lambda: None)

    per_hop = median_us(lambda: LOOP.run_until_complete(hops(20)), 50) / 20
    print(f"  await mini_framework.concurrency.in_thread(no-op) (ours: per sync tool call, and per request "
          f"with a sync client in arun; Agent.run calls it directly on its own loop): {per_hop:6.1f}")

    async def to_thread_hops(n: int) -> None:
        for _ in range(n):
            await asyncio.to_thread(lambda: None)

    per_pool_hop = median_us(lambda: LOOP.run_until_complete(to_thread_hops(20)), 50) / 20
    print(f"  await asyncio.to_thread(no-op) (the default executor; how the others run a sync tool):         "
          f"{per_pool_hop:6.1f}")


def _top(profiler: cProfile.Profile, n: int = 25) -> None:
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("cumulative").print_stats(n)
    text = out.getvalue()
    print(text[text.find("   ncalls"):].rstrip())


PACKAGES = [("mini_framework (ours)", lambda f: "/mini_framework/" in f),
            ("openai SDK", lambda f: "/openai/" in f),
            ("httpx2 + httpcore2 + h11", lambda f: any(p in f for p in ("/httpx2/", "/httpcore2/", "/h11/"))),
            ("anyio + sniffio", lambda f: "/anyio/" in f or "/sniffio/" in f),
            ("pydantic", lambda f: "/pydantic/" in f or "/pydantic_core/" in f),
            ("asyncio", lambda f: "/asyncio/" in f),
            ("threading + queue", lambda f: f.endswith(("threading.py", "queue.py"))),
            ("json", lambda f: "/json/" in f),
            ("typing + typing_extensions (mostly the SDK's params transform)",
             lambda f: f.endswith(("/typing.py", "/typing_extensions.py")))]
EPOLL = "<method 'poll' of 'select.epoll' objects>"


def _per_run(profiler: cProfile.Profile, runs: int) -> None:
    """Self time per run by where the code lives (calling thread only), and a few call counts."""
    raw = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (filename, _, func), (_, _, tottime, _, _) in raw.items():
        if filename == "~" and func == EPOLL:
            label = "waiting in epoll (other threads working)"
        elif filename == "~":
            label = "built-ins and C functions (sockets, locks, ...)"
        else:
            label = next((name for name, match in PACKAGES if match(filename)), "other Python")
        totals[label] = totals.get(label, 0.0) + tottime
    print(f"  self time per run (÷ {runs}), by where the code lives:")
    for label, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"    {label:<64} {seconds / runs * 1e3:7.3f} ms")
    counts = [("threading.py", "start", "threads started"), ("base_events.py", "__init__", "event loops created"),
              ("concurrency.py", "in_thread", "hops to a worker thread (in_thread)"),
              ("_base_client.py", "_build_request", "SDK requests built")]
    found = []
    for file_part, func, label in counts:
        n = sum(v[1] for key, v in raw.items() if key[0].endswith(file_part) and key[2] == func)
        found.append(f"{label} {n / runs:.2f}")
    print("  per run: " + ", ".join(found))


def profile(base_url: str, runs: int) -> None:
    """Ours under cProfile: Agent.run as used (sync client), then Agent.arun with AsyncOpenAI (one thread)."""
    m = Meter()
    agent = Agent(OpenAI(base_url=base_url, api_key=KEY, http_client=sync_http(m)), "practice", tools=[get_weather])
    for _ in range(10):
        agent.run(QUESTION)
    m.reset()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    for _ in range(runs):
        agent.run(QUESTION)
    profiler.disable()
    wall = time.perf_counter() - start
    print(f"\n4. cProfile of ours, {runs} × Agent.run('{QUESTION}'), OpenAI (sync) client, top 25 by cumulative "
          f"time. cProfile sees the calling thread only: the worker threads that call the SDK (HTTP included) and "
          f"run the tool are not profiled; their time shows as the event loop waiting in select(). "
          f"Wall {wall:.2f} s under the profiler, transport {m.seconds:.2f} s.")
    _top(profiler)
    _per_run(profiler, runs)

    am = Meter()
    aagent = Agent(AsyncOpenAI(base_url=base_url, api_key=KEY, http_client=async_http(am)), "practice",
                   tools=[get_weather])

    async def many(n: int) -> None:
        for _ in range(n):
            await aagent.arun(QUESTION)

    asyncio.set_event_loop(LOOP)
    LOOP.run_until_complete(many(10))
    am.reset()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    LOOP.run_until_complete(many(runs))
    profiler.disable()
    wall = time.perf_counter() - start
    print(f"\n5. cProfile of ours, {runs} × await Agent.arun(...), AsyncOpenAI client, in one event loop: the SDK, "
          f"the HTTP client and the loop are all in this thread, only the (sync) tool runs in a worker thread. "
          f"Wall {wall:.2f} s under the profiler, transport {am.seconds:.2f} s. Top 25 by cumulative time:")
    _top(profiler)
    _per_run(profiler, runs)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--trips", type=int, default=11)
    parser.add_argument("--slope-runs", type=int, default=30)
    parser.add_argument("--profile-runs", type=int, default=200)
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args(argv)
    if args.trips < 2 or args.runs < 2 or args.slope_runs < 2:
        parser.error("--trips, --runs and --slope-runs must be at least 2")

    machine_info()
    server = start_server(args.trips)
    os.environ["OPENAI_BASE_URL"] = server.base_url  # a safety net: no client here should need it
    print(f"server: {server.base_url} (in-process, a thread of this process); method: see the module docstring")
    asyncio.set_event_loop(LOOP)

    variants = build_variants(server.base_url, "practice", args.trips + 5)
    wire_check(server, variants)
    jobs = [(v, QUESTION) for v in variants]
    interleaved(jobs, args.warmup)
    gc.collect()
    gc.freeze()
    samples = interleaved(jobs, args.runs)
    main_table(variants, samples, args.runs)
    slope_table(server.base_url, args.trips, args.slope_runs)
    context(server.base_url)
    if not args.no_profile:
        profile(server.base_url, args.profile_runs)
    names: dict[str, int] = {}
    for thread in threading.enumerate():
        name = (thread.name.split("(")[1].rstrip(")") if "(" in thread.name
                else thread.name.rstrip("0123456789_-:"))
        names[name] = names.get(name, 0) + 1
    print(f"\n{load()} at the end; threads alive: "
          + ", ".join(f"{n}×{name}" for name, n in sorted(names.items())))
    print(f"network guard: {len(REFUSED)} non-loopback connection attempt(s) refused"
          + (f": {REFUSED[:5]}" if REFUSED else ""))
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
