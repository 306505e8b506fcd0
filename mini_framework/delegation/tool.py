"""`as_tool`: an Agent, or an LLM function, offered to another agent as a tool.

    researcher = Agent(client, model, [search, read_page], instructions="Research the question; cite sources.")
    planner = Agent(client, model, [as_tool(researcher, name="researcher",
                                            description="Researches one question and answers it with sources.")])
    result = planner.run("Which of these three libraries is maintained?")

An Agent becomes a tool of one argument, `task`: the sub-agent sees nothing else of the parent's
conversation, so the tool tells the model to write the whole task. Inside an Agent the call is run by
the Delegation hook (hook.py: usage, the shared budget, depth and cycles, nested events, pauses); called
on its own (`tool(task=...)`), it just runs the sub-agent and returns its bounded answer.

A function (an `@llm_function`, sync or async, or any callable) becomes a tool with its own parameters,
its answer bounded (`max_answer_chars`). An LLM function, which has `arun(...)` giving the value and its
usage, is run by the hook too: its requests and tokens are counted in the parent's, and count against the
shared budget once made (it is bounded by its own retries, not granted iterations). Any other function
runs like any tool, in the parent's executor, and reports no usage.
"""
from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass
from typing import Annotated, Any, Callable

from pydantic import Field

from ..agent import Agent
from ..concurrency import run_sync
from ..executor import ToolError, to_text
from ..state import RunResult
from ..text import brief
from ..tools import Tool

__all__ = ["Delegate", "answer_text", "as_tool", "bounded"]

TASK = ("The whole task, with every detail it needs (names, numbers, what to answer with): the sub-agent sees "
        "nothing else of this conversation.")
NO_ANSWER = "(The sub-agent finished without an answer.)"
CAPPED = "\n(The sub-agent stopped at its iteration limit: this answer may be incomplete.)"


@dataclass(frozen=True)
class Delegate:
    """What a delegating tool runs and within which limits (the tool option `delegate`, read by hook.py)."""

    agent: Any  # the sub-agent: an Agent (each run a shallow copy, with the iterations it was granted), or an LLM
    # function (anything with `await agent.arun(...)` giving `.value` and `.usage`, as @llm_function's has)
    name: str  # its tool's name: how events, pending calls and messages name it
    share: float | None  # of the parent's max_iterations, the requests all its sub-agents may make; None: no limit
    max_answer_chars: int  # what the parent model reads of the answer, at most
    max_depth: int  # levels of sub-agents below the main agent at which this one may still run


def as_tool(agent: Agent | Callable[..., Any], *, name: str | None = None, description: str | None = None,
            share: float | None = 1.0, max_answer_chars: int = 2000, max_depth: int = 3) -> Tool:
    """A tool that runs `agent` (see the module docstring and hook.py for what the parent gets).

    `share`: the sub-agents one parent run starts may make at most `share × parent.max_iterations` model
    requests together (None: each only its own max_iterations; a loop of loops then multiplies them).

    >>> from mini_framework import Agent, connect
    >>> client, model = connect()
    >>> helper = as_tool(Agent(client, model), name="helper", description="Answers a question.")
    >>> helper.name, [p.name for p in helper.parameters], helper.options["delegate"].share
    ('helper', ['task'], 1.0)
    """
    if isinstance(max_answer_chars, bool) or not isinstance(max_answer_chars, int) or max_answer_chars < 100:
        raise ValueError(f"max_answer_chars is a whole number of characters, 100 or more; not {max_answer_chars!r}")
    if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float))
                              or not 0 < share < math.inf):
        raise ValueError(f"share is a number above 0 (1.0: as many requests as the parent may make), or None; "
                         f"not {share!r}")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise ValueError(f"max_depth is a whole number of levels, 1 or more; not {max_depth!r}")
    if not isinstance(agent, Agent):
        if not callable(agent) or isinstance(agent, Tool):
            raise TypeError(f"as_tool() takes an Agent or a function (an LLM function), not {agent!r:.60}")
        made = _function_tool(agent, name, description, max_answer_chars)
        if callable(getattr(agent, "arun", None)):  # an LLM function: its usage can be counted
            made.options["delegate"] = Delegate(agent, made.name, share, max_answer_chars, max_depth)
        return made
    name = name or "sub_agent"
    if description is None:
        description = "Hands a task to a sub-agent, which answers with text."
        if agent.instructions:
            description += f" Its instructions: {brief(agent.instructions, 300)}"

    async def delegate(task: Annotated[str, Field(description=TASK, min_length=1)]) -> str:
        result = await agent.arun(task)  # only when called on its own: inside an Agent, hook.py runs it
        if result.paused:
            raise ToolError(f"{name} paused for a person's decision, and there is no one to ask here.")
        return answer_text(result, max_answer_chars)

    made = Tool(name, description, func=delegate, side_effects=any(t.acts for t in agent.tools))
    made.options["delegate"] = Delegate(agent, made.name, share, max_answer_chars, max_depth)
    return made


def answer_text(result: RunResult, limit: int) -> str:
    """What the parent model reads of a finished sub-agent's run: its final answer only, bounded."""
    text = result.text.strip() if isinstance(result.text, str) and result.text.strip() else NO_ANSWER
    return bounded(text, limit - len(CAPPED)) + CAPPED if result.capped else bounded(text, limit)


def bounded(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with a note saying so (the note fits in the limit).

    >>> bounded("abc", 10), bounded("x" * 200, 100).split("\\n")[1]
    ('abc', '[cut: the answer was 200 characters; 51 shown]')
    """
    if len(text) <= limit:
        return text
    note = f"…\n[cut: the answer was {len(text):,} characters; {{}} shown]"
    keep = max(0, limit - len(note.format(limit)))
    return text[:keep] + note.format(keep)


def _function_tool(function: Callable[..., Any], name: str | None, description: str | None, limit: int) -> Tool:
    """A function as a tool with its own parameters, its answer bounded; sync functions stay sync (the
    executor runs them in a worker thread), and one that returns an awaitable has it awaited."""
    if inspect.iscoroutinefunction(inspect.unwrap(function)) or inspect.iscoroutinefunction(type(function).__call__):
        async def answer(*args: Any, **kwargs: Any) -> str:
            return bounded(to_text(await function(*args, **kwargs)), limit)
    else:
        def answer(*args: Any, **kwargs: Any) -> str:  # type: ignore[misc]
            value = function(*args, **kwargs)
            return bounded(to_text(run_sync(value) if inspect.iscoroutine(value) else value), limit)
    functools.update_wrapper(answer, function)
    hinted = function if inspect.isroutine(function) else type(function).__call__  # a callable object's own
    answer.__annotations__ = {**getattr(hinted, "__annotations__", {}), "return": str}
    return Tool(name, description, func=answer)
