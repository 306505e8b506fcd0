"""Errors the practice model answers with, shaped and worded like the real OpenAI API.

Every refusal is an `ApiError`: an HTTP status plus the `{"error": {"message", "type",
"param", "code"}}` body that OpenAI sends, so a learner who triggers one here sees the same
text they would get from api.openai.com and can search for it.

Where a wording below was seen in a real API answer, the comment says where (a GitHub issue
or a project that recorded the body). Where it could not be established, the comment says
so and the text imitates the API's own style. Concession: the real API's wording drifts
between model families (e.g. "Unrecognized request argument" for gpt-4o-style models vs
"Unknown parameter" for reasoning models); we follow the gpt-4o family.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

INVALID = "invalid_request_error"


@dataclass(eq=False)
class ApiError(Exception):
    """An OpenAI-shaped error: raise it anywhere, the server turns it into a response.

    >>> ApiError(400, "Bad.").body()
    {'error': {'message': 'Bad.', 'type': 'invalid_request_error', 'param': None, 'code': None}}
    """

    status: int
    message: str
    type: str = INVALID
    param: str | None = None
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.status} {self.message}"

    def body(self) -> dict[str, Any]:
        """The JSON body, keys in the real API's order."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


# ---------------------------------------------------------------------------------------------
# Describing JSON values the way the API does ("got a string", "expected an array of objects").


def kind(value: Any) -> str:
    """How the API names the JSON type of `value`.

    >>> kind("x"), kind(1), kind(1.5), kind(None), kind([]), kind({}), kind(True)
    ('a string', 'an integer', 'a decimal number', 'null', 'an array', 'an object', 'a boolean')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal number"  # "got a decimal number instead" (for example 1.5), as the API words it
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _quoted_list(values: list[str]) -> str:
    """`'a', 'b', and 'c'` — the API's enumeration style (Oxford comma, `and`)."""
    quoted = [f"'{v}'" for v in values]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]


# ---------------------------------------------------------------------------------------------
# Body and schema errors (status 400). Each family wording is recorded from the real API:
# missing:      https://github.com/SilasMarvin/lsp-ai/issues/108 ('messages'),
#               https://github.com/neuron-core/neuron-ai/issues/292 ('messages[2].content[0].type')
# invalid_type: https://github.com/pydantic/pydantic-ai/issues/2653 ('messages[1].content'); the
#               "a decimal" / "an integer" / "an array of objects" variants in several recorded bodies
# empty_array:  https://github.com/CopilotKit/CopilotKit/issues/529
# array_too_long ('tools', 128): https://github.com/vishalmysore/Tools4AI/issues/16
# invalid_value (roles), out_of_range (`decimal_above_max_value`), string_too_long (tool names):
#               bodies recorded from api.openai.com and quoted verbatim in public projects;
#               `response_format.type` ("Invalid value: 'object'. Supported values are: 'json_object',
#               'json_schema', and 'text'.", code invalid_value): https://github.com/epuerta9/deep-research-py/issues/19
# missing 'response_format.json_schema' (code missing_required_parameter):
#               https://github.com/architects-toolkit/SmartHopper/issues/259, https://github.com/openai/openai-python/issues/1632


def invalid_json() -> ApiError:
    """The body is not JSON (or not a JSON object)."""
    # Verbatim real body (param and code null), seen in captured api.openai.com answers quoted in
    # public test fixtures; several OpenAI-compatible proxies copy it word for word.
    return ApiError(400, "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
                    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
                    "sent was not valid JSON. If you have trouble figuring out how to fix this, please contact "
                    "us through our help center at help.openai.com.)")


def missing_model() -> ApiError:
    """No `model` in the body (the real message is lower-case and has no param)."""
    return ApiError(400, "you must provide a model parameter")


def missing(param: str) -> ApiError:
    """A required field is absent: `Missing required parameter: 'messages'.`"""
    return ApiError(400, f"Missing required parameter: '{param}'.", param=param, code="missing_required_parameter")


