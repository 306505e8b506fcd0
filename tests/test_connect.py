"""connect(): the practice model by default, a real provider by configuration, never a leaked key."""
from __future__ import annotations

from pathlib import Path

import pytest

from mini_framework import Settings, connect, load_settings

SECRET = "sk-test-0123456789abcdefghijklmnop"


@pytest.fixture
def no_provider(monkeypatch, tmp_path):
    """No provider in the environment and no .env anywhere above the working directory."""
    for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_without_configuration_the_practice_model_answers(no_provider):
    settings = load_settings()
    assert settings.is_practice and settings.model == "practice"
    assert settings.base_url.startswith("http://127.0.0.1:") and settings.base_url.endswith("/v1")
    client, model = connect()
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "你好"}])
    assert reply.choices[0].message.content


def test_a_persona_name_selects_that_practice_model(no_provider):
    assert load_settings("practice-sloppy").model == "practice-sloppy"


def test_practice_server_is_shared_by_all_connections(no_provider):
    assert load_settings().base_url == load_settings().base_url


def test_base_url_practice_means_offline_even_with_a_dotenv(no_provider, monkeypatch):
    (no_provider / ".env").write_text(f"LLM_BASE_URL=https://api.example.com/v1\nLLM_MODEL=m\nLLM_API_KEY={SECRET}\n")
    monkeypatch.setenv("LLM_BASE_URL", "practice")
    assert load_settings().is_practice


def test_dotenv_is_found_from_the_working_directory_upwards(no_provider, monkeypatch):
    (no_provider / ".env").write_text(f"LLM_BASE_URL=https://api.example.com/v1/\nLLM_MODEL=deepseek-chat\nLLM_API_KEY={SECRET}\n")
    (no_provider / "lessons").mkdir()
    monkeypatch.chdir(no_provider / "lessons")
    settings = load_settings()
    assert settings == Settings("https://api.example.com/v1", SECRET, "deepseek-chat", is_practice=False)


def test_environment_wins_over_dotenv(no_provider, monkeypatch):
    (no_provider / ".env").write_text("LLM_BASE_URL=https://a.example/v1\nLLM_MODEL=from-file\n")
    monkeypatch.setenv("LLM_MODEL", "from-env")
    assert load_settings().model == "from-env"


def test_persona_names_become_the_configured_model_on_a_real_provider(no_provider, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("LLM_MODEL", "qwen-plus")
    assert load_settings("practice-hallucinate").model == "qwen-plus"
    assert load_settings("qwen-max").model == "qwen-max"


def test_missing_model_is_a_clear_error(no_provider, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("LLM_API_KEY", SECRET)
    with pytest.raises(ValueError, match="LLM_MODEL") as error:
        load_settings()
    assert SECRET not in str(error.value)


def test_local_servers_need_no_key(no_provider, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("LLM_MODEL", "qwen2.5:7b")
    client, model = connect()
    assert client.api_key and model == "qwen2.5:7b"


def test_the_key_never_appears_in_what_a_notebook_would_print(no_provider, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("LLM_MODEL", "m")
    monkeypatch.setenv("LLM_API_KEY", SECRET)
    settings = load_settings()
    connection = connect()
    for text in (repr(settings), str(settings), settings.describe(), repr(connection), str(connection)):
        assert SECRET not in text
    assert connection.client.api_key == SECRET  # it is used, just not shown


def test_client_options_reach_the_sdk(no_provider):
    client, _ = connect(max_retries=7, timeout=3)
    assert client.max_retries == 7 and client.timeout == 3
