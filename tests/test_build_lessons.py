"""The lesson generator: stubs replace answers, lessons stay in sync with solutions."""
from __future__ import annotations

import nbformat
import pytest

from course.build_lessons import ROOT, MarkerError, build, lesson_from_solution, stub_code
from course.workspace import skip_reason


def test_stub_lines_replace_the_solution():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return x * 2\n    ### STUB\n    # return None  # your code\n    ### END SOLUTION\nprint(f(1))"
    assert stub_code(source) == "def f(x):\n    return None  # your code\nprint(f(1))"


def test_without_a_stub_section_the_lesson_gets_an_ellipsis_at_the_same_indent():
    assert stub_code("if True:\n    ### BEGIN SOLUTION\n    x = 1\n    ### END SOLUTION") == "if True:\n    ..."


def test_several_regions_and_comment_only_stubs():
    source = "### BEGIN SOLUTION\na = 1\n### STUB\n# a = None\n### END SOLUTION\n### BEGIN SOLUTION\nb = 2\n### STUB\n# # compute b\n# b = None\n### END SOLUTION"
    assert stub_code(source) == "a = None\n# compute b\nb = None"


@pytest.mark.parametrize("source", [
    "### BEGIN SOLUTION\nx = 1",
    "x = 1\n### END SOLUTION",
    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION",
    "### STUB\n",
])
def test_broken_markers_are_reported(source):
    with pytest.raises(MarkerError):
        stub_code(source)


def test_solution_only_cells_and_markdown_answers_are_left_out():
    solution = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Why? <!-- BEGIN SOLUTION -->Because.<!-- END SOLUTION -->"),
        nbformat.v4.new_code_cell("secret = 42", metadata={"tags": ["solution-only"]}),
        nbformat.v4.new_code_cell("print(1)", outputs=[nbformat.v4.new_output("stream", text="1\n")], execution_count=3),
    ])
    lesson = lesson_from_solution(solution)
    assert [c.source for c in lesson.cells] == ["Why? *Write your answer here.*", "print(1)"]
    assert lesson.cells[1].outputs == [] and lesson.cells[1].execution_count is None


def test_committed_lessons_are_what_the_generator_makes_from_solutions():
    assert sorted(p.name for p in (ROOT / "solutions").glob("*.ipynb")), "no solution notebooks found"
    stale = build(check=True)
    yours = {name: reason for name in stale if (reason := skip_reason(ROOT / "lessons" / name))}
    assert [name for name in stale if name not in yours] == [], (
        "lessons/ is out of date with solutions/: regenerate it with `.venv/bin/python -m course.build_lessons` "
        "(lessons with your own work in them are kept; see course/workspace.py), then "
        "`.venv/bin/python -m course.execute` on the lessons it wrote")
    if yours:
        pytest.skip("; ".join(yours.values()))
