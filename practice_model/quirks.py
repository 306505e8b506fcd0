"""Providers' deviations from OpenAI's wire format, on demand: `model="practice@ollama"` streams like Ollama.

Every provider that speaks "the OpenAI API" speaks it with an accent, and code written against
OpenAI's stream breaks on each one differently. A flag in the model name (`providers.parse_model`)
puts one recorded deviation on the wire, so the breakage can be seen offline; the persona decides
exactly what it decides without the flag, and the answer keeps the unflagged answer's ids unless
changing them is the point (`providers.without_quirks`):

    flag        provider                       on the wire
    @ollama     Ollama's native API, through   each call whole in one chunk, no `index`, `arguments`
                a thin adapter                 a JSON object (streamed and not), `content: ""`, a
                                               `role` on every chunk
    @gemini     Gemini's OpenAI layer          no `index`; later fragments carry `id: ""` and `type: ""`;
                                               the stream ends with finish_reason "stop" (not streamed:
                                               "tool_calls")
    @dashscope  DashScope (Qwen)               later fragments carry `id: ""` and no name, then one
                                               more delta per call with `function: {}`; `usage: null`
                                               on every chunk
    @kimi       Kimi K2 (Moonshot, vLLM)       ids `functions.get_weather:0` (streamed and not); later
                                               fragments with `id`, `type` and `name` null
    @vllm       vLLM                           streamed calls without any id (not streamed: ids)
    @poolside   Poolside, vLLM's harmony path  every later chunk of a call brings another id
    @glm        GLM-4.6 on vLLM                each call whole in one chunk, `content: ""` beside it and
                                               with the finish
    @llamacpp   llama.cpp's server              `content: null` and the legacy `function_call` beside a call, ids
                (llama-cpp-python, chatml-      `call__0_<name>_<completion id>`, arguments `{ "city" : "北京" } `;
                function-calling)              streamed: id, type and name on every fragment, no usage chunk
                                               (what it refuses and when it calls: `llamacpp.py`)
    @cut        max_tokens running out         the first reply with tool calls after the user's message
                                               stops half-way through its last call's arguments,
                                               finish_reason "length" (the retry fits)
    @thinking   DeepSeek's thinking mode       `reasoning_content` (deltas first in a stream), counted in
                (with @deepseek)               the usage; a tool-calling turn sent back without it is a
                                               400 (`providers.reasoning_not_passed_back`)

`QUIRKS` has one row per flag with its sources: the same records `mini_framework/streaming/assembler.py`'s
`QUIRKS` rows were built from, so what the practice server sends is what the framework's
normaliser was tested on. The rewrites work on what `wire` produced (OpenAI's shape), except
`@cut`, which shortens the persona's reply before it is put on the wire (`cut`), so that the usage
counts what was sent.

Concessions: only the deviations above, not every field each provider sends (no `thought_signature`
for Gemini, no `system_fingerprint: "fp_ollama"`); Ollama's native API speaks NDJSON, not
server-sent events, and its calls are shown in OpenAI's chunk envelope, as an adapter that passes
them on does (Ollama's own /v1 endpoint sent the same indexless whole calls with the arguments as
text before 0.4.7); arguments that are not a JSON object stay text under `@ollama`; Kimi's counter
runs over the conversation here (the calls already in the history, then this reply's); the reasoning
text is a short deterministic sentence about the reply, in the question's language; `@cut` cuts
arguments by characters, where a real limit cuts by tokens.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from . import providers, wire
from .language import detect_language
from .providers import Flags
from .reply import PlannedCall, Reply

Chunks = list[dict[str, Any]]


@dataclass(frozen=True)
class Context:
    """What a rewrite needs besides the answer: the ids' seed, the history's calls, the reasoning."""

    seed: str
    """`wire.Facts.seed`: where the extra ids of `@poolside` come from."""
    earlier_calls: int = 0
    """Tool calls in the request's history (`@kimi` numbers on from there)."""
    reasoning: str | None = None
    """DeepSeek's `reasoning_content` for this reply (thinking mode), or None."""


