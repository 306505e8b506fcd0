"""Cold import times, each in a fresh interpreter: `python benchmarks/bench_imports.py [--runs 20] [--warmup 2]`.

Every command is `python -c CODE` in a new process (the interpreter this script runs under), timed from outside
with `perf_counter` (wall) and `getrusage(RUSAGE_CHILDREN)` (the child's user + sys CPU time), run after run in
turn (A B C ... A B C ..., the first command rotated each round) after a warm-up, so a machine that slows down
slows every command alike. `python -c pass` is measured too: "minus startup" subtracts its median. The core
case asserts that openai was not imported (its exit code would say so). Medians, with min and max.

    $ python benchmarks/bench_imports.py --runs 20
    machine: 2 CPUs (nproc); Python 3.11.7; load average 0.31 (1 min) at the start
    | command                                        | wall median | min..max    | cpu median | wall minus startup |
    ...

CPU time is steadier than wall time on a shared machine (it does not count time spent waiting for a CPU);
quote the load average with either. A report, not a timed test.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

from timing import load  # benchmarks/timing.py

CORE = "import mini_framework.agent, mini_framework.tools, mini_framework.executor"
COMMANDS: list[tuple[str, str]] = [
    ("python -c pass (interpreter start)", "pass"),
    ("import mini_framework", "import mini_framework"),
    ("import mini_framework.tools", "import mini_framework.tools"),
    ("from mini_framework import Agent, tool", "from mini_framework import Agent, tool"),
    ("core without openai (agent, tools, executor)",
     f"{CORE}, sys; assert 'openai' not in sys.modules, 'the core imported openai'"),
    ("import openai", "import openai"),
    ("import pydantic", "import pydantic"),
]
TARGET_CORE_SECONDS = 0.2  # cold import of the core without openai, interpreter start included


@dataclass
class Timings:
    """One command's runs: wall and CPU seconds, and how many runs failed (a non-zero exit)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    failed: int = 0
    error: str = ""


def run_once(code: str) -> tuple[float, float, int, str]:
    """One fresh interpreter running `code`: (wall s, cpu s, exit code, last line of stderr).

    >>> wall, cpu, code, err = run_once("pass")
    >>> code, err, wall > 0
    (0, '', True)
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stderr.strip().splitlines()
    return wall, cpu, done.returncode, lines[-1] if lines else ""


def measure(commands: list[tuple[str, str]], runs: int, warmup: int) -> list[Timings]:
    """`warmup` uncounted rounds, then `runs` counted rounds of every command in turn, the first rotated."""
    out = [Timings() for _ in commands]
    for r in range(warmup + runs):
        for i in range(len(commands)):
            j = (r + i) % len(commands)
            wall, cpu, code, err = run_once(commands[j][1])
            if r < warmup:
                continue
            if code != 0:
                out[j].failed += 1
                out[j].error = err
            out[j].wall.append(wall)
            out[j].cpu.append(cpu)
    return out



def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="counted runs of each command (default 20)")
    parser.add_argument("--warmup", type=int, default=2, help="uncounted rounds first (default 2)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"machine: {cpus} CPUs (nproc); Python {platform.python_version()} ({sys.executable}); {load()} at the "
          f"start; {args.runs} runs each after {args.warmup} warm-up round(s), interleaved")
    results = measure(COMMANDS, args.runs, args.warmup)
    startup = statistics.median(results[0].wall)
    print("| command                                        | wall median |   min..max (s)  | cpu median | "
          "wall minus startup |")
    print("|------------------------------------------------|------------:|----------------:|-----------:|"
          "-------------------:|")
    for (label, _), t in zip(COMMANDS, results):
        wall = statistics.median(t.wall)
        span = f"{min(t.wall):.3f}..{max(t.wall):.3f}"
        print(f"| {label:<46} | {wall:9.3f} s | {span:>15} | {statistics.median(t.cpu):8.3f} s | "
              f"{wall - startup:16.3f} s |")
    for (label, _), t in zip(COMMANDS, results):
        if t.failed:
            print(f"FAILED {t.failed}/{args.runs}: {label}: {t.error}")
    core = results[4]
    verdict = "met" if statistics.median(core.wall) <= TARGET_CORE_SECONDS and not core.failed else "NOT met"
    print(f"core without openai: wall median {statistics.median(core.wall):.3f} s, cpu median "
          f"{statistics.median(core.cpu):.3f} s; target <= {TARGET_CORE_SECONDS} s wall: {verdict}"
          f"{'' if core.failed else ' (openai was not imported)'}")
    print(f"{load()} at the end (a shared machine: other processes compete for the CPUs)")
    return 1 if any(t.failed for t in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
