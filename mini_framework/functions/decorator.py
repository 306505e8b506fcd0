"""`@llm_function`: a Python function whose body is a model. The docstring is the prompt, the parameters fill
it, and the return annotation is what comes back, validated.

    @llm_function(client, model)
    def to_number(text: str) -> int:
        '''Write the number in {text} as digits.'''

    to_number("一百二十三")                     # 123, an int (or LLMFunctionError, never a wrong type)

In the spirit of SimpleLLMFunc's `llm_function` (https://github.com/NiJingzhe/SimpleLLMFunc), written
afresh on this framework's Agent. What one call does:

    1. the prompt: the docstring with `{param}` placeholders filled, other arguments added as
       `name: value` lines (prompt.py says why), sent as the user message
    2. the return annotation as a JSON schema (shape.py), sent as `response_format` json_schema; with
       `tools=[...]` the call is an Agent run (tools called as usual), and the final answer is
       the structured one: `response_format` goes alongside the tools
    3. the reply validated with the same Pydantic type; an invalid one is answered with what was
       wrong and asked again, at most `max_retries` more times; then LLMFunctionError, carrying
       every raw reply
    4. a provider that refuses `response_format` (a 400 or 422 naming it: DeepSeek answers
       json_schema with "This response_format type is unavailable now" and takes only
       json_object; llama-cpp-python's server answers it with a 500 from its request validation)
       gets the next way down, remembered for that client and model:
       json_schema -> json_object (the schema in the system prompt) -> prompt (the schema in the
       system prompt, no response_format; validation does the rest); after llama-cpp-python's
       refusal first json_object_schema, its JSON mode with the schema beside it (`{"type":
       "json_object", "schema": ...}`), which constrains decoding so even a tiny model writes JSON
       that fits (whether its values are right is another matter)

A `str` return (or none) is plain text: no response_format, no schema. An `async def` gives an async
function. `fn.run(...)` / `await fn.arun(...)` return an `Answer`: the value with every RunResult
(usage, the messages sent), for a caller that counts tokens or shows what happened.

The filled docstring is the user message (the arguments are the request); `instructions=` goes in the
system prompt, with the schema when the mode needs it there.

Concessions: the function's body is never run (write `...`); a tool that needs approval pauses the run,
and an LLM function cannot wait for a person, so that is an LLMFunctionError (give it `approver=`);
the choice remembered after a refusal lasts while the client object lives, in this process; a return
type is resolved from the function's module, so one defined inside another function under
`from __future__ import annotations` is a TypeError (define it at module level).
"""
from __future__ import annotations

import functools
import inspect
import logging
import typing
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeVar

from ..agent import Agent
from ..concurrency import run_sync
from ..state import RunResult, Usage
from ..text import visible
from .prompt import render
from .shape import MODES, Invalid, shape_of

__all__ = ["Answer", "LLMFunctionError", "llm_function", "next_mode", "refused_format"]

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("mini_framework")
_CHOSEN: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()  # client -> model -> mode
RETRY = "Your answer could not be used: {problem}. Answer again, with only the JSON the schema asks for."
RETRY_TEXT = "Your answer was empty. Answer the request in words."


class LLMFunctionError(RuntimeError):
    """No valid answer within the retry budget (or a run that paused); `replies` holds every raw reply."""

    def __init__(self, message: str, replies: list[str | None], problems: list[str], results: list[RunResult]):
        super().__init__(message)
        self.replies = replies  # what the model answered, try by try
        self.problems = problems  # what was wrong with each
        self.results = results  # the runs, with their messages and usage


@dataclass
class Answer:
    """What one call of an LLM function produced: the value, and how."""

    value: Any
    results: list[RunResult]  # one run per try (the last one gave the value)
    replies: list[str | None]  # the raw replies, try by try
    mode: str  # how the schema was sent: json_schema, json_object, prompt, or text
    usage: Usage = field(init=False)

    def __post_init__(self) -> None:
        self.usage = Usage()
        for result in self.results:
            for r in result.usage.per_request:
                self.usage.add(r.prompt_tokens, r.completion_tokens, r.cached_tokens)


