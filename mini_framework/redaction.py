"""Keeping secrets, and this machine's paths, out of what a model or a log reads.

    redact_secrets(text)   keys, tokens, passwords, credentials in URLs -> [redacted]     (for logs)
    redact(text)           the same, and this installation's paths and source files too  (for a model)

What counts as a secret: keys and tokens of well-known shapes (`sk-...`, `sk_live_...`, `ghp_...`,
`AKIA...`, `xoxb-...`, `AIza...`); `Bearer <token>` and whatever follows `Authorization:`; the value
after a name that ends in password, secret, token, api_key, private_key, credentials and the like
(`db_password=...`, `"SECRET_KEY": "..."`, also inside JSON-in-JSON); the password in a URL
(`postgres://app:pw@db/shop`); and the value of any environment variable whose name says it is a
key, token, secret, password, credential or DSN, wherever it appears (also URL-encoded,
JSON-escaped or in base64).

What counts as a path of this installation: the Python installation and the virtual environment,
the framework's folder, the working directory (shown as `.`), the home folder (shown as `~`),
and any Python source or bytecode file (`<source file>`). Other paths stay: "/data/sales.csv was
not found" is something the model should be able to pass on.

Both functions take time linear in the length of the text (no pattern can backtrack over a long
run of `/`), and read at most MAX_TEXT characters: the rest is replaced by a count, so a
megabyte-long exception message costs no more than a short one.

Concessions: this is pattern matching, not a proof. A secret with no tell-tale name or shape
(a password printed on its own, a URL-encoded URL, `user:password@host` without a scheme, a
password with a raw `/` inside a URL) gets through unless it is in the environment; give tools
credentials through the environment, never through their parameters. A path with spaces in it is
read as several words.
"""
from __future__ import annotations

import base64
import functools
import json
import os
import re
import sys
import sysconfig
import urllib.parse
from pathlib import Path
from typing import Any

__all__ = ["MAX_TEXT", "redact", "redact_secrets"]

MAX_TEXT = 20_000  # characters read; longer text is cut first (what a model reads is cut far shorter)
REDACTED = "[redacted]"

# Every pattern starts with a literal and uses bounded or non-overlapping runs, so each is linear in the
# length of the text.
_KEYS = re.compile(r"sk-[A-Za-z0-9_-]{8,}|\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}|\bgh[pousr]_[A-Za-z0-9]{20,}"
                   r"|\bgithub_pat_[A-Za-z0-9_]{20,}|\bAKIA[0-9A-Z]{16}\b|\bxox[abprs]-[A-Za-z0-9-]{10,}"
                   r"|\bAIza[0-9A-Za-z_-]{35}")
_BEARER = re.compile(r"(?i)\b(bearer(?:\s+|%20))[A-Za-z0-9._~+/=-]{8,}")
_Q = r"\\{0,2}['\"]"  # a quote, maybe escaped once or twice (JSON inside JSON)
_AUTHORIZATION = re.compile(rf"(?i)\b(authorization(?:{_Q})?\s*[:=]\s*(?:{_Q})?(?:[A-Za-z]+ )?)[^\s'\"\\,;]+")
_NAME = (r"(?:password|passwd|passphrase|pwd|secret(?:[_-]?access)?(?:[_-]?key)?|token|api[_-]?key|apikey"
         r"|access[_-]?key(?:[_-]?id)?|private[_-]?key|client[_-]?secret|credentials?)")
_QUOTED_VALUE = re.compile(rf"(?i)({_NAME}(?:{_Q})?\s*[=:]\s*)({_Q})((?:(?!{_Q}).){{1,500}}?)(?={_Q})")
_BARE_VALUE = re.compile(rf"(?i)({_NAME}(?:{_Q})?\s*[=:]\s*)(?!{_Q}|\[redacted\])[^\s'\"&\\]+")
_URL_PASSWORD = re.compile(r"(:(?:/|\\/){2}[^\s/:@\\]{0,256}:)[^\s/]{1,256}@")

# Environment variables that hold secrets, by name, with the shortest value worth replacing everywhere:
# real keys are long, and short values under such names are placeholders ("ollama", "not-needed").
_KEY_NAME, _MIN_KEY = re.compile(r"(?i)KEY|TOKEN|SECRET|(?:^|_)AUTH(?:_|$)"), 12
_PASSWORD_NAME, _MIN_PASSWORD = re.compile(r"(?i)PASSWORD|PASSWD|CREDENTIAL|DSN|(?:^|_)PWD(?:_|$)"), 8
_NOT_SECRET_NAMES = {"PWD", "OLDPWD"}  # the shell's working directories

_TOKEN_SPLIT = re.compile(r"([\s'\"<>()\[\]{},]+)")  # what separates paths and URLs from the words around them
_INSTALLATION = tuple(sorted({str(Path(p).resolve()) for p in (
    sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"], sys.prefix, sys.base_prefix, sys.exec_prefix,
    Path(__file__).parent)}, key=len, reverse=True))
