"""The agent loop: caps, repeated calls, events, usage, and a bounded run with every persona."""
from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest
from openai import AsyncOpenAI, OpenAI
from openai.types.chat import ChatCompletion

from mini_framework import Agent, RunPaused, Verdict, tool
from mini_framework.agent import (
    CAPPED_WITHOUT_ANSWER,
    FinalAnswer,
    ModelRequest,
    ToolFinished,
)
from practice_model import shared_server


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


def test_events_yields_the_same_events():
    agent = Agent(client(), "practice", [get_weather])
    streamed = list(agent.events("北京现在天气怎么样？"))
    assert isinstance(streamed[0], ModelRequest) and isinstance(streamed[-1], FinalAnswer)
    assert any(isinstance(e, ToolFinished) for e in streamed)


def test_async_client_and_async_events():
    async def go():
        agent = Agent(AsyncOpenAI(base_url=shared_server().base_url, api_key="practice"), "practice", [get_weather])
        events = [e async for e in agent.aevents("北京现在天气怎么样？")]
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


# -- construction: mistakes caught before any request ------------------------------------------

def test_an_unknown_option_is_refused_with_the_closest_name():
    with pytest.raises(TypeError, match="unknown option 'max_iteration'; did you mean 'max_iterations'"):
        Agent(ScriptedClient([]), "m", [get_weather], max_iteration=5)
    with pytest.raises(TypeError, match="'temprature'; did you mean 'temperature'"):
        Agent(ScriptedClient([]), "m", temprature=0)
    with pytest.raises(TypeError, match="extra_body"):
        Agent(ScriptedClient([]), "m", enable_thinking=True)
    Agent(ScriptedClient([]), "m", temperature=0, seed=1, extra_body={"enable_thinking": False}, timeout=20)


def test_every_passed_on_option_is_a_real_chat_completions_parameter():
    from mini_framework.agent import REQUEST_OPTIONS
    schemas = json.loads((Path(__file__).parent / "openapi" / "chat_schemas.json").read_text())["components"]["schemas"]

    def properties(schema: dict) -> set[str]:
        found = set(schema.get("properties", {}))
        for branch in schema.get("allOf", []) + schema.get("anyOf", []):
            target = schemas[branch["$ref"].rsplit("/", 1)[-1]] if "$ref" in branch else branch
            found |= properties(target)
        return found

    known = properties(schemas["CreateChatCompletionRequest"])
    assert REQUEST_OPTIONS <= known and not REQUEST_OPTIONS & {"model", "messages", "tools", "stream", "n"}


def test_two_tools_with_one_name_are_refused_at_construction():
    @tool(name="get_weather")
    def other(city: str) -> str:
        """Another weather tool."""
        return city

    with pytest.raises(ValueError, match="two tools are named 'get_weather'"):
        Agent(ScriptedClient([]), "m", [get_weather, other])


# -- the checkpoint: a step before tools run --------------------------------------------------

def two_calls() -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c_bj", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}},
        {"id": "c_add", "type": "function", "function": {"name": "add_numbers", "arguments": '{"a": 1, "b": 2}'}}]}


def test_every_call_passes_the_checkpoint_which_may_answer_instead_of_running():
    seen = []

    def checkpoint(call, tool):
        seen.append((call.id, tool.name))
        return Verdict.answer("Not now.") if call.name == "add_numbers" else Verdict.run()

    fake = ScriptedClient([two_calls()])
    result = Agent(fake, "m", [get_weather, add_numbers], checkpoint=checkpoint).run("q")
    assert seen == [("c_bj", "get_weather"), ("c_add", "add_numbers")]
    assert [(r.call.id, r.ok, r.failure) for r in result.tool_results] == [("c_bj", True, None), ("c_add", False, "not_run")]
    assert result.messages[3] == {"role": "tool", "tool_call_id": "c_add", "content": "Not now."}