@dataclass(frozen=True)
class Quirk:
    """One flag: whose deviation it reproduces, what it does on the wire, where that was recorded."""

    flag: str
    provider: str
    does: str
    sources: tuple[str, ...]
    stream: Callable[[Chunks, Context], Chunks] | None = None
    """Rewrites the chunks of a streamed answer (a deep copy: the caller's are never changed)."""
    body: Callable[[dict[str, Any], Context], None] | None = None
    """Rewrites a non-streamed `chat.completion` body in place (None: sent as OpenAI sends it)."""


def context(request: dict[str, Any], reply: Reply, seed: str, thinking: bool = False) -> Context:
    """The Context of one answer to `request` (its messages as sent; `thinking`: `providers.thinking`).

    >>> context({"messages": [{"role": "assistant", "tool_calls": [{}, {}]}]}, Reply(content="ok"), "s").earlier_calls
    2
    """
    earlier = sum(len(m.get("tool_calls") or []) for m in request.get("messages") or []
                  if isinstance(m, dict) and m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list))
    return Context(seed, earlier, reasoning(request, reply) if thinking else None)


def active(flags: Flags, thinking: bool = False) -> list[Quirk]:
    """The rows a model name's flags turn on, in the order they apply (the provider's shape, then the modes).

    >>> [q.flag for q in active(Flags("practice", quirk="gemini", cut=True))]
    ['gemini', 'cut']
    """
    flags_on = [flags.quirk] if flags.quirk else []
    flags_on += [mode for mode, on in (("cut", flags.cut), ("thinking", thinking)) if on]
    return [QUIRKS[flag] for flag in flags_on]


def on_stream(chunks: Chunks, ctx: Context, rows: list[Quirk]) -> Chunks:
    """The chunks of a streamed answer with each row's deviation applied (no rows: the chunks themselves)."""
    if not rows:
        return chunks
    out = copy.deepcopy(chunks)
    for row in rows:
        if row.stream is not None:
            out = row.stream(out, ctx)
    return out


def on_body(body: dict[str, Any], ctx: Context, rows: list[Quirk]) -> dict[str, Any]:
    """A non-streamed answer with each row's deviation applied (a copy; no rows: the body itself)."""
    if not rows:
        return body
    out = copy.deepcopy(body)
    for row in rows:
        if row.body is not None:
            row.body(out, ctx)
    return out


# ---------------------------------------------------------------------------------------------
# Walking a stream: the first (only) choice of each chunk, its delta, its tool call deltas.


def _choice(chunk: dict[str, Any]) -> dict[str, Any] | None:
    """The chunk's choice, or None for the usage chunk (`choices: []`)."""
    choices = chunk.get("choices") or []
    return choices[0] if choices else None


def _at(chunk: dict[str, Any]) -> int:
    """The index of the chunk's choice (0 for the usage chunk)."""
    choice = _choice(chunk)
    return choice["index"] if choice else 0


