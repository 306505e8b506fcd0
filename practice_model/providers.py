"""Flags in the model name: `model="practice@deepseek"` is the `practice` persona refusing in DeepSeek's words.

Real providers refuse the same mistake differently, and a learner who has only seen OpenAI's
wording will not recognise the other one in a traceback. A flag after `@` in the model name
chooses whose words the practice model uses; everything else about the persona stays the same:

    split_model("practice@deepseek")    -> ("practice", "deepseek")
    split_model("practice-vision")      -> ("practice-vision", "openai")      the default wording

A second kind of flag picks the context window for one request (`context.py`):
`practice@ctx=4096` is `practice` with a window of 4,096 tokens, and flags combine in any
order (`practice@deepseek@ctx=4096`); `parse_model` reads them all. `@tps=N` sets a writing speed: the
answer is sent at N word pieces a second (one streamed chunk each; a non-streamed answer waits as long
as its stream would take), so the time to the first text differs from the time to the whole reply, as
with a real model. Without it the practice model answers at once.

A third kind puts a provider's deviations from OpenAI's wire format on the answer
(`quirks.py` says what each one does and where it was recorded):

    @ollama @gemini @dashscope @kimi @vllm @poolside @glm    one provider's shape; at most one of them,
                                                            and not with @deepseek's wording
    @cut                                                    a turn's first reply with tool calls stops
                                                            inside its last call's arguments, "length"
    @thinking                                               DeepSeek's thinking mode: only with @deepseek
                                                            (or `thinking: {"type": "enabled"}` in the body)

so `practice@ollama@ctx=4096`, `practice@gemini@cut` and `practice@deepseek@thinking@cut` are
models, and `practice@ollama@kimi` or `practice@thinking` are not. These flags do not change what
the persona decides nor the ids it is given: `without_quirks` is the name the ids are derived from.

Flags are stripped before the persona is looked up, `/v1/models` never lists them, and the
response's `model` echoes what was sent. An unknown, repeated or conflicting flag (`practice@nobody`,
`practice@ctx=0`, `practice@ctx=1@ctx=2`) is a 404 like an unknown model (`checks.check` does that).

What `@deepseek` changes is the usage and three refusals. The usage: DeepSeek reports its context cache
as `prompt_cache_hit_tokens` and `prompt_cache_miss_tokens`, not as OpenAI's
`prompt_tokens_details.cached_tokens` (`wire.usage`). The context window: DeepSeek words an
oversized request its own way (`context_length_exceeded`). And content parts a provider's API
cannot read: DeepSeek's Chat Completions API has no image input; its JSON reader stops at the
first content part whose `type` is not `text` and answers

    Failed to deserialize the JSON body into the target type: messages[N]: unknown variant
    `image_url`, expected `text` at line 1 column C

(`unknown_variant`). In thinking mode, an assistant message with tool calls sent back without
its `reasoning_content` is refused in DeepSeek's words (`missing_reasoning`, `reasoning_not_passed_back`).
Concessions: `practice@deepseek` is DeepSeek's non-thinking mode (as `deepseek-chat` was; its V4
models think unless told `thinking: {"type": "disabled"}`), so that the flag keeps meaning what it
meant before thinking mode existed; the cache's numbers follow the practice server's one rule
(`caching.py`: OpenAI's), whatever the flag; which part DeepSeek's reader meets first is taken to
be the first one in document order; for a vision persona with the flag only images outside user
messages are refused (the flag changes the wording, not the persona's eyes).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import ApiError

SEPARATOR = "@"
WORDINGS = ("openai", "deepseek")
"""The wording flags the practice model knows; 'openai' is what no flag means."""
DEFAULT = "openai"
QUIRKS = ("ollama", "gemini", "dashscope", "kimi", "vllm", "poolside", "glm", "llamacpp")
"""Provider flags: one provider's stream shape each (`quirks.py`); at most one per model name."""
MODES = ("cut", "thinking")
"""Flags that combine with any provider flag (`@thinking` only with `@deepseek`)."""
_WINDOW = re.compile(r"ctx=([1-9][0-9]{0,7})")     # a context window of 1 to 99,999,999 tokens
_SPEED = re.compile(r"tps=([1-9][0-9]{0,3})")       # 1 to 9,999 word pieces a second


