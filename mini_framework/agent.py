"""The agent loop: ask the model, run the tools it asks for, repeat until it answers, within limits.

    agent = Agent(client, model, tools=[get_weather], max_iterations=5)
    result = agent.run("北京现在天气怎么样？")
    result.text, result.capped, result.usage.total_tokens

One turn of the loop is one model request (a small state machine over `RunState`):

    ask the model, with tools            ModelRequest, then ModelResponse (with its usage)
    no tool calls in the reply           -> finished                                  FinalAnswer
    tool calls                           -> Executor.run: concurrently, answered in call order
                                            ToolStarted / ToolFinished for each call
      the same call (name + arguments)   -> after `max_repeats` runs it is not run again: the
         asked for yet again                model is told to use the result it already has
    `max_iterations` requests made       -> one last request *without* tools, so the run ends
                                            with an answer; the result is flagged `capped`  CapReached

Events go to `on_event` callbacks as they happen, or come out of `agent.stream(...)`.
`run()` works from plain scripts and inside Jupyter's running event loop; `arun()` is the
async version. The client may be `OpenAI` (called in a worker thread) or `AsyncOpenAI`.

Concessions: one choice per response (`n=1`); assistant messages are stored as plain dicts with
`content`, `tool_calls` and, when a provider sends it, `reasoning_content` (DeepSeek's thinking
mode wants it back during a tool loop); an API error after the SDK's own retries is raised.
"""
from __future__ import annotations

import asyncio
import inspect
import json
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterable, Iterator

from .concurrency import in_thread, run_sync
from .executor import (ErrorFormatter, Executor, ResultFormatter, ToolCall, ToolResult, envelope, error_envelope,
                       to_text)
from .tools import Tool, as_tool, tool_guidance

# ----------------------------------------------------------------------------- events


@dataclass(frozen=True)
class Event:
    """Something that happened during a run; `str(event)` is a one-line description."""

    iteration: int  # which model request of the run this belongs to (1-based)


@dataclass(frozen=True)
class ModelRequest(Event):
    messages: int  # how many messages were sent
    tools: int  # how many tools were offered (0 for the final request at a cap)

    def __str__(self) -> str:
        return f"[{self.iteration}] → model: {self.messages} messages, {self.tools} tools"


@dataclass(frozen=True)
class ModelResponse(Event):
    message: dict[str, Any]  # the assistant message as stored
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    def __str__(self) -> str:
        calls = self.message.get("tool_calls") or []
        what = f"{len(calls)} tool call(s)" if calls else "an answer"
        return f"[{self.iteration}] ← model: {what} ({self.prompt_tokens} + {self.completion_tokens} tokens)"


@dataclass(frozen=True)
class ToolStarted(Event):
    call: ToolCall

    def __str__(self) -> str:
        return f"[{self.iteration}]   ▶ {self.call.name}({_short(self.call.arguments)})  {self.call.id}"


@dataclass(frozen=True)
class ToolFinished(Event):
    result: ToolResult

    def __str__(self) -> str:
        mark = "✓" if self.result.ok else f"✗ {self.result.failure}:"
        return f"[{self.iteration}]   {mark} {self.result.call.name} → {_short(self.result.content)}"


@dataclass(frozen=True)
class CapReached(Event):
    max_iterations: int

    def __str__(self) -> str:
        return f"[{self.iteration}] cap of {self.max_iterations} iterations reached: asking for an answer without tools"


@dataclass(frozen=True)
class FinalAnswer(Event):
    text: str | None

    def __str__(self) -> str:
        return f"[{self.iteration}] answer: {_short(self.text or '')}"


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ----------------------------------------------------------------------------- results


@dataclass
class Usage:
    """Tokens summed over a run's requests, as the API reported them."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, usage: Any) -> None:
        """Count one response's `usage` (some providers omit it: then only the request is counted)."""
        self.requests += 1
        self.prompt_tokens += getattr(usage, "prompt_tokens", 0) or 0
        self.completion_tokens += getattr(usage, "completion_tokens", 0) or 0

    def __str__(self) -> str:
        return (f"{self.requests} requests, {self.prompt_tokens} prompt + {self.completion_tokens} completion "
                f"= {self.total_tokens} tokens")


@dataclass
class RunState:
    """Everything a run needs to continue: plain data, so it can be inspected, saved and resumed."""

    messages: list[dict[str, Any]]  # the conversation so far, as sent to the API
    iteration: int = 0  # model requests made
    usage: Usage = field(default_factory=Usage)
    results: list[ToolResult] = field(default_factory=list)  # every tool call of the run, in order
    seen: dict[str, int] = field(default_factory=dict)  # call key -> how often it ran
    capped: bool = False  # True once max_iterations stopped the tool calls
    done: bool = False


