"""The second half of the lessons against a configured provider (see tests/real_model.py)."""
from __future__ import annotations

import pytest
from real_model import SECOND_HALF, provider, run_against_provider  # noqa: F401 (provider is a fixture)


@pytest.mark.parametrize("path", SECOND_HALF, ids=lambda p: p.stem)
def test_the_lesson_runs_against_a_configured_provider(path, provider, monkeypatch):  # noqa: F811
    run_against_provider(path, provider, monkeypatch)
