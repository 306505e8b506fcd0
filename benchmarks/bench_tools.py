"""Cost of the tools layer: `python benchmarks/bench_tools.py [N]`.

Measures, for a 5-parameter function with a nested Pydantic model:
- `@tool` decoration (signature, docstring, `create_model`, JSON schema; median over N decorations);
- the strict schema, built once per tool on first use;
- per call, once built: `validate` alone, and `validate` + `bind` (median; target < 50 µs);
- `to_openai_tool()` (a fresh copy per request).
A report, not a timed test.
"""
from __future__ import annotations

import os
import platform
import sys
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field
from timing import median_us  # benchmarks/timing.py

from mini_framework.strict import strict_schema
from mini_framework.tools import tool


class Address(BaseModel):
    """Where to ship."""

    street: str = Field(description="Street and number")
    city: str = Field(description="City")
    postcode: Optional[str] = Field(None, pattern=r"^\d{6}$", description="Six digits")


def ship(user_id: int, address: Address, items: list[str], priority: Literal["low", "high"] = "low",
         note: str | None = None) -> str:
    """Ship items to a user.

    Args:
        user_id: The customer's id
        address: Where to ship
        items: SKUs to ship
        priority: How fast
        note: For the courier
    """
    return f"{user_id}:{len(items)}"


ARGUMENTS: dict[str, Any] = {"user_id": "42", "address": {"street": "1 Main St", "city": "Beijing", "postcode": None},
                             "items": ["ABC-1", "XYZ-2"], "priority": "high", "note": None}


def main(n: int) -> None:
    built = tool(ship)
    decorate = median_us(lambda: tool(ship), max(n // 20, 50))
    strict = median_us(lambda: strict_schema(built.json_schema), max(n // 10, 100))
    validate = median_us(lambda: built.validate(ARGUMENTS), n)
    bind = median_us(lambda: built.bind(built.validate(ARGUMENTS)), n)
    wire = median_us(built.to_openai_tool, n)
    print(f"machine: {platform.processor() or platform.machine()}, nproc {os.cpu_count()}, "
          f"Python {platform.python_version()}, pydantic {__import__('pydantic').VERSION}")
    print(f"@tool decoration (5 params, nested model)   {decorate / 1000:8.2f} ms   median of {max(n // 20, 50)}")
    print(f"strict_schema (once per tool)                {strict:8.1f} µs")
    print(f"validate                                     {validate:8.1f} µs")
    print(f"validate + bind                              {bind:8.1f} µs   target < 50 µs: "
          f"{'met' if bind < 50 else 'MISSED'}")
    print(f"to_openai_tool (fresh copy)                  {wire:8.1f} µs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
