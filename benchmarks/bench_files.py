"""FileToolset's costs: `python benchmarks/bench_files.py [RUNS]` (default 5; medians reported).

1. The worker's start: `substitute` of one short line, i.e. a fresh `python -I -S -c WORKER` process, its
   JSON in and out, and nothing else: the fixed price of every grep and sed call.
2. grep over a 20 MB text file (200,000 lines of ~100 characters, one match in 1,000): a literal pattern,
   a case-insensitive alternation, and a pattern that matches no line. The file is read and checked by the
   parent, decoded, sent through the pipe, searched by the worker.
3. The same searches with plain in-process `re` over the same lines, for comparison (what the worker costs).
4. `(a+)+$` over one line of 5,000 a's and a '!': the call ends at grep_timeout (here 1 s) with a message.

Prints machine info and the load. A report, not a timed test.
"""
from __future__ import annotations

import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.timing import load  # noqa: E402
from mini_framework import FileToolset  # noqa: E402
from mini_framework.builtin.files import FileRefused, search  # noqa: E402


def median_s(fn, runs: int) -> float:
    """Median wall time of fn() in seconds over `runs` runs, after one warm-up."""
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"Python {platform.python_version()} on {platform.system()}, {os.cpu_count()} CPUs; {load()}; {runs} runs")
    start = median_s(lambda: search.substitute("a", "b", ["a"], 10), runs)
    print(f"worker start (substitute of one line): {start * 1000:.1f} ms")
    with tempfile.TemporaryDirectory() as folder:
        lines = [f"{n:06d} INFO request served in {n % 997} ms by worker {n % 13} " + "x" * 50 for n in range(200_000)]
        for n in range(0, 200_000, 1000):
            lines[n] = lines[n].replace("INFO", "ERROR")
        text = "\n".join(lines) + "\n"
        Path(folder, "big.log").write_text(text)
        size = os.path.getsize(Path(folder, "big.log"))
        files = FileToolset(folder, max_bytes=25_000_000, grep_timeout=30, max_matches=200)
        for pattern in ("ERROR", "(?i)error|fatal", "NEVER_THERE"):
            took = median_s(lambda p=pattern: files.grep(p, "*.log"), runs)
            rx = re.compile(pattern)
            plain = median_s(lambda r=rx: [line for line in text.split("\n") if r.search(line)], runs)
            print(f"grep {pattern!r:20} over {size / 1e6:.1f} MB: {took * 1000:6.0f} ms "
                  f"(in-process re alone: {plain * 1000:4.0f} ms)")
        Path(folder, "aaa.txt").write_text("a" * 5000 + "!\n")
        slow = FileToolset(folder, grep_timeout=1.0)
        begun = time.perf_counter()
        try:
            slow.grep("(a+)+$", "aaa.txt")
        except FileRefused as refused:
            print(f"(a+)+$ over 5,000 a's: refused after {time.perf_counter() - begun:.2f} s: {str(refused)[:60]}...")


if __name__ == "__main__":
    main()
