"""Agents as tools (mini_framework/delegation/): what reaches the parent, what it counts, where it stops.

The practice model drives both parent and sub-agent (it calls a delegating tool with the request as
`task`); a scripted model (tests.test_agent.ScriptedClient) drives the cases that need exact replies.
"""
from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from mini_framework import Agent, Delegated, Executor, Price, SubAgentEvent, ToolCall, as_tool, tool
from mini_framework.approvals.saved import SavedRunError
from mini_framework.delegation import Delegation, sub_agent_usage
from mini_framework.delegation.tool import bounded
from mini_framework.events import FinalAnswer, ModelRequest, RunPaused, ToolStarted
from mini_framework.schema import ToolDefinitionError
from tests.test_agent import ScriptedClient, client

RAN: list[tuple[str, object]] = []


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    RAN.append(("get_weather", city))
    return f"{city}: sunny, 22°C"


@tool
def read_log(query: str) -> str:
    """Search the log for a query and return every matching line."""
    return "\n".join(f"2026-01-01 12:00:{i % 60:02d} INFO request {i} served in 12 ms" for i in range(200))


@tool
def read_huge_log(query: str) -> str:
    """Search the log for a query and return every matching line."""
    return "x " * 60_000


@tool(requires_approval=True)
def refund(order_id: int) -> str:
    """Refund an order."""
    RAN.append(("refund", order_id))
    return f"order {order_id} refunded"


@pytest.fixture(autouse=True)
def _clear():
    RAN.clear()


def weather_expert(model: str = "practice", **options) -> Agent:
    return Agent(client(), model, [get_weather], instructions="You look up the weather.", **options)


def expert_tool(agent: Agent, name: str = "weather_expert", **options):
    return as_tool(agent, name=name, description="Ask the weather expert about the weather in any city.", **options)


def support() -> Agent:
    """A parent whose sub-agent has a gated tool (and no approver: its pause pauses the parent)."""
    secretary = Agent(client(), "practice", [refund])
    return Agent(client(), "practice", [as_tool(secretary, name="secretary",
                                                description="Ask the secretary to refund orders.")])


def reply(*calls: tuple[str, str, dict], content: str | None = None) -> dict:
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}} for i, n, a in calls]}


# ----------------------------------------------------------------------------- what reaches the parent


def test_only_the_sub_agents_answer_reaches_the_parent():
    logs = Agent(client(), "practice", [read_log])
    parent = Agent(client(), "practice", [as_tool(logs, name="log_reader", description="Ask the log reader to "
                                                  "search the logs.")])
    result = parent.run("Search the log for billing errors")
    (delegated,) = result.tool_results
    child = delegated.value  # the sub-agent's whole run, for code
    assert delegated.ok and child.tool_results[0].content.count("\n") == 199  # 200 lines of raw output...
    assert delegated.content == child.text and "\n" not in delegated.content  # ...the parent read its answer
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]


def test_a_long_answer_is_cut_to_max_answer_chars_and_says_so():
    child = Agent(ScriptedClient([{"role": "assistant", "content": "word " * 2000}]), "m")
    parent = Agent(ScriptedClient([reply(("c1", "writer", {"task": "write a lot"}))]), "m",
                   [as_tool(child, name="writer", max_answer_chars=300)])
    content = parent.run("go").tool_results[0].content
    assert len(content) <= 300 and content.endswith("[cut: the answer was 9,999 characters; 249 shown]")
    assert bounded("short", 300) == "short"


def test_usage_and_cost_count_the_sub_agents_requests_and_tokens():
    result = Agent(client(), "practice", [expert_tool(weather_expert())]).run("What is the weather in Paris?")
    child = result.tool_results[0].value
    assert "Paris: sunny, 22°C" in result.text
    assert result.iterations == 2 and child.iterations == 2 and result.usage.requests == 4
    assert result.usage.prompt_tokens == sum(r.prompt_tokens for r in result.usage.per_request)
    assert result.usage.total_tokens > child.usage.total_tokens > 0
    assert sub_agent_usage(result)["weather_expert"].per_request == child.usage.per_request
    price = Price(input=1.0, output=2.0)
    own = result.usage.cost(price) - sub_agent_usage(result)["weather_expert"].cost(price)
    assert own > 0 and result.usage.cost(price) == pytest.approx(own + child.usage.cost(price))


# ----------------------------------------------------------------------------- where it stops


