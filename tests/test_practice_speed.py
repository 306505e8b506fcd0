"""`@tps=N`: the practice model writes at N word pieces a second, so a stream's first text comes long before
its end (lesson 11b measures it). Times are compared with each other and with lower bounds only: a loaded
machine makes everything slower, never faster, so no test here has an upper wall-clock limit."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from openai import OpenAI

from practice_model import PracticeServer, providers

QUESTION = [{"role": "user", "content": "你好！"}]
TPS = 50


@pytest.fixture(scope="module")
def client() -> Iterator[OpenAI]:
    with PracticeServer() as practice:
        yield OpenAI(base_url=practice.base_url, api_key="practice", max_retries=0)


def timed_stream(client: OpenAI, model: str) -> tuple[float, float, int, str]:
    """(seconds to the first text, seconds to the end, chunks with text, the text)."""
    started, first, pieces, text = time.perf_counter(), None, 0, ""
    for chunk in client.chat.completions.create(model=model, messages=QUESTION, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            first = time.perf_counter() - started if first is None else first
            pieces += 1
            text += chunk.choices[0].delta.content
    assert first is not None, "no text came"
    return first, time.perf_counter() - started, pieces, text


def test_the_flag_is_read_and_keeps_the_ids():
    assert providers.parse_model(f"practice@tps={TPS}").tps == TPS
    assert providers.parse_model("practice@ollama@tps=5@ctx=4096").tps == 5
    assert providers.parse_model("practice").tps is None
    for bad in ("practice@tps=0", "practice@tps=fast", "practice@tps=1@tps=2", "practice@tps=-3"):
        assert providers.parse_model(bad) is None, bad
    assert providers.without_quirks(f"practice@tps={TPS}") == "practice"


def test_a_bad_speed_is_a_404(client):
    with pytest.raises(Exception) as raised:
        client.chat.completions.create(model="practice@tps=0", messages=QUESTION)
    assert getattr(raised.value, "status_code", None) == 404


def test_the_first_text_comes_long_before_the_end(client):
    first, whole, pieces, text = timed_stream(client, f"practice@tps={TPS}")
    assert pieces >= 10, "the reply is too short to show a difference"
    assert whole >= 0.9 * pieces / TPS, f"{pieces} pieces at {TPS} a second came in {whole:.2f} s"
    assert first < whole / 2, f"the first text after {first:.2f} s of {whole:.2f} s"
    assert text == timed_stream(client, "practice")[3], "the speed changes when, not what"


def test_a_reply_not_streamed_waits_as_long_as_the_stream(client):
    started = time.perf_counter()
    reply = client.chat.completions.create(model=f"practice@tps={TPS}", messages=QUESTION)
    waited = time.perf_counter() - started
    plain = client.chat.completions.create(model="practice", messages=QUESTION)
    _, _, pieces, _ = timed_stream(client, "practice")
    assert waited >= 0.9 * pieces / TPS, f"{pieces} pieces at {TPS} a second, answered after {waited:.2f} s"
    assert reply.choices[0].message.content == plain.choices[0].message.content
    assert reply.id == plain.id


def test_without_the_flag_nothing_waits():
    with PracticeServer() as practice:
        for model, pace in (("practice", 0.0), (f"practice@tps={TPS}", 1 / TPS)):
            body = json.dumps({"model": model, "messages": QUESTION, "stream": True}).encode()
            response = practice.dispatch("POST", "/v1/chat/completions", {}, body)
            assert response.status == 200 and response.pace == pytest.approx(pace), model
