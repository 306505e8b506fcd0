"""The first half of the lessons against a configured provider (see tests/real_model.py)."""
from __future__ import annotations

import pytest
from real_model import FIRST_HALF, provider, run_against_provider  # noqa: F401 (provider is a fixture)

pytestmark = pytest.mark.provider_pass  # a second command: pytest -m provider_pass (see pyproject.toml)


@pytest.mark.parametrize("path", FIRST_HALF, ids=lambda p: p.stem)
def test_the_lesson_runs_against_a_configured_provider(path, provider, monkeypatch):  # noqa: F811
    run_against_provider(path, provider, monkeypatch)