@pytest.mark.parametrize(("share", "requests", "child_requests"), [(None, 81, 72), (1.0, 11, 8), (0.5, 7, 4)])
def test_a_shared_budget_stops_a_runaway_loop_of_loops(share, requests, child_requests):
    """A parent that calls a sub-agent every turn, a sub-agent that calls its tool every turn (the repeat guard
    off): without a share, 8 iterations of 8 iterations; with one, the sub-agents get the parent's 8 at most."""
    child = weather_expert("practice-loop", max_iterations=8, max_repeats=100)
    parent = Agent(client(), "practice-loop", [expert_tool(child, share=share)], max_iterations=8, max_repeats=100)
    result = parent.run("What is the weather in Paris?")
    assert result.usage.requests == requests
    assert sub_agent_usage(result)["weather_expert"].requests == child_requests
    if share is not None:
        assert result.tool_results[-1].failure == "not_run" and not result.capped  # told, the model answered
        assert "used their share of model requests" in result.tool_results[-1].content


def test_the_budget_is_shared_by_the_sub_agents_of_one_reply():
    child = weather_expert("practice-loop", max_iterations=8, max_repeats=100)
    parent = Agent(ScriptedClient([reply(("c1", "weather_expert", {"task": "weather in Paris"}),
                                         ("c2", "weather_expert", {"task": "weather in Rome"}))]), "m",
                   [expert_tool(child, share=1.5)], max_iterations=4)
    result = parent.run("go")
    assert [r.value.usage.requests for r in result.tool_results] == [3, 3]  # 1.5 × 4 = 6, split evenly
    assert result.usage.requests == 2 + 6


def test_a_cycle_is_answered_with_the_chain_never_run():
    planner = Agent(client(), "practice")
    researcher = Agent(client(), "practice", [expert_tool(planner, name="planner")])
    planner.__init__(client(), "practice", [expert_tool(researcher, name="researcher")])  # a cycle needs an agent
    result = planner.run("What is the weather in Paris?")                                  # changed once built
    inner = result.tool_results[0].value.tool_results[0]
    assert inner.failure == "not_run" and inner.value is None
    assert "(planner → researcher → planner would delegate in a circle" in inner.content.replace("was not run: ", "(")
    assert result.text and result.usage.requests == 4  # planner 2, researcher 2: the circle never ran


def test_depth_is_limited_with_the_path_in_the_message():
    d = Agent(client(), "practice", [get_weather])
    c = Agent(client(), "practice", [expert_tool(d, name="d", max_depth=2)])
    b = Agent(client(), "practice", [expert_tool(c, name="c")])
    result = Agent(client(), "practice", [expert_tool(b, name="b")]).run("What is the weather in Paris?")
    refused = result.tool_results[0].value.tool_results[0].value.tool_results[0]
    assert refused.failure == "not_run" and RAN == []
    assert "(main agent) → b → c → d is more than 2 level(s) of sub-agents deep" in refused.content


def test_a_sub_agents_failure_is_the_parents_tool_error_and_the_run_goes_on():
    logs = Agent(client(), "practice", [read_huge_log])  # its second request is over the model's window: a 400
    parent = Agent(client(), "practice", [as_tool(logs, name="log_reader", description="Ask the log reader to "
                                                  "search the logs.")])
    result = parent.run("Search the log for billing errors")
    (failed,) = result.tool_results
    assert failed.failure == "exception" and not failed.ok and result.text
    error = json.loads(failed.content)["error"]
    assert error.startswith("log_reader failed: BadRequestError") and "Traceback" not in error
    assert "practice" not in error.split("Error code")[0]  # no key, no path
    assert result.usage.requests == 3  # the failed request of the sub-agent is not counted: it reported no usage


def test_a_crash_inside_the_sub_agent_uses_the_parents_format_error():
    broken = Agent(ScriptedClient([]), "m")
    broken.client = None  # its request raises AttributeError
    parent = Agent(ScriptedClient([reply(("c1", "broken", {"task": "t"}))]), "m", [as_tool(broken, name="broken")],
                   format_error=lambda exc, call: f"{call.name} is down ({type(exc).__name__})")
    result = parent.run("go")
    assert result.tool_results[0].content == "broken is down (AttributeError)" and result.text == "done"


def test_a_gated_delegating_tool_is_refused_when_the_agent_is_built():
    helper = as_tool(weather_expert(), name="helper")
    helper.options["requires_approval"] = True
    with pytest.raises(ToolDefinitionError, match="gate the sub-agent's own tools instead"):
        Agent(client(), "practice", [helper])


# ----------------------------------------------------------------------------- events


