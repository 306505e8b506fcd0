"""llama.cpp's OpenAI server (llama-cpp-python, `--chat_format chatml-function-calling`) with a small model,
on demand: `model="practice@llamacpp"` behaves as that server did in front of gemma-3-270m.

It is what a learner with a laptop meets when they start a real model offline (the README's "A real
model, offline"), so every lesson has to get through it. Recorded against llama-cpp-python 0.3's server:

    refuse(body)            an assistant message with `tool_calls` and `content` null or absent: 500
                            (its request validation, and its prompt template reading `message.content`);
                            `tool_choice: "required"`: 500 with an empty message; `response_format` of type
                            `json_schema`: 500, "Input should be 'text' or 'json_object'" (its request model)
    decide(reply, body)     tools are called only when `tool_choice` names one function (then once, that
                            one); with "auto" or no `tool_choice` the small model answers in words, ""

The wire shape of its answers (`content: null` beside a call, the legacy `function_call` field, ids
`call__0_<name>_cmpl-...`, arguments written `{ "city" : "北京" } `, no usage chunk in a stream) is the
`@llamacpp` row of `quirks.py`.

Concessions: the 500 for null content is worded shorter than the server's (which lists seven validation
errors, one per message type); what the small model *says* is the persona's text, not gemma's; llama.cpp's
template does not show the model a tool's result, which is not reproduced (the persona reads results as
always).
"""
from __future__ import annotations

from typing import Any

from .errors import ApiError
from .reply import PlannedCall, Reply

SERVER_ERROR = "internal_server_error"


def refuse(body: dict[str, Any]) -> None:
    """Raise the 500 llama.cpp's server answers to a request it cannot take; return if it takes it.

    >>> call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    >>> refuse({"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]})
    >>> refuse({"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]})
    Traceback (most recent call last):
    ...
    practice_model.errors.ApiError: 500 1 validation error: ...
    """
    for index, message in enumerate(body.get("messages") or []):
        if not (isinstance(message, dict) and message.get("role") == "assistant" and message.get("tool_calls")):
            continue
        if "content" not in message:
            raise ApiError(500, "'dict object' has no attribute 'content'", SERVER_ERROR)
        if message["content"] is None:
            raise ApiError(500, f"1 validation error: {{'type': 'string_type', 'loc': ('body', 'messages', {index}, "
                                "'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid "
                                "string', 'input': None}", SERVER_ERROR)
    if body.get("tool_choice") == "required":
        raise ApiError(500, "", SERVER_ERROR)
    fmt = body.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    if isinstance(kind, str) and kind not in ("text", "json_object"):  # its request model knows only these two
        raise ApiError(500, f"1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', 'response_format', "
                            f"'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': {kind!r}, 'ctx': "
                            f"{{'expected': \"'text' or 'json_object'\"}}}}", SERVER_ERROR)


def forced(body: dict[str, Any]) -> str | None:
    """The one function `tool_choice` names, or None ("auto", "none", or no tool_choice).

    >>> forced({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}), forced({})
    ('get_weather', None)
    """
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and isinstance(choice.get("function"), dict):
        name = choice["function"].get("name")
        return name if isinstance(name, str) else None
    return None


def decide(reply: Reply, body: dict[str, Any]) -> Reply:
    """What the small model behind llama.cpp answers where the persona decided `reply`: a call only when
    `tool_choice` forces one (the persona's call to that tool, else one without arguments), else words.

    >>> calls = Reply(tool_calls=(PlannedCall.of("get_weather", {"city": "北京"}), PlannedCall.of("add", {})))
    >>> decide(calls, {}).content, decide(calls, {}).tool_calls
    ('', ())
    >>> decide(calls, {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}).tool_calls
    (PlannedCall(name='get_weather', arguments='{"city":"北京"}'),)
    """
    name = forced(body)
    if name is None:
        return Reply(content=reply.content or "") if reply.tool_calls else reply
    chosen = next((c for c in reply.tool_calls if c.name == name), None)
    return Reply(tool_calls=(chosen or PlannedCall(name, "{}"),))
