"""Redaction: secrets and private paths out, harmless text left alone, and never slow on hostile text."""
from __future__ import annotations

import threading

import pytest

from mini_framework.redaction import MAX_TEXT, redact, redact_secrets


@pytest.mark.parametrize("text,expected", [
    ("GET https://example.com/raw/setup.py failed", "GET https://example.com/raw/setup.py failed"),
    ("see https://github.com/openai/openai-python/blob/main/src/openai/_client.py:12",
     "see https://github.com/openai/openai-python/blob/main/src/openai/_client.py:12"),
    ("reading /data/sales.csv", "reading /data/sales.csv"),
    ("Basic information about the weather", "Basic information about the weather"),
    ("max_tokens: 100 and tokens: 5", "max_tokens: 100 and tokens: 5"),
    ("北京的天气：晴，22°C", "北京的天气：晴，22°C"),
])
def test_harmless_text_is_left_alone(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text,secret", [
    ("connect postgres://app:pw4shop@db.internal/shop failed", "pw4shop"),
    ("mysql://root:S3cr3t!@10.0.0.5:3306/db", "S3cr3t!"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ('{"Authorization": "Bearer abcdefghijklmnop"}', "abcdefghijklmnop"),
    ("401 for sk-proj-0123456789abcdef", "0123456789abcdef"),
    ('config {"password": "hunter2hunter2", "user": "x"}', "hunter2hunter2"),
    ("url?api_key=abc123def456&x=1", "abc123def456"),
    ("client_secret=zz9zz9zz9", "zz9zz9zz9"),
])
def test_secrets_are_taken_out(text, secret):
    for redacted in (redact(text), redact_secrets(text)):
        assert secret not in redacted and "[redacted]" in redacted


@pytest.mark.parametrize("name", ["DB_PASSWORD", "MYSQL_PWD", "SMTP_PASSWD", "GOOGLE_CREDENTIALS", "SENTRY_DSN",
                                  "LLM_API_KEY", "GITHUB_TOKEN", "APP_SECRET"])
def test_values_of_secret_environment_variables_are_taken_out(monkeypatch, name):
    monkeypatch.setenv(name, "v4lue-0f-the-s3cret")
    assert redact("failed with v4lue-0f-the-s3cret in it") == "failed with [redacted] in it"


def test_the_shells_working_directory_is_not_a_secret(monkeypatch):
    monkeypatch.setenv("PWD", "/home/learner/course")
    monkeypatch.setenv("OLDPWD", "/home/learner")
    assert redact_secrets("saved to /home/learner/course/out.txt") == "saved to /home/learner/course/out.txt"


def test_source_files_and_this_installation_are_hidden():
    import mini_framework
    text = f'File "/srv/app/weather.py", line 12 and {mini_framework.__file__} and C:\\app\\tool.py:3.'
    assert redact(text) == 'File "<source file>", line 12 and <internal> and <source file>.'


def test_long_text_is_cut_before_it_is_read():
    assert len(redact("x" * 1_000_000)) < MAX_TEXT + 100
    assert redact("x" * 1_000_000).endswith("(980000 more characters not shown)")


HOSTILE = ["/" * 30_000, "/" * 30_000 + ".py", "a" * 30_000 + "://", "x://" + "a:" * 15_000, "password" + " " * 30_000,
           "sk-" * 10_000, "C:" * 15_000 + ".py", "Authorization: " * 2_000, "\\" * 30_000 + ".py:1",
           ("/a" * 15_000) + ".pyw", "://" + ":" * 30_000 + "@"]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: repr(t[:12]))
def test_hostile_text_does_not_hang(text):
    """A hang detector, not a benchmark: the quadratic version took ~10 s on the first of these."""
    done = threading.Event()
    threading.Thread(target=lambda: (redact(text), done.set()), daemon=True).start()
    assert done.wait(5), "redact() took more than 5 s: something backtracks"
