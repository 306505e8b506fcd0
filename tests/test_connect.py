"""connect(): the practice model by default, a real provider by configuration, never a leaked key."""
from __future__ import annotations

import ast
import logging
import re
import sys
from pathlib import Path

import pytest

from mini_framework import Settings, connect, connect_async, load_settings
from mini_framework.connection import NoProviderError, offline_vision_model, stands_for

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-test-0123456789abcdefghijklmnop"


@pytest.fixture
def no_provider(monkeypatch, tmp_path):
    """No provider in the environment, and no .env in the working directory or the project root."""
    from mini_framework import connection
    for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(connection, "PROJECT_ROOT", tmp_path / "no-project")  # a developer's own .env stays out
    return tmp_path


def test_without_configuration_the_practice_model_answers(no_provider):
    settings = load_settings()
    assert settings.is_practice and settings.model == "practice" and settings.base_url == ""  # nothing started
    assert "connect() starts it" in settings.describe()
    connection = connect()
    base_url = connection.settings.base_url
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
    client, model = connection
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "你好"}])
    assert reply.choices[0].message.content


def test_a_persona_name_selects_that_practice_model(no_provider):
    assert load_settings("practice-sloppy").model == "practice-sloppy"


def test_practice_server_is_shared_by_all_connections(no_provider):
    assert connect().settings.base_url == connect().settings.base_url


def test_base_url_practice_means_offline_even_with_a_dotenv(no_provider, monkeypatch):
    (no_provider / ".env").write_text(f"LLM_BASE_URL=https://api.example.com/v1\nLLM_MODEL=m\nLLM_API_KEY={SECRET}\n")
    monkeypatch.setenv("LLM_BASE_URL", "practice")
    assert load_settings().is_practice


def test_dotenv_is_read_from_the_working_directory_and_says_so(no_provider):
    (no_provider / ".env").write_text(f"LLM_BASE_URL=https://api.example.com/v1/\nLLM_MODEL=deepseek-chat\nLLM_API_KEY={SECRET}\n")
    settings = load_settings()
    env_file = str(no_provider / ".env")
    assert settings == Settings("https://api.example.com/v1", SECRET, "deepseek-chat", is_practice=False,
                                env_file=env_file)
    assert settings.describe() == f"provider at https://api.example.com/v1, model deepseek-chat (settings from {env_file})"


def test_a_dotenv_planted_in_a_parent_folder_is_not_read(no_provider, monkeypatch):
    (no_provider / ".env").write_text("LLM_BASE_URL=https://attacker.example/v1\nLLM_MODEL=m\n")
    (no_provider / "lessons").mkdir()
    monkeypatch.chdir(no_provider / "lessons")
    settings = load_settings()
    assert settings.is_practice and settings.env_file is None


def test_the_project_roots_dotenv_is_read_from_any_working_directory(no_provider, monkeypatch):
    from mini_framework import connection
    root = no_provider / "project"
    (root / "lessons").mkdir(parents=True)
    (root / ".env").write_text("LLM_BASE_URL=https://api.example.com/v1\nLLM_MODEL=m\nLLM_API_KEY=k-123\n")
    monkeypatch.setattr(connection, "PROJECT_ROOT", root)
    monkeypatch.chdir(root / "lessons")
    assert load_settings().env_file == str(root / ".env")


def test_a_placeholder_key_is_a_clear_error(no_provider):
    (no_provider / ".env").write_text("LLM_BASE_URL=https://api.openai.com/v1\nLLM_API_KEY=your-key-here\nLLM_MODEL=m\n")
    with pytest.raises(ValueError, match="placeholder"):
        load_settings()


def test_connect_async_returns_the_same_kind_of_connection(no_provider):
    from openai import AsyncOpenAI
    connection = connect_async("practice-loop")
    client, model = connection
    assert isinstance(client, AsyncOpenAI) and model == "practice-loop" and connection.settings.is_practice


def test_environment_wins_over_dotenv(no_provider, monkeypatch):
    (no_provider / ".env").write_text("LLM_BASE_URL=https://a.example/v1\nLLM_MODEL=from-file\n")
    monkeypatch.setenv("LLM_MODEL", "from-env")
    assert load_settings().model == "from-env"


