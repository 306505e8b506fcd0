"""Checks for lesson 02 (the OpenAI SDK, several calls, tool_choice, parallel_tool_calls).

Exercises 2 and 3 watch the notebook's `client` while the learner's function runs: a stand-in
(`Recorder`) takes its place in the notebook's namespace for the length of the check, records
each request, and for the iteration cap plays a model that never stops calling tools.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, Callable, Iterator

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessage

from mini_framework import connect

from .checking import CheckResult, Hints, NotSolved, expect_json_object, expect_text, practice_in_use, run_check, solved
from .examples import TOOLS, WEATHER

# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: (
        "for each call in message.tool_calls, look its name up in FUNCTIONS: a missing one gets a JSON "
        "error naming it as content; a known one runs with the parsed arguments, its result made text; "
        "append one tool message per call, with that call's id, and return the list\n"
        "中文：对 message.tool_calls 里的每个调用：用 FUNCTIONS.get 找函数；找不到就把点名它的 JSON 错误当 "
        "content；找到就用解析后的参数调用它，结果不是字符串就转成 JSON 文本；每个调用追加一条带 call.id 的 "
        "tool 消息，最后返回这个列表"),
    2: (
        "one request offering [*TOOLS, ROUTE_TOOL], with tool_choice naming the function route_ticket, so "
        "that the model has to call it; parse the first call's arguments and return its team\n"
        "中文：发一次请求，tools 为 [*TOOLS, ROUTE_TOOL]，tool_choice 指定函数 "
        "route_ticket（这样模型一定调用它）；取第一个工具调用，解析 arguments，返回其中的 team"),
    3: (
        "start the messages with the user's question; count requests from 1 to 10, each with TOOLS and "
        "parallel_tool_calls=parallel; a reply without tool_calls means: return the count; otherwise append "
        "the reply and what answer_tool_calls gives for it. If the loop ends, return 10\n"
        "中文：messages 从一条用户消息开始；请求次数从 1 数到 10：每次带上 TOOLS 和 "
        "parallel_tool_calls=parallel 发请求；回复没有 tool_calls 就返回当前次数；否则把回复和 "
        "answer_tool_calls 的结果追加进 messages。循环结束还没返回，就返回 10"),
})


# ----------------------------------------------------------------------------- watching the notebook's client

class _Runaway(BaseException):
    """Raised by the stand-in model when a function keeps sending requests past the check's limit.

    A BaseException, so that an `except Exception` in the learner's code cannot swallow it.
    """


class Recorder:
    """Stands in for the notebook's `client`: records each request's keyword arguments.

    Requests go on to the real client, or, with `endless=True`, get a reply that asks for one
    more get_weather call every time, as a model that never stops would. Past `limit` requests
    it raises `_Runaway`.
    """

    def __init__(self, client: Any, endless: bool = False, limit: int | None = None) -> None:
        self.client, self.endless, self.limit = client, endless, limit
        self.requests: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, **request: Any) -> Any:
        self.requests.append(request)
        if self.limit is not None and len(self.requests) > self.limit:
            raise _Runaway
        if self.endless:
            return _one_more_call(len(self.requests))
        return self.client.chat.completions.create(**request)


def _one_more_call(number: int) -> ChatCompletion:
    """The reply of a model that wants the weather again, and again."""
    call = {"id": f"call_again{number:04d}", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}
    return ChatCompletion.model_validate({
        "id": f"chatcmpl-endless{number}", "object": "chat.completion", "created": 0, "model": "endless",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
    })


@contextmanager
def watching(function: Callable[..., Any], endless: bool = False, limit: int | None = None) -> Iterator[Recorder]:
    """Put a Recorder in place of the `client` that `function` reads from its module (the notebook)."""
    namespace = getattr(function, "__globals__", None)
    if not isinstance(namespace, dict):  # not a Python function: nothing to watch, so no request is seen
        yield Recorder(None, endless=endless, limit=limit)
        return
    had_client = "client" in namespace
    real = namespace.get("client")
    recorder = Recorder(real if real is not None else connect().client, endless=endless, limit=limit)
    namespace["client"] = recorder
    try:
        yield recorder
    finally:
        if had_client:
            namespace["client"] = real
        else:
            del namespace["client"]


def _api_message(error: openai.APIStatusError) -> str:
    """The `message` of an API error, whichever way the SDK hands it over."""
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(inner.get("message") or error).rstrip(".")


# ----------------------------------------------------------------------------- exercise 1

def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


def _answers_test(answer_tool_calls: Callable[[Any], list]) -> str:
    message = ChatCompletionMessage(role="assistant", content=None, tool_calls=[
        _call("call_A", "get_weather", {"city": "广州"}),
        _call("call_B", "add_numbers", {"a": 1.5, "b": 2}),
        _call("call_C", "calculate_discount", {"price": 100}),
    ])
    answers = solved(answer_tool_calls(message))
    if isinstance(answers, dict):
        raise AssertionError("answer_tool_calls() returned one message; return a list with one message per call")
    assert isinstance(answers, list), f"return a list of messages, not {type(answers).__name__}"
    assert all(isinstance(a, dict) for a in answers), "each answer should be a dict: {'role': 'tool', ...}"
    ids = [a.get("tool_call_id") for a in answers]
    assert len(answers) == 3, (
        f"three calls need three answers, got {len(answers)} ({ids}). The API refuses the next request while any "
        f"call is unanswered, the one with the unknown tool included")
    assert ids == ["call_A", "call_B", "call_C"], (
        f"expected the ids call_A, call_B, call_C, each answer with its own call's id, got {ids}")
    assert all(a.get("role") == "tool" for a in answers), 'every answer needs role "tool"'
    contents = [expect_text(a.get("content"), f"the content of the answer to {a['tool_call_id']}") for a in answers]
    assert contents[0] == json.dumps(WEATHER["广州"], ensure_ascii=False), (
        f"call_A is get_weather(city='广州'), which gives {json.dumps(WEATHER['广州'], ensure_ascii=False)}, "
        f"not {contents[0]!r:.60}")
    assert contents[1].strip() == "3.5", f"call_B is add_numbers(a=1.5, b=2) = 3.5, not {contents[1]!r}"
    error = expect_json_object(contents[2], "the answer to call_C (an unknown tool)")
    assert "calculate_discount" in json.dumps(error, ensure_ascii=False), (
        "call_C's error should name the unknown tool, calculate_discount, so the model knows which call failed")
    return "three calls, three answers, ids in order, the unknown tool reported"


def answer_tool_calls(answer_tool_calls: Callable[[Any], list]) -> CheckResult:
    """Exercise 1: every call answered, in order, with its own id; unknown names don't raise."""
    return run_check(1, lambda: _answers_test(answer_tool_calls),
                     "Section 2 answers every call of a reply; do the same, and handle a name that isn't in "
                     "FUNCTIONS as lesson 01 did.", recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

ROUTE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "route_ticket",
        "description": "Send a customer's message to the team that should handle it",
        "parameters": {
            "type": "object",
            "properties": {
                "team": {"type": "string", "enum": ["billing", "shipping", "technical", "other"],
                         "description": "the team that handles this kind of message"},
                "summary": {"type": "string", "description": "the message in one short sentence"},
            },
            "required": ["team", "summary"],
        },
    },
}
TEAMS = ROUTE_TOOL["function"]["parameters"]["properties"]["team"]["enum"]
MESSAGES = [
    "我的快递三天了还没到，北京今天下雨，会不会更慢？",  # My parcel is 3 days late; it rains in Beijing: slower still?
    "发票金额开错了，请重开",                          # The invoice amount is wrong, please issue a new one
]
FORCED = {"type": "function", "function": {"name": "route_ticket"}}


