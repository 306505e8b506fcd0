"""Prompt caching: the `usage.prompt_tokens_details.cached_tokens` that OpenAI's API reports.

    cache = PromptCache()
    blocks = prompt_blocks(body)         # the prompt's tokens, in chained blocks of 128
    cache.cached(blocks)                 # -> 0, or 1024, 1152, 1280, ...: the prefix seen before
    cache.remember(blocks)               # once the request was answered

What OpenAI documents. Its guide (https://developers.openai.com/api/docs/guides/prompt-caching):
caching applies to prompts of 1,024 tokens or more; a hit needs an exact prefix match, so static
content (instructions, examples, images, tools, which "must be identical between requests") goes
first and what varies goes last; the structured-output schema is a prefix of the system message;
a `prompt_cache_key` is combined with the prefix hash to route requests. Its Prompt Caching 201
cookbook (https://github.com/openai/openai-cookbook/blob/main/examples/Prompt_Caching_201.ipynb):
hits occur in increments of 128 tokens.

What the practice model does. A request's prompt is laid out as tokens, in order: the tool
definitions; then each message, as four tokens standing for its role (and name, tool_call_id; the
first one also for `response_format`), its content, and per tool call three tokens for its id
followed by the call's name and arguments; then the three tokens that open the reply. These are
the tokens `wire.prompt_tokens` counts, one by one (in text, a CJK character is one token, other
characters four to a token: `token_ends`). The layout is cut into blocks of 128 tokens, and each
block's hash covers the hash of the block before it: two requests share block k exactly when their
first 128·(k+1) tokens are the same. The server remembers the blocks of every request it answered
whose prompt has 1,024 tokens or more, per model name and `prompt_cache_key` (both seed the
chain); a request's `cached_tokens` is 128 times its longest run of leading blocks seen before,
when that run covers at least 1,024 tokens, else 0.

So a conversation that only grows is served from the cache up to the last whole block of what
was sent before; editing the start of the history (or the tools, or the schema) changes the
block it falls in and every block after it, so nothing but the tools before it can be served;
two conversations that open with the same tools and system prompt share those blocks.
Everything here is deterministic: the same requests in the same order get the same numbers.

Concessions: OpenAI documents that tools belong to the cached prefix but not where they sit;
putting them first follows Anthropic's documented order, tools → system → messages
(https://platform.claude.com/docs/en/agents-and-tools/tool-use/tool-use-with-prompt-caching).
The memory has no time-to-live (the real cache forgets a prefix after minutes of inactivity) and
holds at most `max_blocks` blocks, the least recently used forgotten first. A real hit is likely,
not certain (routing); here it is certain. Parameters that add no prompt tokens (`temperature`,
`tool_choice`) do not change the prefix. A request that was refused is not remembered.
"""
from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from typing import Any

from . import wire
from .cjk import WIDE

BLOCK = 128
"""Tokens per block: cache hits come in multiples of this."""
MINIMUM = 1024
"""The shortest prompt that is cached, and the smallest hit."""
MAX_BLOCKS = 65_536
"""Blocks a server remembers by default (8,388,608 tokens of prefixes, about 9 MB)."""

_WIDE = re.compile(f"[{WIDE}]+")    # runs of the characters the estimate counts as one token each (cjk.py)


def token_ends(text: str) -> list[int]:
    """Where each of `text`'s estimated tokens ends: at every CJK character, and after every fourth other one.

    The count is `wire.estimate_tokens(text)`. Other characters waiting for their fourth are
    carried past a CJK character, so a token depends only on the text up to where it ends.

    >>> token_ends("abcdefghij"), token_ends("ab北京c"), token_ends("")
    ([4, 8, 10], [3, 4, 5], [])
    """
    ends: list[int] = []
    pending = pos = 0       # other characters not in a token yet; where the current run of them starts
    for match in _WIDE.finditer(text):
        start, end = match.span()
        ends.extend(range(pos + 4 - pending, start + 1, 4))
        pending = (pending + start - pos) % 4
        ends.extend(range(start + 1, end + 1))
        pos = end
    ends.extend(range(pos + 4 - pending, len(text) + 1, 4))
    if (pending + len(text) - pos) % 4:
        ends.append(len(text))
    return ends