@dataclass(frozen=True)
class Flags:
    """What a model name asks for: which persona, in whose words, with which context window and wire quirks."""

    persona: str
    wording: str = DEFAULT
    window: int | None = None
    """Tokens, from `@ctx=N`; None: the persona's own window."""
    quirk: str | None = None
    """A provider's stream shape (`QUIRKS`), or None: OpenAI's."""
    cut: bool = False
    """`@cut`: a turn's first reply with tool calls stops inside its last call's arguments."""
    thinking: bool = False
    """`@thinking`: DeepSeek's thinking mode (`reasoning_content`)."""
    tps: int | None = None
    """Word pieces a second, from `@tps=N`; None: the whole answer at once."""


def parse_model(model: str) -> Flags | None:
    """The persona and the flags of a model name; None when a flag is unknown, given twice or out of place.

    >>> parse_model("practice@ctx=4096@deepseek")
    Flags(persona='practice', wording='deepseek', window=4096, quirk=None, cut=False, thinking=False, tps=None)
    >>> parse_model("practice@tps=40").tps, parse_model("practice@tps=0"), parse_model("practice@tps=1@tps=2")
    (40, None, None)
    >>> parse_model("practice@ollama@cut").quirk, parse_model("practice@deepseek@thinking").thinking
    ('ollama', True)
    >>> parse_model("practice@ctx=0"), parse_model("practice@openai@deepseek"), parse_model("practice@kimi@vllm")
    (None, None, None)
    >>> parse_model("practice@thinking"), parse_model("practice@deepseek@ollama")
    (None, None)
    """
    persona, *flags = model.split(SEPARATOR)
    if len(set(flags)) < len(flags):
        return None
    wording = [f for f in flags if f in WORDINGS]
    windows = [m for m in map(_WINDOW.fullmatch, flags) if m]
    speeds = [m for m in map(_SPEED.fullmatch, flags) if m]
    quirks = [f for f in flags if f in QUIRKS]
    modes = [f for f in flags if f in MODES]
    if len(wording) + len(windows) + len(speeds) + len(quirks) + len(modes) < len(flags) or max(
            len(wording), len(windows), len(speeds), len(quirks)) > 1:
        return None
    parsed = Flags(persona, (wording or [DEFAULT])[0], int(windows[0][1]) if windows else None,
                   quirks[0] if quirks else None, "cut" in modes, "thinking" in modes,
                   int(speeds[0][1]) if speeds else None)
    if parsed.wording == "deepseek" and parsed.quirk or parsed.thinking and parsed.wording != "deepseek":
        return None
    return parsed


def split_model(model: str) -> tuple[str, str | None]:
    """The persona name and the wording of a model name (None when a flag is not known).

    >>> split_model("practice@deepseek"), split_model("practice"), split_model("practice@nobody")
    (('practice', 'deepseek'), ('practice', 'openai'), ('practice', None))
    """
    flags = parse_model(model)
    if flags is None:
        return model.partition(SEPARATOR)[0], None
    return flags.persona, flags.wording


def without_quirks(model: str) -> str:
    """The model name without its quirk, mode and speed flags: what the answer's ids are derived from.

    >>> without_quirks("practice@ollama@ctx=4096@cut"), without_quirks("practice@deepseek@thinking@tps=40")
    ('practice@ctx=4096', 'practice@deepseek')
    """
    return SEPARATOR.join(part for part in model.split(SEPARATOR)
                          if part not in QUIRKS + MODES and not _SPEED.fullmatch(part))


def thinking(flags: Flags, body: dict[str, Any]) -> bool:
    """Whether DeepSeek's thinking mode is on: `@thinking`, or `thinking: {"type": "enabled"}` in the body with
    `@deepseek`; `{"type": "disabled"}` turns it off (https://api-docs.deepseek.com/guides/thinking_mode).

    >>> thinking(Flags("practice", "deepseek"), {"thinking": {"type": "enabled"}})
    True
    >>> thinking(Flags("practice", "deepseek", thinking=True), {"thinking": {"type": "disabled"}})
    False
    """
    asked = body.get("thinking")
    kind = asked.get("type") if isinstance(asked, dict) else None
    if flags.wording != "deepseek" or kind == "disabled":
        return False
    return flags.thinking or kind == "enabled"


