"""Keeping secrets, and this machine's paths, out of what a model or a log reads.

    redact_secrets(text)   keys, tokens, passwords, credentials in URLs -> [redacted]     (for logs)
    redact(text)           the same, and this installation's paths and source files too  (for a model)

What counts as a secret: `sk-...` keys; `Bearer <token>` and whatever follows `Authorization:`;
the value after `api_key=`, `token:`, `"password": ...` and similar names; the password in a URL
(`postgres://app:pw@db/shop`); and the value of any environment variable whose name says it is a
key, token, secret, password, credential or DSN, wherever that value appears.

Both functions take time linear in the length of the text (no pattern can backtrack over a long
run of `/`), and read at most MAX_TEXT characters: the rest is replaced by a count, so a
megabyte-long exception message costs no more than a short one.

Concessions: this is pattern matching, not a proof. A secret with no tell-tale name or shape
(a password printed on its own) gets through unless it is in the environment; give tools
credentials through the environment, never through their parameters.
"""
from __future__ import annotations

import os
import re
import sysconfig
from pathlib import Path

__all__ = ["MAX_TEXT", "redact", "redact_secrets"]

MAX_TEXT = 20_000  # characters read; longer text is cut first (what a model reads is cut far shorter)
REDACTED = "[redacted]"

# Every pattern starts with a literal or a word boundary and uses bounded or non-overlapping runs,
# so each is linear in the length of the text.
_KEYS = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
_AUTHORIZATION = re.compile(r"(?i)\b(authorization['\"]?\s*[:=]\s*['\"]?(?:[A-Za-z]+ )?)[^\s'\",;]+")
_NAMED = re.compile(r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|client[_-]?secret"
                    r"|password|passwd|pwd|credentials?)['\"]?\s*[=:]\s*['\"]?)[^\s'\",;&}]+")
_URL_PASSWORD = re.compile(r"(://[^\s/:@]{0,256}:)[^\s/@]{1,256}@")

# Environment variables that hold secrets, by name, with the shortest value worth replacing everywhere:
# real keys are long, and short values under such names are placeholders ("ollama", "not-needed").
_KEY_NAME, _MIN_KEY = re.compile(r"(?i)KEY|TOKEN|SECRET|(?:^|_)AUTH(?:_|$)"), 12
_PASSWORD_NAME, _MIN_PASSWORD = re.compile(r"(?i)PASSWORD|PASSWD|CREDENTIAL|DSN|(?:^|_)PWD(?:_|$)"), 8
_NOT_SECRET_NAMES = {"PWD", "OLDPWD"}  # the shell's working directories

_TOKEN_SPLIT = re.compile(r"([\s'\"<>()\[\]{},]+)")  # what separates paths and URLs from the words around them
_PRIVATE_DIRS = tuple(sorted({str(Path(p).resolve()) for p in (
    sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"], Path(__file__).parent)}, key=len, reverse=True))


def _bounded(text: str) -> str:
    """`text`, cut to MAX_TEXT characters with a note saying how much was left out."""
    if len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + f" … ({len(text) - MAX_TEXT} more characters not shown)"


def _environment_secrets() -> list[str]:
    """Values of environment variables whose names say they are secret, longest first."""
    values = []
    for name, value in os.environ.items():
        if name.upper() in _NOT_SECRET_NAMES:
            continue
        if _PASSWORD_NAME.search(name) and len(value) >= _MIN_PASSWORD:
            values.append(value)
        elif _KEY_NAME.search(name) and len(value) >= _MIN_KEY:
            values.append(value)
    return sorted(values, key=len, reverse=True)


def redact_secrets(text: str) -> str:
    """Text with API keys, tokens and passwords taken out; what a local log may keep.

    >>> redact_secrets("GET /v1?api_key=abc123def456 as postgres://app:hunter2@db/shop")
    'GET /v1?api_key=[redacted] as postgres://app:[redacted]@db/shop'
    >>> redact_secrets("Authorization: Basic dXNlcjpwYXNz")
    'Authorization: Basic [redacted]'
    """
    text = _bounded(text)
    text = _KEYS.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: m[1] + REDACTED, text)
    text = _AUTHORIZATION.sub(lambda m: m[1] + REDACTED, text)
    text = _NAMED.sub(lambda m: m[1] + REDACTED, text)
    text = _URL_PASSWORD.sub(lambda m: m[1] + REDACTED + "@", text)
    for value in _environment_secrets():
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def _source_path_start(token: str) -> int:
    """Where a path to a Python source file starts in `token` ('at /srv/app/x.py:12' -> 3), or -1.

    >>> _source_path_start("/srv/app/weather.py:12"), _source_path_start("C:\\\\app\\\\x.py")
    (0, 0)
    >>> _source_path_start("x.py")
    -1
    """
    core = token.rstrip(".,;:")
    line = core.rpartition(":")
    if line[2].isdigit() and line[0]:  # a line number: path.py:12
        core = line[0]
    if not core.endswith((".py", ".pyw")):
        return -1
    slash = min((i for i in (core.find("/"), core.find("\\")) if i >= 0), default=-1)
    if slash > 0 and core[slash - 1] == ":" and slash >= 2 and core[slash - 2].isalpha():
        slash -= 2  # a Windows drive letter, C:\
    return slash


def _redact_path(token: str) -> str:
    """One whitespace-delimited token, with a private path or a source file path replaced."""
    if "://" in token and not token.lower().startswith("file://"):
        return token  # a web address: where *its* files live is not this machine's business
    for folder in _PRIVATE_DIRS:
        at = token.find(folder)
        if at >= 0:
            return token[:at] + "<internal>"
    start = _source_path_start(token)
    if start < 0:
        return token
    end = len(token.rstrip(".,;"))
    return token[:start] + "<source file>" + token[end:]


def redact(text: str) -> str:
    """What a model may read: no secrets, no paths of this installation, no source file paths.

    >>> redact("401 for key sk-abc123def456ghi789 in /srv/app/weather.py:12, reading /data/a.csv")
    '401 for key [redacted] in <source file>, reading /data/a.csv'
    >>> redact("GET https://example.com/raw/setup.py failed")
    'GET https://example.com/raw/setup.py failed'
    """
    pieces = _TOKEN_SPLIT.split(redact_secrets(text))
    return "".join(piece if i % 2 else _redact_path(piece) for i, piece in enumerate(pieces))