def test_the_sub_agents_events_arrive_nested_in_order():
    events = []
    analyst = Agent(client(), "practice", [get_weather])
    researcher = Agent(client(), "practice", [expert_tool(analyst, name="analyst")])
    Agent(client(), "practice", [expert_tool(researcher, name="researcher")]).run(
        "What is the weather in Paris?", on_event=events.append)
    kinds = [type(e).__name__ for e in events]
    start, end = kinds.index("ToolStarted"), kinds.index("ToolFinished")
    assert set(kinds[start + 1:end]) == {"SubAgentEvent"} and end - start - 1 == 14  # 7 each
    nested = [e for e in events if isinstance(e, SubAgentEvent)]
    assert [e.path for e in nested].count("researcher → analyst") == 7
    deepest = next(e for e in nested if isinstance(e.innermost, ToolStarted) and "→" in e.path)
    assert deepest.innermost.call.name == "get_weather" and deepest.path == "researcher → analyst"
    assert str(deepest).startswith("[1]   researcher ┆ [1]   analyst ┆ [1]   ▶ get_weather(")
    assert isinstance(nested[0].innermost, ModelRequest) and isinstance(nested[-1].innermost, FinalAnswer)
    assert str(events[end]).startswith("[1]   ✓ researcher → ") and str(events[end]).endswith("Paris: sunny, 22°C.")


# ----------------------------------------------------------------------------- a gated call inside the sub-agent


def test_approving_inside_the_sub_agent_resumes_it_and_the_call_runs_once():
    events = []
    parent = support()
    paused = parent.run("Refund order 1042", on_event=events.append)
    assert paused.paused and RAN == [] and isinstance(events[-1], RunPaused)
    (item,) = paused.pending
    assert isinstance(item, Delegated) and item.agent == "secretary" and item.name == "refund"
    assert item.arguments == {"order_id": 1042} and item.via.name == "secretary" and item.gated
    assert "Asked by the sub-agent secretary:" in item.details() and '"order_id": 1042' in item.details()
    assert paused.find(item.id) is item and str(events[-1]).endswith(f"paused before: refund ({item.id})")
    item.approve()
    result = parent.resume(paused)
    assert RAN == [("refund", 1042)] and not result.paused and "1042" in result.text
    assert result.tool_results[0].ok and result.usage.requests == 4
    with pytest.raises(ValueError, match="already resumed"):
        item.deny()


def test_a_denied_or_undecided_call_inside_the_sub_agent_does_not_run():
    for decide, reason in [(lambda item: item.deny("not this one"), "not this one"), (lambda item: None,
                                                                                    "no one approved it")]:
        parent = support()
        paused = parent.run("Refund order 1042")
        decide(paused.pending[0])
        result = parent.resume(paused)
        child = result.tool_results[0].value
        assert RAN == [] and child.tool_results[0].failure == "denied" and result.text
        assert f"Reason: {reason}." in child.tool_results[0].content


def test_two_pending_calls_in_one_sub_agent_are_each_decided():
    parent = support()
    paused = parent.run("Refund orders 1042 and 1043")
    assert [p.arguments for p in paused.pending] == [{"order_id": 1042}, {"order_id": 1043}]
    paused.pending[0].approve()
    paused.pending[1].deny()
    parent.resume(paused)
    assert RAN == [("refund", 1042)]


def test_an_edit_through_the_parent_runs_with_the_edited_arguments_only():
    parent = support()
    paused = parent.run("Refund order 1042")
    item = paused.pending[0]
    with pytest.raises(ValueError):
        item.edit({"order_id": "not a number"})
    item.edit({"order_id": 7})
    result = parent.resume(paused)
    assert RAN == [("refund", 7)]
    assert result.tool_results[0].value.tool_results[0].content.startswith("A person changed the arguments")


def test_a_gated_sibling_is_decided_before_any_sub_agent_starts():
    secretary = Agent(client(), "practice", [get_weather])
    parent = Agent(ScriptedClient([reply(("c1", "refund", {"order_id": 5}),
                                         ("c2", "weather_expert", {"task": "What is the weather in Paris?"}))]), "m",
                   [refund, expert_tool(secretary)])
    paused = parent.run("go")
    assert [p.name for p in paused.pending] == ["refund"] and RAN == []  # the sub-agent has not started
    paused.pending[0].approve()
    result = parent.resume(paused)
    assert RAN == [("get_weather", "Paris"), ("refund", 5)] and [r.ok for r in result.tool_results] == [True, True]