def unreadable_part(messages: list[Any], vision: bool) -> tuple[int, int, str] | None:
    """(message index, part index, part type) of the first content part DeepSeek cannot read, or None.

    A part is unreadable when its `type` is not 'text'; for a vision persona, only images outside user
    messages are (see the module docstring). Nothing here assumes the messages were validated.

    >>> unreadable_part([{"role": "user", "content": [{"type": "text", "text": "hi"},
    ...                  {"type": "image_url", "image_url": {"url": "data:,"}}]}], vision=False)
    (0, 1, 'image_url')
    """
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list) or (vision and message.get("role") == "user"):
            continue
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if isinstance(kind, str) and kind != "text" and (not vision or kind == "image_url"):
                return i, j, kind
    return None


def unknown_variant(raw: bytes, message: int, part: int, kind: str) -> ApiError:
    """DeepSeek's refusal of a content part it cannot read, positioned in the raw body as its reader reports it.

    >>> body = b'{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}'
    >>> unknown_variant(body, 0, 0, "image_url").message.rsplit(": ", 1)[1]
    'unknown variant `image_url`, expected `text` at line 1 column 70'
    """
    # Recorded from api.deepseek.com: status 400, type invalid_request_error, param null, code
    # invalid_request_error: https://github.com/1jehuang/jcode/issues/310 (the raw JSON body),
    # https://github.com/nesquena/hermes-webui/issues/2297, https://github.com/esengine/DeepSeek-Reasonix/issues/7859
    # (HTTP 400). In January 2025 the same kind of refusal came with status 422 (axum's default for a body that
    # does not fit its type): https://github.com/chatboxai/chatbox/issues/1740,
    # https://github.com/browser-use/browser-use/issues/159. We answer as DeepSeek answers now: 400.
    # The position: serde_json reports the line and the byte column of the last byte it read, here the closing
    # quote of the unknown tag (1-based). Where the body cannot be scanned, we say column 1 of line 1.
    line, column = end_of(raw, ("messages", message, "content", part, "type")) or (1, 1)
    return ApiError(400, f"Failed to deserialize the JSON body into the target type: messages[{message}]: unknown "
                    f"variant `{kind}`, expected `text` at line {line} column {column}", code="invalid_request_error")


def context_length_exceeded(window: int, prompt: int, completion: int) -> ApiError:
    """DeepSeek's refusal of a request over the context window: the prompt (tools included) and `max_tokens`.

    >>> error = context_length_exceeded(4096, 5000, 0)
    >>> error.message
    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (5000 in the \
messages, 0 in the completion). Please reduce the length of the messages or completion."
    >>> error.param, error.code
    (None, 'invalid_request_error')
    """
    # Recorded from api.deepseek.com (status 400, type invalid_request_error, param null, code
    # invalid_request_error): https://github.com/evalstate/fast-agent/issues/621 (131,072 tokens, 8,192 in the
    # completion), https://github.com/FoundationAgents/OpenManus/issues/79 (65,536, a request with tools: they
    # are counted in the messages), https://github.com/bytedance/deer-flow/issues/66 and
    # https://github.com/BerriAI/litellm/issues/10431 ("0 in the completion" when no max_tokens was sent).
    return ApiError(400, f"This model's maximum context length is {window} tokens. However, you requested "
                    f"{prompt + completion} tokens ({prompt} in the messages, {completion} in the completion). "
                    "Please reduce the length of the messages or completion.", code="invalid_request_error")


def missing_reasoning(messages: list[Any]) -> int | None:
    """The index of the first assistant message with tool calls but no `reasoning_content`, or None.

    In thinking mode DeepSeek wants the reasoning of every turn that called tools back, in every later
    request; a turn without tool calls may drop it (https://api-docs.deepseek.com/guides/thinking_mode,
    "Tool Calls"). An empty string counts as sent back; a missing key or null does not.

    >>> call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    >>> missing_reasoning([{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [call]}])
    1
    >>> missing_reasoning([{"role": "assistant", "content": "hi"}, {"role": "assistant", "tool_calls": [call],
    ...                    "reasoning_content": ""}]) is None
    True
    """
    for i, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") == "assistant" and message.get("tool_calls") \
                and not isinstance(message.get("reasoning_content"), str):
            return i
    return None


