"""Lessons 10 and 10b leave nothing behind: each run's spill folder goes, and spilled/ with it when it is empty."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from course.spill_folder import clean_up, fresh_folder

ROOT = Path(__file__).resolve().parent.parent


def test_two_runs_share_the_root_and_the_last_one_out_removes_it(tmp_path):
    root = tmp_path / "spilled"
    first, second = fresh_folder(root), fresh_folder(root)
    (first / "tool_result_x_1a2b3c4d.txt").write_text("x")
    clean_up(first)
    assert not first.exists() and second.exists() and root.exists()
    clean_up(second)
    assert not root.exists()
    clean_up(second)  # twice is harmless


@pytest.mark.parametrize("name", ["10_long_outputs_and_cost", "10b_cache_and_cost"])
def test_the_lessons_end_by_cleaning_up(name):
    for folder in ("solutions", "lessons"):
        cells = json.loads((ROOT / folder / f"{name}.ipynb").read_text(encoding="utf-8"))["cells"]
        assert "clean_up(SPILL)" in "".join(cells[-1]["source"])
