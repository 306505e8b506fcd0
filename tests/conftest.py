"""Shared fixtures: a running practice server with scripted personas, raw HTTP helpers, spec validators.

The scripted persona (`scripted`) answers by the last message, so a test controls the reply
without depending on the real planner:

    "text"        -> a text answer (English and Chinese, several stream pieces)
    "one call"    -> one get_weather call
    "two calls"   -> two parallel get_weather calls (北京, 上海)
    "mixed"       -> text and a call in the same message
    a tool result -> "Done: <the tool contents>"
    anything else -> "You said: <it>"
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from practice_model import Persona, PlannedCall, PracticeServer, Reply, errors

OPENAPI = Path(__file__).resolve().parent / "openapi"
SPEC = str(OPENAPI / "chat_schemas.json")
sys.path.insert(0, str(OPENAPI))
import validate_openai_chat as validator  # noqa: E402  (vendored, see tests/openapi/extract.py)

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
TEXT = "Hello! It is sunny in Beijing today. 北京今天晴，25°C。"


def scripted(request: dict[str, Any]) -> Reply:
    """The scripted persona (see the module docstring)."""
    last = request["messages"][-1]
    content = last.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if last.get("role") == "tool":
        return Reply(content=f"Done: {text}")
    if text == "text":
        return Reply(content=TEXT)
    if text == "one call":
        return Reply(tool_calls=(PlannedCall.of("get_weather", {"city": "北京"}),))
    if text == "two calls":
        return Reply(tool_calls=(PlannedCall.of("get_weather", {"city": "北京"}),
                                 PlannedCall.of("get_weather", {"city": "上海"})))
    if text == "mixed":
        return Reply(content="Let me check.", tool_calls=(PlannedCall.of("get_weather", {"city": "Paris"}),))
    return Reply(content=f"You said: {text}")


def boom(request: dict[str, Any]) -> Reply:
    """A persona with a bug."""
    raise RuntimeError("secret internal detail in a traceback")


def busy(request: dict[str, Any]) -> Reply:
    """A persona that refuses like a rate-limited API."""
    raise errors.rate_limited("busy", retry_after=2)


PERSONAS = [
    Persona.of("scripted", scripted, "answers by the last message"),
    Persona.of("scripted-vision", scripted, "the same, with vision", vision=True),
    Persona.of("boom", boom, "always crashes"),
    Persona.of("busy", busy, "always 429"),
]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Two workers per CPU for `-n logical` (pyproject's addopts): about half of a notebook's time is waiting
    (on the sleeps and timeouts it shows, on its kernel), so two per CPU keep both busy. Measured on 2 CPUs:
    the suite fell from 102 s (2 workers) to a median of 84 s (4); 3 or 6 gave 88 s. PYTEST_XDIST_AUTO_NUM_WORKERS
    still overrides it, and -n N sets N."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return min(2 * (os.cpu_count() or 1), 16)


@pytest.fixture(scope="session")
def server():
    """One practice server for the whole session (small body limit, short socket timeout)."""
    with PracticeServer(personas=PERSONAS, max_body_bytes=256 * 1024, timeout=1.0) as s:
        yield s


@pytest.fixture
def fresh_server(tmp_path):
    """A private server with an API key and a JSONL log, for tests that inspect state."""
    with PracticeServer(personas=PERSONAS, api_key="sk-practice-secret-0123456789abcdef",
                        log_path=tmp_path / "requests.jsonl", timeout=1.0) as s:
        yield s


@dataclass
class Raw:
    """A raw HTTP answer."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def request(server: PracticeServer, method: str, path: str, body: bytes | str | dict | None = None,
            headers: dict[str, str] | None = None, conn: http.client.HTTPConnection | None = None) -> Raw:
    """Send one request with `http.client` (a dict body is sent as JSON) and read the whole answer."""
    if isinstance(body, dict):
        body = json.dumps(body, ensure_ascii=False)
    if isinstance(body, str):
        body = body.encode("utf-8")
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return Raw(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        if own:
            conn.close()


def post(server: PracticeServer, body: bytes | str | dict, **kwargs: Any) -> Raw:
    """POST to /v1/chat/completions."""
    return request(server, "POST", "/v1/chat/completions", body, **kwargs)


def send_raw(server: PracticeServer, data: bytes, timeout: float = 5.0) -> bytes:
    """Write raw bytes on a fresh socket and read until the server closes (or `timeout`)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (TimeoutError, ConnectionResetError):
            pass
        return b"".join(chunks)


def parse_raw(data: bytes) -> Raw:
    """Split a raw HTTP/1.1 answer with a Content-Length body."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    headers = {k.lower(): v for k, v in headers.items()}
    return Raw(int(lines[0].split()[1]), headers, body[: int(headers.get("content-length", len(body)))])


def sse_chunks(text: str) -> list[dict[str, Any]]:
    """The JSON chunks of an event stream (without `[DONE]`)."""
    lines = [ln[6:] for ln in text.splitlines() if ln.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(ln) for ln in lines[:-1]]


# -- spec validation ---------------------------------------------------------------------------


def response_problems(body: Any) -> list[str]:
    return validator.errors_in_response(body, SPEC)


def sse_problems(text: str) -> list[str]:
    return validator.errors_in_sse(text, SPEC)


def error_problems(body: Any) -> list[str]:
    return validator._errors("ErrorResponse", body, SPEC)


def schema_problems(schema: str, body: Any) -> list[str]:
    return validator._errors(schema, body, SPEC)


def assert_api_error(raw: Raw, status: int, message: str | None = None, *, param: Any = ..., code: Any = ...,
                     type: str = "invalid_request_error") -> dict[str, Any]:
    """Assert an OpenAI-shaped error with these fields; return its `error` object."""
    assert raw.status == status, raw.body[:500]
    assert raw.headers["content-type"] == "application/json"
    body = raw.json()
    assert error_problems(body) == [], body
    assert list(body) == ["error"] and list(body["error"]) == ["message", "type", "param", "code"]
    error = body["error"]
    assert error["type"] == type
    if message is not None:
        assert error["message"] == message
    if param is not ...:
        assert error["param"] == param
    if code is not ...:
        assert error["code"] == code
    return error


class Api:
    """The helpers above as one fixture: `api.post(server, body)`, `api.error_problems(body)`, ..."""

    SPEC, TEXT, WEATHER_TOOL, PERSONAS, Raw = SPEC, TEXT, WEATHER_TOOL, PERSONAS, Raw
    request = staticmethod(request)
    post = staticmethod(post)
    send_raw = staticmethod(send_raw)
    parse_raw = staticmethod(parse_raw)
    sse_chunks = staticmethod(sse_chunks)
    response_problems = staticmethod(response_problems)
    sse_problems = staticmethod(sse_problems)
    error_problems = staticmethod(error_problems)
    schema_problems = staticmethod(schema_problems)
    assert_error = staticmethod(assert_api_error)


@pytest.fixture(scope="session")
def api() -> type[Api]:
    """HTTP helpers and spec validators for the practice-model tests."""
    return Api


# Property and performance tests: many thousands of generated inputs, or inputs large enough that a quadratic
# step would show. They run in the second command (`pytest -m provider_pass`, which CI runs too) with the other
# heavy passes, keeping the README's first command under 90 s on 2 CPUs; they are also the tests whose timing
# ratios a machine under load can disturb.
HEAVY = ("fuzz", "linear_time", "linear_in_the", "stays_linear", "ten_thousand", "hash_seed")


@pytest.hookimpl(tryfirst=True)  # before -m picks what runs
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(fragment in item.name for fragment in HEAVY):
            item.add_marker(pytest.mark.provider_pass)
