"""The machinery behind exercise check cells: never raise, always say what to do next.

A check cell calls a lesson's checker with the learner's code. The checker runs a small test
and returns a `CheckResult` that Jupyter displays as one line:

    ✅ Exercise 1 passed: ...           the solution works
    ⏳ Exercise 1 not solved yet: ...   the stub is still there; a *nudge*, not the answer
    ❌ Exercise 1 not right yet: ...    a wrong answer or an error, what is wrong, then a *recipe*
    ⌛ Exercise 1: the check stopped    it ran longer than its time limit (code that waits forever)

Hints are progressive: a fresh lesson shows only nudges (a room of learners reading the committed
notebooks sees no answers); the recipe comes with a ❌, or on request with `check.hint(N)`.
An error in the learner's code names the line *in their cell*, not in the SDK or the check.
Nothing here raises into the notebook, so *Run All* on a fresh lesson reaches the last cell.
"""
from __future__ import annotations

import contextvars
import json
import os
import queue
import sys
import sysconfig
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

_PATHS = sysconfig.get_paths()
_LIBRARY_DIRS = tuple(str(Path(_PATHS[key]).resolve()) for key in ("stdlib", "purelib", "platlib"))
_ROOT = Path(__file__).resolve().parent.parent
_COURSE_DIRS = tuple(str(_ROOT / name) for name in ("course", "mini_framework", "practice_model"))


class NotSolved(Exception):
    """Raised inside a test when the learner's code is still the stub."""


TIME_LIMIT = 30.0  # seconds a check may take against the practice model (they take about one)
TIME_LIMIT_REAL = 300.0  # against a real model, which may write for minutes


class TooSlow(Exception):
    """A check ran longer than its time limit: the learner's code (or the model) has not returned."""


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


# ----------------------------------------------------------------------------- common mistakes