def invalid_type(param: str, expected: str, value: Any) -> ApiError:
    """A field has the wrong JSON type.

    >>> invalid_type("temperature", "a decimal", "hot").message
    "Invalid type for 'temperature': expected a decimal, but got a string instead."
    """
    return ApiError(400, f"Invalid type for '{param}': expected {expected}, but got {kind(value)} instead.",
                    param=param, code="invalid_type")


def invalid_value(param: str, value: Any, supported: list[str]) -> ApiError:
    """A value outside an enum (e.g. a message role).

    >>> invalid_value("messages[0].role", "bot", ["user", "tool"]).message
    "Invalid value: 'bot'. Supported values are: 'user' and 'tool'."
    """
    return ApiError(400, f"Invalid value: '{value}'. Supported values are: {_quoted_list(supported)}.",
                    param=param, code="invalid_value")


def empty_array(param: str) -> ApiError:
    """An array that must not be empty (`messages`, `tools`, content parts)."""
    return ApiError(400, f"Invalid '{param}': empty array. Expected an array with minimum length 1, but got an "
                    "empty array instead.", param=param, code="empty_array")


def out_of_range(param: str, value: Any, bound: float, *, above: bool, integer: bool) -> ApiError:
    """A number outside its range.

    >>> out_of_range("temperature", 3, 2, above=True, integer=False).message
    "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead."
    """
    noun = "integer" if integer else "decimal"
    where, cmp, code = ("above maximum", "<=", "above_max") if above else ("below minimum", ">=", "below_min")
    return ApiError(400, f"Invalid '{param}': {noun} {where} value. Expected a value {cmp} {bound!r}, "
                    f"but got {value!r} instead.", param=param, code=f"{noun}_{code}_value")


def array_too_long(param: str, limit: int, length: int) -> ApiError:
    """An array over its maximum length (`tools`: 128).

    >>> error = array_too_long("tools", 128, 129)
    >>> error.message[:67], error.param, error.code
    ("Invalid 'tools': array too long. Expected an array with maximum len", 'tools', 'array_above_max_length')
    """
    # Recorded verbatim from api.openai.com, type invalid_request_error, param 'tools', code
    # array_above_max_length: https://github.com/vishalmysore/Tools4AI/issues/16 (lengths 325, 309),
    # https://github.com/julep-ai/julep/issues/330 (length 383).
    return ApiError(400, f"Invalid '{param}': array too long. Expected an array with maximum length {limit}, "
                    f"but got an array with length {length} instead.", param=param, code="array_above_max_length")


def string_too_long(param: str, limit: int, length: int) -> ApiError:
    """A string over its maximum length (function names: 64)."""
    return ApiError(400, f"Invalid '{param}': string too long. Expected a string with maximum length {limit}, "
                    f"but got a string with length {length} instead.", param=param, code="string_above_max_length")


def pattern_mismatch(param: str, pattern: str) -> ApiError:
    """A string that does not match its pattern (function names)."""
    # Recorded verbatim from api.openai.com (code invalid_value), e.g. in the minicodex notes
    # quoted by several projects: "Invalid 'tools[0].function.name': string does not match pattern."
    return ApiError(400, f"Invalid '{param}': string does not match pattern. Expected a string that matches the "
                    f"pattern '{pattern}'.", param=param, code="invalid_value")


def unrecognized_arguments(names: list[str]) -> ApiError:
    """Unknown top-level keys (gpt-4o family wording; param and code are null)."""
    # https://github.com/davidmigloz/langchain_dart/issues/712 ("... supplied: reasoning_effort"),
    # plural form: https://github.com/langchain-ai/langchain/issues/8593.
    if len(names) == 1:
        return ApiError(400, f"Unrecognized request argument supplied: {names[0]}")
    return ApiError(400, f"Unrecognized request arguments supplied: {', '.join(names)}")