def _calls(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunk's tool call deltas ([] when it has none)."""
    choice = _choice(chunk)
    return (choice["delta"].get("tool_calls") or []) if choice else []


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The message of each choice of a `chat.completion` body."""
    return [choice["message"] for choice in body["choices"]]


def _whole_calls(chunks: Chunks) -> Chunks:
    """Each call's fragments added to its header, and the fragment chunks left out: one chunk per call.

    >>> h = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f",
    ...      "arguments": ""}}]}}]}
    >>> f = {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}]}
    >>> [_calls(c) for c in _whole_calls([h, f])]
    [[{'index': 0, 'id': 'c', 'function': {'name': 'f', 'arguments': '{}'}}]]
    """
    out, open_calls = [], {}
    for chunk in chunks:
        choice, kept = _choice(chunk), []
        for call in _calls(chunk):
            key = (_at(chunk), call["index"])
            if "id" in call:  # a header: the call opens here
                open_calls[key] = call
                kept.append(call)
            else:
                open_calls[key]["function"]["arguments"] += call["function"]["arguments"]
        if choice is not None and choice["delta"].get("tool_calls") and not kept:
            continue  # only fragments: they now sit in their header
        if choice is not None and kept:
            choice["delta"]["tool_calls"] = kept
        out.append(chunk)
    return out


# ---------------------------------------------------------------------------------------------
# The rows, one function (or two) per flag.


def _ollama_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """Whole calls without `index`, arguments as an object, `content: ""` beside them, `role` everywhere."""
    out = _whole_calls(chunks)
    for chunk in out:
        choice = _choice(chunk)
        if choice is None:
            continue
        delta = choice["delta"]
        for call in delta.get("tool_calls") or []:
            del call["index"]
            call["function"]["arguments"] = _as_object(call["function"]["arguments"])
        if delta.get("tool_calls"):
            delta.pop("refusal", None)
            delta["content"] = ""
        if delta:
            choice["delta"] = {"role": "assistant", "content": delta.pop("content", None), **delta}
    return out


def _ollama_body(body: dict[str, Any], ctx: Context) -> None:
    """Arguments as an object; `content: ""` beside calls."""
    for message in _messages(body):
        for call in message.get("tool_calls") or []:
            call["function"]["arguments"] = _as_object(call["function"]["arguments"])
        if message.get("tool_calls") and message["content"] is None:
            message["content"] = ""


def _as_object(arguments: str) -> Any:
    """The arguments as the JSON object they spell; text that is not one stays text.

    >>> _as_object('{"city":"北京"}'), _as_object('{"city": "北')
    ({'city': '北京'}, '{"city": "北')
    """
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    return value if isinstance(value, dict) else arguments


def _gemini_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """No `index`; the header brings the first fragment, later fragments `id: ""`, `type: ""`; "stop" at the end."""
    out: Chunks = []
    headers: dict[tuple[int, int], dict[str, Any]] = {}  # calls whose header still waits for its first fragment
    for chunk in chunks:
        choice = _choice(chunk)
        calls = _calls(chunk)
        for call in calls:
            key = (_at(chunk), call.pop("index"))
            if "id" in call:
                headers[key] = call
            elif key in headers and headers[key]["function"]["arguments"] == "":
                headers.pop(key)["function"]["arguments"] = call["function"]["arguments"]
                call.clear()  # the next fragments come on their own
            else:
                call.update(id="", type="", function={"arguments": call["function"]["arguments"]})
        if calls and not any(calls):
            continue  # its fragment went into the header
        if choice is not None and choice["finish_reason"] == "tool_calls":
            choice["finish_reason"] = "stop"
        out.append(chunk)
    return out


def _dashscope_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """`content: null` beside calls, later fragments `id: ""` without a name, a `function: {}` delta closing
    each call, `usage: null` and `system_fingerprint: null` on every chunk."""
    out: Chunks = []
    last: dict[int, int] = {}  # per choice: the call whose fragments came last

    def close(chunk: dict[str, Any], choice_index: int) -> None:
        if choice_index in last:
            closing = copy.deepcopy(chunk)
            closing["choices"][0].update(delta={"content": None, "tool_calls": [
                {"function": {}, "index": last.pop(choice_index), "id": "", "type": "function"}]}, finish_reason=None)
            out.append(closing)

    for chunk in chunks:
        choice = _choice(chunk)
        if choice is not None:
            chunk.update(usage=None, system_fingerprint=None)
            delta = choice["delta"]
            for call in delta.get("tool_calls") or []:
                if "id" in call:
                    close(chunk, choice["index"])
                else:
                    call.update(id="", type="function", function={"arguments": call["function"]["arguments"]})
                last[choice["index"]] = call["index"]
            if choice["finish_reason"] is not None:
                close(chunk, choice["index"])
                choice["delta"] = {"content": None}
            elif delta.get("tool_calls"):
                delta.pop("refusal", None)
                delta["content"] = None
        out.append(chunk)
    return out


def _kimi_id(name: str, number: int) -> str:
    """Kimi K2's call id: `functions.{name}:{number}`."""
    return f"functions.{name}:{number}"


def _kimi_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """Header ids `functions.NAME:N` with `arguments: null`; fragments with `id`, `type`, `name` null."""
    seen: dict[int, int] = {}  # per choice: its calls so far (each choice numbers on from the history)
    for chunk in chunks:
        for call in _calls(chunk):
            if "id" in call:
                number = seen[_at(chunk)] = seen.get(_at(chunk), -1) + 1
                call.update(id=_kimi_id(call["function"]["name"], ctx.earlier_calls + number))
                call["function"]["arguments"] = None
            else:
                call.update(id=None, type=None, function={"arguments": call["function"]["arguments"], "name": None})
    return chunks