def expect_text(value: Any, what: str) -> str:
    """`value` if it is a string; else a ❌ that says what was returned instead of JSON text.

    >>> expect_text('{"a": 1}', "the result")
    '{"a": 1}'
    """
    solved(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        raise AssertionError(f"{what} is a {type(value).__name__}, but the API wants text: "
                             f"turn it into JSON text with json.dumps(..., ensure_ascii=False)")
    raise AssertionError(f"{what} should be a string, not {type(value).__name__} {value!r:.60}")


def expect_json_object(value: Any, what: str) -> dict[str, Any]:
    """`value` (JSON text) parsed into a dict; else a ❌ saying what is wrong with it."""
    text = expect_text(value, what)
    try:
        parsed = json.loads(text)
    except ValueError as error:
        raise AssertionError(f"{what} is not valid JSON ({error}): {text!r:.80}") from None
    if not isinstance(parsed, dict):
        raise AssertionError(f"{what} should be a JSON object {{...}}, not {type(parsed).__name__}: {text!r:.80}")
    return parsed


def expect_tool(value: Any, what: str = "it") -> Any:
    """`value` if it is a Tool; a plain function is a ❌ that says to add @tool; None means not solved yet."""
    from mini_framework import Tool

    solved(value)
    if isinstance(value, Tool):
        return value
    if callable(value):
        name = getattr(value, "__name__", "the function")
        raise AssertionError(f"{what} is a plain function: put @tool on the line above `def {name}`")
    raise AssertionError(f"{what} should be a tool made with @tool, not {type(value).__name__}")


# ----------------------------------------------------------------------------- reporting

def where_in_your_code(error: BaseException) -> str:
    """Where the learner's code raised: ' (line 3 of your cell)', or '' if the error is not from it.

    The innermost frame outside the standard library, installed packages, `course/`,
    `mini_framework/` and `practice_model/` is theirs: a notebook cell, or a file of their own.
    """
    frames = traceback.extract_tb(error.__traceback__)
    for frame in reversed(frames):
        filename = str(Path(frame.filename).resolve()) if not frame.filename.startswith("<") else frame.filename
        if filename.startswith(_LIBRARY_DIRS + _COURSE_DIRS):
            continue
        if "ipykernel_" in frame.filename or frame.filename.startswith("<ipython-input"):
            return f" (line {frame.lineno} of your cell, in {frame.name})"
        return f" (line {frame.lineno} of {os.path.basename(frame.filename)}, in {frame.name})"
    return ""


def run_check(exercise: int, test: Callable[[], str], nudge: str, recipe: str | None = None) -> CheckResult:
    """Run `test` (which returns a success detail or raises) and turn any outcome into a result.

    Hints come in steps: `nudge` goes with ⏳ (a direction, not the answer); the first ❌ of an exercise
    says what is wrong and where, and points to `check.hint(N)`; from the second ❌ on, `recipe` (the
    steps) comes with it.
    """
    recipe = recipe or nudge
    try:
        detail = within_time(test, TIME_LIMIT if practice_in_use() else TIME_LIMIT_REAL)
    except TooSlow as slow:
        return CheckResult(exercise, "wrong", f"⌛ Exercise {exercise}: the check stopped after {slow} seconds, and "
                                              "your code had not returned. Does something wait forever (a lock, a "
                                              "loop, a result that never comes)? Interrupt the kernel if the cell "
                                              f"still runs.{_next_step(exercise, recipe)}")
    except NotSolved:
        return CheckResult(exercise, "not solved", f"⏳ Exercise {exercise} not solved yet. {nudge} "
                                                   f"(Stuck? check.hint({exercise}) shows the steps.)")
    except AssertionError as error:
        return CheckResult(exercise, "wrong", f"❌ Exercise {exercise} not right yet: {_sentence(error)}"
                                              f"{_next_step(exercise, recipe)}")
    except Exception as error:  # the learner's code raised: say what and where, briefly
        text = f"{type(error).__name__}: {error}".rstrip(": ")
        return CheckResult(exercise, "wrong", f"❌ Exercise {exercise} raised {text}{where_in_your_code(error)}."
                                              f"{_next_step(exercise, recipe)}")
    return CheckResult(exercise, "passed", f"✅ Exercise {exercise} passed: {detail}")


def within_time(test: Callable[[], str], seconds: float) -> str:
    """`test()`, run in a daemon thread (with this context) and waited for at most `seconds`: what it returns
    or raises, or TooSlow. A test that never returns keeps its thread, not the notebook.

    >>> within_time(lambda: "done", 5)
    'done'
    """
    outcome: queue.SimpleQueue[tuple[str | None, BaseException | None]] = queue.SimpleQueue()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome.put((context.run(test), None))
        except BaseException as error:  # raised again below, in the caller's thread
            outcome.put((None, error))
        finally:
            for stream in (sys.stdout, sys.stderr):  # what it printed lands before the result is shown
                try:
                    stream.flush()
                except Exception:
                    pass

    threading.Thread(target=work, name="exercise-check", daemon=True).start()
    try:
        detail, error = outcome.get(timeout=seconds)
    except queue.Empty:
        raise TooSlow(f"{seconds:g}") from None
    if error is not None:
        raise error
    return detail  # type: ignore[return-value]


_WRONG_SO_FAR: dict[tuple[int, str], int] = {}  # (exercise, recipe) -> ❌ shown in this kernel


def _next_step(exercise: int, recipe: str) -> str:
    """After a ❌: the first time a pointer to the steps, from then on the steps themselves."""
    key = (exercise, recipe)
    _WRONG_SO_FAR[key] = _WRONG_SO_FAR.get(key, 0) + 1
    if _WRONG_SO_FAR[key] == 1:
        return f" (Try again; check.hint({exercise}) shows the steps, and they come with the next ❌.)"
    return f" Hint: {recipe}"


def _sentence(error: BaseException) -> str:
    """An assertion's message as one sentence ending in a full stop (never two)."""
    text = str(error).rstrip()
    return text if text.endswith((".", "!", "?", "。", "！", "？")) else text + "."


class Hints:
    """A lesson's recipes, shown on request: `check.hint(2)` in a notebook.

    >>> hint = Hints({1: "Return a dict with role, tool_call_id and content."})
    >>> hint(1)
    Exercise 1, step by step: Return a dict with role, tool_call_id and content.
    >>> hint(9)
    There is no exercise 9 in this lesson (exercises: 1).
    """

    def __init__(self, recipes: dict[int, str]) -> None:
        self.recipes = recipes

    def __call__(self, exercise: int) -> None:
        if exercise not in self.recipes:
            numbers = ", ".join(str(n) for n in sorted(self.recipes))
            print(f"There is no exercise {exercise} in this lesson (exercises: {numbers}).", file=sys.stdout)
            return
        print(f"Exercise {exercise}, step by step: {self.recipes[exercise]}", file=sys.stdout)