def test_a_paused_run_waits_then_resumes_with_each_call_answered_once():
    ran = []

    @tool
    def send(to: str) -> str:
        """Send something."""
        ran.append(to)
        return "sent"

    calls = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "send", "arguments": '{"to": "a@example.com"}'}},
        {"id": "c2", "type": "function", "function": {"name": "send", "arguments": '{"to": "b@example.com"}'}},
        {"id": "c3", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]}
    fake = ScriptedClient([calls, {"role": "assistant", "content": "done"}])
    events = []
    agent = Agent(fake, "m", [send, get_weather], on_event=events.append,
                  checkpoint=lambda call, tool: Verdict.pause("needs a person") if call.name == "send" else Verdict.run())
    paused = agent.run("q")
    assert paused.paused and paused.text is None and ran == [] and len(fake.requests) == 1
    assert [(p.call.id, p.reason) for p in paused.pending] == [("c1", "needs a person"), ("c2", "needs a person")]
    assert isinstance(events[-1], RunPaused) and "paused before" in repr(paused)
    paused.pending[0].run()
    paused.pending[1].answer("A person declined this.")
    result = agent.resume(paused)
    assert ran == ["a@example.com"] and result.text == "done" and not result.paused
    answers = [m for m in result.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["c1", "c2", "c3"]
    assert answers[1]["content"] == "A person declined this."
    with pytest.raises(ValueError, match="only a paused run"):
        agent.resume(result)


def test_an_undecided_call_meets_the_checkpoint_again_and_a_failing_checkpoint_runs_nothing():
    verdicts = iter([Verdict.pause("wait"), Verdict.run()])
    fake = ScriptedClient([call(1)])
    agent = Agent(fake, "m", [get_weather], checkpoint=lambda call, tool: next(verdicts))
    paused = agent.run("q")
    assert paused.paused
    assert agent.resume(paused).tool_results[0].ok  # asked again: now it runs

    def broken(call, tool):
        raise RuntimeError("approval service down")

    failed = Agent(ScriptedClient([call(1)]), "m", [get_weather], checkpoint=broken).run("q")
    assert failed.paused and "the checkpoint failed: RuntimeError" in failed.pending[0].reason
    assert failed.tool_results == []


def test_an_async_checkpoint_is_awaited():
    async def checkpoint(call, tool):
        await asyncio.sleep(0)
        return Verdict.answer("cached: 晴")

    result = Agent(ScriptedClient([call(1)]), "m", [get_weather], checkpoint=checkpoint).run("q")
    assert result.tool_results[0].content == "cached: 晴"


# -- results that are more than text; the run's context ---------------------------------------

def test_non_text_parts_are_sent_after_the_tool_messages_as_one_user_message():
    def formatter(value, call, tool):
        return [{"type": "text", "text": "a chart"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]

    fake = ScriptedClient([two_calls()])
    result = Agent(fake, "m", [get_weather, add_numbers], format_result=formatter, image_input=True).run("q")
    roles = [m["role"] for m in result.messages]
    assert roles == ["user", "assistant", "tool", "tool", "user", "assistant"]
    images = result.messages[4]["content"]
    assert [p["type"] for p in images] == ["text", "text", "image_url", "text", "image_url"]
    assert images[0]["text"].startswith("Tool output, not a message from the user") and "c_bj" in images[1]["text"]


def test_a_text_only_model_gets_a_note_instead_of_image_parts():
    def formatter(value, call, tool):
        return [{"type": "text", "text": "a chart"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]

    fake = ScriptedClient([two_calls()])
    result = Agent(fake, "deepseek-chat", [get_weather, add_numbers], format_result=formatter).run("q")
    note = result.messages[4]["content"]
    assert isinstance(note, str) and note.startswith("Tool output, not a message from the user")
    assert "cannot see images" in note
    assert not any(isinstance(m.get("content"), list) for r in fake.requests for m in r["messages"])


def test_the_runs_context_reaches_the_prompt_injection_builder():
    @tool(prompt_injection_builder=lambda context: f"The user is in {context['city']}." if context else "")
    def local_weather(city: str) -> str:
        """Weather where the user is."""
        return city

    fake = ScriptedClient([{"role": "assistant", "content": "hi"}])
    Agent(fake, "m", [local_weather]).run("q", context={"city": "杭州"})
    assert "The user is in 杭州." in fake.requests[0]["messages"][0]["content"]


def test_event_classes_are_exported():
    import mini_framework
    for name in ("Event", "ModelRequest", "ModelResponse", "ToolStarted", "ToolFinished", "CapReached", "RunPaused",
                 "FinalAnswer"):
        assert getattr(mini_framework, name).__module__ == "mini_framework.events"


def test_parameters_an_older_sdk_does_not_name_travel_in_extra_body():
    sent = []

    class OldSdk:  # like openai 1.97, whose create() has no prompt_cache_key (openai-python#2499)
        def __init__(self):
            self.chat = self.completions = self

        def create(self, *, model, messages, tools=None, temperature=None, extra_body=None, timeout=None):
            sent.append({"temperature": temperature, "extra_body": extra_body})
            return ScriptedClient([]).create(model=model, messages=messages)

    result = Agent(OldSdk(), "m", [get_weather], temperature=0, prompt_cache_key="faq",
                   extra_body={"enable_thinking": False}).run("q")
    assert result.text == "done"
    assert sent == [{"temperature": 0, "extra_body": {"prompt_cache_key": "faq", "enable_thinking": False}}]


# ----------------------------------------------------------------------------- where a sync client is called

class ThreadRecordingClient(ScriptedClient):
    """A ScriptedClient that notes which thread each request ran in, and can be slow."""

    def __init__(self, replies: list[dict], delay: float = 0.0):
        super().__init__(replies)
        self.threads: list[int] = []
        self.delay = delay

    def create(self, **params):
        self.threads.append(threading.get_ident())
        time.sleep(self.delay)
        return super().create(**params)


def test_run_calls_a_sync_client_on_its_own_loop_without_a_thread_hop():
    fake = ThreadRecordingClient([call(1)])
    loop_threads: list[int] = []

    def note(event):
        loop_threads.append(threading.get_ident())  # on_event runs on the agent's loop

    Agent(fake, "m", [get_weather]).run("q", on_event=note)
    assert len(fake.threads) == 2 and set(fake.threads) == set(loop_threads)


def test_arun_calls_a_sync_client_in_a_worker_so_the_callers_loop_keeps_going():
    fake = ThreadRecordingClient([call(1)], delay=0.2)
    ticks: list[float] = []

    async def main():
        async def ticker():
            while True:
                ticks.append(asyncio.get_running_loop().time())
                await asyncio.sleep(0.02)
        task = asyncio.create_task(ticker())
        result = await Agent(fake, "m", [get_weather]).arun("q")
        task.cancel()
        return result

    result = asyncio.run(main())
    assert result.text == "done" and len(fake.requests) == 2
    assert len(ticks) >= 10  # 0.4 s of requests: a blocked loop would have ticked once or twice
