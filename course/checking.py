"""The machinery behind exercise check cells: never raise, always say what to do next.

A check cell calls a lesson's checker with the learner's code. The checker runs a small test
and returns a `CheckResult` that Jupyter displays as one line:

    ✅ Exercise 1 passed: ...           the solution works
    ⏳ Exercise 1 not solved yet: ...   the stub is still there (returns None / ...)
    ❌ Exercise 1 not right yet: ...    the code runs but gives a wrong answer, or raises

Nothing here raises into the notebook, so *Run All* on a fresh lesson reaches the last cell.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any, Callable


class NotSolved(Exception):
    """Raised inside a test when the learner's code is still the stub."""


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one exercise check; displays as its message."""

    exercise: int
    status: str  # "passed" | "not solved" | "wrong"
    message: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def __repr__(self) -> str:
        return self.message


def solved(value: Any) -> Any:
    """Return `value`, or raise NotSolved if it is what a stub gives back (None or `...`).

    >>> solved(3)
    3
    """
    if value is None or value is Ellipsis:
        raise NotSolved
    return value


def practice_in_use() -> bool:
    """True when the notebooks talk to the deterministic practice model (so exact answers can be compared)."""
    from mini_framework import load_settings

    return load_settings().is_practice


def run_check(exercise: int, test: Callable[[], str], hint: str) -> CheckResult:
    """Run `test` (which returns a success detail or raises) and turn any outcome into a result."""
    try:
        detail = test()
    except NotSolved:
        return CheckResult(exercise, "not solved", f"⏳ Exercise {exercise} not solved yet. Hint: {hint}")
    except AssertionError as error:
        return CheckResult(exercise, "wrong", f"❌ Exercise {exercise} not right yet: {error}. Hint: {hint}")
    except Exception as error:  # the learner's code raised: show where, briefly
        where = traceback.extract_tb(error.__traceback__)[-1]
        return CheckResult(exercise, "wrong", f"❌ Exercise {exercise} raised {type(error).__name__}: {error} "
                                              f"(line {where.lineno}). Hint: {hint}")
    return CheckResult(exercise, "passed", f"✅ Exercise {exercise} passed: {detail}")