_SOURCE_SUFFIXES = (".py", ".pyw", ".pyc", ".pyi", ".ipynb")


def _bounded(text: str) -> str:
    """`text`, cut to MAX_TEXT characters with a note saying how much was left out. The cut falls
    before the last word it would split, so the head of a secret is never left showing."""
    if len(text) <= MAX_TEXT:
        return text
    head = text[:MAX_TEXT]
    space = max(head.rfind(" "), head.rfind("\n"))
    if space > MAX_TEXT // 2:
        head = head[:space]
    return head + f" … ({len(text) - len(head)} more characters not shown)"


@functools.lru_cache(maxsize=256)  # the environment rarely changes; every redaction asks again
def _encodings(value: str) -> list[str]:
    """A secret as it may appear in text: as is, URL-encoded, JSON-escaped, and in base64 forms."""
    forms = {value, urllib.parse.quote(value, safe=""), urllib.parse.quote(value),
             json.dumps(value)[1:-1], json.dumps(value)[1:-1].replace("/", "\\/")}
    for prefix in (b"", b":"):
        forms.add(base64.b64encode(prefix + value.encode()).decode().rstrip("="))
    return [form for form in forms if len(form) >= 8]


_SECRETS: tuple[Any, list[str]] | None = None  # (the environment it was read from, its secrets)


def _environment_secrets() -> list[str]:
    """Values of environment variables whose names say they are secret (in the forms `_encodings`
    gives), longest first. Read again only when the environment changed (compared without decoding it)."""
    global _SECRETS
    raw = getattr(os.environ, "_data", None)  # CPython's undecoded copy: cheap to compare
    snapshot = tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())
    if _SECRETS is not None and _SECRETS[0] == snapshot:
        return _SECRETS[1]
    _SECRETS = (snapshot, _read_environment_secrets())
    return _SECRETS[1]


def _read_environment_secrets() -> list[str]:
    """`_environment_secrets`, computed."""
    values = []
    for name, value in os.environ.items():
        if name.upper() in _NOT_SECRET_NAMES:
            continue
        if ((_PASSWORD_NAME.search(name) and len(value) >= _MIN_PASSWORD)
                or (_KEY_NAME.search(name) and len(value) >= _MIN_KEY)):
            values += _encodings(value)
    return sorted(set(values), key=len, reverse=True)


def redact_secrets(text: str) -> str:
    """Text with API keys, tokens and passwords taken out; what a local log may keep.

    >>> redact_secrets("GET /v1?api_key=abc123def456 as postgres://app:hunter2@db/shop")
    'GET /v1?api_key=[redacted] as postgres://app:[redacted]@db/shop'
    >>> redact_secrets("Authorization: Basic dXNlcjpwYXNz")
    'Authorization: Basic [redacted]'
    """
    if not text:
        return text
    text = _bounded(text)
    text = _KEYS.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: m[1] + REDACTED, text)
    text = _AUTHORIZATION.sub(lambda m: m[1] + REDACTED, text)
    text = _QUOTED_VALUE.sub(lambda m: m[1] + m[2] + REDACTED, text)
    text = _BARE_VALUE.sub(lambda m: m[1] + REDACTED, text)
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
    for _ in range(2):  # a line number and a column: path.py:12:7
        head, _colon, number = core.rpartition(":")
        if number.isdigit() and head:
            core = head
    if not core.endswith(_SOURCE_SUFFIXES):
        return -1
    slash = min((i for i in (core.find("/"), core.find("\\")) if i >= 0), default=-1)
    if slash > 0 and core[slash - 1] == ":" and slash >= 2 and core[slash - 2].isalpha():
        slash -= 2  # a Windows drive letter, C:\
    return slash


def _places() -> list[tuple[str, str]]:
    """(folder, what to show instead) for the working directory and the home folder, deepest first;
    a folder too short to be telling ("/", "/root") is left out."""
    places = []
    for folder, shown in ((_safe_cwd(), "."), (os.path.expanduser("~"), "~")):
        if folder and folder.count(os.sep) >= 2:
            places.append((folder, shown))
    return sorted(places, key=lambda place: len(place[0]), reverse=True)


def _safe_cwd() -> str:
    """The working directory, or '' when it is gone."""
    try:
        return os.getcwd()
    except OSError:
        return ""


def _redact_path(token: str, places: list[tuple[str, str]]) -> str:
    """One whitespace-delimited token, with a path of this installation, the working directory, the home
    folder or a source file replaced."""
    if "://" in token and not token.lower().startswith("file://"):
        return token  # a web address: where *its* files live is not this machine's business
    for folder in _INSTALLATION:
        at = token.find(folder)
        if at >= 0:
            return token[:at] + "<internal>"
    for folder, shown in places:
        at = token.find(folder)
        if at >= 0 and token[at + len(folder):at + len(folder) + 1] in ("", "/", "\\"):
            token = token[:at] + shown + token[at + len(folder):]
            break
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
    places = _places()
    return "".join(piece if i % 2 else _redact_path(piece, places) for i, piece in enumerate(pieces))
