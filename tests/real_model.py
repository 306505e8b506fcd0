"""Every lesson also runs against a well-behaved real model: *Run All* with `.env` pointing elsewhere.

The "real provider" here is a practice server this test starts, configured the way a learner's
`.env` would configure OpenAI or DeepSeek (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL): persona names
such as "practice-sloppy" then become the configured model, as they would become `deepseek-chat`,
so no cell can rely on a misbehaving persona. Outputs are not compared (a real model's are its
own); every cell must run without an error. Only loopback is contacted.

The notebooks are split over test_real_model_*.py so that test workers share the work (each
file runs on one worker).
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from practice_model import PracticeServer

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("*.ipynb"))
FIRST_HALF = SOLUTIONS[: len(SOLUTIONS) // 2]
SECOND_HALF = SOLUTIONS[len(SOLUTIONS) // 2:]


@pytest.fixture(scope="module")
def provider():
    """A well-behaved model behind an OpenAI-compatible URL, as a real provider would be."""
    with PracticeServer(api_key="sk-test-real-provider-0123456789") as server:
        yield server


def run_against_provider(path, provider, monkeypatch, vision_model: str | None = None):
    """Run All against the provider; `vision_model` is LLM_VISION_MODEL (a model of it that takes images)."""
    monkeypatch.setenv("LLM_BASE_URL", provider.base_url)
    monkeypatch.setenv("LLM_API_KEY", "sk-test-real-provider-0123456789")
    monkeypatch.setenv("LLM_MODEL", "practice@ctx=131072")  # a real model's window, not the practice default
    if vision_model:
        monkeypatch.setenv("LLM_VISION_MODEL", vision_model)
    else:
        monkeypatch.delenv("LLM_VISION_MODEL", raising=False)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                errors.append(f"{cell.source[:200]!r}\n  -> {output['ename']}: {output['evalue'][:300]}")
    assert not errors, f"{path.name} fails against a configured provider:\n" + "\n".join(errors)
