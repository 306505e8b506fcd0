"""Whose notebook is this? A lesson a learner has worked in is theirs: tests and tools leave it alone.

Learners work in `lessons/`. A lesson counts as *the learner's* when it differs from what the
course ships: its cells differ from what `solutions/` generates (an exercise solved, a question
edited, a cell added), or, in a git checkout, the file has uncommitted changes (cells run and saved).

The test suite skips such lessons, saying why (`solutions/` is still checked in full), and
`python -m course.build_lessons` refuses to overwrite them unless asked to. With the environment
variable COURSE_STRICT=1 (CI sets it) nothing is treated as a learner's: every difference fails.

    learner_work(ROOT / "lessons" / "03_tools_from_functions.ipynb")
    -> "lessons/03_tools_from_functions.ipynb has uncommitted changes (your own work, we assume)"
"""
from __future__ import annotations

from . import quick_nbformat  # noqa: F401  (before nbformat: see its docstring)

# isort: split
import os
import shutil
import subprocess
from pathlib import Path

import nbformat

from .build_lessons import ROOT, cell_sources, lesson_from_solution

STRICT_VARIABLE = "COURSE_STRICT"


def strict() -> bool:
    """True when every difference in lessons/ must fail (CI), none treated as a learner's work."""
    return os.environ.get(STRICT_VARIABLE, "").strip() not in ("", "0", "false", "no")


def git_changed(path: Path, root: Path) -> bool | None:
    """Whether git sees uncommitted changes to `path`; None when git can't tell (no git, no repository)."""
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return None
    try:
        done = subprocess.run([git, "status", "--porcelain", "--", str(path)], cwd=root, capture_output=True,
                              text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return bool(done.stdout.strip())


def differs_from_generated(path: Path, root: Path) -> bool:
    """Whether the lesson's cells differ from what its solution generates."""
    solution = root / "solutions" / path.name
    if not solution.exists():
        return True
    try:
        current = nbformat.read(path, as_version=4)
        generated = lesson_from_solution(nbformat.read(solution, as_version=4))
    except Exception:  # unreadable: certainly not what the course ships
        return True
    return cell_sources(current) != cell_sources(generated)


def learner_work(path: Path, root: Path = ROOT) -> str | None:
    """Why the lesson at `path` is taken for a learner's own work, or None if it is as shipped."""
    if strict() or not path.exists():
        return None
    name = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    if differs_from_generated(path, root):
        return f"{name} differs from what the course ships (your own work, we assume)"
    if git_changed(path, root):
        return f"{name} has uncommitted changes (your own work, we assume)"
    return None


def skip_reason(path: Path, root: Path = ROOT) -> str | None:
    """The message a test prints when it leaves a learner's lesson alone."""
    why = learner_work(path, root)
    if why is None:
        return None
    return (f"{why}: its outputs are not compared and it is not regenerated; the solved notebook in "
            f"solutions/ is still checked")
