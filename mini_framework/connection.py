"""Where requests go: the offline practice model by default, a real provider by configuration.

`load_settings()` reads the settings: the process environment, and a `.env` file from the working
directory or, failing that, from the project root (the folder that holds `mini_framework/`);
no other folder is searched, so a `.env` planted in a parent folder cannot redirect your key.
`connect()` turns them into an OpenAI SDK client: for a provider, pointed at `LLM_BASE_URL`; with
none configured, at the practice model, which it starts in a background thread (once per
process). The same notebook cell therefore runs offline and against OpenAI, DeepSeek, Qwen, Ollama...

Settings (all optional):

    LLM_BASE_URL   e.g. https://api.deepseek.com/v1   (unset or "practice" = the practice model)
    LLM_API_KEY    the provider's key (local servers such as Ollama accept any value)
    LLM_MODEL      the model name the provider expects, e.g. deepseek-chat
    LLM_VISION_MODEL  a model of the same provider that takes images (lesson 09), e.g. gpt-4.1-mini;
                   what the practice model's vision persona stands for against a real provider

The practice model is a package of its own, `practice_model` (OFFLINE_PACKAGE), which this module
knows only by that name and four attributes (`OfflineModel`): `DEFAULT_MODEL` (the name used when
none is given), `VISION_MODEL` (its persona that sees images), `stands_for(name)` ("text",
"vision" or None: which configured model one of its names means on a real provider, so a lesson's
persona gets LLM_MODEL there) and `shared_server()` (started once per process, with a `.base_url`).
Without the package, a real provider works as ever, and no configuration at all is a
NoProviderError naming the settings to add.

Concessions: one provider per process (whatever the environment says when `connect()` runs);
the environment wins over `.env`; reading `.env` needs python-dotenv (`pip install python-dotenv`);
a model name given to `connect()` with a real provider configured imports the practice package, if
installed, to ask whether the name is one of its own (nothing is started).
"""
from __future__ import annotations

import importlib
import logging
import os
import unicodedata
import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Protocol, cast

OFFLINE_PACKAGE = "practice_model"  # the offline practice model: used when no provider is configured
PRACTICE_API_KEY = "practice"  # the practice model accepts any key; the SDK insists on one
PROJECT_ROOT = Path(__file__).resolve().parent.parent  # the folder that holds mini_framework/
PLACEHOLDER_KEYS = {"your-key-here", "your_api_key", "sk-...", "...", "<your-key>", "changeme"}
SETTINGS_TO_ADD = "set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL (in the environment or in .env)"

log = logging.getLogger("mini_framework")


class NoProviderError(RuntimeError):
    """No provider is configured and the practice model is not installed: nowhere to send requests.

    A RuntimeError, not an ImportError: the fix is three settings, not a package, and code that
    treats an ImportError as "optional feature absent" must not swallow it.
    """


class OfflineModel(Protocol):
    """What connect() uses of the practice model's package (OFFLINE_PACKAGE); see the module docstring."""

    DEFAULT_MODEL: str
    VISION_MODEL: str

    def stands_for(self, model: str) -> str | None: ...

    def shared_server(self) -> Any: ...


@dataclass(frozen=True)
class Settings:
    """Resolved connection settings. The key is kept out of `repr()` so it never lands in output.

    >>> Settings("https://api.example.com/v1", "secret", "m", is_practice=False)
    Settings(base_url='https://api.example.com/v1', model='m', is_practice=False, env_file=None)
    """

    base_url: str  # "" for the practice model until connect() starts it
    api_key: str = field(repr=False)
    model: str
    is_practice: bool
    env_file: str | None = None  # the .env file that was read, if any

    def __repr__(self) -> str:
        return (f"Settings(base_url={without_password(self.base_url)!r}, model={self.model!r}, "
                f"is_practice={self.is_practice!r}, env_file={self.env_file!r})")

    def describe(self) -> str:
        """One line a notebook can print: where requests go, which model answers, which .env was read.

        >>> Settings("http://127.0.0.1:8000/v1", "k", "practice", True).describe()
        'practice model (offline) at http://127.0.0.1:8000/v1, model practice'
        """
        if not self.is_practice:
            where = f"provider at {without_password(self.base_url)}"
        elif self.base_url:
            where = f"practice model (offline) at {self.base_url}"
        else:
            where = "practice model (offline; connect() starts it on this machine)"
        text = f"{where}, model {self.model}"
        if self.env_file:
            text += f" (settings from {self.env_file})"
        return text


