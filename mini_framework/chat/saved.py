"""A chat as a signed JSON file: `chat.save(path)` in one process, `Chat.load(path, agent)` in the next.

    {"format": "mini_framework.chat/1", "key": "<key id>", "signature": "<HMAC-SHA256>",
     "chat": {"messages": [...], "max_history_tokens": 8000, "dropped": 4, "paused_run": null}}

The history can hold tool results a model trusts, and a paused chat's run can grant approvals, so the
file is signed as saved runs are (approvals/saved.py): an HMAC-SHA256 of the content's canonical JSON
under the same secret (the `key` given, else $MINI_FRAMEWORK_SAVE_KEY, else the owner-only key file:
approvals/record.py). A file that is unsigned, signed with another key, edited, cut short or not a chat
of this format is refused with SavedChatError saying why; nothing runs, and the file stays where it is.

A paused chat keeps its paused run as `result.save` writes it (signed on its own as well), and loading
goes through `agent.load`, with every check a saved run gets: the decisions made so far must match the
calls they decide, and each approval is spent once across processes (two loads of one file cannot run
an approved call twice). Then `chat.messages` is the run's conversation.

Concessions: the file is written with the chat's settings, not the agent's (load it with an agent made
the same way); a chat file can be loaded more than once (a history is not spent; a paused run's
approvals are).
"""
from __future__ import annotations

import hmac
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hooks import feature

if TYPE_CHECKING:
    from ..agent import Agent
    from .conversation import Chat

__all__ = ["FORMAT", "SavedChatError", "load", "save"]

FORMAT = "mini_framework.chat/1"
MAX_BYTES = 64 * 1024 * 1024
ROLES = ("system", "developer", "user", "assistant", "tool")


class SavedChatError(ValueError):
    """A saved chat that cannot be loaded; the message says why. Nothing was run."""


def save(chat: Chat, path: str | os.PathLike[str], *, key: bytes | str | None = None) -> None:
    """Write `chat` to `path`, signed (see the module docstring)."""
    secret, key_id = _key(key)
    target = Path(path).absolute()
    if not target.parent.is_dir():
        raise FileNotFoundError(2, "no such folder to save the chat in", str(target.parent))
    run = None
    if chat.paused and chat.result is not None:
        with tempfile.TemporaryDirectory() as folder:  # the paused run as result.save writes it
            chat.result.save(Path(folder) / "run.json", key=secret)
            run = json.loads((Path(folder) / "run.json").read_text(encoding="utf-8"))
    content = {"messages": None if run else chat.messages, "max_history_tokens": chat.max_history_tokens,
               "dropped": chat.dropped, "paused_run": run}
    try:
        text = json.dumps({"format": FORMAT, "key": key_id, "signature": sign(content, secret),
                           "chat": content}, ensure_ascii=False, indent=1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"this chat cannot be saved as JSON: {exc} (a message holds a Python object)") from None
    feature("approvals.saved").write_private(target, text)


def load(kind: type[Chat], path: str | os.PathLike[str], agent: Agent, *, key: bytes | str | None = None) -> Chat:
    """The chat in `path`, for `agent`; SavedChatError if it cannot be loaded (see the module docstring)."""
    secret, key_id = _key(key)
    name = Path(path).name
    data = _read(Path(path), name)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise SavedChatError(f"{name} is not a saved chat of this version (format {found!r:.60}, expected {FORMAT!r})")
    content, signature = data.get("chat"), data.get("signature")
    if not isinstance(signature, str) or not isinstance(content, dict) \
            or not hmac.compare_digest(signature, sign(content, secret)):
        signer = data.get("key")
        if isinstance(signer, str) and signer != key_id:
            raise SavedChatError(f"{name} was signed with another key than this process's: refusing to load it "
                                 "(every process that loads saved chats needs the same key: MINI_FRAMEWORK_SAVE_KEY)")
        raise SavedChatError(f"{name} was changed after it was saved, or was never signed (its signature does not "
                             "match): refusing to load it")
    budget, dropped, run = content.get("max_history_tokens"), content.get("dropped"), content.get("paused_run")
    if not (budget is None or type(budget) is int and budget >= 1) or type(dropped) is not int or dropped < 0:
        raise SavedChatError(f"{name} cannot be loaded: its settings are not a chat's")
    result = None
    if run is not None:
        with tempfile.TemporaryDirectory() as folder:  # through agent.load, with every check of a saved run
            (Path(folder) / "run.json").write_text(json.dumps(run, ensure_ascii=False), encoding="utf-8")
            try:
                result = agent.load(Path(folder) / "run.json", key=secret)
            except ValueError as exc:
                raise SavedChatError(f"{name}: its paused run cannot be resumed: {exc}") from None
        messages: Any = result.messages
    else:
        messages = content.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and m.get("role") in ROLES for m in messages):
        raise SavedChatError(f"{name} cannot be loaded: its messages are not a conversation")
    try:
        chat = kind(agent, max_history_tokens=budget, messages=None if result is not None else messages)
    except ValueError as exc:
        raise SavedChatError(f"{name} cannot be loaded: {exc}") from None
    chat.dropped, chat.result = dropped, result
    if result is not None:
        chat.messages = result.messages  # the paused run's: what resuming continues
    return chat


def _key(key: bytes | str | None) -> tuple[bytes, str]:
    """The signing secret and its name, as saved runs use them (approvals/record.py, approvals/saved.py)."""
    secret = feature("approvals.record").signing_key(key)
    return secret, feature("approvals.saved").key_id(secret)


def _read(where: Path, name: str) -> Any:
    """The JSON in a regular file of at most MAX_BYTES (not through a symlink); SavedChatError otherwise."""
    try:
        fd = os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SavedChatError(f"no saved chat at {where}") from None
    except OSError as exc:
        raise SavedChatError(f"{name} cannot be read as a saved chat ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SavedChatError(f"{name} is not a regular file: not a saved chat")
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise SavedChatError(f"{name} is over {MAX_BYTES // 2**20} MB: not a saved chat of ours")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SavedChatError(f"{name} is not a saved chat (not JSON: it may have been cut short)") from None


def sign(content: Any, secret: bytes) -> str:
    """The content's signature, as saved runs are signed (approvals/saved.py `sign`)."""
    signed: str = feature("approvals.saved").sign(content, secret)
    return signed
