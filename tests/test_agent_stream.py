"""Agent(stream=True): the same run as without streaming, with the text arriving as TextDelta events."""
from __future__ import annotations

import asyncio
import json

import pytest
from openai import AsyncOpenAI, OpenAI

from course.shop import Shop, create_shop
from mini_framework import Agent, tool
from mini_framework.events import FinalAnswer, TextDelta
from mini_framework.streaming import StreamError
from practice_model import shared_server
from tests.test_agent import add_numbers, get_weather


def clients(**kwargs):
    base = shared_server().base_url
    return OpenAI(base_url=base, api_key="practice", **kwargs), AsyncOpenAI(base_url=base, api_key="practice", **kwargs)


@tool
def get_weather_final(city: str) -> str:
    """查询城市天气（结果就是最终答案）"""
    return json.dumps({"city": city, "temperature": 22, "condition": "晴"}, ensure_ascii=False)


def recorder():
    """A `send` tool that keeps the addresses it was called with, and that list."""
    ran: list[str] = []

    @tool
    def send(to: str) -> str:
        """Send a note."""
        ran.append(to)
        return "sent"

    return ran, send


def chunk(delta, finish=None):
    """One chat.completion.chunk with this delta."""
    return {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


SHOP = Shop(create_shop())

# lesson 06's scenarios: a three-step chain, a question for two tools, a plain answer, a runaway loop at its cap
SCENARIOS = [
    ("practice", SHOP.tools, "帮我看看张三最近买了什么还没发货", {"max_iterations": 5}),
    ("practice", [get_weather, add_numbers], "北京和上海现在天气怎么样？再算一下 3.5 加 4", {}),
    ("practice", [get_weather], "你好，请用一句话介绍你自己。", {}),
    ("practice-loop", [get_weather_final], "上海天气怎么样？", {"max_iterations": 3, "max_repeats": 100}),
    ("practice-loop", [get_weather], "上海天气怎么样？", {}),
]


@pytest.mark.parametrize("model, tools, question, options", SCENARIOS, ids=[s[2][:12] for s in SCENARIOS])
def test_streamed_and_plain_runs_store_the_same_messages(model, tools, question, options):
    sync, asynchronous = clients()
    plain = Agent(sync, model, tools, **options).run(question)
    deltas: list[str] = []

    def on_event(event):
        if isinstance(event, TextDelta):
            deltas.append(event.text)

    streamed = Agent(sync, model, tools, stream=True, on_event=on_event, **options).run(question)
    streamed_async = asyncio.run(Agent(asynchronous, model, tools, stream=True, **options).arun(question))
    assert streamed.messages == plain.messages == streamed_async.messages
    assert streamed.text == plain.text and "".join(deltas).endswith(plain.text or "")
    assert streamed.usage.total_tokens == plain.usage.total_tokens > 0  # usage from the stream's last chunk
    assert [r.content for r in streamed.tool_results] == [r.content for r in plain.tool_results]


def test_text_arrives_before_the_answer_is_complete():
    sync, _ = clients()
    events = list(Agent(sync, "practice", [get_weather], stream=True).events("北京现在天气怎么样？"))
    deltas = [i for i, e in enumerate(events) if isinstance(e, TextDelta)]
    final = next(i for i, e in enumerate(events) if isinstance(e, FinalAnswer))
    assert len(deltas) > 3 and deltas[-1] < final  # many pieces, all before the final answer


def test_stream_options_are_sent_only_with_streaming_and_can_be_overridden():
    seen = []

    class Recorder:
        def __init__(self):
            self.chat = self.completions = self

        def create(self, **params):
            seen.append(params)
            return OpenAI(base_url=shared_server().base_url, api_key="practice").chat.completions.create(**params)

    Agent(Recorder(), "practice", [get_weather], stream_options={"include_usage": False}).run("hi")
    Agent(Recorder(), "practice", [get_weather], stream=True, stream_options={"include_usage": False}).run("hi")
    assert "stream_options" not in seen[0] and seen[-1]["stream_options"] == {"include_usage": False}
    with pytest.raises(TypeError, match="stream must be True or False"):
        Agent(Recorder(), "practice", [get_weather], stream="yes")


def test_a_stream_that_breaks_off_raises_and_runs_nothing():
    ran, send = recorder()

    class Broken:
        def __init__(self):
            self.chat = self.completions = self

        def create(self, **params):
            def chunks():
                yield {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [
                    {"index": 0, "delta": {"role": "assistant", "tool_calls": [
                        {"index": 0, "id": "c1", "type": "function", "function": {"name": "send", "arguments": ""}}]}}]}
                yield {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [
                    {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"to": "a@ex'}}]}}]}
                raise ConnectionError("the connection was reset")
            return chunks()

    with pytest.raises(ConnectionError) as caught:
        Agent(Broken(), "m", [send], stream=True).run("q")
    assert ran == [] and caught.value.partial_result.tool_results == []


def test_a_stream_cut_off_by_length_inside_the_arguments_does_not_run_the_call():
    ran, send = recorder()

    class Cut:
        def __init__(self):
            self.chat = self.completions = self
            self.turn = 0

        def create(self, **params):
            self.turn += 1
            if self.turn > 1:
                return iter([chunk({"role": "assistant", "content": "没发出去。"}), chunk({}, "stop")])
            return iter([chunk({"role": "assistant", "tool_calls": [
                            {"index": 0, "id": "c1", "type": "function", "function": {"name": "send", "arguments": ""}}]}),
                         chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"to": "zhang.san@exa'}}]}),
                         chunk({}, "length")])

    result = Agent(Cut(), "m", [send], stream=True).run("q")
    assert ran == [] and result.tool_results[0].failure == "truncated" and result.text == "没发出去。"


def test_a_reply_with_more_calls_than_the_assembler_allows_raises_and_runs_none_of_them():
    ran, send = recorder()

    class Flood:
        def __init__(self):
            self.chat = self.completions = self

        def create(self, **params):
            def chunks():
                for n in range(1_000):  # far more calls than Assembler's max_calls (128)
                    yield chunk({"tool_calls": [{"index": n, "id": f"c{n}", "type": "function",
                                                 "function": {"name": "send", "arguments": f'{{"to": "{n}"}}'}}]})
                yield chunk({}, "tool_calls")
            return chunks()

    with pytest.raises(StreamError, match="more than max_calls=128") as caught:
        Agent(Flood(), "m", [send], stream=True).run("q")
    assert ran == [] and caught.value.partial_result.tool_results == []
    assert caught.value.partial_result.messages == [{"role": "user", "content": "q"}]  # no half reply stored


def test_a_stream_that_goes_silent_is_given_up_at_its_deadline_not_waited_on_forever(monkeypatch):
    """Keep-alive comments (or nothing at all) after the first chunk: the SDK hands the agent no chunk, so the
    deadline is held while waiting for one, and the run raises StreamError with nothing run."""
    import asyncio
    import time as clock

    from mini_framework.streaming import hook as stream_hook
    from mini_framework.streaming.assembler import Assembler

    monkeypatch.setattr(stream_hook, "Assembler", lambda: Assembler(deadline_seconds=0.3))

    class Silent:
        class chat:
            class completions:
                @staticmethod
                async def create(**params):
                    async def chunks():
                        yield {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m",
                               "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}
                        await asyncio.sleep(3600)  # then nothing: a provider that only sends keep-alives
                    return chunks()

    started = clock.monotonic()
    with pytest.raises(StreamError, match="deadline_seconds=0.3") as caught:
        Agent(Silent(), "m", [get_weather], stream=True).run("北京现在天气怎么样？")
    assert clock.monotonic() - started < 30 and caught.value.partial_result.tool_results == []
