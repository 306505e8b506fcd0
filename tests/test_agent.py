"""The agent loop: caps, repeated calls, events, usage, and a bounded run with every persona."""
from __future__ import annotations

import asyncio
import json

import pytest
from openai import AsyncOpenAI, OpenAI
from openai.types.chat import ChatCompletion

from mini_framework import Agent, tool
from mini_framework.agent import CAPPED_WITHOUT_ANSWER, CapReached, FinalAnswer, ModelRequest, ModelResponse, ToolFinished, ToolStarted
from mini_framework.practice import shared_server


@tool
def get_weather(city: str) -> str:
    """查询指定城市当前的天气情况

    Args:
        city: 城市名称，例如北京、上海
    """
    data = {"北京": {"temperature": 22, "condition": "晴"}, "上海": {"temperature": 25, "condition": "多云"}}
    return json.dumps(data.get(city, {"error": "暂无该城市数据"}), ensure_ascii=False)


@tool
def add_numbers(a: float, b: float) -> float:
    """计算两个数字相加的结果"""
    return a + b


def client() -> OpenAI:
    return OpenAI(base_url=shared_server().base_url, api_key="practice", max_retries=2)


class ScriptedClient:
    """A stand-in for OpenAI(): replies from a script, records every request."""

    def __init__(self, replies: list[dict]):
        self.replies, self.requests = list(replies), []
        self.chat = self
        self.completions = self

    def create(self, **params):
        self.requests.append(params)
        message = self.replies.pop(0) if self.replies else {"role": "assistant", "content": "done"}
        return ChatCompletion.model_validate({
            "id": "x", "object": "chat.completion", "created": 0, "model": params["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                         "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})


def call(i: int, city: str = "北京") -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": f"call_{i}", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps({"city": city})}}]}


def test_a_simple_run_answers_from_the_tool_result():
    result = Agent(client(), "practice", [get_weather, add_numbers]).run("北京现在天气怎么样？")
    assert "22" in result.text and "晴" in result.text
    assert [r.call.name for r in result.tool_results] == ["get_weather"] and not result.capped
    assert result.iterations == 2 and result.usage.requests == 2 and result.usage.total_tokens > 0
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]


def test_exactly_max_iterations_requests_with_tools_then_one_without():
    fake = ScriptedClient([call(i, city) for i, city in enumerate(["北京", "上海", "广州"])])
    result = Agent(fake, "m", [get_weather], max_iterations=3).run("weather everywhere")
    assert [("tools" in r) for r in fake.requests] == [True, True, True, False]
    assert all("tool_choice" not in r for r in fake.requests[3:])
    assert result.capped and result.iterations == 4 and result.text == "done"
    assert len(result.tool_results) == 3 and result.usage.total_tokens == 4 * 12


def test_tool_calls_in_the_final_reply_are_dropped_so_the_history_stays_valid():
    fake = ScriptedClient([call(i, city) for i, city in enumerate(["北京", "上海", "广州", "深圳"])])
    result = Agent(fake, "m", [get_weather], max_iterations=3).run("weather everywhere")
    assert result.capped and result.text == CAPPED_WITHOUT_ANSWER
    assert "tool_calls" not in result.messages[-1] and len(result.tool_results) == 3


def test_an_answer_before_the_cap_is_not_flagged():
    fake = ScriptedClient([call(1), {"role": "assistant", "content": "晴"}])
    result = Agent(fake, "m", [get_weather], max_iterations=2).run("q")
    assert not result.capped and result.iterations == 2 and len(fake.requests) == 2


def test_the_same_call_is_refused_after_max_repeats():
    fake = ScriptedClient([call(1), call(2), call(3), {"role": "assistant", "content": "ok"}])
    result = Agent(fake, "m", [get_weather], max_repeats=2).run("q")
    contents = [r.content for r in result.tool_results]
    assert contents[0] == contents[1] and json.loads(contents[0])["temperature"] == 22
    refused = json.loads(contents[2])
    assert result.tool_results[2].failure == "repeated" and "same arguments 2 times" in refused["error"]
    assert json.loads(refused["previous_result"])["temperature"] == 22


def test_the_looping_persona_ends_in_a_bounded_explained_run():
    result = Agent(client(), "practice-loop", [get_weather], max_iterations=6, max_repeats=2).run("上海天气怎么样？")
    names = [r.failure for r in result.tool_results]
    assert names[:2] == [None, None] and "repeated" in names
    assert "25" in result.text and result.iterations <= 7