def only_with(param: str, needs: str, *, value_prefix: bool) -> ApiError:
    """A parameter that is only allowed alongside another one (`tool_choice` without `tools`)."""
    # tool_choice / parallel_tool_calls: https://github.com/Upsonic/Upsonic/issues/323;
    # stream_options: https://github.com/BerriAI/litellm/issues/5803 (no "Invalid value" prefix).
    if value_prefix:
        text = f"Invalid value for '{param}': '{param}' is only allowed when '{needs}' are specified."
    else:
        text = f"The '{param}' parameter is only allowed when '{needs}' is enabled."
    return ApiError(400, text, param=param)


def tool_choice_not_found(name: str) -> ApiError:
    """`tool_choice` names a function that is not in `tools`."""
    # Not established for Chat Completions. This is the real wording the same API uses for the
    # Responses endpoint ("Tool choice 'image_generation' not found in 'tools' parameter.").
    return ApiError(400, f"Tool choice '{name}' not found in 'tools' parameter.", param="tool_choice")


# ---------------------------------------------------------------------------------------------
# Structured output (`response_format`), status 400.


def json_word_missing() -> ApiError:
    """`response_format: {"type": "json_object"}` with no message that says 'json'."""
    # Verbatim real body (type invalid_request_error, param 'messages', code null):
    # https://github.com/meta-llama/PurpleLlama/issues/94, https://github.com/ultimatejimmy/xray.koplugin/issues/33
    return ApiError(400, "'messages' must contain the word 'json' in some form, to use 'response_format' of type "
                    "'json_object'.", param="messages")


def invalid_schema(name: str, detail: str) -> ApiError:
    """A `json_schema` the API will not use: `Invalid schema for response_format 'name': <detail>`.

    >>> invalid_schema("answer", "In context=(), 'additionalProperties' is required to be supplied and to be "
    ...                "false.").message[:45]
    "Invalid schema for response_format 'answer': "
    """
    # Verbatim real bodies, all with type invalid_request_error, param 'response_format', code null:
    # - "In context=(), 'additionalProperties' is required to be supplied and to be false." (strict mode):
    #   https://github.com/dottxt-ai/outlines/issues/844, https://github.com/dottxt-ai/outlines/issues/1666;
    #   a nested one, "In context=('properties', 'etymology'), ...": https://github.com/moeru-ai/xsai/issues/202
    # - "In context=('properties', 'organizations', 'items'), 'required' is required to be supplied and to be an
    #   array including every key in properties. Missing 'roles'.": https://github.com/vercel/ai/issues/6484
    # - "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"array\"'.":
    #   https://github.com/podly-pure-podcasts/podly_pure_podcasts/pull/89
    # The order in which the API checks several problems of one schema is not established; ours: the root's
    # type, then each object depth-first (additionalProperties before required).
    return ApiError(400, f"Invalid schema for response_format '{name}': {detail}", param="response_format")


# ---------------------------------------------------------------------------------------------
# Conversation errors, raised by the model engine (note the older `messages.[3].role` param style).


def orphan_tool_message(index: int) -> ApiError:
    """A `tool` message that answers no preceding `tool_calls` (the API's typo "preceeding" kept)."""
    # https://github.com/miurla/morphic/issues/136, https://github.com/sdcb/chats/pull/132
    return ApiError(400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    "with 'tool_calls'.", param=f"messages.[{index}].role")


