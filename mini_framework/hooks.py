"""Hooks: the few points where a feature plugs into the loop, so the loop never learns about features.

    class Closed(Hook):                                  # a hook of your own: no calls after 18:00
        async def before_calls(self, run, plans):
            if time.localtime().tm_hour >= 18:
                for plan in plans:
                    plan.answer("The office is closed; tell the user to try tomorrow.")

    agent = Agent(client, model, tools, hooks=[Closed()])

The points, in the order a run meets them (every method is optional; the base class does nothing):

    attach(agent)                 once, when the Agent is built: check its tools, offer more (agent.offer)
    before_request(run, request)  before each model request: change `request.messages` / `request.params`
    send(run, request, send)      around the request itself: `return await send(request)`, or stream it
    before_calls(run, plans)      after a reply, before any of its calls runs: answer a call without running
                                  it (`plan.answer`), or hold it for a person (`plan.hold`): the run pauses
    around_call(plan, proceed)    around each call that runs: `return await proceed()`, or answer from
                                  elsewhere (a cache); change the result on its way back (spill, images)
    after_calls(run, results)     once a reply's calls are answered: add messages (images), keep records
    resumed(run)                  a paused run is about to continue (decisions are applied here)

Hooks run in the order given; `around_call` hooks nest, the first outermost, and `after_calls` unwinds
them, innermost first. A hook with `last = True` (the approval gate) runs after all others in
`before_calls`, innermost in `around_call` and first in `after_calls`: no hook order can skip it.
Arguments are validated once per call, before `before_calls`: `plan.arguments` is what runs, and
nothing validates them again.

Features are folders beside the core; the Agent's keyword options (`stream=True`, `approver=...`) are
shorthands that load a feature's hooks by its folder name (`feature("streaming")`). A folder that is
not there is a clear error naming it, never a silent no-op.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Sequence

from pydantic import BaseModel

if TYPE_CHECKING:  # names for the type checker only: the hooks module is imported by all of these
    from .agent import Agent
    from .executor import ToolResult
    from .replies import ToolCall
    from .state import RunState
    from .tools import Tool

__all__ = ["FeatureMissing", "Hook", "Plan", "Request", "Run", "feature", "overrides"]


class FeatureMissing(ImportError):
    """A feature folder this copy of the framework does not have; the message names the folder to copy."""


def feature(folder: str) -> ModuleType:
    """The feature folder `mini_framework/<folder>/`, imported by name: the one place the core names a feature.

    >>> try:
    ...     feature("no_such_feature")
    ... except FeatureMissing as missing:
    ...     print(str(missing)[:72])
    this needs the no_such_feature feature (mini_framework/no_such_feature/)
    """
    name = f"{__package__}.{folder}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name not in (name, f"{__package__}.{folder.split('.')[0]}"):  # the folder is there, and
            # something it imports is not: say that
            raise
        top = folder.split(".")[0]
        raise FeatureMissing(f"this needs the {top} feature ({__package__}/{top}/), which this copy of the "
                             "framework does not have: copy that folder too") from None


@dataclass
class Request:
    """One model request about to be sent: change what you need in `before_request`."""

    messages: list[dict[str, Any]]  # what is sent (the run keeps its whole conversation either way)
    params: dict[str, Any]  # every other parameter of chat.completions.create, tools included
    iteration: int


@dataclass
class Plan:
    """One call of a reply, on its way to running: checked once, then answered, held or run."""

    call: ToolCall
    tool: Tool | None  # None: the model named a tool that does not exist
    arguments: BaseModel | None = None  # the validated arguments: exactly what runs
    repairs: list[str] = field(default_factory=list)  # what was fixed in the arguments on the way
    problem: str | None = None  # why the arguments could not be used (the model reads it), when they can't
    answered: ToolResult | None = None  # set by `answer`: the call does not run
    held: Any = None  # set by `hold`: the run pauses, and this is what `result.pending` lists
    note: str = ""  # put before the result the model reads (e.g. "A person changed the arguments ...")
    data: dict[str, Any] = field(default_factory=dict)  # a hook's notes on this call, by the hook's own key
    run: Run | None = field(default=None, repr=False)  # the run it belongs to (None: an Executor on its own)
    reply: dict[str, Any] = field(default_factory=dict, repr=False)  # shared by the calls of one reply (counters)
    format: Callable[[Any], tuple[str, list[dict[str, Any]]]] | None = field(default=None, repr=False)  # a value
    # as (tool message text, other content parts), by the executor's format_result (for hooks that change values)

    @property
    def values(self) -> dict[str, Any] | None:
        """The validated arguments as JSON-ready values (what a person approves), or None."""
        if self.arguments is None:
            return None
        try:
            return self.arguments.model_dump(mode="json", by_alias=True)
        except (ValueError, TypeError, RecursionError):  # nested too deeply to write down: it cannot be approved
            return None

    def answer(self, content: str, failure: str = "not_run") -> None:
        """Answer the call with `content` instead of running it (`failure` says why, for your code)."""
        from .executor import ToolResult  # here: the executor builds on this module

        self.answered = ToolResult(self.call, content, ok=False, failure=failure)  # type: ignore[arg-type]

    def hold(self, item: Any) -> None:
        """Keep the call from running until someone decides: the run pauses, `result.pending` lists `item`
        (a list: each of its items, e.g. the calls a sub-agent paused on)."""
        self.held = item


@dataclass
class Run:
    """What a hook sees of a run: its state, the agent, and a way to say what happened (events)."""

    state: RunState
    agent: Agent | None  # None: an Executor running calls on its own
    emit: Callable[[Any], None]

    def feature_state(self, key: str, make: Callable[[], Any]) -> Any:
        """This run's state for one feature, made on first use (kept across pause, save and resume)."""
        store = self.state.features
        if key not in store:
            store[key] = make()
        return store[key]


