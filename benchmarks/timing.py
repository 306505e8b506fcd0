"""Shared by the benchmark scripts (run as `python benchmarks/<name>.py`): a median timer."""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def median_us(fn: Callable[[], Any], n: int) -> float:
    """Median wall time of `fn()` in microseconds over `n` runs (after a short warm-up)."""
    for _ in range(min(n, 100)):
        fn()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6
