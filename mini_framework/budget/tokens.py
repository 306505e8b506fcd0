"""Counting tokens before a request is sent: an offline estimate, or tiktoken when it can count offline.

    count_tokens("北京今天天气怎么样？")                  # TokenCount(tokens=7, method='estimate')
    message_tokens(messages, tools, model="gpt-4o")     # the whole request's prompt, same shape
    estimate_tokens("Hello, world!")                    # 4: the estimate alone, an int

Every model request resends the whole history, so a long run's prompts grow and a budget (the
context window, or money) has to be checked *before* sending. The provider's `usage` is exact, but
it arrives after the request, so here is a count beforehand. Each result names its `method`, so
you can tell an estimate from a real tokenizer's count.

The estimate splits text roughly as a GPT tokenizer does before it applies its vocabulary, then
prices the pieces: a word is one token (one more per four letters past the seventh), a group of
up to three digits one, a run of punctuation one (one more per two symbols past the second), a
run of whitespace one, and a Chinese, Japanese or Korean character 0.7 (not a quarter of a token,
as "four characters per token" would have it; not a whole one either on today's tokenizers).
Measured against OpenAI's o200k_base (gpt-4o, gpt-4.1, gpt-5, o-series) by `benchmarks/bench_tokens.py`:
whole requests of the course's conversations within 7% (median +4%); single texts within about
20%, median -8% to +7% by kind (English, Chinese, mixed, code), indented JSON about 12% low, and
short Chinese strings the worst (up to 40% over). Other tokenizers differ from o200k: cl100k_base
(gpt-4, gpt-3.5) spends about 1.1 tokens per Chinese character where o200k spends 0.75, DeepSeek
documents about 0.6 (https://api-docs.deepseek.com/quick_start/token_usage) and Qwen about one
(https://help.aliyun.com/zh/model-studio/developer-reference/billing-for-tongyi-qianwen).
Keep a margin: budget 85-90% of a window, not all of it.

tiktoken is used when it is installed and its encoding file is already on this machine. tiktoken
downloads a missing file on first use, without a timeout and holding its registry lock
(https://github.com/openai/tiktoken/pull/539, https://github.com/openai/tiktoken/pull/599): on a
network that drops packets `get_encoding` never returns. So this module looks for the file in
tiktoken's cache first (checking its hash) and never lets tiktoken download; without the file, the
estimate is used and `method` says so. To get the
file, run `tiktoken.get_encoding("o200k_base")` once where there is a network (it is kept in
`TIKTOKEN_CACHE_DIR`, by default `data-gym-cache` in the temp folder) and copy it along.

A whole request is counted the way OpenAI's cookbook does it and checks against the API's
`usage` (https://github.com/openai/openai-cookbook/blob/main/examples/How_to_count_tokens_with_tiktoken.ipynb):
3 tokens per message, its role and text, 1 more for a `name`, 3 to prime the reply; tools as the
cookbook's function format (7 per function, 10 for gpt-4, plus "name:description", 3 plus "key:type:description"
per parameter, enum values, 12 at the end). The cookbook's example conversations give 124 and 101
prompt tokens for gpt-4o, as the API reported; so does `message_tokens` with tiktoken.

The practice server's `usage` is an estimate of its own, simpler and kept as it is so that committed
lesson outputs stay put: 4 tokens per message, a CJK character 1, other text a quarter token per
character, tools as their whole JSON. On the course's requests it reads about 20% above o200k_base
(median; up to 60% with many tools), so `message_tokens` reads about 16% below the practice usage.

Concessions: tool calls in assistant messages and nested parameter schemas are not documented by
the cookbook (their name, arguments and JSON are counted as text); an image counts 85 tokens (its
low-detail price: a high-detail one costs more, by its size); tool-call ids are not counted; only
o200k_base and cl100k_base files are looked for (other encodings count by estimate unless tiktoken
has already loaded them in this process); scripts other than Latin and CJK (Cyrillic, Arabic,
emoji...) are priced at one token per character, roughly.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["TokenCount", "count_tokens", "estimate_tokens", "message_tokens", "tiktoken_encoding"]

ESTIMATE = "estimate"
CJK_TOKENS = 0.7  # per Chinese/Japanese/Korean character (o200k_base: 0.65 in prose, 0.78 in short questions)
IMAGE_TOKENS = 85  # an image part: OpenAI's price of a low-detail image

# Ideographs, CJK punctuation, kana, hangul, full-width forms: about one token or less each.
_WIDE = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u30ff\uac00-\ud7af\uff00-\uffef"
_PIECE = re.compile(
    rf"(?P<wide>[{_WIDE}]+)"                                      # CJK: priced per character
    rf"|(?P<word>[^\r\nA-Za-z0-9{_WIDE}]?(?:[A-Z]*[a-z]+|[A-Z]+))"  # a word with the space or symbol before it
    r"|(?P<digits>[0-9]{1,3})"                                    # numbers in groups of three digits
    rf"|(?P<symbols> ?[^\sA-Za-z0-9{_WIDE}]+)"                    # punctuation (and other scripts)
    r"|(?P<space>\s+)")                                           # newlines, indentation

# tiktoken's own download address and checksum of each encoding file (tiktoken_ext/openai_public.py).
_FILES = {
    "o200k_base": ("https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "cl100k_base": ("https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
}
_FILES["o200k_harmony"] = _FILES["o200k_base"]  # the same file, more special tokens
_loaded: dict[str, Any] = {}  # encoding name -> tiktoken Encoding
_damaged: dict[str, tuple[str, int, int]] = {}  # encoding name -> (path, size, mtime) of a file that failed its check
_absent: dict[str, float] = {}  # encoding name -> when to look for its file again (a missing file: once a second)
_tiktoken_module: dict[str, Any] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class TokenCount:
    """A number of tokens and how it was obtained; `int(count)` is the number.

    >>> count = TokenCount(7, "estimate"); int(count) + 1, count.exact
    (8, False)
    """

    tokens: int
    method: str
    """"estimate", or "tiktoken <encoding>" (e.g. "tiktoken o200k_base")."""

    @property
    def exact(self) -> bool:
        """Whether a real tokenizer counted (still OpenAI's: another provider's tokenizer differs)."""
        return self.method != ESTIMATE

    def __int__(self) -> int:
        return self.tokens


# ---------------------------------------------------------------------------------------------
# The estimate.


def estimate_tokens(text: str) -> int:
    """Tokens in `text` by the offline estimate (see the module docstring for its rules and error).

    >>> estimate_tokens("Hello, world!"), estimate_tokens("北京今天天气怎么样？"), estimate_tokens("")
    (4, 7, 0)
    >>> estimate_tokens('{"city": "Paris", "days": 3}')     # o200k_base: 12 (and 4, 6 for the two above)
    12
    """
    if not isinstance(text, str):
        raise TypeError(f"estimate_tokens() takes text (str), not {type(text).__name__}")
    total = 0.0
    for match in _PIECE.finditer(text):  # one piece at a time: no list of millions of pieces, no long GC pauses
        kind = match.lastgroup
        if kind == "wide":
            total += (match.end() - match.start()) * CJK_TOKENS
        elif kind == "word":
            word = match.group()
            letters = len(word) - (not word[0].isalpha())
            total += (1 if letters <= 7 else 1 + (letters - 7) / 4) + (not word[0].isascii())  # "😀c" as "😀"
        elif kind == "symbols":
            symbols = match.group()
            others = 0 if symbols.isascii() else sum(1 for ch in symbols if not ch.isascii())  # other scripts
            total += 1 + max(0, len(symbols) - others - 2) / 2 + others
        else:
            total += 1
    return round(total)


# ---------------------------------------------------------------------------------------------
# tiktoken, when it can count without a network.


@functools.lru_cache(maxsize=64)
def encoding_name(model: str | None) -> str:
    """The tiktoken encoding of an OpenAI model; o200k_base (OpenAI's current one) for any other name.

    >>> encoding_name("gpt-4"), encoding_name("gpt-4o-mini"), encoding_name("deepseek-chat")
    ('cl100k_base', 'o200k_base', 'o200k_base')
    """
    tiktoken = _tiktoken() if model else None
    if tiktoken is not None:
        try:
            return str(tiktoken.encoding_name_for_model(str(model).split("@", 1)[0]))
        except Exception:  # a model tiktoken doesn't know
            pass
    if model and re.match(r"gpt-4(?![o.])|gpt-3\.5", str(model)):
        return "cl100k_base"
    return "o200k_base"


def _cached_file(name: str) -> str | None:
    """The path of encoding `name`'s file in tiktoken's cache, if it is there and intact."""
    if name not in _FILES:
        return None
    url, sha256 = _FILES[name]
    folder = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if folder is None:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not folder:  # caching switched off: tiktoken would download every time
        return None
    path = os.path.join(folder, hashlib.sha1(url.encode()).hexdigest())  # tiktoken's own naming
    try:
        stat = os.stat(path)
        seen = (path, stat.st_size, stat.st_mtime_ns)
        if _damaged.get(name) == seen:  # checked before, and unchanged since
            return None
        with open(path, "rb") as f:
            intact = hashlib.sha256(f.read()).hexdigest() == sha256
    except OSError:
        return None
    if not intact:  # tiktoken would delete a damaged file and download it again
        _damaged[name] = seen
        return None
    return path


def _tiktoken() -> Any | None:
    """The tiktoken module, or None when it is not installed (looked up once per process)."""
    if "module" not in _tiktoken_module:
        try:
            import tiktoken
            import tiktoken.registry

            _tiktoken_module["module"] = tiktoken
        except Exception:
            _tiktoken_module["module"] = None
    return _tiktoken_module["module"]


def tiktoken_encoding(model: str | None = None) -> Any | None:
    """tiktoken's encoding for `model`, or None when tiktoken is not installed or would need a download.

    Never touches the network; a failure of any kind is None (the caller then estimates).

    >>> enc = tiktoken_encoding("gpt-4o")
    >>> enc is None or enc.name == "o200k_base"
    True
    """
    name = encoding_name(model)
    if name in _loaded:
        return _loaded[name]
    tiktoken = _tiktoken()
    if tiktoken is None:
        return None
    encoding = tiktoken.registry.ENCODINGS.get(name)  # already loaded in this process, however
    if encoding is None:
        now = time.monotonic()
        if _absent.get(name, 0.0) > now:  # looked a moment ago, and it was not there
            return None
        if _cached_file(name) is None:
            _absent[name] = now + 1.0
            return None
        try:
            with _lock:
                encoding = tiktoken.get_encoding(name)
        except Exception:
            return None
    _loaded[name] = encoding
    return encoding


def count_tokens(text: str, model: str | None = None, *, use_tiktoken: bool = True) -> TokenCount:
    """Tokens in `text` for `model`: tiktoken's count when available offline (and wanted), else the estimate.

    >>> count_tokens("北京今天天气怎么样？", use_tiktoken=False)
    TokenCount(tokens=7, method='estimate')
    """
    encoding = tiktoken_encoding(model) if use_tiktoken else None
    if encoding is None:
        return TokenCount(estimate_tokens(text), ESTIMATE)
    return TokenCount(len(encoding.encode(text, disallowed_special=())), f"tiktoken {encoding.name}")


# ---------------------------------------------------------------------------------------------
# A whole request.


def message_tokens(messages: Iterable[Any], tools: Iterable[Any] | None = None,
                   model: str | None = None, *, use_tiktoken: bool = True) -> TokenCount:
    """The prompt tokens of a request with these messages (dicts or SDK objects) and tools.

    >>> m = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "北京天气？"}]
    >>> message_tokens(m, use_tiktoken=False)    # (3 + role 1 + text 4) twice, and 3 to prime the reply
    TokenCount(tokens=19, method='estimate')
    """
    encoding = tiktoken_encoding(model) if use_tiktoken else None
    if encoding is None:
        count, method = estimate_tokens, ESTIMATE
    else:
        def count(text: str) -> int:
            return len(encoding.encode(text, disallowed_special=()))
        method = f"tiktoken {encoding.name}"
    total = 3  # the reply is primed with <|start|>assistant<|message|>
    for message in messages:
        total += _message(as_dict(message), count)
    tool_list = [as_dict(t) for t in tools or []]
    if tool_list:
        start = 10 if method == "tiktoken cl100k_base" else 7  # the cookbook's figures for gpt-4 / gpt-4o
        total += sum(_function(t.get("function", t), count, start) for t in tool_list) + 12
    return TokenCount(total, method)


def as_dict(value: Any) -> dict[str, Any]:
    """A message or tool as a dict: SDK (pydantic) objects are dumped, dicts kept, anything else is its text.

    >>> as_dict({"role": "user", "content": "hi"}), as_dict("hi")
    ({'role': 'user', 'content': 'hi'}, {'content': 'hi'})
    """
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        dumped = dump(exclude_none=True)
        if isinstance(dumped, dict):
            return dumped
    return {"content": _text(value)}


def _text(value: Any) -> str:
    """Any value as text to count: str as is, bytes decoded (bad bytes replaced), else its JSON or str()."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _message(message: dict[str, Any], count: Any) -> int:
    """One message: 3, its role, its text and image parts, a name (+1), its tool calls' names and arguments."""
    total = 3 + count(_text(message.get("role", "")))
    content = message.get("content")
    if isinstance(content, list):
        for part in content:
            part = as_dict(part)
            text = part.get("text", part.get("refusal"))
            total += count(_text(text)) if text is not None else IMAGE_TOKENS
    elif content is not None:
        total += count(_text(content))
    if message.get("name"):
        total += 1 + count(_text(message["name"]))
    for call in message.get("tool_calls") or []:
        function = as_dict(call).get("function") or {}
        function = as_dict(function)
        total += 3 + count(_text(function.get("name", ""))) + count(_text(function.get("arguments", "")))
    return total


def _function(function: Any, count: Any, start: int) -> int:
    """One tool, in the cookbook's function format (nested schemas counted as JSON text)."""
    function = as_dict(function)
    description = _text(function.get("description") or "").removesuffix(".")
    total = start + count(f"{_text(function.get('name', ''))}:{description}")
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict) or not properties:
        return total
    total += 3
    for key, schema in properties.items():
        schema = schema if isinstance(schema, dict) else {}
        total += 3
        if isinstance(schema.get("enum"), list):
            total += -3 + sum(3 + count(_text(item)) for item in schema["enum"])
        kind = _text(schema.get("type", ""))
        description = _text(schema.get("description") or "").removesuffix(".")
        total += count(f"{key}:{kind}:{description}")
        rest = {k: v for k, v in schema.items() if k not in ("type", "description", "enum", "title")}
        if rest:
            total += count(json.dumps(rest, ensure_ascii=False, separators=(",", ":")))
    return total