@dataclass
class RunResult:
    """What a run produced."""

    text: str | None  # the final answer
    messages: list[dict[str, Any]]  # the whole conversation, ready to continue or to `show()`
    tool_results: list[ToolResult]  # every call with what the model read back, and timing
    usage: Usage
    iterations: int  # model requests made, the final one included
    capped: bool  # True when max_iterations ended the tool calls

    def __repr__(self) -> str:
        calls = ", ".join(r.call.name for r in self.tool_results) or "no tools"
        cap = ", capped" if self.capped else ""
        return f"RunResult({self.iterations} iterations{cap}; {calls}; {self.usage}): {_short(self.text or '', 120)}"


# ----------------------------------------------------------------------------- the agent

CAPPED_WITHOUT_ANSWER = "(The run stopped at its iteration limit before the model gave an answer.)"

EventHandler = Callable[[Event], Any]


class Agent:
    """A model, some tools, and the loop between them. See the module docstring."""

    def __init__(
        self,
        client: Any,
        model: str,
        tools: Iterable[Any] = (),
        *,
        instructions: str | None = None,
        max_iterations: int = 8,
        max_repeats: int = 2,
        tool_timeout: float | None = 60.0,
        max_concurrency: int = 8,
        retry_budget: int = 2,
        format_error: ErrorFormatter = error_envelope,
        format_result: ResultFormatter = to_text,
        on_event: EventHandler | None = None,
        **request_options: Any,
    ) -> None:
        self.client = client  # an OpenAI or AsyncOpenAI client (see connect())
        self.model = model
        self.tools: list[Tool] = [as_tool(t) for t in tools]
        self.instructions = instructions  # the system prompt; the tools' best practices are appended
        self.max_iterations = max_iterations  # model requests that may call tools, per run
        self.max_repeats = max_repeats  # runs of one identical call before it is refused
        self.tool_timeout, self.max_concurrency, self.retry_budget = tool_timeout, max_concurrency, retry_budget
        self.format_error, self.format_result = format_error, format_result
        self.handlers: list[EventHandler] = [on_event] if on_event else []
        self.request_options = request_options  # e.g. temperature=0, tool_choice="required", parallel_tool_calls=False
        self.specs = [t.to_openai_tool() for t in self.tools]  # built once

    # -- entry points ---------------------------------------------------------------------

    def run(self, prompt: str | list[dict[str, Any]], *, on_event: EventHandler | None = None) -> RunResult:
        """Run to the final answer. `prompt` is a question, or a conversation to continue."""
        return run_sync(self.arun(prompt, on_event=on_event))

    async def arun(self, prompt: str | list[dict[str, Any]], *, on_event: EventHandler | None = None) -> RunResult:
        """`run`, for async code."""
        state = self.start(prompt)
        executor = self._executor()
        handlers = self.handlers + ([on_event] if on_event else [])
        while not state.done:
            await self.step(state, executor, lambda event: [h(event) for h in handlers])
        return self.result(state)

    def stream(self, prompt: str | list[dict[str, Any]]) -> Iterator[Event]:
        """The run's events as they happen, from sync code: `for event in agent.stream(q): print(event)`."""
        events: queue.Queue[Event | BaseException | None] = queue.Queue()

        def work() -> None:
            try:
                self.run(prompt, on_event=events.put)
            except BaseException as exc:  # re-raised in the caller's thread below
                events.put(exc)
            events.put(None)

        threading.Thread(target=work, daemon=True).start()
        while (item := events.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item

    async def astream(self, prompt: str | list[dict[str, Any]]) -> AsyncIterator[Event]:
        """The run's events as they happen, from async code."""
        events: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.ensure_future(self.arun(prompt, on_event=events.put_nowait))
        task.add_done_callback(lambda _: events.put_nowait(None))
        while (event := await events.get()) is not None:
            yield event
        task.result()  # raise what the run raised, if anything

    # -- the state machine ----------------------------------------------------------------

    def start(self, prompt: str | list[dict[str, Any]]) -> RunState:
        """A fresh state: the system prompt (instructions + the tools' guidance) and the conversation."""
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
        system = "\n\n".join(p for p in (self.instructions, tool_guidance(self.tools)) if p)
        if system and not any(m.get("role") in ("system", "developer") for m in messages):
            messages.insert(0, {"role": "system", "content": system})
        return RunState(messages)

    async def step(self, state: RunState, executor: Executor, emit: EventHandler) -> None:
        """One model request, and the tool calls it asks for."""
        final = state.iteration >= self.max_iterations
        state.iteration += 1
        if final:
            state.capped = True
            emit(CapReached(state.iteration, self.max_iterations))
        message = await self.ask_model(state, emit, with_tools=bool(self.tools) and not final)
        if final and message.get("tool_calls"):  # asked for tools anyway: unanswered calls would break the history
            message = {"role": "assistant", "content": message.get("content") or CAPPED_WITHOUT_ANSWER}
        state.messages.append(message)
        calls = [ToolCall.of(c) for c in message.get("tool_calls") or []]
        if not calls or final:
            state.done = True
            emit(FinalAnswer(state.iteration, message.get("content")))
            return
        for call in calls:
            emit(ToolStarted(state.iteration, call))
        results = await self.run_tools(state, executor, calls)
        for result in results:
            emit(ToolFinished(state.iteration, result))
        state.results += results
        state.messages += [r.message for r in results]

    async def ask_model(self, state: RunState, emit: EventHandler, with_tools: bool) -> dict[str, Any]:
        """Send the conversation; return the reply as a plain assistant message, usage counted."""
        params: dict[str, Any] = {"model": self.model, "messages": state.messages}
        if with_tools:
            params.update(tools=self.specs, **self.request_options)
        else:  # tool_choice / parallel_tool_calls are only allowed together with tools
            params.update({k: v for k, v in self.request_options.items()
                           if k not in ("tool_choice", "parallel_tool_calls")})
        emit(ModelRequest(state.iteration, len(state.messages), len(self.specs) if with_tools else 0))
        started = time.perf_counter()
        create = self.client.chat.completions.create
        if inspect.iscoroutinefunction(inspect.unwrap(create)):  # AsyncOpenAI (its methods are wrapped)
            response = await create(**params)
        else:
            response = await in_thread(lambda: create(**params))
        state.usage.add(response.usage)
        message = assistant_message(response.choices[0].message)
        emit(ModelResponse(state.iteration, message, getattr(response.usage, "prompt_tokens", 0) or 0,
                           getattr(response.usage, "completion_tokens", 0) or 0, time.perf_counter() - started))
        return message

    async def run_tools(self, state: RunState, executor: Executor, calls: list[ToolCall]) -> list[ToolResult]:
        """Run the calls of one reply; an identical call seen too often is answered without running it."""
        fresh, refused = [], {}
        for i, call in enumerate(calls):
            key = f"{call.name} {canonical(call.arguments)}"
            state.seen[key] = state.seen.get(key, 0) + 1
            if state.seen[key] > self.max_repeats:
                refused[i] = repeated_call(call, state.seen[key] - 1, state.results)
            else:
                fresh.append(call)
        ran = iter(await executor.run(fresh))
        return [refused[i] if i in refused else next(ran) for i in range(len(calls))]

    def result(self, state: RunState) -> RunResult:
        """The RunResult of a finished state."""
        last = state.messages[-1] if state.messages else {}
        return RunResult(last.get("content"), state.messages, state.results, state.usage, state.iteration,
                         state.capped)

    def _executor(self) -> Executor:
        """A fresh executor per run (retry budgets are per run)."""
        return Executor(self.tools, timeout=self.tool_timeout, max_concurrency=self.max_concurrency,
                        retry_budget=self.retry_budget, format_error=self.format_error,
                        format_result=self.format_result)


def assistant_message(message: Any) -> dict[str, Any]:
    """An SDK assistant message as the plain dict the next request should carry.

    >>> assistant_message({"role": "assistant", "content": "hi", "refusal": None})
    {'role': 'assistant', 'content': 'hi'}
    """
    data = message.model_dump(exclude_none=True) if hasattr(message, "model_dump") else dict(message)
    out: dict[str, Any] = {"role": "assistant", "content": data.get("content")}
    if data.get("tool_calls"):
        out["tool_calls"] = [{"id": c.get("id"), "type": "function",
                              "function": {"name": (c.get("function") or {}).get("name"),
                                           "arguments": (c.get("function") or {}).get("arguments")}}
                             for c in data["tool_calls"]]
    if data.get("reasoning_content"):
        out["reasoning_content"] = data["reasoning_content"]
    return out


def canonical(arguments: Any) -> str:
    """Arguments in a form where equal calls compare equal ('{"b":1, "a":2}' == '{"a": 2, "b": 1}').

    >>> canonical('{"b": 1, "a": 2}') == canonical({"a": 2, "b": 1})
    True
    """
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return arguments.strip()
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


def repeated_call(call: ToolCall, times: int, earlier: list[ToolResult]) -> ToolResult:
    """The answer to a call the model already made `times` times: not run again; use what you have."""
    key = canonical(call.arguments)
    previous = next((r.content for r in reversed(earlier)
                     if r.call.name == call.name and canonical(r.call.arguments) == key), None)
    message = (f"You already called {call.name} with these same arguments {times} times. It was not run again. "
               "Do not repeat this call: use the result you already have and answer the user.")
    return ToolResult(call, envelope("error", error=message, previous_result=previous), ok=False, failure="repeated")
