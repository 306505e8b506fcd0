"""This feature's hooks: the result cache and the spill around each call, history trimming before each request.

    Agent(client, model, tools, result_cache=ResultCache(), spill_dir="logs/", max_history_tokens=8000)
    # the same as
    Agent(client, model, tools, hooks=[CacheHook(ResultCache()), SpillHook("logs/"), TrimHook(8000)])

A tool with `cache=` or `too_long_to_file=` gets the hook it needs even when none is given.
"""
from __future__ import annotations

import os
from functools import partial
from typing import Any

from ..concurrency import in_thread
from ..executor import ToolResult
from ..hooks import Hook, Plan, Proceed, Request, Run
from .cache import ResultCache, cache_key
from .spill import DEFAULT_THRESHOLD, spill
from .trimming import trim_history

__all__ = ["CacheHook", "SpillHook", "TrimHook", "default_hooks", "hooks_for"]


class CacheHook(Hook):
    """`@tool(cache=seconds)`: the same call (tool + validated arguments) answered from the cache, unrun."""

    options = ("cache",)

    def __init__(self, cache: ResultCache | None = None) -> None:
        self.cache = cache if cache is not None else ResultCache()

    async def around_call(self, plan: Plan, proceed: Proceed) -> ToolResult:
        ttl = plan.tool.options.get("cache") if plan.tool is not None else None
        if not ttl or plan.arguments is None:
            return await proceed()
        key = cache_key(plan.tool.name if plan.tool else "", plan.arguments)
        hit = self.cache.get(key)
        if hit is not None:
            return ToolResult(plan.call, hit.content, ok=True, value=hit.value, repairs=plan.repairs, cached=True)
        result = await proceed()
        if result.ok and not result.media and not result.attachments:
            self.cache.put(key, ttl, result.content, result.value)
        return result


class SpillHook(Hook):
    """`@tool(too_long_to_file=True | tokens)`: a too-long text result saved to a file, the model shown its
    head and tail and told where the rest is (spill.py). The work runs in a thread: the loop never waits."""

    options = ("too_long_to_file", "reads_files")

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = folder  # None: the temporary folder
        self.can_read_files = False  # whether the agent has a tool that reads files (the reminder says so)

    def attach(self, agent: Any) -> None:
        self.can_read_files = any(t.options.get("reads_files") for t in agent.tools)

    async def around_call(self, plan: Plan, proceed: Proceed) -> ToolResult:
        result = await proceed()
        limit = plan.tool.options.get("too_long_to_file") if plan.tool is not None else None
        if not limit or not result.ok or not isinstance(result.value, str) or result.media or result.attachments:
            return result
        threshold = DEFAULT_THRESHOLD if limit is True else int(limit)
        cut = await in_thread(partial(spill, result.content, result.call.name, threshold=threshold,
                                      folder=self.folder, can_read_files=self.can_read_files))
        if cut is not None:
            result.content = cut.content
        return result


class TrimHook(Hook):
    """`Agent(max_history_tokens=N)`: each request carries the history trimmed to N tokens (whole tool-call
    units; the system prompt and the latest turn always kept), while the run keeps the whole conversation."""

    def __init__(self, budget: int) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ValueError(f"max_history_tokens must be a whole number of tokens, not {budget!r}")
        self.budget = budget

    async def before_request(self, run: Run, request: Request) -> None:
        request.messages = trim_history(request.messages, self.budget, tools=request.params.get("tools")).messages


def hooks_for(agent: Any, *, result_cache: ResultCache | None = None, spill_dir: str | os.PathLike[str] | None = None,
              max_history_tokens: int | None = None) -> list[Hook]:
    """The hooks the Agent's shorthands ask for."""
    hooks: list[Hook] = []
    if result_cache is not None:
        hooks.append(CacheHook(result_cache))
    if spill_dir is not None:
        hooks.append(SpillHook(spill_dir))
    if max_history_tokens is not None:
        hooks.append(TrimHook(max_history_tokens))
    return hooks


def default_hooks(option: str) -> list[Hook]:
    """The hook for a tool option no hook was given for."""
    return [CacheHook()] if option == "cache" else [SpillHook()]