def _tool_names(tools: Any) -> list[str]:
    return [t.get("function", {}).get("name") for t in tools or [] if isinstance(t, dict)]


def _route_request(request: dict[str, Any]) -> None:
    """What must be true of the request `route()` sent."""
    offered = _tool_names(request.get("tools"))
    missing = [name for name in _tool_names([*TOOLS, ROUTE_TOOL]) if name not in offered]
    assert not missing, (
        f"the request offered {offered or 'no tools'}; offer the assistant's usual tools too, [*TOOLS, ROUTE_TOOL] "
        f"(missing: {missing}). The task is to get route_ticket although other tools are on offer")
    choice = request.get("tool_choice")
    if choice in (None, "auto"):
        raise AssertionError("with tool_choice left to 'auto' the model decides, and a message that mentions the "
                             "weather tempts it into get_weather: tell it which tool to call")
    if choice == "required":
        raise AssertionError("tool_choice='required' makes the model call *a* tool, not necessarily route_ticket: "
                             "for a message about rain in Beijing it may call get_weather. Name the tool instead")
    assert choice == FORCED, (
        f"tool_choice {choice!r} is not the form that names a tool; see the table in section 4")


def route(route: Callable[[str], str]) -> CheckResult:
    """Exercise 2: force the named tool among several, and read its arguments (a transfer of section 4)."""
    def test() -> str:
        teams = []
        for text in MESSAGES:
            failure: Exception | None = None
            with watching(route) as recorder:
                try:
                    team = route(text)
                except openai.BadRequestError as error:
                    raise AssertionError(f"the API refused the request: {_api_message(error)}") from None
                except Exception as error:  # said after what was wrong with the request, which is often why
                    failure = error
            if recorder.requests:
                _route_request(recorder.requests[-1])
            if failure is not None:
                raise failure
            solved(team)
            assert recorder.requests, "route() sent no request through the notebook's `client`"
            if isinstance(team, (dict, str)) and ("team" in team if isinstance(team, dict) else team.startswith("{")):
                raise AssertionError(f"route() returned all the arguments ({str(team):.60}); return only the team, "
                                     f"one of {TEAMS}")
            assert isinstance(team, str) and team in TEAMS, (
                f"route() should return the team the model chose, one of {TEAMS}, not {team!r:.60}")
            if practice_in_use():
                client, model = connect()
                reply = client.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": text}], tools=[*TOOLS, ROUTE_TOOL],
                    tool_choice=FORCED).choices[0].message
                expected = json.loads(reply.tool_calls[0].function.arguments)["team"]
                assert team == expected, f"the model chose {expected!r} for {text!r}, but route() returned {team!r}"
            teams.append(team)
        return "; ".join(f"{text} → {team}" for text, team in zip(MESSAGES, teams))
    return run_check(2, test, "One of the four tool_choice values of section 4 gets exactly one tool, whatever the "
                              "message says.", recipe=hint.recipes[2])


