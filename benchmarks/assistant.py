"""The support assistant's costs: overhead per turn beyond model and tool time, the demo's wall time, import time.

    python benchmarks/assistant.py [--turns 20] [--runs 5]

Overhead per turn = the turn's wall time - the time spent waiting for the model (ModelResponse.seconds) - the
tools' own time (ToolResult.seconds), medians over `--turns` turns of the demo's desk against the in-process
practice model. The demo and `import mini_framework` are timed as whole commands (fresh interpreters).
A report, not a timed test.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

from mini_framework import ModelResponse, ToolFinished, connect
from mini_framework.demo.support import SupportDesk, refunds_under

QUESTIONS = ["张三最近买了什么？", "The tea cups of order 202405240044 are broken, please refund it",
             "Check the payments log for errors",
             "What did 李四 order, and has it shipped?"]


def overhead(turns: int) -> tuple[float, float]:
    """(median overhead, median wall time) per turn, in milliseconds."""
    client, model = connect()
    extra, wall = [], []
    with tempfile.TemporaryDirectory() as folder:
        desk = SupportDesk(folder)
        agent = desk.assistant(client, model, approver=refunds_under(200, desk))
        for i in range(turns):
            model_time: list[float] = []
            tool_time: dict[int, float] = {}  # per round: the slowest call (calls of a round run concurrently)

            def note(event: object, model_time: list[float] = model_time,
                     tool_time: dict[int, float] = tool_time) -> None:
                if isinstance(event, ModelResponse):
                    model_time.append(event.seconds)
                elif isinstance(event, ToolFinished):
                    tool_time[event.iteration] = max(tool_time.get(event.iteration, 0.0), event.result.seconds)
            started = time.perf_counter()
            agent.run(QUESTIONS[i % len(QUESTIONS)], on_event=note)
            taken = time.perf_counter() - started
            wall.append(taken * 1000)
            extra.append((taken - sum(model_time) - sum(tool_time.values())) * 1000)
    return statistics.median(extra), statistics.median(wall)


def command(args: list[str], runs: int) -> float:
    """Median wall time of a command, in seconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(args, check=True, capture_output=True, timeout=300)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    extra, wall = overhead(args.turns)
    print(f"assistant turn: median {wall:.1f} ms wall, {extra:.1f} ms beyond model and tool time ({args.turns} turns)")
    demo = command([sys.executable, "-m", "mini_framework.demo"], args.runs)
    print(f"python -m mini_framework.demo: median {demo:.2f} s ({args.runs} runs)")
    cold = command([sys.executable, "-c", "import mini_framework"], args.runs)
    bare = command([sys.executable, "-c", "pass"], args.runs)
    print(f"import mini_framework: median {cold * 1000:.0f} ms "
          f"({(cold - bare) * 1000:.0f} ms beyond a bare interpreter)")


if __name__ == "__main__":
    main()