def reasoning_not_passed_back() -> ApiError:
    """DeepSeek's refusal of a thinking-mode request whose tool-calling turns lost their `reasoning_content`.

    >>> error = reasoning_not_passed_back()
    >>> error.status, error.message, error.code
    (400, 'The `reasoning_content` in the thinking mode must be passed back to the API.', 'invalid_request_error')
    """
    # Recorded from api.deepseek.com since the V4 models (April 2026): status 400, type invalid_request_error,
    # param null, code invalid_request_error, the field name in backticks: https://github.com/earendil-works/pi/issues/3636,
    # https://github.com/warpdotdev/warp/issues/11587 (the raw body through a gateway),
    # https://github.com/JohnnyZ93/oai-compatible-copilot/issues/215 and https://github.com/anomalyco/opencode/issues/24083
    # (the same body, backticks lost to Markdown). Before, deepseek-reasoner named the message: "Missing
    # `reasoning_content` field in the assistant message at message index 2. For more information, please refer to
    # https://api-docs.deepseek.com/guides/thinking_mode#tool-calls" (https://github.com/abhigyanpatwari/GitNexus/issues/43).
    return ApiError(400, "The `reasoning_content` in the thinking mode must be passed back to the API.",
                    code="invalid_request_error")


# ---------------------------------------------------------------------------------------------
# Where a value sits in the raw body (for the line and column of a reader's error).

_TOKEN = re.compile(rb'[ \t\r\n]*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([{}\[\]:,])|([^ \t\r\n{}\[\]:,"]+))', re.DOTALL)


def end_of(raw: bytes, path: tuple[str | int, ...]) -> tuple[int, int] | None:
    """(line, column) of the last byte of the value at `path` in a JSON text, or None when it is not there.

    One pass over the tokens, keeping only the path to the current value: linear in the body, whatever
    its nesting (no recursion).

    >>> end_of(b'{"a": [1, {"b": "xy"}]}', ("a", 1, "b"))
    (1, 20)
    >>> end_of(b'{\\n "a": "x"}', ("a",)), end_of(b'{"a": 1}', ("b",))
    ((2, 9), None)
    """
    stack: list[list[Any]] = []     # per open container: [kind, key or index, waiting for a key]
    pos = 0
    while pos < len(raw):
        m = _TOKEN.match(raw, pos)
        if m is None or m.end() == pos:
            return None
        pos = m.end()
        string, punct, literal = m.groups()
        if punct in (b"{", b"["):
            stack.append([punct, 0 if punct == b"[" else None, punct == b"{"])
            continue
        if punct in (b"}", b"]"):
            if not stack:
                return None
            stack.pop()
            if _at(stack, path):
                return _line_column(raw, pos)
            continue
        if punct == b",":
            if stack and stack[-1][0] == b"[":
                stack[-1][1] += 1
            elif stack:
                stack[-1][2] = True
            continue
        if punct == b":":
            continue
        if stack and stack[-1][2]:                        # a key
            stack[-1][1], stack[-1][2] = _key(string or b""), False
            continue
        if (string is not None or literal is not None) and _at(stack, path):
            return _line_column(raw, pos)
    return None


def _key(token: bytes) -> str:
    """An object key's text (escapes are left as written: the keys we look for have none)."""
    return token[1:-1].decode("utf-8", "replace")


def _at(stack: list[list[Any]], path: tuple[str | int, ...]) -> bool:
    """Whether the value just read sits at `path`."""
    return len(stack) == len(path) and all(frame[1] == step for frame, step in zip(stack, path))


def _line_column(raw: bytes, end: int) -> tuple[int, int]:
    """serde_json's position of the byte before `end`: 1-based line, byte column within it."""
    line_start = raw.rfind(b"\n", 0, end) + 1
    return raw.count(b"\n", 0, end) + 1, end - line_start
