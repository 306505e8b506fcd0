"""What every exercise checker must do, shared by the per-lesson tables in tests/test_checks_*.py:
pass the solution, say "not solved" to the stub, catch each realistic wrong answer with ❌, never raise."""
from __future__ import annotations

from typing import Any, Callable

import pytest

Case = tuple[Callable[..., Any], list[Any], list[Any], list[list[Any]]]  # checker, solution, stub, wrong answers


def stub(*args, **kwargs):
    return None


def boom(*args, **kwargs):
    raise KeyError("city")


def checker_tests(cases: dict[str, Case]) -> tuple[Any, Any, Any]:
    """The three tests every table of cases gets (assign them to module-level names in a test file)."""

    @pytest.mark.parametrize("name", cases)
    def test_checker_passes_the_solution(name):
        checker, solution, _, _ = cases[name]
        result = checker(*solution)
        assert result.passed, result.message

    @pytest.mark.parametrize("name", cases)
    def test_checker_says_not_solved_to_the_stub(name):
        checker, _, stubbed, _ = cases[name]
        result = checker(*stubbed)
        assert result.status == "not solved" and "not solved yet" in repr(result), result.message

    @pytest.mark.parametrize("name,index", [(n, i) for n, case in cases.items() for i in range(len(case[3]))])
    def test_checker_catches_a_wrong_answer_without_raising(name, index):
        checker, _, _, wrong = cases[name]
        result = checker(*wrong[index])
        assert result.status == "wrong" and repr(result).startswith("❌"), result.message

    return test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
        test_checker_catches_a_wrong_answer_without_raising
