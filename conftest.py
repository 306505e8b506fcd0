"""Test-wide settings: every test and every notebook kernel talks to the practice model, and a
learner's own work in lessons/ is left alone.

Setting LLM_BASE_URL here (it beats a developer's .env, which never overrides the environment)
keeps real providers, keys and their answers out of test runs and committed outputs.

A lesson a learner has worked in (see course/workspace.py) is not re-executed and compared: its
cells are skipped with the reason, and solutions/ is still checked in full. COURSE_STRICT=1 (CI)
turns that off, so any difference fails.
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

os.environ["LLM_BASE_URL"] = "practice"
# The framework's own files (the key saved runs are signed with, the record of spent approvals) go to a
# folder of this test run, not to ~/.mini_framework; notebook kernels inherit it.
os.environ["MINI_FRAMEWORK_HOME"] = tempfile.mkdtemp(prefix="mini_framework_home_")
atexit.register(shutil.rmtree, os.environ["MINI_FRAMEWORK_HOME"], ignore_errors=True)  # each run cleans up its own

# Bytecode caches: an environment that turns them off (PYTHONDONTWRITEBYTECODE=1, as some sandboxes do) has every
# process of a run compile again all it imports from this repository: each of the four workers rewrites and compiles
# the ~90 test modules (pytest's assertion rewriting: ~4 s of CPU a worker), each notebook kernel and each subprocess
# compiles the course's modules. A test run writes them, as Python does by default (in __pycache__/ folders, which
# git ignores), for itself, its workers, kernels and subprocesses; COURSE_BYTECODE_CACHE=0 leaves the setting alone.
if os.environ.get("COURSE_BYTECODE_CACHE", "1") != "0":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False

LESSONS = Path(__file__).resolve().parent / "lessons"
WORKSPACE_MARK = "(your own work, we assume)"  # in every reason course.workspace gives


@lru_cache(maxsize=None)
def _skip_reason(path: str) -> str | None:
    from course.workspace import skip_reason  # imported late: course needs nbformat, which is a dev extra

    return skip_reason(Path(path))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the notebook cells of lessons that hold a learner's own work."""
    for item in items:
        path = Path(str(item.path))
        if path.suffix == ".ipynb" and path.parent == LESSONS:
            reason = _skip_reason(str(path))
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> None:
    """Say, without -rs, which lessons were left alone and why: a learner should not wonder what 'skipped' hid.

    Read from the skip reports, so it works when the tests ran in worker processes (pytest-xdist)."""
    reasons = set()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
        if WORKSPACE_MARK in reason:
            reasons.add(reason.removeprefix("Skipped: "))
    if reasons:
        terminalreporter.section("your lessons, left alone")
        for reason in sorted(reasons):
            terminalreporter.write_line(f"- {reason}")
