"""Shared by the benchmark scripts (run as `python benchmarks/<name>.py`): a median timer, the machine's load."""
from __future__ import annotations

import os
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


def load() -> str:
    """The 1- and 5-minute load average, as text: other processes compete for the CPUs while a benchmark runs."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "load average unknown"
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"
