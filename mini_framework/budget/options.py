"""The tool options this feature reads: `@tool(cache=seconds, too_long_to_file=True | tokens, reads_files=True)`.

    @tool(cache=600)                          # the same forecast reused for ten minutes (cache.py)
    def get_forecast(city: str) -> str: ...

    @tool(too_long_to_file=True)              # over 20,000 tokens: saved to a file, head and tail shown (spill.py)
    def read_log(service: str) -> str: ...
"""
from __future__ import annotations

import math
from typing import Any

from ..schema import ToolDefinitionError
from ..tools import Option, Tool

__all__ = ["OPTIONS"]


def _cache(ttl: Any, tool: Tool) -> Any:
    """Refuse a cache on a tool whose calls do something (a hit would skip an action asked for again)."""
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not 0 < ttl < math.inf:
        raise ToolDefinitionError(f"{tool.name}: cache is the seconds a result may be reused, above 0; not {ttl!r}")
    if tool.acts or tool.side_effects or tool.options.get("requires_approval", False) is not False:
        raise ToolDefinitionError(f"{tool.name} does something (it has side effects or needs approval): its results "
                                  "must not be cached, or a repeated request would silently not happen")
    return ttl


def _spill(limit: Any, tool: Tool) -> Any:
    if not isinstance(limit, bool) and (not isinstance(limit, int) or limit < 100):
        raise ToolDefinitionError(f"{tool.name}: too_long_to_file is True (20,000 tokens) or a number of tokens "
                                  f"of at least 100; not {limit!r}")
    return limit


def _flag(value: Any, tool: Tool) -> Any:
    if not isinstance(value, bool):
        raise ToolDefinitionError(f"{tool.name}: reads_files is True or False, not {value!r:.40}")
    return value


OPTIONS = {"cache": Option(default=None, check=_cache),
           "too_long_to_file": Option(default=False, check=_spill),
           "reads_files": Option(default=False, check=_flag)}