def unanswered_tool_calls(index: int, ids: list[str]) -> ApiError:
    """An assistant `tool_calls` message whose ids are not all answered by tool messages."""
    # Verbatim, type invalid_request_error, param 'messages.[N].role', code null:
    # https://github.com/sdcb/chats/pull/132, https://github.com/RamiAwar/dataline/issues/172,
    # https://github.com/router-for-me/CLIProxyAPI/issues/2798. Which index `param` points at is not
    # established (none of them shows the request); we point at the assistant message that made the calls.
    return ApiError(400, "An assistant message with 'tool_calls' must be followed by tool messages responding to "
                    "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                    + ", ".join(ids), param=f"messages.[{index}].role")


def image_outside_user_message(at: str, role: str) -> ApiError:
    """An `image_url` part in the message at `at` ('messages[3]') whose role is not 'user' (a `tool` message,
    most often).

    >>> error = image_outside_user_message("messages[3]", "tool")
    >>> error.message[:80], error.param, error.code
    ("Invalid 'messages[3]'. Image URLs are only allowed for messages with role 'user'", 'messages[3]', 'invalid_value')
    """
    # Verbatim real body (type invalid_request_error, param 'messages[2]', code 'invalid_value'), quoted
    # in https://github.com/agno-agi/agno/pull/4286; the same message for role 'tool' in
    # https://github.com/OpenHands/OpenHands/issues/7700 and for role 'assistant' in
    # https://github.com/openai/openai-node/issues/1030. That 'system' and 'developer' get the same words
    # is our assumption.
    return ApiError(400, f"Invalid '{at}'. Image URLs are only allowed for messages with role 'user', "
                    f"but this message with role '{role}' contains an image URL.", param=at,
                    code="invalid_value")


def image_not_supported(message: int, part: int) -> ApiError:
    """An `image_url` part sent to a model without vision."""
    # https://github.com/browser-use/web-ui/issues/274, https://github.com/vllm-project/vllm/issues/11629
    return ApiError(400, "Invalid content type. image_url is only supported by certain models.",
                    param=f"messages.[{message}].content.[{part}].type")


# ---------------------------------------------------------------------------------------------
# The context window (status 400; see `context.py` for when).


def context_length_exceeded(window: int, messages: int, functions: int, completion: int | None) -> ApiError:
    """A request whose prompt (plus `max_tokens`, when set) does not fit the model's context window.

    The wording names what was counted: the messages, the tool definitions ("functions") when
    there are any, and the completion when `max_tokens` or `max_completion_tokens` was set.

    >>> context_length_exceeded(16384, 50020, 0, None).message
    "This model's maximum context length is 16384 tokens. However, your messages resulted in 50020 tokens. \
Please reduce the length of the messages."
    >>> context_length_exceeded(8192, 6683, 730, 800).message[52:]
    'However, you requested 8213 tokens (6683 in the messages, 730 in the functions, and 800 in the completion). \
Please reduce the length of the messages, functions, or completion.'
    """
    # Verbatim real bodies, all with type invalid_request_error, param 'messages', code context_length_exceeded:
    # - messages only: https://github.com/ChatGPTNextWeb/NextChat/issues/625 (the whole body),
    #   https://github.com/AsyncFuncAI/deepwiki-open/issues/144 (128,000 tokens, 2025);
    # - with tools: https://github.com/dissorial/Chainlit-OpenAI-Functions/issues/1
    #   ("... resulted in 4238 tokens (4143 in the messages, 95 in the functions). Please reduce the length of
    #   the messages or functions.");
    # - with max_tokens: https://github.com/Ice-Hazymoon/openai-scf-proxy/issues/25 (the whole body),
    #   https://github.com/yakGPT/yakGPT/issues/13;
    # - with both: https://github.com/FoundationAgents/OpenManus/issues/62 (a comment of 2025-03-14).
    total = messages + functions + (completion or 0)
    if completion is None:
        counted = f"your messages resulted in {total} tokens"
        if functions:
            counted += f" ({messages} in the messages, {functions} in the functions)"
        reduce = "the messages or functions" if functions else "the messages"
    elif functions:
        counted = (f"you requested {total} tokens ({messages} in the messages, {functions} in the functions, "
                   f"and {completion} in the completion)")
        reduce = "the messages, functions, or completion"
    else:
        counted = f"you requested {total} tokens ({messages} in the messages, {completion} in the completion)"
        reduce = "the messages or completion"
    return ApiError(400, f"This model's maximum context length is {window} tokens. However, {counted}. "
                    f"Please reduce the length of {reduce}.", param="messages", code="context_length_exceeded")


# ---------------------------------------------------------------------------------------------
# Routing, auth, limits and failures.


def model_not_found(model: str) -> ApiError:
    """404 for a model name no persona answers to."""
    # Recorded from api.openai.com (param null, code model_not_found).
    return ApiError(404, f"The model `{model}` does not exist or you do not have access to it.",
                    code="model_not_found")


def invalid_url(method: str, path: str) -> ApiError:
    """404 for an unknown route *or* a known route with the wrong method (the API does both)."""
    # "Invalid URL (GET /v1/chat/completions)" and "Invalid URL (POST /v1/models)" are both
    # recorded 404s from the real API.
    return ApiError(404, f"Invalid URL ({method} {path})")


def missing_api_key() -> ApiError:
    """401 when a key is required and none was sent."""
    return ApiError(401, "You didn't provide an API key. You need to provide your API key in an Authorization "
                    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field "
                    "(with blank username) if you're accessing the API from your browser and are prompted for a "
                    "username and password. You can obtain an API key from "
                    "https://platform.openai.com/account/api-keys.")


def mask_key(key: str) -> str:
    """Mask a key for an error message; the full key is never echoed.

    The real API keeps the first 8 and last 4 characters (`sk-not-a*****-key`); for short keys
    that would reveal nearly everything, so we keep only 2 + 2, or nothing.

    >>> mask_key("sk-not-a-real-key-for-tests-1234")
    'sk-not-a********************1234'
    >>> mask_key("abcdefyz"), mask_key("abc")
    ('ab****yz', '***')
    """
    if len(key) >= 24:
        return key[:8] + "*" * (len(key) - 12) + key[-4:]
    if len(key) >= 8:
        return key[:2] + "*" * (len(key) - 4) + key[-2:]
    return "*" * len(key)


def incorrect_api_key(key: str) -> ApiError:
    """401 for a wrong key, masked as the real API masks it."""
    return ApiError(401, f"Incorrect API key provided: {mask_key(key)}. You can find your API key at "
                    "https://platform.openai.com/account/api-keys.", code="invalid_api_key")


def body_too_large(limit: int) -> ApiError:
    """413 for a body over the size limit (wording not established: the real API's edge answers in HTML)."""
    return ApiError(413, f"Request body too large: the practice model accepts at most {limit} bytes.",
                    code="request_too_large")


def bad_framing(detail: str) -> ApiError:
    """400 for a request whose HTTP framing is broken (wording ours; the real edge closes the connection)."""
    return ApiError(400, f"We could not read the body of your request: {detail}.")


def timed_out() -> ApiError:
    """408 for a client that stopped sending half-way (wording ours)."""
    return ApiError(408, "The request body was not received in time.", code="timeout")


def retry_headers(seconds: float) -> dict[str, str]:
    """`retry-after` (whole seconds, at least 1) and the exact `retry-after-ms`, as the API sends them.

    The OpenAI SDK prefers `retry-after-ms` (`_parse_retry_after_header` in `openai/_base_client.py`),
    so a 20 ms hint costs a retry 20 ms instead of the SDK's own back-off (0.5 s, then 1 s).

    >>> retry_headers(0.02)
    {'retry-after': '1', 'retry-after-ms': '20'}
    """
    return {"retry-after": f"{max(1, round(seconds))}", "retry-after-ms": str(int(seconds * 1000))}


def server_error(retry_after: float | None = None) -> ApiError:
    """500 for a persona that crashed (the traceback goes to the local log only), or a flaky one.

    With `retry_after` the answer carries the retry headers (the flaky persona's way of keeping a
    retried turn fast); a real crash sends none.
    """
    return ApiError(500, "The server had an error while processing your request. Sorry about that!",
                    type="server_error", headers=retry_headers(retry_after) if retry_after is not None else {})


def rate_limited(model: str, retry_after: float = 1.0) -> ApiError:
    """429 with `Retry-After` (for a flaky persona; the OpenAI SDK retries it by itself)."""
    wait = f"{retry_after * 1000:.0f}ms" if retry_after < 1 else f"{retry_after:g}s"  # the API's own style
    return ApiError(429, f"Rate limit reached for {model} in organization org-practice on requests per min (RPM): "
                    f"Limit 3, Used 3, Requested 1. Please try again in {wait}. Visit "
                    "https://platform.openai.com/account/rate-limits to learn more.", type="requests",
                    code="rate_limit_exceeded", headers=retry_headers(retry_after))
