"""Bad requests get the real API's status, error type, param, code and exact message.

Each row: a request body (a dict, or raw bytes), then what the answer must be. Every error body
is also validated against the official `ErrorResponse` schema. Sources for each wording are in
`practice_model/errors.py`.
"""
from __future__ import annotations

import copy
from typing import Any

import pytest

from practice_model import PracticeServer
from practice_model.errors import invalid_json

OK = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}
CALL = {"id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
PARSE = invalid_json().message
ROLES = "'system', 'assistant', 'user', 'function', 'tool', and 'developer'"
TOOL_ORPHAN = ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
               "'tool_calls'.")
UNANSWERED = ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
              "'tool_call_id'. The following tool_call_ids did not have response messages: ")


def body(**changes: Any) -> dict[str, Any]:
    """The valid body with top-level changes (a value of `...` deletes the key)."""
    out = copy.deepcopy(OK)
    for key, value in changes.items():
        if value is ...:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def msgs(*messages: dict[str, Any]) -> dict[str, Any]:
    """The valid body with these messages."""
    return body(messages=list(messages))


USER = {"role": "user", "content": "hi"}
ASSISTANT_CALLS = {"role": "assistant", "content": None, "tool_calls": [CALL, {**CALL, "id": "call_def"}]}


def answer(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "sunny"}


