"""Cost of making a model's arguments safe: `python benchmarks/bench_arguments.py [N]`.

`prepare(tool, raw)` for a 5-parameter tool with a nested Pydantic model, once the tool is built
(median over N calls; target < 50 µs for well-formed arguments):
- good arguments (the fast path: json.loads + validate);
- arguments needing coercion ("四十二", "1.2万", "是");
- broken JSON needing repair (a code fence, single quotes, Python literals, a trailing comma);
- a hopeless string (the error message is built), and the bare `tool.validate` for comparison.
A report, not a timed test.
"""
from __future__ import annotations

import json
import os
import platform
import sys
from typing import Callable, Literal, Optional

from pydantic import BaseModel, Field
from timing import median_us  # benchmarks/timing.py

from mini_framework.arguments import ArgumentsError, prepare
from mini_framework.tools import tool


class Address(BaseModel):
    """Where to ship."""

    street: str = Field(description="Street and number")
    city: str = Field(description="City")
    postcode: Optional[str] = Field(None, pattern=r"^\d{6}$", description="Six digits")


@tool
def ship(user_id: int, address: Address, items: list[str], priority: Literal["low", "high"] = "low",
         gift: bool = False) -> str:
    """Ship items to a user.

    Args:
        user_id: The customer's id
        address: Where to ship
        items: SKUs to ship
        priority: How fast
        gift: Wrap it
    """
    return f"{user_id}:{len(items)}"


GOOD = json.dumps({"user_id": 42, "address": {"street": "1 Main St", "city": "北京", "postcode": "100000"},
                   "items": ["ABC-1", "XYZ-2"], "priority": "high", "gift": False}, ensure_ascii=False)
COERCE = json.dumps({"user_id": "四十二", "address": {"street": "1 Main St", "city": "北京"},
                     "items": ["ABC-1"], "priority": "high", "gift": "是"}, ensure_ascii=False)
BROKEN = ("```json\n{'user_id': 42, 'address': {'street': '1 Main St', 'city': '北京'}, "
          "'items': ['ABC-1',], 'gift': True,}\n```")
HOPELESS = '{"user_id": 42 "address": }'


def failing(raw: str) -> Callable[[], None]:
    """A call of prepare that is expected to raise ArgumentsError."""
    def run() -> None:
        try:
            prepare(ship, raw)
        except ArgumentsError:
            pass
    return run


def main(n: int) -> None:
    parsed = json.loads(GOOD)
    rows = [("tool.validate(dict) alone", median_us(lambda: ship.validate(parsed), n)),
            ("prepare: good arguments (fast path)", median_us(lambda: prepare(ship, GOOD), n)),
            ("prepare: needs coercion", median_us(lambda: prepare(ship, COERCE), n)),
            ("prepare: needs repair (4 fixes)", median_us(lambda: prepare(ship, BROKEN), n)),
            ("prepare: hopeless -> ArgumentsError", median_us(failing(HOPELESS), n))]
    print(f"machine: {platform.processor() or platform.machine()}, nproc {os.cpu_count()}, "
          f"Python {platform.python_version()}, pydantic {__import__('pydantic').VERSION}; median of {n} calls")
    for label, us in rows:
        print(f"{label:40s} {us:8.1f} µs")
    fast = rows[1][1]
    print(f"target < 50 µs for good arguments: {'met' if fast < 50 else 'MISSED'}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
