"""Cold import times, each in a fresh interpreter: `python benchmarks/bench_imports.py [--runs 20] [--warmup 2]`.

Every command is `python -c CODE` in a new process (the interpreter this script runs under), timed from outside
with `perf_counter` (wall) and `getrusage(RUSAGE_CHILDREN)` (the child's user + sys CPU time), run after run in
turn (A B C ... A B C ..., the first command rotated each round) after a warm-up, so a machine that slows down
slows every command alike. `python -c pass` is measured too: "minus startup" subtracts its median. The core
case asserts that openai was not imported (its exit code would say so). Medians, with min and max.

The framework is imported from a fresh copy of `mini_framework/` in a temporary folder (what a project that
copied it sees; the editable install is not involved), in two states:
- **cached**: Python's bytecode cache (`__pycache__`) is written on the first import (a warm-up round), as it
  is by default; every later cold start reads it. This is what a user's second and later runs cost.
- **no cache**: a second copy imported with `-B` under `PYTHONDONTWRITEBYTECODE=1`, so every run compiles the
  framework's sources again (the standard library and site-packages keep their installed caches). This is a
  first run ever, or a machine that disables the cache (this sandbox sets `PYTHONDONTWRITEBYTECODE=1`).

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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from timing import load  # benchmarks/timing.py

CORE = "import mini_framework.agent, mini_framework.tools, mini_framework.executor"
CORE_CHECK = f"{CORE}, sys; assert 'openai' not in sys.modules, 'the core imported openai'"
PACKAGE = Path(__file__).resolve().parent.parent / "mini_framework"
# (label, code, state): state "cached" or "no cache" picks the copy and the flags (see the module docstring)
COMMANDS: list[tuple[str, str, str]] = [
    ("python -c pass (interpreter start)", "pass", "cached"),
    ("import mini_framework", "import mini_framework", "cached"),
    ("import mini_framework.tools", "import mini_framework.tools", "cached"),
    ("from mini_framework import Agent, tool", "from mini_framework import Agent, tool", "cached"),
    ("core without openai (agent, tools, executor)", CORE_CHECK, "cached"),
    ("core without openai, no bytecode cache", CORE_CHECK, "no cache"),
    ("import openai", "import openai", "cached"),
    ("import pydantic", "import pydantic", "cached"),
]
TARGET_CORE_SECONDS = 0.2  # cold import of the core without openai, interpreter start included


@dataclass
class Timings:
    """One command's runs: wall and CPU seconds, and how many runs failed (a non-zero exit)."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    failed: int = 0
    error: str = ""


def run_once(code: str, state: str = "cached", where: Path | None = None) -> tuple[float, float, int, str]:
    """One fresh interpreter running `code` in folder `where`: (wall s, cpu s, exit code, last line of stderr).

    >>> wall, cpu, code, err = run_once("pass")
    >>> code, err, wall > 0
    (0, '', True)
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    flags = []
    if state == "no cache":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        flags = ["-B"]
    if where is not None:
        env["PYTHONPATH"] = str(where)  # ahead of site-packages, so the copy wins over an editable install
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, timeout=120,
                          env=env, cwd=where)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = done.stderr.strip().splitlines()
    return wall, cpu, done.returncode, lines[-1] if lines else ""


def copies(root: Path) -> dict[str, Path]:
    """A fresh copy of the package for each state, without any `__pycache__` the checkout has."""
    out = {}
    for state in ("cached", "no cache"):
        where = root / state.replace(" ", "_")
        shutil.copytree(PACKAGE, where / "mini_framework", ignore=shutil.ignore_patterns("__pycache__"))
        out[state] = where
    return out


def measure(commands: list[tuple[str, str, str]], runs: int, warmup: int, where: dict[str, Path]) -> list[Timings]:
    """`warmup` uncounted rounds (they write the cached copy's bytecode), then `runs` counted rounds, rotated."""
    out = [Timings() for _ in commands]
    for r in range(warmup + runs):
        for i in range(len(commands)):
            j = (r + i) % len(commands)
            _, code_text, state = commands[j]
            wall, cpu, code, err = run_once(code_text, state, where[state])
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
    with tempfile.TemporaryDirectory() as root:
        results = measure(COMMANDS, args.runs, max(args.warmup, 1), copies(Path(root)))
    startup = statistics.median(results[0].wall)
    print("| command                                        | wall median |   min..max (s)  | cpu median | "
          "wall minus startup |")
    print("|------------------------------------------------|------------:|----------------:|-----------:|"
          "-------------------:|")
    for (label, _, _), t in zip(COMMANDS, results):
        wall = statistics.median(t.wall)
        span = f"{min(t.wall):.3f}..{max(t.wall):.3f}"
        print(f"| {label:<46} | {wall:9.3f} s | {span:>15} | {statistics.median(t.cpu):8.3f} s | "
              f"{wall - startup:16.3f} s |")
    for (label, _, _), t in zip(COMMANDS, results):
        if t.failed:
            print(f"FAILED {t.failed}/{args.runs}: {label}: {t.error}")
    for label, t in (("cached", results[4]), ("no bytecode cache", results[5])):
        wall = statistics.median(t.wall)
        verdict = "met" if wall <= TARGET_CORE_SECONDS and not t.failed else "NOT met"
        print(f"core without openai, {label}: wall median {wall:.3f} s, cpu median {statistics.median(t.cpu):.3f} s;"
              f" target <= {TARGET_CORE_SECONDS} s wall: {verdict}{'' if t.failed else ' (openai was not imported)'}")
    print(f"{load()} at the end (a shared machine: other processes compete for the CPUs)")
    return 1 if any(t.failed for t in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
