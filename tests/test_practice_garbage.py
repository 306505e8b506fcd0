"""A few hundred generated garbage requests: the server answers each one quickly with a well-formed
OpenAI error (or a valid completion, when the mutation happens to be harmless), and keeps serving.

Deterministic: one seeded `random.Random`. The session server has a 256 KiB body limit and a
1 s socket timeout, so the half-sent requests below resolve in about a second.
"""
from __future__ import annotations

import copy
import http.client
import json
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from practice_model import PracticeServer

SEED = 20260101
SLOW = 3.0  # seconds: no answer may take longer (the socket timeout is 1 s)
CALL = {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"北京\"}"}}
BASE: dict[str, Any] = {
    "model": "scripted",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "one call"}]},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_abc", "content": "sunny"},
        {"role": "user", "content": "text"},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "tool_choice": "auto", "temperature": 0.5, "n": 1, "max_tokens": 50, "stop": ["zz"], "metadata": {"a": "b"},
}
GARBAGE_VALUES: list[Any] = ["", "x", "\ud800", "北京", 0, -1, 1.5, 10**30, True, False, None, [], {}, [1, "a"],
                             {"a": None}, [{}], "x" * 5000]


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a JSON value (dict keys and list indices)."""
    if prefix:
        yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from paths(value, (*prefix, i))


def mutate(rng: random.Random) -> dict[str, Any]:
    """The base body with one random node replaced by a wrongly typed value, or deleted."""
    body = copy.deepcopy(BASE)
    path = rng.choice(list(paths(body)))
    parent = body
    for step in path[:-1]:
        parent = parent[step]
    if rng.random() < 0.2:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(rng.choice(GARBAGE_VALUES))
    return body


def check_answer(api, status: int, body: bytes, streamed: bool, elapsed: float, what: str) -> list[str]:
    """Problems with one answer: slow, unexpected status, or a body that does not validate."""
    problems = [f"{what}: took {elapsed:.2f}s"] if elapsed > SLOW else []
    try:
        if status == 200:
            found = api.sse_problems(body.decode()) if streamed else api.response_problems(json.loads(body))
        elif status in (400, 404, 408, 413, 414, 431, 505):
            found = api.error_problems(json.loads(body))
        else:
            found = [f"status {status}"]
    except ValueError as exc:
        found = [f"unparseable body {body[:80]!r}: {exc}"]
    return problems + [f"{what}: {p}" for p in found]


def send(api, server, conn: http.client.HTTPConnection, method: str, path: str, body: bytes, what: str,
         headers: dict[str, str] | None = None) -> list[str]:
    """One request on a keep-alive connection, checked."""
    start = time.perf_counter()
    conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
    response = conn.getresponse()
    data = response.read()
    if method == "HEAD":
        ok = response.status == 404 and data == b"" and int(response.getheader("content-length")) > 0
        return [] if ok else [f"{what}: HEAD answered {response.status}"]
    streamed = (response.getheader("content-type") or "").startswith("text/event-stream")
    return check_answer(api, response.status, data, streamed, time.perf_counter() - start, what)


def test_garbage_bodies(server, api):
    rng = random.Random(SEED)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    full = json.dumps(BASE).encode()
    cases: list[tuple[str, bytes]] = []
    cases += [(f"random bytes #{i}", rng.randbytes(rng.randint(1, 2000))) for i in range(60)]
    cases += [(f"truncated JSON #{i}", full[: rng.randint(0, len(full) - 1)]) for i in range(60)]
    for i in range(160):
        body = mutate(rng)
        if rng.random() < 0.25:
            body["stream"] = True
        cases.append((f"mutation #{i}: {json.dumps(body, ensure_ascii=False)[:300]}", json.dumps(body).encode()))
    cases += [("huge string under the limit", json.dumps({**BASE, "metadata": {"a": "x" * 200_000}}).encode()),
              ("huge string over the limit", json.dumps({**BASE, "user": "x" * 300_000}).encode()),
              ("deep nesting", b'{"model": "scripted", "messages": ' + b"[" * 50_000 + b"]" * 50_000 + b"}")]
    problems: list[str] = []
    try:
        for what, body in cases:
            problems += send(api, server, conn, "POST", "/v1/chat/completions", body, what)
    finally:
        conn.close()
    assert problems == []
    assert len(cases) >= 280


@pytest.mark.skipif(not (Path(__file__).resolve().parents[1] / "practice_model" / "planner.py").exists(),
                    reason="practice_model/planner.py not written yet")
def test_the_real_planner_survives_mutations(api):
    """Valid-but-odd requests never crash the `practice` persona (a crash would be a 500)."""
    rng = random.Random(SEED + 2)
    problems: list[str] = []
    with PracticeServer() as practice:
        conn = http.client.HTTPConnection("127.0.0.1", practice.port, timeout=10)
        try:
            for i in range(120):
                body = mutate(rng)
                if body.get("model") == "scripted":
                    body["model"] = "practice"
                body["stream"] = rng.random() < 0.3
                what = f"planner mutation #{i}: {json.dumps(body, ensure_ascii=False)[:300]}"
                problems += send(api, practice, conn, "POST", "/v1/chat/completions", json.dumps(body).encode(), what)
        finally:
            conn.close()
    assert problems == []


def test_garbage_routes_and_methods(server, api):
    rng = random.Random(SEED + 1)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "FOO", "TRACE"]
    targets = ["/", "/v1", "/v1/", "/v1/chat", "/v1/chat/completions/", "/v1/models/x/y", "/v2/chat/completions",
               "/v1/chat/completions/../models", "/%00", "/v1/responses", "/v1/embeddings"]
    problems: list[str] = []
    try:
        for _ in range(40):
            method, target = rng.choice(methods), rng.choice(targets)
            problems += send(api, server, conn, method, target, b'{"model": "scripted"}', f"{method} {target}")
    finally:
        conn.close()
    assert problems == []


RAW_CASES: list[tuple[str, bytes, set[int]]] = [
    ("Content-Length not a number", b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: abc\r\n\r\n{}", {400}),
    ("Content-Length negative", b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: -5\r\n\r\n{}", {400}),
    ("two Content-Lengths", b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n"
                            b"\r\n{}x", {400}),
    ("unknown Transfer-Encoding", b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n{}", {400}),
    ("bad chunk size", b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
     {400}),
    ("chunk without CRLF", b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
     {400}),
    ("chunked over the limit", b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                               + b"%x\r\n" % 300_000 + b"x" * 300_000 + b"\r\n0\r\n\r\n", {413}),
    ("garbage request line", b"GARBAGE\r\n\r\n", {400}),
    ("binary request line", bytes(range(1, 32)) + b"\r\n\r\n", {400}),
    ("HTTP/2.0 on a 1.1 server", b"GET /v1/models HTTP/2.0\r\n\r\n", {505}),
    ("huge request line", b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n", {414}),
    ("huge header line", b"GET /v1/models HTTP/1.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", {431}),
    ("too many headers", b"GET /v1/models HTTP/1.1\r\n" + b"X-A: b\r\n" * 150 + b"\r\n", {431}),
    ("no body at all", b"POST /v1/chat/completions HTTP/1.1\r\nConnection: close\r\n\r\n", {400}),
]


def test_bad_http_framing(server, api):
    problems: list[str] = []
    for what, data, statuses in RAW_CASES:
        start = time.perf_counter()
        answer = api.parse_raw(api.send_raw(server, data))
        problems += check_answer(api, answer.status, answer.body, False, time.perf_counter() - start, what)
        if answer.status not in statuses:
            problems.append(f"{what}: status {answer.status}, expected {statuses}")
    assert problems == []


def test_valid_chunked_body_is_accepted(server, api):
    body = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "text"}]}).encode()
    data = (b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + b"%x\r\n%s\r\n" % (10, body[:10]) + b"%x;ext=1\r\n%s\r\n" % (len(body) - 10, body[10:]) + b"0\r\n\r\n")
    answer = api.parse_raw(api.send_raw(server, data))
    assert answer.status == 200 and api.response_problems(answer.json()) == []


def test_half_sent_requests_time_out_without_hanging(server, api):
    body = json.dumps(BASE).encode()
    halves = {
        "half a body": b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (len(body),
                                                                                                 body[:20]),
        "half a chunked body": b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n100\r\n{",
        "half the headers": b"POST /v1/chat/completions HTTP/1.1\r\nContent-Le",
        "nothing at all": b"",
    }
    socks = {}
    start = time.perf_counter()
    for what, data in halves.items():  # all at once: they time out in parallel
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=SLOW + 2)
        sock.sendall(data)
        socks[what] = sock
    answers = {}
    for what, sock in socks.items():
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        finally:
            sock.close()
        answers[what] = b"".join(chunks)
    assert time.perf_counter() - start < SLOW
    for what in ("half a body", "half a chunked body"):
        answer = api.parse_raw(answers[what])
        api.assert_error(answer, 408, code="timeout")
    assert answers["half the headers"] == b"" and answers["nothing at all"] == b""


def test_server_still_answers_after_all_that(server, api):
    assert server.running and server._thread.is_alive()
    raw = api.post(server, {"model": "scripted", "messages": [{"role": "user", "content": "text"}]})
    assert raw.status == 200 and api.response_problems(raw.json()) == []
