"""Every lesson is held to the course's budget, measured by course.measure; the README quotes the minutes."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from course.measure import BUDGET, Size, measure, words

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("*.ipynb"))


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_the_lesson_is_within_the_budget(path):
    over = measure(path).over()
    assert not over, f"{path.stem} is over the budget ({', '.join(over)}); the budget is {BUDGET}"


def test_the_readme_quotes_each_lessons_minutes():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = dict(re.findall(r"\]\(lessons/([^)]+)\.ipynb\) \| [^\n]*? \| (\d+ \+ \d+) \| ", readme))
    assert set(quoted) == {p.stem for p in LESSONS}, "a lesson without its minutes in the README's curriculum table"
    for path in LESSONS:
        size = measure(path)
        assert quoted[path.stem] == f"{size.reading:.0f} + {8 * size.exercises}", (
            f"{path.stem}: the README says {quoted[path.stem]}; `.venv/bin/python -m course.measure {path.stem}` measures it")


def test_the_rule_counts_chinese_by_two_characters_and_leaves_code_out():
    assert words("北京现在天气怎么样") == 5 and words("一个 word") == 2
    assert words("Run it:\n```bash\npip install a b c d e f\n```\nDone.") == 3
    assert Size("x", 180, 1, 1, 15, 60).minutes == pytest.approx(11)
