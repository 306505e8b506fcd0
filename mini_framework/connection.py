"""Where requests go: the offline practice model by default, a real provider by configuration.

`connect()` reads `.env` (searched from the working directory upwards) and the process
environment. With `LLM_BASE_URL` set it returns an OpenAI SDK client for that provider; without
it, it starts the practice model in a background thread (once per process) and points the client
there. The same notebook cell therefore runs offline and against OpenAI, DeepSeek, Qwen, Ollama...

Settings (all optional):

    LLM_BASE_URL   e.g. https://api.deepseek.com/v1   (unset or "practice" = the practice model)
    LLM_API_KEY    the provider's key (local servers such as Ollama accept any value)
    LLM_MODEL      the model name the provider expects, e.g. deepseek-chat

Concessions: one provider per process (whatever the environment says when `connect()` runs);
the key is read from the environment only, never accepted as a printed argument in lessons.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from dotenv import find_dotenv, load_dotenv
from openai import AsyncOpenAI, OpenAI

PRACTICE_MODEL = "practice"
PRACTICE_API_KEY = "practice"  # the practice model accepts any key; the SDK insists on one


@dataclass(frozen=True)
class Settings:
    """Resolved connection settings. The key is kept out of `repr()` so it never lands in output.

    >>> Settings("https://api.example.com/v1", "secret", "m", is_practice=False)
    Settings(base_url='https://api.example.com/v1', model='m', is_practice=False)
    """

    base_url: str
    api_key: str = field(repr=False)
    model: str
    is_practice: bool

    def describe(self) -> str:
        """One line a notebook can print: where requests go and which model answers.

        >>> Settings("http://127.0.0.1:8000/v1", "k", "practice", True).describe()
        'practice model (offline) at http://127.0.0.1:8000/v1, model practice'
        """
        where = "practice model (offline)" if self.is_practice else "provider"
        return f"{where} at {self.base_url}, model {self.model}"


def load_settings(model: str | None = None, *, env_file: str | None = None) -> Settings:
    """Read `.env` and the environment; start the practice model if no provider is configured.

    `model` picks a practice persona such as "practice-sloppy". Against a real provider a
    persona name is replaced by `LLM_MODEL`, so a lesson cell works unchanged in both worlds;
    any other name is used as given.
    """
    dotenv_path = env_file or find_dotenv(usecwd=True)
    if dotenv_path:
        load_dotenv(dotenv_path, override=False)  # real environment variables win over .env
    base_url = os.environ.get("LLM_BASE_URL", "").strip()
    if base_url and base_url.lower() != "practice":
        configured = os.environ.get("LLM_MODEL", "").strip()
        chosen = model if model and not model.startswith(PRACTICE_MODEL) else configured
        if not chosen:
            raise ValueError(
                "LLM_BASE_URL is set but LLM_MODEL is not: add the model name your provider "
                "expects to .env, e.g. LLM_MODEL=deepseek-chat"
            )
        api_key = os.environ.get("LLM_API_KEY", "").strip() or "not-needed"
        return Settings(base_url.rstrip("/"), api_key, chosen, is_practice=False)

    from .practice import shared_server  # imported here: a real provider never loads it

    server = shared_server()
    return Settings(server.base_url, PRACTICE_API_KEY, model or PRACTICE_MODEL, is_practice=True)


class Connection(NamedTuple):
    """What `connect()` returns: unpack it as `client, model = connect()`."""

    client: OpenAI
    model: str


def connect(model: str | None = None, *, env_file: str | None = None, **client_options: Any) -> Connection:
    """An OpenAI SDK client and the model name to use with it.

    `client_options` go to `OpenAI(...)`, e.g. `max_retries=5` or `timeout=20`.

    >>> client, model = connect("practice")
    >>> model
    'practice'
    """
    settings = load_settings(model, env_file=env_file)
    client = OpenAI(base_url=settings.base_url, api_key=settings.api_key, **client_options)
    return Connection(client, settings.model)


def connect_async(model: str | None = None, *, env_file: str | None = None, **client_options: Any) -> tuple[AsyncOpenAI, str]:
    """Like `connect()`, with an `AsyncOpenAI` client for `await`-style code."""
    settings = load_settings(model, env_file=env_file)
    return AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, **client_options), settings.model