def find_env_file(env_file: str | os.PathLike[str] | None = None) -> Path | None:
    """The .env to read: `env_file` if given, else ./.env, else .env in the project root; None if none exists.

    >>> find_env_file("/nonexistent/.env") is None
    True
    """
    if env_file:
        candidates = [Path(env_file)]
    else:
        try:
            candidates = [Path.cwd() / ".env", PROJECT_ROOT / ".env"]
        except OSError:  # the working directory was deleted
            candidates = [PROJECT_ROOT / ".env"]
    return next((path for path in candidates if path.is_file()), None)


def offline_model() -> OfflineModel | None:
    """The practice model's package, imported (nothing started), or None when it is not installed.

    Only its own absence counts as absent: an ImportError raised inside it is raised, not hidden.
    """
    try:
        return cast(OfflineModel, importlib.import_module(OFFLINE_PACKAGE))
    except ModuleNotFoundError as error:
        if error.name != OFFLINE_PACKAGE:
            raise
        return None


def stands_for(model: str) -> str | None:
    """What a model name means against a real provider: "text" (use LLM_MODEL) or "vision" (use
    LLM_VISION_MODEL) for a name of the practice model's own, None for any other name (used as given).
    Always None without the practice package.

    >>> stands_for("qwen-plus") is None
    True
    """
    offline = offline_model()
    return offline.stands_for(model) if offline is not None else None


def offline_vision_model() -> str | None:
    """The practice model's name for its persona that sees images, None without the practice package:
    `connect(offline_vision_model())` is that persona offline and LLM_VISION_MODEL against a provider.

    >>> name = offline_vision_model()
    >>> name is None or stands_for(name) == "vision"
    True
    """
    offline = offline_model()
    return offline.VISION_MODEL if offline is not None else None


def _required_offline_model() -> OfflineModel:
    """The practice model's package, or NoProviderError saying which settings to add."""
    offline = offline_model()
    if offline is None:
        raise NoProviderError(f"no provider is configured (LLM_BASE_URL is unset or 'practice') and the offline "
                              f"practice model is not installed (no {OFFLINE_PACKAGE} package): {SETTINGS_TO_ADD}, "
                              "e.g. LLM_BASE_URL=https://api.deepseek.com/v1, LLM_API_KEY=sk-..., "
                              "LLM_MODEL=deepseek-chat")
    return offline


def without_password(url: str) -> str:
    """A URL fit to print: a password in it replaced by ***.

    >>> without_password("https://user:s3cret@llm.example.com/v1")
    'https://user:***@llm.example.com/v1'
    """
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _read_env_file(path: Path) -> None:
    """Load `path` into the environment without overriding what is already set."""
    try:
        from dotenv import load_dotenv
    except ModuleNotFoundError:
        raise ModuleNotFoundError(f"{path} exists, and reading it needs python-dotenv: pip install python-dotenv "
                                  "(or set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL in the environment)") from None
    load_dotenv(path, override=False)  # real environment variables win over .env


