"""How long a lesson is, by one written rule: `python -m course.measure [NOTEBOOK ...]`.

    words      whitespace-separated tokens of markdown cells, outside code fences; a run of Chinese
               characters counts one word per two characters ("北京现在天气怎么样" is 5)
    cells      every cell
    exercises  "**Exercise N.**" headings in markdown cells
    code       non-blank lines of code cells
    output     lines of the committed outputs (stream text, and the text/plain of results)
    minutes    words / 180 + code / 15 + output / 60 + 8 per exercise

Measured on the committed `lessons/` notebook, as a learner gets it (outputs included, exercises as
stubs). The budget a test holds every lesson to: at most 2,000 words, 45 cells and 3 exercises
and 25 minutes without the exercises (`BUDGET`): by this rule a lesson with three exercises spends 24
minutes on them alone, so the course's "25 minutes a lesson" is held for the lesson's own part (`Size.reading`). The
README's curriculum table quotes both.
"""
from __future__ import annotations

from . import quick_nbformat  # noqa: F401  (before nbformat: see its docstring)

# isort: split
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .build_lessons import ROOT

BUDGET = {"words": 2000, "cells": 45, "exercises": 3, "reading": 25}  # reading: minutes without the exercises
_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_EXERCISE = re.compile(r"\*\*Exercise \d+[a-z]?\.\*\*")


@dataclass(frozen=True)
class Size:
    """One lesson's measures (see the module docstring)."""

    name: str
    words: int
    cells: int
    exercises: int
    code: int
    output: int

    @property
    def reading(self) -> float:
        """Minutes for the lesson's own part: its prose, code and outputs."""
        return self.words / 180 + self.code / 15 + self.output / 60

    @property
    def minutes(self) -> float:
        """Minutes with the exercises, 8 each."""
        return self.reading + 8 * self.exercises

    def over(self) -> list[str]:
        """What is over the budget, e.g. ['words 3,338 > 2,000']; [] within it.

        >>> Size("x", 3338, 50, 3, 0, 0).over()
        ['words 3,338 > 2,000', 'cells 50 > 45']
        >>> Size("y", 1800, 40, 3, 300, 0).over()
        ['reading 30 > 25']
        """
        values = {"words": self.words, "cells": self.cells, "exercises": self.exercises, "reading": self.reading}
        return [f"{key} {values[key]:,.0f} > {limit:,}" for key, limit in BUDGET.items() if values[key] > limit]


def words(markdown: str) -> int:
    """Words of markdown text by the rule: fences left out, two Chinese characters to a word.

    >>> words("The question is `北京现在天气怎么样？` (*What's the weather?*)")  # 3 + 5 + 3
    11
    >>> words("```python\\nprint('not prose')\\n```\\nTwo words")
    2
    """
    count = 0
    for token in _FENCE.sub(" ", markdown).split():
        han = sum(len(run) for run in _HAN.findall(token))
        rest = _HAN.sub("", token)
        count += math.ceil(han / 2) + (1 if any(ch.isalnum() for ch in rest) else 0)
    return count


def _output_lines(cell: nbformat.NotebookNode) -> int:
    lines = 0
    for output in cell.get("outputs", []):
        text = output.get("text") if output.get("output_type") == "stream" else output.get("data", {}).get("text/plain")
        if text:
            lines += len(("".join(text) if isinstance(text, list) else text).splitlines())
    return lines


def measure(path: Path) -> Size:
    """The measures of the notebook at `path`."""
    nb = nbformat.read(path, as_version=4)
    markdown = [c.source for c in nb.cells if c.cell_type == "markdown"]
    code = [c for c in nb.cells if c.cell_type == "code"]
    return Size(path.stem, sum(words(m) for m in markdown), len(nb.cells),
                sum(len(_EXERCISE.findall(m)) for m in markdown),
                sum(1 for c in code for line in c.source.splitlines() if line.strip()),
                sum(_output_lines(c) for c in code))


def main(argv: list[str] | None = None) -> int:
    names = list(argv if argv is not None else sys.argv[1:])
    paths = [ROOT / "lessons" / (n if n.endswith(".ipynb") else n + ".ipynb") for n in names] or \
        sorted((ROOT / "lessons").glob("*.ipynb"))
    print("| lesson | words | cells | exercises | code lines | output lines | minutes (without exercises) | "
          "over the budget |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for path in paths:
        size = measure(path)
        print(f"| {size.name} | {size.words:,} | {size.cells} | {size.exercises} | {size.code} | {size.output} | "
              f"{size.minutes:.0f} ({size.reading:.0f}) | {', '.join(size.over())} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