Send = Callable[[Request], Awaitable[Any]]
Proceed = Callable[[], Awaitable["ToolResult"]]


class Hook:
    """A feature's way into the loop (see the module docstring). Override only the points you need."""

    last: bool = False  # True: after every other hook in before_calls, innermost in around_call
    options: Sequence[str] = ()  # the tool options this hook handles (a tool with an option no hook handles is refused)

    def attach(self, agent: Agent) -> None:
        """Once, when the Agent is built: check its tools (raise to refuse), `agent.offer(tool)` to add one."""

    async def before_request(self, run: Run, request: Request) -> None:
        """Before each model request."""

    async def send(self, run: Run, request: Request, send: Send) -> Any:
        """Around each model request: the default sends it as it is."""
        return await send(request)

    async def before_calls(self, run: Run, plans: list[Plan]) -> None:
        """After a reply with calls, before any runs: `plan.answer(...)` or `plan.hold(...)`."""

    async def around_call(self, plan: Plan, proceed: Proceed) -> ToolResult:
        """Around one call: the default runs it."""
        return await proceed()

    async def after_calls(self, run: Run, results: list[ToolResult]) -> None:
        """Once every call of a reply is answered (results in call order)."""

    def resumed(self, run: Run) -> None:
        """A paused run is about to continue: apply what was decided while it waited."""

    def expose(self) -> dict[str, Any]:
        """Names this hook offers as attributes of the agent (the media hook's `agent.vision`)."""
        return {}


def overrides(hook: Hook, point: str) -> bool:
    """Whether a hook does something at `point` (so the loop can skip the ones that don't).

    >>> class Quiet(Hook):
    ...     async def after_calls(self, run, results): ...
    >>> overrides(Quiet(), "after_calls"), overrides(Quiet(), "before_request")
    (True, False)
    """
    return getattr(type(hook), point) is not getattr(Hook, point)