def load_settings(model: str | None = None, *, env_file: str | os.PathLike[str] | None = None) -> Settings:
    """Read `.env` and the environment into Settings. Starts nothing (connect() does).

    `model` picks one of the practice model's personas (lesson 00 lists them). Against a real provider a
    persona name is replaced by `LLM_MODEL` (the vision persona's by `LLM_VISION_MODEL`, else
    `LLM_MODEL`; see `stands_for`), so a lesson cell works unchanged in both worlds; any other name
    is used as given. With nothing configured and no practice package: NoProviderError.
    """
    path = find_env_file(env_file)
    if path is not None:
        _read_env_file(path)
    source = str(path) if path else None
    base_url = unicodedata.normalize("NFKC", os.environ.get("LLM_BASE_URL", "")).strip()
    if not base_url or base_url.lower() == "practice":
        offline = _required_offline_model()
        return Settings("", PRACTICE_API_KEY, model or offline.DEFAULT_MODEL, is_practice=True, env_file=source)
    configured = os.environ.get("LLM_MODEL", "").strip()
    kind = stands_for(model) if model else None
    if kind == "vision":
        chosen = os.environ.get("LLM_VISION_MODEL", "").strip() or configured
    else:
        chosen = model if model and kind is None else configured
    if not chosen:
        raise ValueError("LLM_BASE_URL is set but LLM_MODEL is not: add the model name your provider "
                         "expects to .env, e.g. LLM_MODEL=deepseek-chat")
    api_key = os.environ.get("LLM_API_KEY", "").strip().strip("\"'“”‘’").strip() or "not-needed"
    if api_key.lower() in PLACEHOLDER_KEYS:
        raise ValueError(f"LLM_API_KEY is still a placeholder ({source or 'the environment'}): put your provider's "
                         "key there, or remove LLM_BASE_URL to use the offline practice model")
    odd = next((i for i, ch in enumerate(api_key) if not (ch.isascii() and ch.isprintable()) or ch == " "), None)
    if odd is not None:
        raise ValueError(f"LLM_API_KEY has a character that cannot be sent in an HTTP header (position {odd + 1}, "
                         f"{unicodedata.name(api_key[odd], 'a control character')}): copy the key again, as plain text")
    return Settings(base_url.rstrip("/"), api_key, chosen, is_practice=False, env_file=source)


def _started(settings: Settings) -> Settings:
    """The settings with the practice model running, if they point at it (and a log line saying so)."""
    if not settings.is_practice:
        return settings
    base_url = _required_offline_model().shared_server().base_url
    log.info("requests go to the offline practice model at %s, model %s (no provider configured: %s to use one)",
             base_url, settings.model, SETTINGS_TO_ADD)
    return replace(settings, base_url=base_url)


@dataclass(frozen=True)
class Connection:
    """What `connect()` returns: unpack it as `client, model = connect()`; `.settings` says where it goes."""

    client: Any  # OpenAI from connect(), AsyncOpenAI from connect_async()
    model: str
    settings: Settings

    def __iter__(self) -> Iterator[Any]:
        return iter((self.client, self.model))


def connect(model: str | None = None, *, env_file: str | None = None, **client_options: Any) -> Connection:
    """An OpenAI SDK client and the model name to use with it (starting the practice model if needed).

    `client_options` go to `OpenAI(...)`, e.g. `max_retries=5` or `timeout=20`.

    >>> client, model = connect()  # with nothing configured: the practice model, on this machine
    >>> client.base_url.host
    '127.0.0.1'
    """
    return _connect("OpenAI", model, env_file, client_options)


def connect_async(model: str | None = None, *, env_file: str | None = None, **client_options: Any) -> Connection:
    """Like `connect()`, with an `AsyncOpenAI` client for `await`-style code."""
    return _connect("AsyncOpenAI", model, env_file, client_options)


def _connect(kind: str, model: str | None, env_file: str | None, client_options: dict[str, Any]) -> Connection:
    """`connect()` with the SDK's client class named by `kind`: "OpenAI" or "AsyncOpenAI"."""
    settings = _started(load_settings(model, env_file=env_file))
    import openai  # here: the rest of the framework never needs the SDK imported

    client = getattr(openai, kind)(base_url=settings.base_url, api_key=settings.api_key, **client_options)
    return Connection(client, settings.model, settings)