def test_the_looping_persona_is_stopped_by_the_cap_when_repeats_are_allowed():
    result = Agent(client(), "practice-loop", [get_weather], max_iterations=3, max_repeats=100).run("上海天气怎么样？")
    assert result.capped and result.iterations == 4 and len(result.tool_results) == 3 and "25" in result.text


def test_events_arrive_in_order():
    events = []
    Agent(client(), "practice", [get_weather], on_event=events.append).run("北京和上海哪个更暖和？")
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ModelRequest", "ModelResponse", "ToolStarted", "ToolStarted", "ToolFinished", "ToolFinished",
                     "ModelRequest", "ModelResponse", "FinalAnswer"]
    assert all(str(e) for e in events)


def test_stream_yields_the_same_events():
    agent = Agent(client(), "practice", [get_weather])
    streamed = list(agent.stream("北京现在天气怎么样？"))
    assert isinstance(streamed[0], ModelRequest) and isinstance(streamed[-1], FinalAnswer)
    assert any(isinstance(e, ToolFinished) for e in streamed)


def test_async_client_and_async_stream():
    async def go():
        agent = Agent(AsyncOpenAI(base_url=shared_server().base_url, api_key="practice"), "practice", [get_weather])
        events = [e async for e in agent.astream("北京现在天气怎么样？")]
        result = await agent.arun("北京现在天气怎么样？")
        return events, result
    events, result = asyncio.run(go())
    assert isinstance(events[-1], FinalAnswer) and "22" in result.text


def test_run_works_inside_a_running_event_loop_like_jupyter():
    async def inside():
        return Agent(client(), "practice", [add_numbers]).run("请计算123456789 + 987654321 等于多少？")
    assert "1111111110" in asyncio.run(inside()).text


def test_instructions_and_tool_guidance_become_the_system_prompt():
    @tool(best_practices="Only look up cities the user named.")
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    fake = ScriptedClient([{"role": "assistant", "content": "hi"}])
    Agent(fake, "m", [lookup], instructions="Answer briefly.").run("q")
    system = fake.requests[0]["messages"][0]
    assert system["role"] == "system" and "Answer briefly." in system["content"] and "Only look up" in system["content"]


def test_request_options_reach_the_api_but_not_the_final_no_tools_request():
    fake = ScriptedClient([call(1), call(2, "上海")])
    Agent(fake, "m", [get_weather], max_iterations=2, tool_choice="required", temperature=0).run("q")
    assert fake.requests[0]["tool_choice"] == "required" and fake.requests[0]["temperature"] == 0
    assert "tool_choice" not in fake.requests[-1] and fake.requests[-1]["temperature"] == 0


def test_a_conversation_can_be_continued():
    agent = Agent(client(), "practice", [get_weather])
    first = agent.run("北京现在天气怎么样？")
    second = agent.run(first.messages + [{"role": "user", "content": "那上海呢？"}])
    assert "25" in second.text and second.messages[: len(first.messages)] == first.messages


def test_flaky_upstream_is_absorbed_by_the_sdk_retries():
    result = Agent(client(), "practice-flaky", [get_weather]).run("北京现在天气怎么样？")
    assert "22" in result.text


def test_sloppy_and_hallucinating_personas_recover_within_the_budget():
    sloppy = Agent(client(), "practice-sloppy", [get_weather, add_numbers], retry_budget=2).run("北京现在天气怎么样？")
    assert "22" in sloppy.text and [r.failure for r in sloppy.tool_results] == ["invalid_arguments", None]
    lost = Agent(client(), "practice-hallucinate", [get_weather, add_numbers]).run("北京现在天气怎么样？")
    assert "22" in lost.text and lost.tool_results[0].failure == "unknown_tool" and lost.tool_results[-1].ok


@pytest.mark.parametrize("bad", [{"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_x", "type": "function", "function": {"name": "rm_rf", "arguments": "{"}}]}])
def test_garbage_from_the_model_never_crashes_the_loop(bad):
    result = Agent(ScriptedClient([bad]), "m", [get_weather]).run("q")
    assert result.text == "done" and result.tool_results[0].failure == "unknown_tool"
