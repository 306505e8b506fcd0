"""Run All of each solution notebook against the model your `.env` (or environment) names, and print a table.

Usage: python -m course.on_a_real_model [--timeout 600] [NOTEBOOK ...]   (default: every solutions/*.ipynb)

Never part of `pytest`: a pass over every notebook against a small local model takes one to three hours
on two cores. Start one first (the README's "A real model, offline"), point `LLM_BASE_URL`,
`LLM_API_KEY` and `LLM_MODEL` at it, then run this. Each notebook runs in a copy of `solutions/` in a
temporary folder (what it writes stays there), errors allowed, so the table shows every cell that
raised, and which notebooks ran to their end:

    | notebook | seconds | ran to the end | cells that raised |
    |---|---:|---|---|
    | 01_raw_rest_tool_call | 9 | yes | |

"Ran to the end" means no cell raised and none was stopped by the time limit; it does not mean the
answers were right (a small model's rarely are). A cell that takes longer than `--timeout` seconds is
stopped and counted as raised.
"""
from __future__ import annotations

from . import quick_nbformat  # noqa: F401  (before nbformat: see its docstring)

# isort: split
import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from .build_lessons import ROOT


@dataclass
class Outcome:
    """One notebook's run: how long it took and which cells raised (index: error name and message)."""

    name: str
    seconds: float = 0.0
    raised: list[str] = field(default_factory=list)

    @property
    def ran_to_the_end(self) -> bool:
        return not self.raised


def run(path: Path, folder: Path, timeout: int) -> Outcome:
    """Run All of the notebook at `path`, with `folder` as its working directory; errors are allowed."""
    nb = nbformat.read(path, as_version=4)
    outcome = Outcome(path.stem)
    started = time.perf_counter()
    client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except (CellTimeoutError, DeadKernelError) as exc:
        outcome.raised.append(f"stopped: {type(exc).__name__}")
    outcome.seconds = time.perf_counter() - started
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                outcome.raised.append(f"cell {index}: {output['ename']}: {output['evalue'][:100]}")
    return outcome


def table(outcomes: list[Outcome]) -> str:
    """The Markdown table of the outcomes (a cell's `|` escaped).

    >>> print(table([Outcome("00_setup", 4.2), Outcome("01_raw", 9.0, ["cell 11: KeyError: 'tool_calls'"])]))
    | notebook | seconds | ran to the end | cells that raised |
    |---|---:|---|---|
    | 00_setup | 4 | yes |  |
    | 01_raw | 9 | no | cell 11: KeyError: 'tool_calls' |
    """
    rows = ["| notebook | seconds | ran to the end | cells that raised |", "|---|---:|---|---|"]
    for o in outcomes:
        raised = "; ".join(o.raised).replace("|", "\\|")
        rows.append(f"| {o.name} | {o.seconds:.0f} | {'yes' if o.ran_to_the_end else 'no'} | {raised} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="names in solutions/ (default: all of them)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds a cell may take (default 600)")
    args = parser.parse_args(argv)
    from mini_framework.connection import NoProviderError, load_settings

    try:
        practice = load_settings().is_practice
    except NoProviderError:
        practice = True
    if practice:
        parser.error("no real model is configured: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL (or a .env)")
    names = args.notebooks or [p.name for p in sorted((ROOT / "solutions").glob("*.ipynb"))]
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="on_a_real_model_") as tmp:
        os.environ.setdefault("MINI_FRAMEWORK_HOME", str(Path(tmp) / "home"))  # spent approvals, signing key
        folder = Path(tmp) / "solutions"
        shutil.copytree(ROOT / "solutions", folder)
        for name in names:
            path = folder / (name if name.endswith(".ipynb") else name + ".ipynb")
            if not path.is_file():
                parser.error(f"no notebook {path.name} in solutions/")
            outcome = run(path, folder, args.timeout)
            print(f"{outcome.name}: {outcome.seconds:.0f} s, {len(outcome.raised)} cell(s) raised", flush=True)
            outcomes.append(outcome)
    print()
    print(table(outcomes))
    return 0 if all(o.ran_to_the_end for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
