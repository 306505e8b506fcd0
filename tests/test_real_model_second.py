"""The second half of the lessons against a configured provider (see tests/real_model.py)."""
from __future__ import annotations

import pytest
from real_model import SECOND_HALF, SOLUTIONS, provider, run_against_provider  # noqa: F401 (provider is a fixture)

pytestmark = pytest.mark.provider_pass  # a second command: pytest -m provider_pass (see pyproject.toml)


@pytest.mark.parametrize("path", SECOND_HALF, ids=lambda p: p.stem)
def test_the_lesson_runs_against_a_configured_provider(path, provider, monkeypatch):  # noqa: F811
    run_against_provider(path, provider, monkeypatch)


def test_the_images_lesson_runs_against_a_provider_with_a_vision_model(provider, monkeypatch):  # noqa: F811
    """Lesson 09 with LLM_VISION_MODEL set, as against a provider whose vision model sees the charts."""
    [path] = [p for p in SOLUTIONS if p.name.startswith("09_")]  # whichever half it falls in
    run_against_provider(path, provider, monkeypatch, vision_model="practice-vision")
