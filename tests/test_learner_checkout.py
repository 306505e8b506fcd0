"""A learner's work is never lost: the suite passes in a checkout where every exercise was solved,
and regenerating lessons keeps edited ones unless told otherwise."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GIT = shutil.which("git")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run([GIT or "git", "-c", "user.name=Learner", "-c", "user.email=learner@example.com", *args],
                          cwd=cwd, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A fresh checkout of the course as committed (tracked files only), with its own git history."""
    if GIT is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the course")
    target = tmp_path / "course"
    for name in git(ROOT, "ls-files").splitlines():
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "as cloned")
    return target


def solve_every_exercise(course: Path) -> None:
    """What a learner's lessons look like after a day's work: every answer written and run, one question
    edited, one scratch cell added."""
    for solution in sorted((course / "solutions").glob("*.ipynb")):
        notebook = json.loads(solution.read_text(encoding="utf-8"))
        notebook["cells"] = [c for c in notebook["cells"] if "solution-only" not in c["metadata"].get("tags", [])]
        (course / "lessons" / solution.name).write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    first = sorted((course / "lessons").glob("*.ipynb"))[0]
    notebook = json.loads(first.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "id": "scratch", "metadata": {},
                              "outputs": [], "source": ["print('my own experiment')"]})
    first.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")


def learner_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "COURSE_STRICT" and not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = ""
    return env


def test_the_suite_passes_where_a_learner_solved_every_exercise(clone: Path):
    solve_every_exercise(clone)
    before = {p.name: p.read_bytes() for p in (clone / "lessons").glob("*.ipynb")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-n0", "-p", "no:randomly", "-q", "lessons",
                           "tests/test_build_lessons.py", "tests/test_notebooks.py"],
                          cwd=clone, capture_output=True, text=True, timeout=600, env=learner_environment())
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    # plain pytest (no -rs) says which lessons it left alone and why
    assert "your lessons, left alone" in output and "solutions/ is still checked" in output
    assert "lessons/00_setup.ipynb differs from what the course ships" in output
    assert "failed" not in output.splitlines()[-1]
    assert {p.name: p.read_bytes() for p in (clone / "lessons").glob("*.ipynb")} == before, "a lesson was changed"

    # in CI (COURSE_STRICT=1) the same checkout is a failure, not a skip: a clean clone holds no learner's work
    # (-p course.quick_nbformat, as pyproject's addopts would: without it jsonschema's imports cost ~1.3 s of CPU)
    strict = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "course.quick_nbformat",
                             "-p", "no:cacheprovider", "-p", "no:randomly", "-q",
                             "tests/test_build_lessons.py", "tests/test_notebooks.py"],
                            cwd=clone, capture_output=True, text=True, timeout=600,
                            env=learner_environment() | {"COURSE_STRICT": "1"})
    assert strict.returncode != 0 and "out of date with solutions/" in strict.stdout


def test_regenerating_lessons_keeps_edited_ones_unless_told(clone: Path):
    solve_every_exercise(clone)
    before = {p.name: p.read_bytes() for p in (clone / "lessons").glob("*.ipynb")}
    done = subprocess.run([sys.executable, "-m", "course.build_lessons"], cwd=clone, capture_output=True, text=True,
                          timeout=120, env=learner_environment())
    assert done.returncode == 0, done.stderr
    assert "kept because they have your edits" in done.stdout and "--overwrite" in done.stdout
    assert {p.name: p.read_bytes() for p in (clone / "lessons").glob("*.ipynb")} == before
    executed = subprocess.run([sys.executable, "-m", "course.execute", "lessons"], cwd=clone, capture_output=True,
                              text=True, timeout=120, env=learner_environment())
    assert executed.returncode == 0, executed.stderr
    assert "Not run, because they hold your code: lessons/00_setup.ipynb" in executed.stdout
    assert {p.name: p.read_bytes() for p in (clone / "lessons").glob("*.ipynb")} == before
    forced = subprocess.run([sys.executable, "-m", "course.build_lessons", "--overwrite"], cwd=clone,
                            capture_output=True, text=True, timeout=120, env=learner_environment())
    assert forced.returncode == 0 and "kept" not in forced.stdout
    assert {p.name: p.read_bytes() for p in (clone / "lessons").glob("*.ipynb")} != before
