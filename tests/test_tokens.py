"""Token counts: the offline estimate, tiktoken only when it can count without a network, whole requests."""
from __future__ import annotations

import hashlib
import random

import pytest
from openai.types.chat import ChatCompletionMessage

from mini_framework.budget import tokens
from mini_framework.budget.tokens import TokenCount, count_tokens, estimate_tokens, message_tokens, tiktoken_encoding

# OpenAI's cookbook, "How to count tokens with tiktoken": the API reported 124 (gpt-4o) and 129 (gpt-4) prompt
# tokens for EXAMPLE, and 101 (gpt-4o) and 105 (gpt-4) for WEATHER with TOOLS.
EXAMPLE = [
    {"role": "system", "content": "You are a helpful, pattern-following assistant that translates corporate jargon "
                                  "into plain English."},
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
    {"role": "system", "name": "example_user", "content": "Let's circle back when we have more bandwidth to touch "
                                                          "base on opportunities for increased leverage."},
    {"role": "system", "name": "example_assistant", "content": "Let's talk later when we're less busy about how to do "
                                                               "better."},
    {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client "
                                "deliverable."},
]
WEATHER = [{"role": "system", "content": "You are a helpful assistant that can answer to questions about the weather."},
           {"role": "user", "content": "What's the weather like in San Francisco?"}]
TOOLS = [{"type": "function", "function": {
    "name": "get_current_weather", "description": "Get the current weather in a given location",
    "parameters": {"type": "object", "required": ["location"], "properties": {
        "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
        "unit": {"type": "string", "description": "The unit of temperature to return",
                 "enum": ["celsius", "fahrenheit"]}}}}}]


def has_file(name: str) -> bool:
    return tokens._cached_file(name) is not None


# ---------------------------------------------------------------------------------------------
# The estimate.


def test_chinese_is_not_a_quarter_of_a_token_per_character():
    assert estimate_tokens("北京今天天气怎么样？明天会下雨吗？") == 12  # 17 characters; o200k_base: 13, "chars/4": 5
    assert estimate_tokens("天" * 100) == 70
    assert estimate_tokens("The weather in Paris is cloudy today.") == 8  # o200k_base: 8


def test_the_estimate_is_within_ten_percent_of_the_cookbook_counts():
    for messages, tools_, real in [(EXAMPLE, None, 124), (WEATHER, TOOLS, 101)]:
        estimate = message_tokens(messages, tools_, use_tiktoken=False)
        assert estimate.method == "estimate" and abs(estimate.tokens - real) / real < 0.10


@pytest.mark.parametrize("text", ["", " ", "\n\n\n", "\x00\x01", "broken \udcff surrogate", "😀🎉", "Привет, мир",
                                  "مرحبا", "a" * 10_000, "。" * 50, "x=1;y=2\r\n\tz", "\ufeffBOM"])
def test_any_text_gets_a_count(text):
    assert estimate_tokens(text) >= 0
    assert count_tokens(text).tokens >= 0


def test_bytes_are_refused_by_name():
    with pytest.raises(TypeError, match="not bytes"):
        estimate_tokens(b"hello")  # type: ignore[arg-type]


