"""Attacks on the features built last (delegation/, functions/, chat/): what a hostile model, a careless engineer
and a confused learner would do to them, and what must hold (a clear error, nothing lost, nothing crashed).

Each test here failed before the fix it names; what held without one is listed in the commit messages.
"""
from __future__ import annotations

import pytest

from mini_framework import Agent, as_tool
from tests.test_agent import ScriptedClient, client
from tests.test_delegation import RAN, refund, reply
from tests.test_llm_function import Weather


@pytest.fixture(autouse=True)
def _clear():
    RAN.clear()


# ----------------------------------------------------------------------------- delegation


def test_a_share_so_large_its_budget_overflows_is_no_limit_not_a_crash():
    """share=1e308 passes as_tool's check (it is finite), but share × max_iterations is inf: the budget was
    math.floor(inf), an OverflowError out of the parent's run."""
    child = Agent(ScriptedClient([]), "m")
    parent = Agent(ScriptedClient([reply(("c1", "w", {"task": "t"}))]), "m", [as_tool(child, name="w", share=1e308)])
    result = parent.run("go")
    assert result.tool_results[0].ok and result.tool_results[0].content == "done" and result.text == "done"


# ----------------------------------------------------------------------------- chat


def test_a_chat_whose_paused_turn_was_resumed_outside_it_says_so_instead_of_sending_a_broken_history():
    """A learner resumes `chat.result` with the agent instead of `chat.resume()`: the chat is no longer paused,
    but its history ends in tool calls that were never answered, and the next send was the provider's 400."""
    chat_module = pytest.importorskip("mini_framework.chat")
    agent = Agent(client(), "practice", [refund])
    chat = chat_module.Chat(agent)
    chat.send("Refund order 1042")
    chat.pending[0].approve()
    outside = agent.resume(chat.result)
    before = list(chat.messages)
    with pytest.raises(ValueError, match=r"never saw answered.*outside the chat.*Chat\(agent, messages=result"):
        chat.send("谢谢")
    assert chat.messages == before and RAN == [("refund", 1042)]  # nothing changed, nothing ran twice
    again = chat_module.Chat(agent, messages=outside.messages)  # the way out the message names
    assert again.send("谢谢").text


def test_a_history_with_a_tool_answer_to_no_call_is_refused_when_the_chat_is_made():
    """A careless slice (`result.messages[2:]`) starts with a tool answer whose call was cut off: the chat took it,
    and its first send was the provider's 400 ("messages with role 'tool' must be a response to ...")."""
    chat_module = pytest.importorskip("mini_framework.chat")
    from tests.test_agent import get_weather

    agent = Agent(client(), "practice", [get_weather])
    messages = chat_module.Chat(agent).send("北京现在天气怎么样？").messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    for bad in (messages[2:], [*messages[:1], *messages[2:]], [*messages, messages[2]]):
        with pytest.raises(ValueError, match="answers no tool call"):
            chat_module.Chat(agent, messages=bad)
    with pytest.raises(ValueError, match="not a conversation"):
        chat_module.Chat(agent, messages=[{"role": "assistant", "content": None, "tool_calls": 5}])
    assert chat_module.Chat(agent, messages=messages).send("上海呢？").text  # a whole history still goes


def test_an_agents_run_method_given_to_as_tool_is_told_to_pass_the_agent():
    """`as_tool(researcher.run)` made a tool of run()'s own parameters, and its on_event was refused with advice
    for another mistake ("take a str or Literal naming the operation")."""
    researcher = Agent(client(), "practice")
    for method in (researcher.run, researcher.arun):
        with pytest.raises(TypeError, match=r"the Agent itself.*as_tool\(agent"):
            as_tool(method)


# ----------------------------------------------------------------------------- llm_function


def test_a_retry_after_a_provider_ignored_json_schema_shows_the_schema_it_asks_for():
    """A provider that accepts response_format and ignores it (it answers prose) never showed the model the schema:
    the retry asked for "the JSON the schema asks for", a schema the model had never seen, and every try failed."""
    functions = pytest.importorskip("mini_framework.functions")
    fake = ScriptedClient([{"role": "assistant", "content": "It is sunny in Beijing, 22 degrees."},
                           {"role": "assistant", "content": '{"city": "北京", "temperature": 22, "summary": "晴"}'}])

    @functions.llm_function(fake, "m")
    def weather(city: str) -> Weather:
        """Describe the weather in {city}."""

    assert weather("北京").temperature == 22
    retry = [m for m in fake.requests[1]["messages"] if m["role"] == "user"][-1]["content"]
    assert "The JSON schema: " in retry and '"temperature"' in retry and '"required"' in retry
    assert fake.requests[0]["response_format"]["type"] == "json_schema"  # (the first try: the schema went only there)
    assert all(m["role"] != "system" for m in fake.requests[0]["messages"])
