"""A conversation over several user turns: the history kept (tool calls and their answers included), trimmed
to a budget, paused for a person's decisions, saved and loaded.

    chat = Chat(agent, max_history_tokens=8000)
    chat.send("北京现在天气怎么样？").text        # a RunResult per turn
    chat.send("那上海呢？").text                   # the model reads the first turn, tool messages and all
    chat.messages                                  # the whole history, as the next turn sends it

Each turn runs the agent on the history plus the new user message; the turn's result (`chat.result`)
becomes the history. With `max_history_tokens`, the oldest whole user turns are dropped before a
turn is sent (budget/trimming.py: the system prompt and the new turn always stay, a tool call is never
split from its answers), and `chat.dropped` counts what was left out. A turn's own rounds of tool calls
are trimmed only if the agent itself has `max_history_tokens` too.

A gated call pauses the turn: `chat.paused`, `chat.pending` (decide each: approve(), deny(reason),
edit(arguments)), then `chat.resume()`. Until then a new message is REFUSED (ChatPaused names the calls
and how to decide them). The wire needs every tool_call answered before the next user message, and the
other way out — answering the calls "not run: awaiting a person's decision" and asking again later —
changes what is approved: the model would go on from a call it was told did not run, and the person
would later approve a request the model made in a conversation that has moved on. Refusing keeps it
exact: what a person approves is what the model asked, in the context it asked it, and nothing is
silently dropped.

A turn that raises (a ProviderError, an API error after the SDK's retries) loses nothing that ran: if
tools ran in it, the history keeps the partial turn up to its last answered call (the model will see
what already happened, so sending again does not quietly repeat a side effect); if nothing ran, the
history is unchanged and the message can be sent again. The exception carries `partial_result`.

Concessions: one turn at a time per chat (a second concurrent `send` is a RuntimeError); trimming
forgets: `chat.messages` holds what is kept, not a transcript of everything ever said; a turn that
fails while resuming after its calls were decided keeps what ran, and the calls it paused on that did
not run are left out of the history (they were never answered).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Awaitable, Callable

from ..agent import Agent
from ..concurrency import run_sync
from ..hooks import feature
from ..state import RunResult
from ..text import as_dict, visible

__all__ = ["Chat", "ChatPaused", "answered_prefix"]


class ChatPaused(RuntimeError):
    """A new message sent while the chat waits for decisions; the message says which and how to decide them."""


class Chat:
    """A multi-turn conversation with one agent (see the module docstring).

    >>> from mini_framework import connect
    >>> chat = Chat(Agent(connect().client, "practice"))
    >>> chat.send("你好").text is not None, [m["role"] for m in chat.messages]
    (True, ['user', 'assistant'])
    """

    def __init__(self, agent: Agent, *, max_history_tokens: int | None = None,
                 messages: list[Any] | None = None) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"Chat takes an Agent, not {type(agent).__name__}")
        if max_history_tokens is not None and (isinstance(max_history_tokens, bool)
                                               or not isinstance(max_history_tokens, int) or max_history_tokens < 1):
            raise ValueError(f"max_history_tokens must be a whole number of tokens or None, not {max_history_tokens!r}")
        self.agent = agent
        self.max_history_tokens = max_history_tokens
        self.messages: list[dict[str, Any]] = [dict(as_dict(m)) for m in messages or ()]
        if answered_prefix(self.messages) != self.messages:
            raise ValueError("messages holds tool calls that are not all answered right after them (a paused run? "
                             "resume it with agent.resume, or give the conversation up to before those calls)")
        self.result: RunResult | None = None  # the last turn's (paused while chat.paused)
        self.dropped = 0  # messages trimming has left out so far
        self._lock = threading.Lock()
        self._busy = False

    @property
    def pending(self) -> list[Any]:
        """The calls the chat waits on (decide each, then `resume()`); [] when it is not paused."""
        return self.result.pending if self.result is not None and self.result.paused else []

    @property
    def paused(self) -> bool:
        return bool(self.pending)

    def send(self, text: str | list[Any]) -> RunResult:
        """One user turn: the model answers (running tools), or the turn pauses for decisions."""
        return run_sync(self.asend(text))

    async def asend(self, text: str | list[Any]) -> RunResult:
        """`send`, for async code."""
        if not isinstance(text, (str, list)) or not text:
            raise ValueError(f"send() takes the user's message: a non-empty text (or a list of content parts), "
                             f"not {text!r:.60}")
        if self.paused:
            raise ChatPaused(waiting_message(self.pending))
        history, dropped = self.fitted([*self.messages, {"role": "user", "content": text}])
        return await self._turn(lambda: self.agent.arun(history), history, dropped)

    def resume(self) -> RunResult:
        """Continue the paused turn once its pending calls are decided (undecided ones: as the agent's approval
        feature says, asked again or declined)."""
        return run_sync(self.aresume())

    async def aresume(self) -> RunResult:
        """`resume`, for async code."""
        if self.result is None or not self.paused:
            raise ValueError("this chat is not paused: there is nothing to resume (send a message instead)")
        paused = self.result
        return await self._turn(lambda: self.agent.aresume(paused), self.messages, 0)

    def fitted(self, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        """The history to send, trimmed to max_history_tokens, and how many messages were left out (a ValueError
        naming the numbers if even the new turn does not fit: nothing is changed then)."""
        if self.max_history_tokens is None:
            return messages, 0
        trimmed = feature("budget").trim_history(messages, self.max_history_tokens, tools=self.agent.specs or None)
        return list(trimmed.messages), trimmed.dropped_count

    async def _turn(self, start: Callable[[], Awaitable[RunResult]], sent: list[dict[str, Any]],
                    dropped: int) -> RunResult:
        """Run a turn (one at a time); keep its result as the history, or, when it raises, what ran of it."""
        with self._lock:
            if self._busy:
                raise RuntimeError("this chat is in the middle of a turn: send the next message when it is answered")
            self._busy = True
        try:
            result = await start()
        except Exception as exc:
            self._keep_partial(getattr(exc, "partial_result", None), sent, dropped)
            raise
        finally:
            with self._lock:
                self._busy = False
        self.messages, self.result = list(result.messages), result
        self.dropped += dropped
        return result

    def _keep_partial(self, partial: Any, sent: list[dict[str, Any]], dropped: int) -> None:
        """After a turn raised: keep its messages up to the last answered call if a tool ran in it; else keep the
        history as it was (a resume that failed has used up its pause: its unanswered calls are left out)."""
        if isinstance(partial, RunResult):
            kept = answered_prefix(partial.messages)
            offset = 1 if kept and kept[0].get("role") == "system" and sent and sent[0].get("role") != "system" else 0
            if any(m.get("role") == "tool" for m in kept[len(sent) + offset:]):
                self.messages, self.result = kept, None
                self.dropped += dropped
                return
        kept = answered_prefix(self.messages)
        if kept != self.messages:
            self.messages, self.result = kept, None

    def save(self, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
        """Write the chat to a signed JSON file (0600, atomically); `Chat.load(path, agent)` reads it back. A
        paused chat saves its paused run with it (result.save), decisions made so far included."""
        if self._busy:
            raise RuntimeError("this chat is in the middle of a turn: save it once the turn is answered")
        feature("chat.saved").save(self, path, key=key)

    @classmethod
    def load(cls, path: str | os.PathLike[str], agent: Agent, *, key: bytes | str | None = None) -> Chat:
        """A chat `save` wrote, for `agent` (the same tools, if it is paused). An edited, unsigned or damaged
        file raises SavedChatError; nothing runs."""
        loaded: Chat = feature("chat.saved").load(cls, path, agent, key=key)
        return loaded

    def __repr__(self) -> str:
        state = f", paused before {len(self.pending)} call(s)" if self.paused else ""
        return f"Chat({len(self.messages)} messages, {self.dropped} dropped{state})"


def waiting_message(pending: list[Any]) -> str:
    """Why a new message is refused, naming each pending call (escaped) and how to decide it."""
    calls = ", ".join(f"{getattr(p, 'summary', visible(str(p)))} (call {visible(str(getattr(p, 'id', '?')))})"
                      for p in pending)
    return (f"this chat waits for a decision on {calls}. Decide each one in chat.pending (approve(), deny(reason) or "
            "edit(arguments)), then chat.resume(); send the next message after that (every tool call is answered "
            "before the next user message).")


def answered_prefix(messages: list[Any]) -> list[dict[str, Any]]:
    """The messages up to the first assistant message whose tool calls are not all answered right after it.

    >>> calls = {"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}
    >>> [m["role"] for m in answered_prefix([{"role": "user"}, calls, {"role": "tool", "tool_call_id": "a"}])]
    ['user']
    """
    out = [dict(as_dict(m)) for m in messages]
    for i, m in enumerate(out):
        ids = {str(as_dict(c).get("id")) for c in m.get("tool_calls") or ()} if m.get("role") == "assistant" else set()
        j = i + 1
        while ids and j < len(out) and out[j].get("role") == "tool":
            ids.discard(str(out[j].get("tool_call_id")))
            j += 1
        if ids:
            return out[:i]
    return out