def test_persona_names_become_the_configured_model_on_a_real_provider(no_provider, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("LLM_MODEL", "qwen-plus")
    assert load_settings("practice-hallucinate").model == "qwen-plus"
    assert load_settings("qwen-max").model == "qwen-max"
    for flagged in ("practice@ctx=1047576", "practice@deepseek", "practice-eager@ctx=4096@deepseek"):
        assert load_settings(flagged).model == "qwen-plus"  # the practice server's flags mean nothing elsewhere
    assert load_settings("practice-vision").model == "qwen-plus"  # no LLM_VISION_MODEL: the configured model
    monkeypatch.setenv("LLM_VISION_MODEL", "qwen-vl-plus")
    assert load_settings("practice-vision@ctx=8192").model == "qwen-vl-plus"
    assert load_settings("practice-vision").model == "qwen-vl-plus"
    assert load_settings("practice-sloppy").model == "qwen-plus"


def test_every_persona_stands_for_a_configured_model_and_only_the_vision_one_for_the_vision_model():
    from practice_model import DEFAULT_PERSONAS
    kinds = {name: stands_for(name) for name in DEFAULT_PERSONAS}
    assert kinds == {name: "vision" if name == offline_vision_model() else "text" for name in DEFAULT_PERSONAS}
    assert offline_vision_model() in DEFAULT_PERSONAS
    assert [stands_for(name) for name in ("deepseek-chat", "gpt-4.1", "practiced", "my-practice")] == [None] * 4


def test_the_default_model_name_comes_from_the_practice_package(no_provider, monkeypatch):
    import practice_model
    monkeypatch.setattr(practice_model, "DEFAULT_MODEL", "practice-loop")
    assert load_settings().model == "practice-loop"


def test_the_framework_names_no_persona():
    """The persona names, and the rule for them, belong to practice_model: connection.py asks it."""
    tree = ast.parse((ROOT / "mini_framework" / "connection.py").read_text(encoding="utf-8"))
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    code = {s for s in strings if "\n" not in s}  # docstrings are prose, with examples
    assert not {s for s in code if re.search(r"practice-|practice@", s)}
    assert "practice-vision" not in "".join(code)


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


def test_an_unedited_copy_of_env_example_keeps_the_practice_model(no_provider):
    (no_provider / ".env").write_text((ROOT / ".env.example").read_text())
    settings = load_settings()
    assert settings.is_practice and settings.env_file == str(no_provider / ".env")


def test_uncommenting_a_block_without_a_key_is_a_clear_error(no_provider):
    text = (ROOT / ".env.example").read_text()
    block = text.split("# --- DeepSeek\n", 1)[1].split("\n\n", 1)[0]
    (no_provider / ".env").write_text("\n".join(line.removeprefix("# ") for line in block.splitlines()))
    with pytest.raises(ValueError, match="placeholder"):
        load_settings()


def test_the_framework_imports_and_connects_without_python_dotenv(no_provider, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_dotenv(name, *args, **kwargs):
        if name == "dotenv" or name.startswith("dotenv."):
            raise ModuleNotFoundError("No module named 'dotenv'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dotenv)
    monkeypatch.setenv("LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("LLM_MODEL", "qwen2.5:7b")
    assert load_settings().model == "qwen2.5:7b"  # settings from the environment need no dotenv
    (no_provider / ".env").write_text("LLM_MODEL=x\n")
    with pytest.raises(ModuleNotFoundError, match="pip install python-dotenv"):
        load_settings()


@pytest.fixture
def no_practice_package(monkeypatch):
    """As in a project that copied only mini_framework/: `import practice_model` fails."""
    monkeypatch.setitem(sys.modules, "practice_model", None)


@pytest.mark.parametrize("base_url", [None, "practice"])
def test_without_the_practice_package_and_no_provider_the_error_says_what_to_set(no_provider, no_practice_package,
                                                                                  monkeypatch, base_url):
    if base_url:
        monkeypatch.setenv("LLM_BASE_URL", base_url)
    for call in (connect, connect_async, load_settings):
        with pytest.raises(NoProviderError) as error:
            call()
        assert all(name in str(error.value) for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"))
        assert isinstance(error.value, RuntimeError) and not isinstance(error.value, ImportError)
        assert error.value.__cause__ is None and error.value.__context__ is None  # no import traceback behind it


def test_without_the_practice_package_a_real_provider_works(no_provider, no_practice_package, monkeypatch):
    monkeypatch.setenv("LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("LLM_MODEL", "qwen2.5:7b")
    client, model = connect()
    assert model == "qwen2.5:7b" and str(client.base_url) == "http://localhost:11434/v1/"
    assert load_settings("llama3.2").model == "llama3.2"
    assert stands_for("qwen2.5:7b") is None and offline_vision_model() is None


def test_an_import_error_inside_the_practice_package_is_not_taken_for_its_absence(no_provider, monkeypatch, tmp_path):
    broken = tmp_path / "practice_model"
    broken.mkdir()
    (broken / "__init__.py").write_text("import a_dependency_that_is_missing_7f3a\n")
    monkeypatch.delitem(sys.modules, "practice_model")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as error:
        load_settings()
    assert error.value.name == "a_dependency_that_is_missing_7f3a"
    monkeypatch.setenv("LLM_BASE_URL", "https://api.example.com/v1")
    monkeypatch.setenv("LLM_MODEL", "m")
    with pytest.raises(ModuleNotFoundError):
        load_settings("practice-sloppy")  # asking the package about a name imports it: its error shows


def test_connect_says_through_logging_that_the_practice_model_answers(no_provider, caplog, capsys):
    with caplog.at_level(logging.INFO, logger="mini_framework"):
        connection = connect()
    [record] = [r for r in caplog.records if r.name == "mini_framework"]
    assert record.levelno == logging.INFO
    assert "practice model" in record.getMessage() and connection.settings.base_url in record.getMessage()
    assert "LLM_BASE_URL" in record.getMessage()
    assert capsys.readouterr() == ("", "")  # a log record, not a print: notebook outputs stay as they are


def test_a_real_provider_logs_nothing(no_provider, monkeypatch, caplog):
    monkeypatch.setenv("LLM_BASE_URL", "http://localhost:11434/v1")
    monkeypatch.setenv("LLM_MODEL", "qwen2.5:7b")
    with caplog.at_level(logging.INFO, logger="mini_framework"):
        connect()
    assert [r for r in caplog.records if r.name == "mini_framework"] == []