def test_a_sub_agent_paused_twice_pauses_the_parent_twice():
    child = Agent(ScriptedClient([reply(("r1", "refund", {"order_id": 1})), reply(("r2", "refund", {"order_id": 2}))]),
                  "m", [refund])
    parent = Agent(ScriptedClient([reply(("c1", "secretary", {"task": "refund 1 then 2"}))]), "m",
                   [as_tool(child, name="secretary")])
    first = parent.run("go")
    assert first.pending[0].arguments == {"order_id": 1}
    first.pending[0].approve()
    second = parent.resume(first)
    assert second.paused and second.pending[0].arguments == {"order_id": 2} and RAN == [("refund", 1)]
    second.pending[0].approve()
    result = parent.resume(second)
    assert RAN == [("refund", 1), ("refund", 2)] and result.text == "done"
    assert result.usage.requests == 2 + 3  # each of the sub-agent's requests counted once, across both pauses


def test_a_paused_grandchild_pauses_the_main_agent_with_the_whole_path():
    billing = Agent(client(), "practice", [refund])
    secretary = Agent(client(), "practice", [as_tool(billing, name="billing", description="Refunds orders.")])
    parent = Agent(client(), "practice", [as_tool(secretary, name="secretary", description="Refunds orders.")])
    paused = parent.run("Refund order 1042")
    (item,) = paused.pending
    assert item.agent == "secretary → billing" and item.arguments == {"order_id": 1042}
    item.approve()
    assert not parent.resume(paused).paused and RAN == [("refund", 1042)]


def test_clashing_call_ids_of_two_sub_agents_are_told_apart():
    def secretary() -> Agent:
        return Agent(ScriptedClient([reply(("r1", "refund", {"order_id": 1}))]), "m", [refund])

    parent = Agent(ScriptedClient([reply(("c1", "a", {"task": "t"}), ("c2", "b", {"task": "t"}))]), "m",
                   [as_tool(secretary(), name="a"), as_tool(secretary(), name="b")])
    paused = parent.run("go")
    assert [p.id for p in paused.pending] == ["c1/r1", "c2/r1"]
    paused.find("c2/r1").approve()
    parent.resume(paused)
    assert RAN == [("refund", 1)]


def test_a_run_paused_inside_a_sub_agent_cannot_be_saved(tmp_path: Path):
    paused = support().run("Refund order 1042")
    with pytest.raises(SavedRunError, match="paused inside a sub-agent"):
        paused.save(tmp_path / "run.json")
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- concurrency, and tools on their own


def test_the_sub_agents_of_one_reply_run_concurrently():
    meeting = threading.Barrier(2, timeout=10)  # a deadlock guard: each sub-agent's tool waits for the other's

    @tool
    def check_in(city: str) -> str:
        """Get the current weather for a city."""
        meeting.wait()
        return f"{city}: sunny"

    children = [Agent(client(), "practice", [check_in]) for _ in range(2)]
    parent = Agent(ScriptedClient([reply(("c1", "a", {"task": "weather in Paris?"}),
                                         ("c2", "b", {"task": "weather in Rome?"}))]), "m",
                   [as_tool(children[0], name="a"), as_tool(children[1], name="b")])
    result = parent.run("go")
    assert [r.content for r in result.tool_results] == ["Paris: sunny.", "Rome: sunny."]


def test_an_llm_function_is_a_tool_with_its_own_parameters_and_a_bounded_answer():
    async def summarize(text: str, words: int = 10) -> str:
        """Summarize a text in a few words."""
        return "summary " * 100

    def classify(text: str) -> dict:
        """Classify a text."""
        return {"label": "spam"}

    short = as_tool(summarize, max_answer_chars=100)
    assert [p.name for p in short.parameters] == ["text", "words"] and short.description.startswith("Summarize")
    results = Executor([short, as_tool(classify)]).run_sync([ToolCall("1", "summarize", '{"text": "hi"}'),
                                                              ToolCall("2", "classify", '{"text": "hi"}')])
    assert len(results[0].content) <= 100 and "[cut:" in results[0].content
    assert results[1].content == '{"label": "spam"}'


def test_a_delegating_tool_runs_in_an_executor_and_on_its_own():
    expert = expert_tool(weather_expert())
    (result,) = Executor([expert]).run_sync([ToolCall("1", "weather_expert", '{"task": "weather in Paris?"}')])
    assert result.ok and result.content == "Paris: sunny, 22°C." and result.value.usage.requests == 2
    assert isinstance(Executor([expert]).hooks[0], Delegation)
    assert asyncio.run(expert.func(task="weather in Rome?")) == "Rome: sunny, 22°C."  # called on its own


def test_bad_settings_are_refused_with_a_clear_message():
    for bad, match in [({"share": 0}, "share is a number above 0"), ({"share": float("nan")}, "share"),
                       ({"max_answer_chars": 10}, "100 or more"), ({"max_depth": 0}, "max_depth")]:
        with pytest.raises(ValueError, match=match):
            as_tool(weather_expert(), **bad)
    with pytest.raises(TypeError, match="takes an Agent or a function"):
        as_tool("researcher")