def llm_function(client: Any, model: str, *, tools: Iterable[Any] = (), max_retries: int = 2,
                 structured: str = "auto", **request_options: Any) -> Callable[[F], F]:
    """Make a function's docstring its prompt and its return annotation its answer (see the module docstring).

    `structured`: "auto" (json_schema, falling back when refused), or one of MODES ("json_schema",
    "json_object_schema", "json_object", "prompt") to use that way only. `request_options` go to the Agent:
    request parameters (`temperature=0`) and its settings (`max_iterations=4`, `approver=...`, `instructions=`).

    >>> @llm_function(object(), "practice")
    ... def shout(text: str) -> str:
    ...     '''Repeat {text} in capitals.'''
    >>> shout.prompt("hi")
    'Repeat hi in capitals.'
    """
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries must be a whole number, 0 or more, not {max_retries!r}")
    if structured not in ("auto", *MODES):
        raise ValueError(f"structured must be 'auto' or one of {', '.join(MODES)}; not {structured!r}")
    if "response_format" in request_options:
        raise TypeError("llm_function sets response_format from the return annotation; choose how with structured=")
    tools = list(tools)

    def decorate(fn: F) -> F:
        made = LLMFunction(fn, client, model, tools, max_retries, structured, request_options)
        return made.wrapper()  # type: ignore[return-value]

    return decorate


class LLMFunction:
    """The machinery behind one decorated function (the decorator returns `wrapper()`)."""

    def __init__(self, fn: Callable[..., Any], client: Any, model: str, tools: list[Any], max_retries: int,
                 structured: str, options: dict[str, Any]) -> None:
        template = inspect.getdoc(fn)
        if not template:
            raise TypeError(f"{fn.__name__} has no docstring: an LLM function's docstring is its prompt")
        try:
            annotation = typing.get_type_hints(fn, include_extras=True).get("return", str)
        except Exception as exc:  # a forward reference that does not resolve
            raise TypeError(f"the return annotation of {fn.__name__} cannot be read: {exc}") from None
        self.fn, self.template, self.signature = fn, template, inspect.signature(fn)
        self.client, self.model, self.tools, self.max_retries = client, model, tools, max_retries
        self.structured, self.options = structured, options
        self.shape = shape_of(annotation, fn.__name__)
        self._agents: dict[str, Agent] = {}

    def prompt(self, *args: Any, **kwargs: Any) -> str:
        """The user message a call with these arguments sends (a TypeError for arguments the function does not take)."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return render(self.template, dict(bound.arguments))

    def run(self, *args: Any, **kwargs: Any) -> Answer:
        """One call, from sync code: the Answer (value, runs, replies)."""
        return run_sync(self.arun(*args, **kwargs))

    async def arun(self, *args: Any, **kwargs: Any) -> Answer:
        """One call, from async code."""
        prompt = self.prompt(*args, **kwargs)
        mode = self.mode()
        while True:
            try:
                return await self._tries(prompt, mode)
            except Exception as exc:
                after = next_mode(mode, exc) if self.structured == "auto" else None
                if after is None:
                    raise
                log.warning("%s: %s refused response_format %s (%s); using %s from now on", self.fn.__name__,
                            self.model, mode, str(exc)[:200], after)
                _remember(self.client, self.model, after)
                mode = after

    def mode(self) -> str:
        """How to send the schema: plain text; the way chosen; the one remembered for the client; json_schema."""
        if self.shape.text:
            return "text"
        if self.structured != "auto":
            return self.structured
        return _remembered(self.client, self.model) or MODES[0]

    async def _tries(self, prompt: str, mode: str) -> Answer:
        """Ask, validate, and ask again with what was wrong, within the retry budget."""
        agent = self._agent(mode)
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        replies: list[str | None] = []
        problems: list[str] = []
        results: list[RunResult] = []
        name = self.fn.__name__
        for _ in range(self.max_retries + 1):
            result = await agent.arun(messages)
            results.append(result)
            if result.paused:
                waiting = ", ".join(p.summary if hasattr(p, "summary") else str(p) for p in result.pending)
                raise LLMFunctionError(f"{name}: the run paused for a person's decision on {waiting}; an LLM "
                                       "function cannot wait for one: give it approver=..., or tools that need no "
                                       "approval", replies, problems, results)
            replies.append(result.text)
            try:
                return Answer(self.shape.read(result.text), results, replies, mode)
            except Invalid as problem:
                problems.append(str(problem))
            retry = RETRY_TEXT if self.shape.text else RETRY.format(problem=problems[-1])
            messages = [*result.messages, {"role": "user", "content": retry}]
        raise LLMFunctionError(f"{name}: no valid answer in {len(replies)} tries; the last one: "
                               f"{visible(problems[-1])} (every reply is in .replies)", replies, problems, results)

    def _agent(self, mode: str) -> Agent:
        """The Agent for a mode (made once): the tools, the options, and the mode's response_format."""
        if mode not in self._agents:
            options = dict(self.options)
            fmt = self.shape.response_format(mode)
            if fmt is not None:
                options["response_format"] = fmt
            parts = [options.pop("instructions", None), self.shape.instructions(mode)]
            system = "\n\n".join(p for p in parts if p) or None
            self._agents[mode] = Agent(self.client, self.model, self.tools, instructions=system, **options)
        return self._agents[mode]

    def wrapper(self) -> Callable[..., Any]:
        """The function to use in place of the decorated one: its name, signature and docstring, sync or async."""
        if inspect.iscoroutinefunction(self.fn):
            async def acall(*args: Any, **kwargs: Any) -> Any:
                return (await self.arun(*args, **kwargs)).value
            call: Callable[..., Any] = functools.wraps(self.fn)(acall)
        else:
            def scall(*args: Any, **kwargs: Any) -> Any:
                return self.run(*args, **kwargs).value
            call = functools.wraps(self.fn)(scall)
        for name in ("run", "arun", "prompt"):
            setattr(call, name, getattr(self, name))
        call.llm_function = self  # type: ignore[attr-defined]
        return call


