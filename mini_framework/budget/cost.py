"""What a run cost in money: token counts from `result.usage` times a price table you keep.

    price = Price(input=0.15, cached_input=0.075, output=0.60, as_of="2026-11-30",
                  source="https://openai.com/api/pricing/")        # US$ per million tokens
    result.usage.cost(price)        # -> 0.00042
    result.usage.per_request        # [RequestUsage(prompt_tokens=812, completion_tokens=19, cached_tokens=0), ...]

Prompt tokens the provider served from its cache (`cached_tokens`) are billed at `cached_input`,
the rest of the prompt at `input`, completions at `output`. Nothing is looked up over the network:
prices change, so a table says when it was read (`as_of`) and where (`source`).

Concessions: reasoning tokens, audio, images, batch discounts and per-request minimums are not
priced separately; a provider that reports no usage costs 0 here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..state import Usage

__all__ = ["Price"]


@dataclass(frozen=True)
class Price:
    """A model's prices in US$ per million tokens, and when and where they were read.

    >>> from mini_framework.state import Usage
    >>> usage = Usage(); usage.add(1_000_000, 100_000, cached_tokens=400_000)
    >>> round(Price(input=1.0, cached_input=0.5, output=4.0, as_of="2026-11-30").cost(usage), 4)
    1.2
    """

    input: float  # per million prompt tokens not read from the cache
    output: float  # per million completion tokens
    cached_input: float | None = None  # per million cached prompt tokens (None: billed as input)
    as_of: str = ""  # the date the prices were read, e.g. "2026-11-30"
    source: str = ""  # where they were read (a pricing page's URL)

    def __post_init__(self) -> None:
        for name in ("input", "output", "cached_input"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0
                                      or value != value):
                raise ValueError(f"Price.{name} must be a number of US$ per million tokens, 0 or more; not {value!r}")

    def cost(self, usage: Usage) -> float:
        """US$ for a run's (or one request's) tokens."""
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((usage.prompt_tokens - cached) * self.input + cached * cached_price
                + usage.completion_tokens * self.output) / 1_000_000
