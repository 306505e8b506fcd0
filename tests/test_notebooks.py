"""What every committed notebook must be, beyond reproducing its outputs (nbval checks that).

nbval re-executes each notebook and compares with the committed outputs, so asserting on the
committed outputs here is asserting on what a fresh run produces.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course.workspace import skip_reason

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
SECRET = re.compile(r"sk-[A-Za-z0-9_-]{20,}|Bearer [A-Za-z0-9._-]{20,}")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def text_of(cell: dict) -> str:
    out = []
    for output in cell.get("outputs", []):
        out.append("".join(output.get("text", "")))
        out.append("".join(output.get("data", {}).get("text/plain", "")))
    return "".join(out)


def check_results(path: Path) -> list[str]:
    return [text_of(c) for c in cells(path) if "check" in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_every_exercise_passes_in_solutions_and_waits_in_lessons(solution):
    solved = check_results(solution)
    assert solved, "a lesson needs at least one exercise with a check cell (tag: check)"
    for number, done in enumerate(solved, start=1):
        assert f"✅ Exercise {number} passed" in done, done
    lesson = ROOT / "lessons" / solution.name
    if reason := skip_reason(lesson):
        pytest.skip(reason)
    stubs = check_results(lesson)
    assert len(solved) == len(stubs)
    for number, todo in enumerate(stubs, start=1):
        assert f"⏳ Exercise {number} not solved yet" in todo, todo


@pytest.mark.parametrize("path", SOLUTIONS + sorted((ROOT / "lessons").glob("*.ipynb")),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_executed_top_to_bottom_without_errors_or_secrets(path):
    if path.parent.name == "lessons" and (reason := skip_reason(path)):
        pytest.skip(reason)
    code = [c for c in cells(path) if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1)), "run it top to bottom once"
    for cell in code:
        assert all(o["output_type"] != "error" for o in cell.get("outputs", [])), "".join(cell["source"])
    assert not SECRET.search(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_lesson_structure(solution):
    markdown = "\n".join("".join(c["source"]) for c in cells(solution) if c["cell_type"] == "markdown")
    assert re.match(r"# \d\d[a-z]? · ", markdown), "a title '# NN · ...' (an optional part: '# NNb · ...')"
    for heading in ("## Learning goals", "```mermaid", "## Exercises", "## What you built"):
        assert heading in markdown, f"missing {heading!r}"


def test_every_diagram_is_also_in_words():
    from course.diagrams import update
    assert update(check=True) == [], "run: python -m course.diagrams, then python -m course.build_lessons"