def next_mode(mode: str, exc: BaseException) -> str | None:
    """The way to try after `mode` was refused with `exc`, or None (not a refusal, or nothing left to try).

    >>> class ServerError(Exception):
    ...     status_code = 500
    >>> llama = ServerError("1 validation error: ('body', 'response_format', 'type'), 'msg': Input should be "
    ...                     "'text' or 'json_object'")
    >>> next_mode("json_schema", llama), next_mode("json_object_schema", llama), next_mode("prompt", llama)
    ('json_object_schema', 'json_object', None)
    """
    if not refused_format(exc) or mode not in MODES or mode == MODES[-1]:
        return None
    if mode == "json_schema" and "should be 'text' or 'json_object'" in str(exc).lower():
        return "json_object_schema"  # llama-cpp-python: its JSON mode takes a schema and constrains decoding to it
    return "json_object" if mode in ("json_schema", "json_object_schema") else "prompt"


def refused_format(exc: BaseException) -> bool:
    """Whether an API error is a provider refusing `response_format`: a 400 or 422 naming it (DeepSeek, OpenAI's
    own wording), or the 500 llama-cpp-python's server answers ("Input should be 'text' or 'json_object'", its
    request validation for `response_format.type`).

    >>> class BadRequest(Exception):
    ...     status_code = 400
    >>> refused_format(BadRequest("Error code: 400 - This response_format type is unavailable now"))
    True
    """
    text = str(exc).lower()
    status = getattr(exc, "status_code", None)
    if status == 500:
        return "response_format" in text and "validation error" in text
    return status in (400, 422) and any(
        word in text for word in ("response_format", "json_schema", "json_object", "structured output"))


def _remembered(client: Any, model: str) -> str | None:
    try:
        return _CHOSEN.get(client, {}).get(model)
    except TypeError:  # a client that cannot be weakly referenced: nothing is remembered
        return None


def _remember(client: Any, model: str, mode: str) -> None:
    try:
        _CHOSEN.setdefault(client, {})[model] = mode
    except TypeError:
        pass