# ----------------------------------------------------------------------------- exercise 3

QUESTION = "What's the weather in Paris, Tokyo and London?"
CAP = 10


def _counted(round_trips: Callable[[str, bool], int], parallel: bool) -> int:
    """round_trips(QUESTION, parallel), checked against the requests it really sent."""
    failure: Exception | None = None
    with watching(round_trips) as recorder:
        try:
            returned = round_trips(QUESTION, parallel)
        except Exception as error:  # said after what was wrong with the requests, which is often why
            failure = error
    sent = len(recorder.requests)
    offered = [bool(request.get("tools")) for request in recorder.requests]
    assert all(offered), (
        f"request {offered.index(False) + 1} of {sent} offered no tools: offer TOOLS every time, or the model "
        f"cannot ask for the next city (section 3)")
    flags = {request.get("parallel_tool_calls") for request in recorder.requests}
    assert flags <= {parallel}, (
        f"with parallel={parallel}, send parallel_tool_calls={parallel} in every request (sent: {flags})")
    if failure is not None:
        raise failure
    solved(returned)
    assert isinstance(returned, int) and not isinstance(returned, bool), (
        f"return the number of requests (an int), not {type(returned).__name__}")
    assert sent, "round_trips() sent no request through the notebook's `client`: use `client` and `model`"
    assert returned == sent, (
        f"round_trips(..., parallel={parallel}) returned {returned} but sent {sent} requests: count every "
        f"request, the last one (the text answer) included")
    return returned


def _cap(round_trips: Callable[[str, bool], int]) -> None:
    """Against a model that never stops calling tools, round_trips stops at exactly CAP requests."""
    limit = CAP + 5
    with watching(round_trips, endless=True, limit=limit) as recorder:
        try:
            returned = round_trips(QUESTION, True)
        except _Runaway:
            raise AssertionError(
                f"against a model that never stops calling tools, round_trips() was still sending requests when the "
                f"check stopped it at {limit}. Stop after {CAP} requests whatever happens: each one is paid "
                f"for") from None
    sent = len(recorder.requests)
    assert sent == CAP, (
        f"against a model that never stops calling tools, round_trips() stopped after {sent} requests; the cap is "
        f"{CAP} requests, no fewer, no more")
    assert returned == CAP, (
        f"round_trips() stopped at the cap, after {CAP} requests, but returned {returned!r}: return {CAP} there too")


def _exercise_1_problem(answer_tool_calls: Callable[[Any], list] | None) -> str | None:
    """What is wrong with Exercise 1's function, in a sentence, or None if it passes (or was not given)."""
    if answer_tool_calls is None:
        return None
    result = run_check(1, lambda: _answers_test(answer_tool_calls), "")
    if result.passed:
        return None
    state = "is not solved yet" if result.status == "not solved" else "is not right yet"
    return f"round_trips() relies on answer_tool_calls from Exercise 1, which {state}: fix Exercise 1 first"


def round_trips(round_trips: Callable[[str, bool], int],
                answer_tool_calls: Callable[[Any], list] | None = None) -> CheckResult:
    """Exercise 3: count requests until a text answer, with and without parallel calls, capped at 10."""
    def checks() -> str:
        parallel = _counted(round_trips, True)
        one_by_one = _counted(round_trips, False)
        if practice_in_use():
            assert parallel == 2, f"with parallel calls: 1 request with 3 calls + 1 for the answer = 2, got {parallel}"
            assert one_by_one == 4, f"one call per reply: 3 requests + 1 for the answer = 4, got {one_by_one}"
        assert 1 <= parallel <= one_by_one, f"parallel calls can't need more requests ({parallel} vs {one_by_one})"
        _cap(round_trips)
        return (f"three cities: {parallel} requests with parallel calls, {one_by_one} without; a model that never "
                f"stops is cut off after {CAP}")

    def test() -> str:
        try:
            return checks()
        except NotSolved:
            raise
        except Exception as error:  # a cascade from Exercise 1 is said as such, not as an error from nowhere
            problem = _exercise_1_problem(answer_tool_calls)
            if problem is None:
                raise
            raise AssertionError(f"{problem} (here it ended in {type(error).__name__}: {str(error)[:120]})") from None

    return run_check(3, test, "Keep asking while the reply has tool_calls, answering them in between, and count "
                              "the requests; a loop that can run forever needs a limit.", recipe=hint.recipes[3])
