"""course.on_a_real_model: the opt-in pass over the notebooks against a configured model, and its table."""
from __future__ import annotations

import pytest

from course import on_a_real_model
from practice_model import PracticeServer


def test_it_refuses_to_run_against_the_practice_model(monkeypatch, capsys):
    monkeypatch.setenv("LLM_BASE_URL", "practice")
    with pytest.raises(SystemExit) as stopped:
        on_a_real_model.main(["00_setup"])
    assert stopped.value.code == 2 and "LLM_BASE_URL" in capsys.readouterr().err


def test_it_runs_a_notebook_against_a_configured_model_and_prints_the_table(monkeypatch, capsys, tmp_path):
    with PracticeServer(api_key="sk-test-configured-0123456789") as provider:  # a stand-in on 127.0.0.1
        monkeypatch.setenv("LLM_BASE_URL", provider.base_url)
        monkeypatch.setenv("LLM_API_KEY", "sk-test-configured-0123456789")
        monkeypatch.setenv("LLM_MODEL", "practice")
        monkeypatch.setenv("MINI_FRAMEWORK_HOME", str(tmp_path))
        assert on_a_real_model.main(["00_setup", "--timeout", "120"]) == 0
        assert provider.requests, "the notebook never reached the configured model"
    out = capsys.readouterr().out
    assert "| 00_setup |" in out and "| yes |" in out
