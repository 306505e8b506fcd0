"""The request log keeps one compact copy of each exchange and stays within its count and byte limits."""
from __future__ import annotations

import gc
import http.client
import json
import re
import tracemalloc

from practice_model import Persona, PracticeServer, Reply
from practice_model.requestlog import RequestLog, encode


def entry(i: int, size: int = 1000) -> dict:
    return {"method": "POST", "path": "/v1/chat/completions", "headers": {}, "status": 200,
            "request": {"model": "m", "messages": [{"role": "user", "content": f"{i}:" + "x" * size}]},
            "response": {"id": i}}


def test_the_oldest_entries_go_when_the_bytes_run_out():
    log = RequestLog(max_entries=1000, max_bytes=10_000)
    line = len(encode(entry(0)))
    for i in range(50):
        log.add(entry(i))
        assert log.size <= 10_000 and log.size == sum(len(encode(e)) for e in log.entries())
    kept = [e["response"]["id"] for e in log.entries()]
    assert kept == list(range(50 - 10_000 // line, 50))            # the newest, in order


def test_the_oldest_entries_go_when_the_count_runs_out():
    log = RequestLog(max_entries=3, max_bytes=10**9)
    for i in range(10):
        log.add(entry(i))
    assert [e["response"]["id"] for e in log.entries()] == [7, 8, 9] and len(log) == 3
    assert [e["response"]["id"] for e in log.entries(last=1)] == [9]


def test_an_entry_larger_than_the_whole_budget_is_kept_without_its_bodies(tmp_path):
    log = RequestLog(max_bytes=5_000, path=tmp_path / "log.jsonl")
    log.add(entry(1, size=100))
    log.add(entry(2, size=50_000))
    first, second = log.entries()
    assert first["response"] == {"id": 1} and log.size <= 5_000
    assert second["status"] == 200 and second["request"].startswith("<entry of ") and "bodies not kept" in second["request"]


def test_each_entry_is_one_compact_json_line_and_decodes_to_what_was_logged(tmp_path):
    log = RequestLog(path=tmp_path / "log.jsonl")
    odd = {**entry(1), "request": {"text": "北京 \ud800 lone surrogate", "n": [1, 2.5, None, True]}}
    log.add(odd)
    assert log.entries() == [odd]
    line = (tmp_path / "log.jsonl").read_bytes()
    assert line.count(b"\n") == 1 and b": " not in line and b", " not in line
    assert json.loads(line) == odd


def test_secrets_are_scrubbed_everywhere_in_the_line():
    log = RequestLog()
    log.add({**entry(1), "request": {"text": "key sk-0123456789abcdef", "headers": "sk-0123456789abcdef"}},
            ["sk-0123456789abcdef"])
    assert "sk-0123456789abcdef" not in json.dumps(log.entries()) and "<redacted>" in json.dumps(log.entries())


def test_the_server_keeps_its_log_within_max_logged_bytes(tmp_path):
    def answer(request: dict) -> Reply:
        return Reply(content="ok")

    with PracticeServer(personas=[Persona.of("echo", answer)], max_logged_bytes=20_000,
                        log_path=tmp_path / "all.jsonl") as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        for i in range(30):
            body = json.dumps({"model": "echo", "messages": [{"role": "user", "content": f"{i} " + "y" * 2000}]})
            conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
            assert conn.getresponse().read()
        conn.close()
        kept = [e["request"]["messages"][0]["content"].split()[0] for e in server.requests]
    assert 0 < len(kept) < 30 and kept == [str(i) for i in range(30 - len(kept), 30)]
    assert len((tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()) == 30   # the file keeps all


def test_a_logged_request_costs_about_its_own_size_in_memory():
    """The log used to keep the parsed body (and more): about nine times its size for a body of tool schemas."""
    tools = [{"type": "function", "function": {"name": f"t{i}", "description": "d", "parameters": {
        "type": "object", "properties": {f"p{j}": {"type": "string"} for j in range(40)}}}} for i in range(100)]
    body = json.dumps({"model": "echo@ctx=65536",      # 26,506 tokens of tools: over the default window
                       "messages": [{"role": "user", "content": "hi"}], "tools": tools}).encode()

    def answer(request: dict) -> Reply:
        return Reply(content="ok")

    with PracticeServer(personas=[Persona.of("echo", answer)]) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)

        def post() -> None:
            conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
            conn.getresponse().read()

        post()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(5):
                post()
            gc.collect()
            retained = (tracemalloc.get_traced_memory()[0] - before) / 5
        finally:
            tracemalloc.stop()
        conn.close()
    assert retained < 2 * len(body), f"{retained / len(body):.1f} x the body per logged request"


# -----------------------------------------------------------------------------
# what a logged exchange shows: when it happened, and what was sent (secrets in the conversation
# included), with only the client's own credentials redacted

BALANCE = {"type": "function", "function": {"name": "get_balance", "description": "Get the account balance",
                                            "parameters": {"type": "object", "required": ["api_key"], "properties": {
                                                "api_key": {"type": "string", "description": "the bank's API key"}}}}}
USER_KEY = "sk-test-1234567890abcdef"           # what the user typed: a lesson shows it landing in the logs
CLIENT_KEY = "sk-practice-client-0123456789"     # what the client authenticates with: never logged


def _post(server: PracticeServer, body: dict, headers: dict | None = None) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", "/v1/chat/completions", body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", **(headers or {})})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def test_each_exchange_is_stamped_with_an_iso_8601_utc_time(tmp_path):
    import datetime as dt

    body = {"model": "practice", "messages": [{"role": "user", "content": "北京天气"}]}
    with PracticeServer(log_path=tmp_path / "log.jsonl") as server:
        before = dt.datetime.now(dt.timezone.utc)
        first = _post(server, body)
        second = _post(server, body)
        after = dt.datetime.now(dt.timezone.utc)
        entries = server.requests
    assert first == second                                           # the clock never reaches a response
    for e in entries:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e["time"]), e["time"]
        stamp = dt.datetime.fromisoformat(e["time"].replace("Z", "+00:00"))
        assert stamp.utcoffset() == dt.timedelta(0) and before - dt.timedelta(seconds=1) <= stamp <= after
        assert e["time"] not in json.dumps(e["response"])
    assert entries[0]["time"] <= entries[1]["time"]
    lines = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["time"] for line in lines] == [e["time"] for e in entries]