def _kimi_body(body: dict[str, Any], ctx: Context) -> None:
    """Ids `functions.NAME:N`, numbered on from the calls already in the conversation."""
    for message in _messages(body):
        for number, call in enumerate(message.get("tool_calls") or [], ctx.earlier_calls):
            call["id"] = _kimi_id(call["function"]["name"], number)


def _vllm_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """No `id` on any tool call delta."""
    for chunk in chunks:
        for call in _calls(chunk):
            call.pop("id", None)
    return chunks


def _poolside_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """Every fragment after a call's header brings an id of its own."""
    for number, chunk in enumerate(chunks):
        for call in _calls(chunk):
            if "id" not in call:
                call["id"] = "call_" + wire.base62(f"{ctx.seed}|again|{number}|{call['index']}", 24)
    return chunks


def _glm_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """Whole calls (index kept) with `content: ""` beside them and beside the finish."""
    out = _whole_calls(chunks)
    for chunk in out:
        choice = _choice(chunk)
        if choice is None:
            continue
        delta = choice["delta"]
        if delta.get("tool_calls"):
            delta["content"] = ""
            delta.pop("refusal", None)
        if choice["finish_reason"] == "tool_calls":
            choice["delta"] = {"content": ""}
    return out


def cut(reply: Reply, request: dict[str, Any]) -> Reply:
    """The first reply with tool calls after the user's message, stopped half-way through its last call's
    arguments (by characters); other replies unchanged: once told its call was cut, the model retries with
    arguments that fit. The arguments of a JSON object cut anywhere before its end are unfinished.

    >>> ask = {"messages": [{"role": "user", "content": "北京和上海天气"}]}
    >>> cut(Reply(tool_calls=(PlannedCall.of("f", {"city": "北京"}), PlannedCall.of("f", {"city": "上海"}))), ask)
    Reply(content=None, tool_calls=(PlannedCall(name='f', arguments='{"city":"北京"}'), \
PlannedCall(name='f', arguments='{"city')), cut=True)
    >>> cut(Reply(content="hi"), ask) == Reply(content="hi")
    True
    """
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    since_user = messages[max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1) + 1:]
    if not reply.tool_calls or any(m.get("role") == "tool" for m in since_user):
        return reply
    *whole, last = reply.tool_calls
    half = last.arguments[:max(1, len(last.arguments) // 2)] if last.arguments else ""
    return replace(reply, tool_calls=(*whole, PlannedCall(last.name, half)), cut=True)


# ---------------------------------------------------------------------------------------------
# DeepSeek's thinking mode.


def reasoning(request: dict[str, Any], reply: Reply) -> str:
    """The `reasoning_content` of a reply: a sentence on what it does, in the language of the last user message.

    >>> reasoning({"messages": [{"role": "user", "content": "北京天气"}]},
    ...           Reply(tool_calls=(PlannedCall.of("get_weather", {"city": "北京"}),)))
    '用户问的是“北京天气”。我需要调用 get_weather({"city":"北京"})。'
    >>> reasoning({"messages": [{"role": "user", "content": "hi"}]}, Reply(content="Hello!"))
    'The user asks "hi". No tool is needed: I can answer directly.'
    """
    messages = [m for m in request.get("messages") or [] if isinstance(m, dict)]
    asked = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    question = asked if isinstance(asked, str) else " ".join(
        p.get("text", "") for p in asked or [] if isinstance(p, dict) and isinstance(p.get("text"), str))
    question = question if len(question) <= 60 else question[:59] + "…"
    chinese = detect_language(question) == "zh"
    results_in = bool(messages) and messages[-1].get("role") == "tool"
    if reply.tool_calls:
        calls = [f"{c.name}({c.arguments})" for c in reply.tool_calls]
        return f"用户问的是“{question}”。我需要调用 {'、'.join(calls)}。" if chinese else \
            f'The user asks "{question}". I need {", ".join(calls)}.'
    if results_in:
        return "工具结果已经回来了，可以回答了。" if chinese else "The tool results are in: I can answer now."
    return f"用户问的是“{question}”。不需要工具，直接回答。" if chinese else \
        f'The user asks "{question}". No tool is needed: I can answer directly.'


def _reasoning_tokens(ctx: Context, n: int) -> int:
    """Completion tokens the reasoning adds (for every one of the `n` choices)."""
    return wire.estimate_tokens(ctx.reasoning or "") * n


def _count_reasoning(usage: dict[str, Any], tokens: int) -> None:
    """Add the reasoning to the usage as DeepSeek reports it: in `completion_tokens`, and apart in
    `completion_tokens_details.reasoning_tokens` (https://api-docs.deepseek.com/api/create-chat-completion)."""
    usage["completion_tokens"] += tokens
    usage["total_tokens"] += tokens
    usage["completion_tokens_details"] = {"reasoning_tokens": tokens}


def _thinking_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """Reasoning deltas (`content: null`) after the role chunk and before everything else; the usage counts them."""
    out: Chunks = []
    choices = {(_choice(c) or {}).get("index", 0) for c in chunks if _choice(c)}
    for chunk in chunks:
        choice = _choice(chunk)
        if choice is not None and choice["delta"].get("role"):
            first = copy.deepcopy(chunk)
            first["choices"][0]["delta"] = {"role": "assistant", "content": None, "reasoning_content": ""}
            out.append(first)
            for piece in wire.pieces(ctx.reasoning or ""):
                thought = copy.deepcopy(chunk)
                thought["choices"][0]["delta"] = {"content": None, "reasoning_content": piece}
                out.append(thought)
            del choice["delta"]["role"]
        if choice is None and chunk.get("usage"):
            _count_reasoning(chunk["usage"], _reasoning_tokens(ctx, len(choices)))
        out.append(chunk)
    return out


def _thinking_body(body: dict[str, Any], ctx: Context) -> None:
    """`reasoning_content` beside `content` (`""` beside calls, as DeepSeek's documented example shows)."""
    for message in _messages(body):
        if message.get("tool_calls") and message["content"] is None:
            message["content"] = ""
        fields = list(message.items())
        message.clear()
        for key, value in fields:
            message[key] = value
            if key == "content":
                message["reasoning_content"] = ctx.reasoning
    _count_reasoning(body["usage"], _reasoning_tokens(ctx, len(body["choices"])))


def _llamacpp_arguments(arguments: str) -> str:
    """Arguments as llama.cpp's grammar writes them: spaces inside the braces and around each colon.

    >>> _llamacpp_arguments('{"city":"北京"}'), _llamacpp_arguments('{"a": [1, 2]}'), _llamacpp_arguments("{")
    ('{ "city" : "北京" } ', '{ "a" : [1, 2] } ', '{')
    """
    value = _as_object(arguments)
    if not isinstance(value, dict):
        return arguments
    pairs = [json.dumps(k, ensure_ascii=False) + " : " + json.dumps(v, ensure_ascii=False) for k, v in value.items()]
    return "{ " + ", ".join(pairs) + " } " if pairs else "{} "


def _llamacpp_id(head_id: str, index: int, name: str) -> str:
    """`call__<index>_<name>_cmpl-...`: the call's id, made of the completion's id as llama.cpp makes it."""
    return f"call__{index}_{name}_cmpl-{head_id.removeprefix('chatcmpl-')}"


def _llamacpp_body(body: dict[str, Any], ctx: Context) -> None:
    """`content: null` and `function_call` beside the calls; llama.cpp's ids and argument spacing."""
    for message in _messages(body):
        for index, call in enumerate(message.get("tool_calls") or []):
            call["id"] = _llamacpp_id(body["id"], index, call["function"]["name"])
            call["function"]["arguments"] = _llamacpp_arguments(call["function"]["arguments"])
        if message.get("tool_calls"):
            message["content"] = None
            message["function_call"] = dict(message["tool_calls"][0]["function"])


def _llamacpp_stream(chunks: Chunks, ctx: Context) -> Chunks:
    """Every fragment of a call repeats its id, type and name (and a `function_call` twin); no usage chunk."""
    out, names, ids = [], {}, {}
    for chunk in chunks:
        choice = _choice(chunk)
        if choice is None:
            continue  # the usage chunk: llama.cpp's server sends none, whatever stream_options asks
        for call in _calls(chunk):
            at = call["index"]
            function = call.setdefault("function", {})
            names.setdefault(at, function.get("name", ""))
            ids.setdefault(at, _llamacpp_id(chunk["id"], at, names[at]))
            call.update(id=ids[at], type="function")
            function["name"] = names[at]
        delta = choice["delta"]
        if delta.get("tool_calls"):
            delta["content"] = None
            delta["function_call"] = dict(delta["tool_calls"][0]["function"])
        out.append(chunk)
    return out


# ---------------------------------------------------------------------------------------------

_OLLAMA = ("https://github.com/ollama/ollama/issues/7881",
           "https://github.com/g0t4/ask-openai.nvim/blob/main/lua/ask-openai/prediction/tools/ollama-tool-call.md")
QUIRKS: dict[str, Quirk] = {q.flag: q for q in (
    Quirk("ollama", "Ollama", "each call whole in one chunk, without index, its arguments a JSON object (streamed and "
          "not); content \"\" beside calls", _OLLAMA, _ollama_stream, _ollama_body),
    Quirk("gemini", "Gemini's OpenAI compatibility layer", "no index on tool call deltas, later fragments with id \"\" "
          "and type \"\"; a streamed call ends with finish_reason \"stop\"",
          ("https://github.com/open-webui/computer/issues/224", "https://github.com/openai/openai-python/issues/2806",
           "https://github.com/googleapis/python-genai/issues/2868"), _gemini_stream),
    Quirk("dashscope", "DashScope (Qwen)", "later fragments with id \"\" and no name, then a delta with function {} "
          "per call; usage null on every chunk",
          ("https://www.itsvse.com/forum.php?goto=lastpost&mod=redirect&tid=10981",
           "https://github.com/Younis-Ahmed/qwen-ai-provider/pull/7"), _dashscope_stream),
    Quirk("kimi", "Kimi K2 (Moonshot; vLLM, SGLang)", "ids like functions.get_weather:0 (streamed and not), to be sent "
          "back unchanged; later fragments with id, type and name null",
          ("https://github.com/MoonshotAI/Kimi-K2/blob/main/docs/tool_call_guidance.md",
           "https://github.com/vybestack/llxprt-code/issues/712", "https://github.com/vllm-project/vllm/issues/46344"),
          _kimi_stream, _kimi_body),
    Quirk("vllm", "vLLM", "streamed tool calls without ids (non-streamed ones have them)",
          ("https://github.com/vllm-project/vllm/issues/18412",), _vllm_stream),
    Quirk("poolside", "Poolside; vLLM's harmony path", "every chunk after a call's header brings another id",
          ("https://github.com/poolsideai/pool/issues/9", "https://github.com/vllm-project/vllm/pull/23522"),
          _poolside_stream),
    Quirk("glm", "GLM-4.6 on vLLM", "each call whole in one chunk, content \"\" beside it and beside the finish",
          ("https://github.com/GoogleCloudPlatform/kubectl-ai/pull/559",), _glm_stream),
    Quirk("llamacpp", "llama.cpp's server (llama-cpp-python, chatml-function-calling)", "content null and "
          "function_call beside a call, ids call__0_<name>_<completion id>, arguments { \"city\" : \"北京\" }; "
          "streamed: id and name on every fragment, no usage chunk; refuses content null beside tool_calls (500) and "
          "calls a tool only when tool_choice names it (llamacpp.py)",
          ("https://github.com/abetlen/llama-cpp-python/blob/main/llama_cpp/llama_chat_format.py",
           "https://github.com/jekalmin/extended_openai_conversation/issues/203",
           "https://github.com/abetlen/llama-cpp-python/issues/1314"), _llamacpp_stream, _llamacpp_body),
    Quirk("cut", "any provider, when max_tokens runs out", "the first reply with tool calls after the user's "
          "message stops half-way through its last call's arguments, finish_reason \"length\" (streamed and not)",
          ("https://platform.openai.com/docs/api-reference/chat/object",)),
    Quirk("thinking", "DeepSeek (thinking mode, with @deepseek)", "reasoning_content deltas before the answer; a "
          "tool-calling turn sent back without its reasoning_content is a 400",
          ("https://api-docs.deepseek.com/guides/thinking_mode", "https://github.com/neuron-core/neuron-ai/issues/411",
           "https://github.com/earendil-works/pi/issues/3636"), _thinking_stream, _thinking_body),
)}
"""One row per flag (see the module docstring); `providers.QUIRKS` and `providers.MODES` name the same flags."""

assert tuple(QUIRKS) == providers.QUIRKS + providers.MODES, "providers.py and quirks.py must name the same flags"