def test_a_longer_prefix_never_costs_less():  # spill.py searches prefixes by bisection, relying on this
    rng = random.Random(3)
    alphabet = list("abcdefXYZ 0123456789.,:;\"{}[]_-\n\t北京天气，。？こんにちは안녕é😀")
    for _ in range(1000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
        costs = [estimate_tokens(text[:i]) for i in range(len(text) + 1)]
        assert costs == sorted(costs), text


def test_counting_a_long_text_in_a_thread_lets_other_threads_run():  # spill.py counts in a thread
    import threading
    import time

    text = '2026-11-30 10:00:00 INFO {"order": 12345, "status": "ok"} 北京\n' * 50_000  # 3 MB
    window: list[float] = []

    def count() -> None:
        time.sleep(0.05)  # the main thread is ticking by now
        window.append(time.perf_counter())
        estimate_tokens(text)
        window.append(time.perf_counter())

    worker = threading.Thread(target=count)
    lags = []
    worker.start()
    while worker.is_alive():
        due = time.perf_counter() + 0.005
        time.sleep(0.005)
        lags.append(time.perf_counter() - due)
    worker.join()
    seconds = window[1] - window[0]
    assert max(lags) < seconds / 3, f"other threads waited {max(lags):.3f} s of a {seconds:.3f} s count"


def test_the_estimate_is_linear_in_the_length():
    import time

    line = '2026-11-30 10:00:00 INFO {"order": 12345, "status": "ok"} 北京\n'

    def seconds(n: int) -> float:  # the best of three, so that a busy machine does not decide
        text = line * n
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            assert estimate_tokens(text) > n
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(2_000), seconds(20_000)
    assert large < small * 30, (small, large)  # ten times the text, about ten times the time (not a hundred)


# ---------------------------------------------------------------------------------------------
# tiktoken, offline only.


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No encoding loaded yet in this process, tiktoken's cache in an empty folder, downloads forbidden."""
    pytest.importorskip("tiktoken")
    import tiktoken.load
    import tiktoken.registry

    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(tokens, "_absent", {})
    monkeypatch.setattr(tokens, "_damaged", {})
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))

    def no_network(blobpath):
        raise AssertionError(f"tiktoken tried to download {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    return tmp_path


def test_without_the_file_tiktoken_is_not_asked_and_the_estimate_says_so(fresh):
    assert tiktoken_encoding("gpt-4o") is None
    assert count_tokens("hello world", "gpt-4o") == TokenCount(2, "estimate")
    assert message_tokens(WEATHER, TOOLS, "gpt-4o").method == "estimate"


def test_a_damaged_file_is_not_used(fresh):
    url, _ = tokens._FILES["o200k_base"]
    (fresh / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"not the encoding")
    assert tiktoken_encoding("gpt-4o") is None
    assert count_tokens("hello", "gpt-4o").method == "estimate"


def test_caching_switched_off_means_no_tiktoken(fresh, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tiktoken_encoding() is None


def test_without_tiktoken_installed(monkeypatch):
    monkeypatch.setattr(tokens, "_tiktoken_module", {"module": None})
    monkeypatch.setattr(tokens, "_loaded", {})
    assert tiktoken_encoding("gpt-4o") is None
    assert count_tokens("北京", "gpt-4o") == TokenCount(1, "estimate")


@pytest.mark.skipif(not has_file("o200k_base"), reason="o200k_base is not in tiktoken's cache on this machine")
def test_with_the_file_the_cookbook_counts_are_exact():
    assert message_tokens(EXAMPLE, model="gpt-4o") == TokenCount(124, "tiktoken o200k_base")
    assert message_tokens(WEATHER, TOOLS, model="gpt-4o") == TokenCount(101, "tiktoken o200k_base")
    assert count_tokens("tiktoken is great!") == TokenCount(6, "tiktoken o200k_base")


@pytest.mark.skipif(not has_file("cl100k_base"), reason="cl100k_base is not in tiktoken's cache on this machine")
def test_gpt_4_uses_cl100k_and_its_tool_overhead():
    assert message_tokens(EXAMPLE, model="gpt-4") == TokenCount(129, "tiktoken cl100k_base")
    assert message_tokens(WEATHER, TOOLS, model="gpt-4") == TokenCount(105, "tiktoken cl100k_base")


def test_encoding_names():
    assert tokens.encoding_name(None) == tokens.encoding_name("deepseek-chat") == "o200k_base"
    assert tokens.encoding_name("gpt-3.5-turbo") == tokens.encoding_name("gpt-4-0613") == "cl100k_base"
    assert tokens.encoding_name("gpt-4.1-mini") == tokens.encoding_name("gpt-5") == "o200k_base"


# ---------------------------------------------------------------------------------------------
# Whole requests.


def test_sdk_objects_count_like_their_dicts():
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]}
    as_sdk = [WEATHER[1], ChatCompletionMessage.model_validate(call), {"role": "tool", "tool_call_id": "c1",
                                                                        "content": "晴"}]
    as_dicts = [WEATHER[1], call, as_sdk[2]]
    assert message_tokens(as_sdk) == message_tokens(as_dicts)
    assert message_tokens(as_dicts).tokens > message_tokens(as_dicts[:1]).tokens + 10


def test_parts_images_names_and_odd_content():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    with_image = [{"role": "user", "content": [{"type": "text", "text": "what is this"}, image]}]
    without = [{"role": "user", "content": [{"type": "text", "text": "what is this"}]}]
    assert message_tokens(with_image, use_tiktoken=False).tokens - message_tokens(without, use_tiktoken=False).tokens \
        == tokens.IMAGE_TOKENS
    assert message_tokens([{"role": "user", "content": b"\xff\xfebinary"}]).tokens > 0
    assert message_tokens([{"role": "user", "content": {"odd": ["json"]}}]).tokens > 0
    assert message_tokens([]).tokens == 3
    assert int(message_tokens([{"role": "user", "name": "bob", "content": "hi"}], use_tiktoken=False)) == \
        int(message_tokens([{"role": "user", "content": "hi"}], use_tiktoken=False)) + 2


def test_the_tiktoken_cache_folder_matches_tiktokens_own():
    pytest.importorskip("tiktoken")
    import inspect

    import tiktoken.load

    source = inspect.getsource(tiktoken.load.read_file_cached)  # where tokens._cached_file looks
    assert "TIKTOKEN_CACHE_DIR" in source and "data-gym-cache" in source and "sha1" in source
