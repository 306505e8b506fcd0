"""Usage per request, cached prompt tokens as providers report them, and prices."""
from __future__ import annotations

import pytest

from mini_framework import Agent
from mini_framework.budget.cost import Price
from mini_framework.replies import read_reply
from mini_framework.state import RequestUsage, Usage
from tests.test_agent import ScriptedClient, call, get_weather


def reply_with(usage: dict) -> dict:
    return {"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": usage}


@pytest.mark.parametrize("usage, cached, repaired", [
    ({"prompt_tokens": 2048, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 1920}}, 1920, False),
    ({"prompt_tokens": 2048, "completion_tokens": 9, "prompt_cache_hit_tokens": 1024,  # DeepSeek
      "prompt_cache_miss_tokens": 1024}, 1024, False),
    ({"prompt_tokens": 100, "completion_tokens": 9}, 0, False),
    ({"prompt_tokens": 100, "completion_tokens": 9, "prompt_tokens_details": None}, 0, False),
    ({"prompt_tokens": 100, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": "lots"}}, 0, True),
    ({"prompt_tokens": 100, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 500}}, 100, False),
])
def test_cached_tokens_are_read_from_either_shape_and_never_exceed_the_prompt(usage, cached, repaired):
    reply = read_reply(reply_with(usage))
    assert reply.cached_tokens == cached and bool(reply.repairs) == repaired


def test_a_run_keeps_each_requests_usage():
    result = Agent(ScriptedClient([call(1)]), "m", [get_weather]).run("北京天气")
    assert result.usage.per_request == [RequestUsage(10, 2, 0), RequestUsage(10, 2, 0)]
    assert str(result.usage) == "2 requests, 20 prompt + 4 completion = 24 tokens"


def test_a_price_bills_cached_prompt_tokens_at_their_own_rate():
    usage = Usage()
    usage.add(1_000_000, 0, cached_tokens=1_000_000)
    usage.add(0, 1_000_000)
    assert usage.cost(Price(input=2.0, output=8.0, cached_input=0.5)) == pytest.approx(8.5)
    assert usage.cost(Price(input=2.0, output=8.0)) == pytest.approx(10.0)  # no cached price: billed as input
    for bad in (-1, float("nan"), "0.15", True):
        with pytest.raises(ValueError, match="per million tokens"):
            Price(input=bad, output=1.0)