# (name, request, status, param, code, message)
CASES: list[tuple[str, Any, int, Any, Any, str]] = [
    # The body itself.
    ("malformed JSON", b'{"model": "scripted",', 400, None, None, PARSE),
    ("not UTF-8", b'\xff\xfe{"model": 1}', 400, None, None, PARSE),
    ("empty body", b"", 400, None, None, PARSE),
    ("a JSON array", b"[]", 400, None, None, PARSE),
    ("NaN is not JSON", b'{"model": "scripted", "messages": [], "temperature": NaN}', 400, None, None, PARSE),
    ("a number too big for a float", b'{"model": "scripted", "messages": [], "temperature": 1e999}', 400, None,
     None, PARSE),
    ("nested too deep", b"[" * 100000 + b"]" * 100000, 400, None, None, PARSE),
    # Required parameters, in the API's order.
    ("missing model", body(model=...), 400, None, None, "you must provide a model parameter"),
    ("null model", body(model=None), 400, None, None, "you must provide a model parameter"),
    ("missing model beats unknown argument", body(model=..., foo=1), 400, None, None,
     "you must provide a model parameter"),
    ("missing messages", body(messages=...), 400, "messages", "missing_required_parameter",
     "Missing required parameter: 'messages'."),
    ("unknown argument", body(foo=1), 400, None, None, "Unrecognized request argument supplied: foo"),
    ("unknown arguments", body(foo=1, bar=2), 400, None, None, "Unrecognized request arguments supplied: foo, bar"),
    ("unknown argument beats a bad type", body(foo=1, n="x"), 400, None, None,
     "Unrecognized request argument supplied: foo"),
    # Types and ranges of top-level parameters.
    ("model not a string", body(model=5), 400, "model", "invalid_type",
     "Invalid type for 'model': expected a string, but got an integer instead."),
    ("messages a string", body(messages="hi"), 400, "messages", "invalid_type",
     "Invalid type for 'messages': expected an array of objects, but got a string instead."),
    ("messages null", body(messages=None), 400, "messages", "invalid_type",
     "Invalid type for 'messages': expected an array of objects, but got null instead."),
    ("messages empty", body(messages=[]), 400, "messages", "empty_array",
     "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."),
    ("temperature a string", body(temperature="hot"), 400, "temperature", "invalid_type",
     "Invalid type for 'temperature': expected a decimal, but got a string instead."),
    ("temperature too high", body(temperature=3), 400, "temperature", "decimal_above_max_value",
     "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead."),
    ("top_p negative", body(top_p=-0.5), 400, "top_p", "decimal_below_min_value",
     "Invalid 'top_p': decimal below minimum value. Expected a value >= 0, but got -0.5 instead."),
    ("n zero", body(n=0), 400, "n", "integer_below_min_value",
     "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead."),
    ("n a string", body(n="2"), 400, "n", "invalid_type",
     "Invalid type for 'n': expected an integer, but got a string instead."),
    ("seed a decimal", body(seed=1.5), 400, "seed", "invalid_type",
     "Invalid type for 'seed': expected an integer, but got a decimal number instead."),
    ("max_tokens zero", body(max_tokens=0), 400, "max_tokens", "integer_below_min_value",
     "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead."),
    ("stream a string", body(stream="yes"), 400, "stream", "invalid_type",
     "Invalid type for 'stream': expected a boolean, but got a string instead."),
    ("user an object", body(user={"a": 1}), 400, "user", "invalid_type",
     "Invalid type for 'user': expected a string, but got an object instead."),
    ("stream_options without stream", body(stream_options={"include_usage": True}), 400, "stream_options", None,
     "The 'stream_options' parameter is only allowed when 'stream' is enabled."),
    # Messages.
    ("message not an object", msgs("hi"), 400, "messages[0]", "invalid_type",
     "Invalid type for 'messages[0]': expected an object, but got a string instead."),
    ("message without role", msgs({"content": "hi"}), 400, "messages[0].role", "missing_required_parameter",
     "Missing required parameter: 'messages[0].role'."),
    ("unknown role", msgs({"role": "bot", "content": "hi"}), 400, "messages[0].role", "invalid_value",
     f"Invalid value: 'bot'. Supported values are: {ROLES}."),
    ("role not a string", msgs({"role": 1, "content": "hi"}), 400, "messages[0].role", "invalid_type",
     "Invalid type for 'messages[0].role': expected one of 'system', 'assistant', 'user', 'function', 'tool', "
     "or 'developer', but got an integer instead."),
    ("user without content", msgs({"role": "user"}), 400, "messages[0].content", "missing_required_parameter",
     "Missing required parameter: 'messages[0].content'."),
    ("content a number", msgs({"role": "user", "content": 7}), 400, "messages[0].content", "invalid_type",
     "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer "
     "instead."),
    ("content an object", msgs({"role": "user", "content": {"type": "text"}}), 400, "messages[0].content",
     "invalid_type", "Invalid type for 'messages[0].content': expected one of a string or array of objects, but "
     "got an object instead."),
    ("content part a string", msgs({"role": "user", "content": ["hi"]}), 400, "messages[0].content[0]",
     "invalid_type", "Invalid type for 'messages[0].content[0]': expected an object, but got a string instead."),
    ("text part without text", msgs({"role": "user", "content": [{"type": "text"}]}), 400,
     "messages[0].content[0].text", "missing_required_parameter",
     "Missing required parameter: 'messages[0].content[0].text'."),
    ("empty content parts", msgs({"role": "user", "content": []}), 400, "messages[0].content", "empty_array",
     "Invalid 'messages[0].content': empty array. Expected an array with minimum length 1, but got an empty array "
     "instead."),
    ("tool message without tool_call_id", msgs(USER, {"role": "assistant", "tool_calls": [CALL]},
                                               {"role": "tool", "content": "x"}),
     400, "messages[2].tool_call_id", "missing_required_parameter",
     "Missing required parameter: 'messages[2].tool_call_id'."),
    ("tool call id null", msgs(USER, {"role": "assistant", "tool_calls": [{**CALL, "id": None}]}), 400,
     "messages[1].tool_calls[0].id", "invalid_type",
     "Invalid type for 'messages[1].tool_calls[0].id': expected a string, but got null instead."),
    ("tool call without type", msgs(USER, {"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}), 400,
     "messages[1].tool_calls[0].type", "missing_required_parameter",
     "Missing required parameter: 'messages[1].tool_calls[0].type'."),
    ("arguments as an object", msgs(USER, {"role": "assistant", "tool_calls": [
        {**CALL, "function": {"name": "get_weather", "arguments": {"city": "北京"}}}]}), 400,
     "messages[1].tool_calls[0].function.arguments", "invalid_type",
     "Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object "
     "instead."),
    ("empty tool_calls", msgs(USER, {"role": "assistant", "tool_calls": []}), 400, "messages[1].tool_calls",
     "empty_array", "Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but "
                    "got an empty array instead."),
    ("call name too long in history", msgs(USER, {"role": "assistant", "tool_calls": [
        {**CALL, "function": {"name": "f" * 79, "arguments": "{}"}}]}), 400,
     "messages[1].tool_calls[0].function.name", "string_above_max_length",
     "Invalid 'messages[1].tool_calls[0].function.name': string too long. Expected a string with maximum length "
     "64, but got a string with length 79 instead."),
    # Tools.
    ("tools a string", body(tools="none"), 400, "tools", "invalid_type",
     "Invalid type for 'tools': expected an array of objects, but got a string instead."),
    ("tools empty", body(tools=[]), 400, "tools", "empty_array",
     "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead."),
    ("tool without function", body(tools=[{"type": "function"}]), 400, "tools[0].function",
     "missing_required_parameter", "Missing required parameter: 'tools[0].function'."),
    ("function without name", body(tools=[{"type": "function", "function": {"parameters": {}}}]), 400,
     "tools[0].function.name", "missing_required_parameter", "Missing required parameter: 'tools[0].function.name'."),
    ("function name with a space", body(tools=[TOOL, {"type": "function", "function": {"name": "get weather"}}]), 400,
     "tools[1].function.name", "invalid_value", "Invalid 'tools[1].function.name': string does not match pattern. "
                                                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
    ("function name in Chinese", body(tools=[{"type": "function", "function": {"name": "查天气"}}]), 400,
     "tools[0].function.name", "invalid_value", "Invalid 'tools[0].function.name': string does not match pattern. "
                                                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."),
    ("function name too long", body(tools=[{"type": "function", "function": {"name": "a" * 70}}]), 400,
     "tools[0].function.name", "string_above_max_length", "Invalid 'tools[0].function.name': string too long. "
     "Expected a string with maximum length 64, but got a string with length 70 instead."),
    ("tool_choice without tools", body(tool_choice="auto"), 400, "tool_choice", None,
     "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."),
    ("parallel_tool_calls without tools", body(parallel_tool_calls=False), 400, "parallel_tool_calls", None,
     "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified."),
    ("tool_choice unknown mode", body(tools=[TOOL], tool_choice="always"), 400, "tool_choice", "invalid_value",
     "Invalid value: 'always'. Supported values are: 'none', 'auto', and 'required'."),
    ("tool_choice a number", body(tools=[TOOL], tool_choice=7), 400, "tool_choice", "invalid_type",
     "Invalid type for 'tool_choice': expected one of one of 'none', 'auto', or 'required' or object, but got an "
     "integer instead."),
    ("tool_choice names an absent tool", body(tools=[TOOL], tool_choice={"type": "function",
                                                                         "function": {"name": "send_email"}}),
     400, "tool_choice", None, "Tool choice 'send_email' not found in 'tools' parameter."),
    ("tool_choice without function", body(tools=[TOOL], tool_choice={"type": "function"}), 400,
     "tool_choice.function", "missing_required_parameter", "Missing required parameter: 'tool_choice.function'."),
    # The model.
    ("unknown model", body(model="gpt-4o"), 404, None, "model_not_found",
     "The model `gpt-4o` does not exist or you do not have access to it."),
    # The conversation (engine-level wording, `messages.[N]` params).
    ("tool message answering nothing", msgs(USER, {"role": "assistant", "content": "hi"}, USER, answer("call_abc")),
     400, "messages.[3].role", None, TOOL_ORPHAN),
    ("tool message first", msgs(answer("call_abc"), USER), 400, "messages.[0].role", None, TOOL_ORPHAN),
    ("tool message with a wrong id", msgs(USER, {"role": "assistant", "tool_calls": [CALL]}, answer("call_xyz")),
     400, "messages.[2].role", None, TOOL_ORPHAN),
    ("assistant message forgotten", msgs(USER, answer("call_abc")), 400, "messages.[1].role", None, TOOL_ORPHAN),
    ("calls not all answered", msgs(USER, ASSISTANT_CALLS, answer("call_abc"), USER), 400, "messages.[1].role",
     None, UNANSWERED + "call_def"),
    ("calls never answered", msgs(USER, ASSISTANT_CALLS), 400, "messages.[1].role", None,
     UNANSWERED + "call_abc, call_def"),
    ("image for a text-only model", msgs({"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}),
     400, "messages.[0].content.[1].type", None,
     "Invalid content type. image_url is only supported by certain models."),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_request_gets_the_real_error(server, api, case):
    name, request, status, param, code, message = case
    api.assert_error(api.post(server, request), status, message, param=param, code=code)


@pytest.mark.parametrize("request_body", [
    msgs(USER, ASSISTANT_CALLS, answer("call_def"), answer("call_abc")),  # any order within the block
    msgs({"role": "developer", "content": "be brief"}, USER, {"role": "assistant", "content": None,
                                                             "tool_calls": [CALL]}, answer("call_abc")),
    body(tools=[TOOL, TOOL]),  # duplicate tool names: the real API accepts them
    body(tools=[TOOL], tool_choice={"type": "function", "function": {"name": "get_weather"}},
         parallel_tool_calls=False),
    body(temperature=None, seed=7, user="u1", metadata={"lesson": "2"}, store=False, response_format={"type": "text"}),
    body(model="scripted-vision", messages=[{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]),
], ids=["answers in any order", "developer message", "duplicate tool names", "named tool_choice", "harmless params",
        "image for a vision persona"])
def test_valid_requests_pass(server, api, request_body):
    raw = api.post(server, request_body)
    assert raw.status == 200, raw.body
    assert api.response_problems(raw.json()) == []


KEY = "sk-practice-secret-0123456789abcdef"


def test_api_key_missing(fresh_server, api):
    api.assert_error(api.post(fresh_server, OK), 401, (
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer "
        "auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're "
        "accessing the API from your browser and are prompted for a username and password. You can obtain an API "
        "key from https://platform.openai.com/account/api-keys."), param=None, code=None)


def test_api_key_wrong_is_masked(fresh_server, api):
    wrong = "sk-wrong-key-that-must-never-be-echoed"
    raw = api.post(fresh_server, OK, headers={"Authorization": f"Bearer {wrong}"})
    api.assert_error(raw, 401, "Incorrect API key provided: sk-wrong**************************hoed. You can find "
                               "your API key at https://platform.openai.com/account/api-keys.",
                     param=None, code="invalid_api_key")
    assert wrong.encode() not in raw.body


def test_api_key_right_and_checked_before_the_body(fresh_server, api):
    assert api.post(fresh_server, OK, headers={"Authorization": f"Bearer {KEY}"}).status == 200
    api.assert_error(api.post(fresh_server, b"not json"), 401)  # auth first, as the real API


@pytest.mark.parametrize("method, path", [("POST", "/v1/foo"), ("GET", "/v1/chat/completions"),
                                          ("POST", "/v1/models"), ("DELETE", "/v1/models/scripted"),
                                          ("PUT", "/v1/chat/completions"), ("GET", "/"),
                                          ("POST", "/chat/completions")])
def test_unknown_routes_and_wrong_methods(server, api, method, path):
    api.assert_error(api.request(server, method, path, b"{}"), 404, f"Invalid URL ({method} {path})",
                     param=None, code=None)


def test_unknown_model_by_id(server, api):
    api.assert_error(api.request(server, "GET", "/v1/models/gpt-4o"), 404, code="model_not_found")


def test_body_over_the_limit(api):
    with PracticeServer(personas=api.PERSONAS, max_body_bytes=1000) as s:
        big = body(messages=[{"role": "user", "content": "x" * 5000}])
        api.assert_error(api.post(s, big), 413, code="request_too_large")
        assert api.post(s, OK).status == 200  # and it keeps answering


def test_persona_crash_is_a_500_without_the_traceback(server, api, caplog):
    raw = api.post(server, body(model="boom"))
    error = api.assert_error(raw, 500, "The server had an error while processing your request. Sorry about that!",
                             type="server_error", param=None, code=None)
    assert "secret internal detail" not in raw.body.decode()
    assert "secret internal detail" in caplog.text  # the traceback went to the local log
    assert error and api.post(server, OK).status == 200


def test_persona_refusal_keeps_its_status_and_headers(server, api):
    raw = api.post(server, body(model="busy"))
    api.assert_error(raw, 429, type="requests", code="rate_limit_exceeded")
    assert raw.headers["retry-after"] == "2" and raw.headers["retry-after-ms"] == "2000"


# -----------------------------------------------------------------------------
# function names: the server's rule is the core's `check_name` rule, character for character

NAMES = [                       # (name, accepted)
    ("get_weather", True), ("a", True), ("A-b_9", True), ("x" * 64, True), ("-", True), ("_", True),
    ("", False), ("x" * 65, False), ("get_weather\n", False), ("get_weather\r\n", False), ("\nget_weather", False),
    ("get weather", False), (" get_weather", False), ("get_weather ", False), ("查天气", False), ("getWeather🙂", False),
    ("café", False), ("ｇｅｔ", False), ("get.weather", False), ("get/weather", False), ("get\tweather", False),
    ("get_weather\x00", False), ("名" * 64, False),
]


def server_accepts(name: str) -> bool:
    """Whether the practice server's checks let this function name through."""
    from practice_model import checks, errors

    try:
        checks.check_function_name(name, "tools[0].function.name")
    except errors.ApiError:
        return False
    return True


@pytest.mark.parametrize("name,accepted", NAMES, ids=[repr(n)[:30] for n, _ in NAMES])
def test_function_names_accepted_exactly_as_the_core_accepts_them(name, accepted):
    from mini_framework.schema import ToolDefinitionError
    from mini_framework.tools import check_name

    assert server_accepts(name) is accepted
    try:
        check_name(name)
        core = True
    except ToolDefinitionError:
        core = False
    assert core is accepted, "the core's check_name disagrees: the two rules must stay identical"


def test_a_trailing_newline_is_refused_over_http(server, api):
    raw = api.post(server, body(tools=[{"type": "function", "function": {"name": "get_weather\n"}}]))
    api.assert_error(raw, 400, "Invalid 'tools[0].function.name': string does not match pattern. Expected a string "
                     "that matches the pattern '^[a-zA-Z0-9_-]+$'.", param="tools[0].function.name", code="invalid_value")