def test_the_answer_is_shaped_by_the_parents_format_result_and_an_empty_task_is_refused():
    from mini_framework.executor import success_envelope

    parent = Agent(ScriptedClient([reply(("c1", "weather_expert", {"task": "weather in Paris?"}),
                                         ("c2", "weather_expert", {"task": ""}))]), "m",
                   [expert_tool(weather_expert())], format_result=success_envelope)
    first, second = parent.run("go").tool_results
    assert json.loads(first.content) == {"status": "success", "data": "Paris: sunny, 22°C."}
    assert second.failure == "invalid_arguments" and "task" in second.content and RAN == [("get_weather", "Paris")]


def test_a_failing_event_handler_of_the_parent_is_the_parents_error_not_the_sub_agents():
    def handler(event):
        if isinstance(event, SubAgentEvent) and isinstance(event.innermost, ToolStarted):
            raise RuntimeError("the handler's own bug")

    parent = Agent(client(), "practice", [expert_tool(weather_expert())])
    with pytest.raises(RuntimeError, match="the handler's own bug"):
        parent.run("What is the weather in Paris?", on_event=handler)
    events = parent.events("What is the weather in Rome?")
    assert [type(next(events)).__name__ for _ in range(4)] == ["ModelRequest", "ModelResponse", "ToolStarted",
                                                               "SubAgentEvent"]
    events.close()  # abandoned inside the sub-agent: the run stops, nothing is left waiting


class FakeLLMFunction:
    """What as_tool needs of an LLM function: a signature, a docstring, and `arun` giving `.value` and `.usage`."""

    def __init__(self, fail: bool = False):
        self.fail = fail
        self.__name__, self.__doc__ = "classify", "Classify a message as spam or not."

    def __call__(self, text: str) -> str: ...

    async def arun(self, text: str):
        from mini_framework import RunResult, Usage

        usage = Usage()
        usage.add(30, 5)
        run = RunResult("spam", [], [], usage, 1, False)
        if self.fail:
            error = RuntimeError("no valid answer in 3 tries")
            error.results = [run, run]  # type: ignore[attr-defined]  # as LLMFunctionError carries them
            raise error
        return type("Answer", (), {"value": {"label": "spam", "text": text}, "usage": usage})()


def test_an_llm_functions_usage_is_counted_in_the_parent_and_its_failure_is_a_tool_error():
    for fail in (False, True):
        function = as_tool(FakeLLMFunction(fail))
        parent = Agent(ScriptedClient([reply(("c1", "classify", {"text": "WIN A PRIZE"}))]), "m", [function])
        result = parent.run("go")
        (called,) = result.tool_results
        assert result.usage.requests == 2 + (2 if fail else 1)
        assert sub_agent_usage(result)["classify"].prompt_tokens == (60 if fail else 30)
        if fail:
            assert called.failure == "exception" and "no valid answer in 3 tries" in called.content
        else:
            assert json.loads(called.content) == {"label": "spam", "text": "WIN A PRIZE"}


def test_a_real_llm_function_as_a_tool_counts_its_tokens():
    functions = pytest.importorskip("mini_framework.functions")

    @functions.llm_function(client(), "practice")
    def shout(text: str) -> str:
        """Repeat {text} in capitals."""

    parent = Agent(ScriptedClient([reply(("c1", "shout", {"text": "hello"}))]), "m", [as_tool(shout)])
    result = parent.run("go")
    assert result.tool_results[0].ok and result.usage.requests == 3  # the parent's 2, the function's 1
    assert sub_agent_usage(result)["shout"].requests == 1


def test_clashing_ids_two_levels_down_stay_told_apart():
    def billing() -> Agent:
        return Agent(ScriptedClient([reply(("r1", "refund", {"order_id": 1}))]), "m", [refund])

    secretary = Agent(ScriptedClient([reply(("s1", "a", {"task": "t"}), ("s2", "b", {"task": "t"}))]), "m",
                      [as_tool(billing(), name="a"), as_tool(billing(), name="b")])
    parent = Agent(ScriptedClient([reply(("c1", "secretary", {"task": "t"}))]), "m",
                   [as_tool(secretary, name="secretary")])
    paused = parent.run("go")
    assert [(p.id, p.agent) for p in paused.pending] == [("s1/r1", "secretary → a"), ("s2/r1", "secretary → b")]
    paused.find("s2/r1").approve()
    parent.resume(paused)
    assert RAN == [("refund", 1)]