class Layout:
    """A prompt's tokens, fed in order and hashed per block of BLOCK tokens, each hash chained to the last.

    >>> a, b = Layout(), Layout()
    >>> a.text("x" * 600); b.text("x" * 512 + "y" * 88)
    >>> len(a.blocks), a.tokens, a.blocks[0] == b.blocks[0]
    (1, 150, True)
    """

    def __init__(self, seed: str = "") -> None:
        self.blocks: list[bytes] = []
        """The chained hash of every complete block, first to last."""
        self._chain = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).digest()
        self._block = hashlib.sha256()
        self._count = 0     # tokens in the current block

    @property
    def tokens(self) -> int:
        """Tokens fed so far."""
        return len(self.blocks) * BLOCK + self._count

    def text(self, text: str) -> None:
        """The tokens of a text (see `token_ends`; ASCII text is cut every four characters without listing them)."""
        ascii_only = text.isascii()
        ends = [] if ascii_only else token_ends(text)
        count = (len(text) + 3) // 4 if ascii_only else len(ends)
        start = done = 0
        while done < count:
            take = min(count - done, BLOCK - self._count)
            end = min(4 * (done + take), len(text)) if ascii_only else ends[done + take - 1]
            self._feed(b"T", text[start:end].encode("utf-8", "surrogatepass"), take)
            start, done = end, done + take

    def marks(self, label: str, count: int) -> None:
        """`count` tokens that stand for structure (a message's role, a call's id, an image), named by `label`."""
        digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).digest()
        while count:
            take = min(count, BLOCK - self._count)
            self._feed(b"M", digest, take)
            count -= take

    def _feed(self, kind: bytes, data: bytes, count: int) -> None:
        """Hash `count` tokens whose content is `data` (length-prefixed, so pieces never run together)."""
        self._block.update(kind + len(data).to_bytes(8, "big") + count.to_bytes(2, "big") + data)
        self._count += count
        if self._count == BLOCK:
            self._chain = hashlib.sha256(self._chain + self._block.digest()).digest()
            self.blocks.append(self._chain[:16])
            self._block, self._count = hashlib.sha256(), 0


def prompt_blocks(request: dict[str, Any]) -> Layout:
    """Lay out a (validated) request's prompt as `wire.prompt_tokens` counts it; the chain is seeded with the
    model name and `prompt_cache_key`.

    >>> body = {"model": "practice", "messages": [{"role": "user", "content": "北京" * 700}]}
    >>> layout = prompt_blocks(body)
    >>> layout.tokens == wire.prompt_tokens(body), len(layout.blocks)
    (True, 10)
    """
    key = request.get("prompt_cache_key")
    layout = Layout(f"{request.get('model')}\x00{key if isinstance(key, str) else ''}")
    layout.text(wire.tools_text(request))
    schema = request.get("response_format")
    for i, message in enumerate(request.get("messages") or []):
        head = {k: message.get(k) for k in ("role", "name", "tool_call_id")}
        if i == 0 and schema is not None:       # the schema is a prefix of the system message
            head["response_format"] = schema
        layout.marks(wire.canonical_json(head), 4)
        content = message.get("content")
        if isinstance(content, str):
            layout.text(content)
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            text = part.get("text") if isinstance(part.get("text"), str) else part.get("refusal")
            if isinstance(text, str):
                layout.text(text)
            else:
                layout.marks(wire.canonical_json(part), 85)     # an image counts 85 (wire._content_tokens)
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            layout.marks(wire.canonical_json({"id": call.get("id"), "type": call.get("type")}), 3)
            layout.text(str(function.get("name", "")))
            layout.text(str(function.get("arguments", "")))
    layout.marks("reply", 3)
    return layout


class PromptCache:
    """The blocks a server has seen, least recently used forgotten first; safe to share between threads.

    >>> cache = PromptCache()
    >>> body = {"model": "practice", "messages": [{"role": "user", "content": "x" * 5000}]}
    >>> first = prompt_blocks(body).blocks
    >>> cache.cached(first), cache.remember(first), cache.cached(first)
    (0, None, 1152)
    """

    def __init__(self, max_blocks: int = MAX_BLOCKS) -> None:
        self.max_blocks = max_blocks
        self._seen: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()

    def cached(self, blocks: list[bytes]) -> int:
        """Tokens of the longest run of leading blocks seen before (0 when under MINIMUM)."""
        if len(blocks) * BLOCK < MINIMUM:
            return 0
        run = 0
        with self._lock:
            for block in blocks:
                if block not in self._seen:
                    break
                run += 1
        return run * BLOCK if run * BLOCK >= MINIMUM else 0

    def remember(self, blocks: list[bytes]) -> None:
        """Keep a prompt's blocks (only a prompt of MINIMUM tokens or more is cached)."""
        if len(blocks) * BLOCK < MINIMUM:
            return
        with self._lock:
            for block in blocks:
                self._seen[block] = None
                self._seen.move_to_end(block)
            while len(self._seen) > self.max_blocks:
                self._seen.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (what a real cache does after a few idle minutes)."""
        with self._lock:
            self._seen.clear()

    def __len__(self) -> int:
        return len(self._seen)