def test_a_secret_a_model_copied_into_a_call_is_visible_in_the_log_but_the_clients_key_is_not():
    question = {"role": "user", "content": f"My API key is {USER_KEY}, what's my balance?"}
    with PracticeServer(api_key=CLIENT_KEY) as server:
        reply = _post(server, {"model": "practice", "messages": [question], "tools": [BALANCE]},
                      {"Authorization": f"Bearer {CLIENT_KEY}", "X-Api-Key": CLIENT_KEY})
        [call] = reply["choices"][0]["message"]["tool_calls"]
        assert json.loads(call["function"]["arguments"]) == {"api_key": USER_KEY}
        follow_up = [question, reply["choices"][0]["message"],
                     {"role": "tool", "tool_call_id": call["id"], "content": '{"balance": 42}'}]
        _post(server, {"model": "practice", "messages": follow_up, "tools": [BALANCE]},
              {"Authorization": f"Bearer {CLIENT_KEY}"})
        first, second = server.requests
    logged = json.dumps([first, second])
    assert CLIENT_KEY not in logged
    assert first["headers"]["authorization"] == "Bearer <redacted>" and first["headers"]["x-api-key"] == "<redacted>"
    [sent] = first["response"]["choices"][0]["message"]["tool_calls"]           # in the model's answer...
    assert json.loads(sent["function"]["arguments"]) == {"api_key": USER_KEY}
    [again] = second["request"]["messages"][1]["tool_calls"]                       # ...and in the next request
    assert json.loads(again["function"]["arguments"]) == {"api_key": USER_KEY}
