"""mini_framework: a small, production-minded toolkit for LLM tool calling, built lesson by lesson.

Layers (each imports only those above it, and nothing imports up; tests/test_layers.py holds the rule):

    core        mini_framework/*.py      tools, schema, arguments, replies, executor, the loop, hooks, state,
                                         events, redaction, concurrency, connection, display
    features    approvals/ media/ budget/ streaming/    each plugs into the loop through hooks (hooks.py)
    built-in    builtin/                 ready-made tools (mail: a gated send_email)

Copy the core alone and it works; add the feature folders you need. A feature that is missing is a clear
error when something asks for it (`Agent(stream=True)`, a tool with `requires_approval`), never a silent
no-op. Public names, loaded on first use (so `import mini_framework.tools` loads neither openai nor any
feature):

  core
    connect, connect_async, load_settings,     where requests go: a provider, or offline      connection
      Connection, Settings
    show, dump                                 conversations and JSON, readable                     display
    tool, Tool, ToolOptions                    Python functions (or JSON schemas) as tools          tools
    ToolDefinitionError                        a function that cannot become a tool                 schema
    Text, ImgPath, ImgUrl                      values that are more than a string                   types
    prepare, ArgumentsError                    untrusted arguments: repaired, coerced, explained    arguments
    redact                                     no secrets or paths in what a model reads            redaction
    ToolCall, read_reply, ProviderError        a model's reply, read and repaired                   replies
    Executor, ToolError, ToolResult            running calls: unknown tools, errors, timeouts       executor
    Hook, Plan, Request, Run, FeatureMissing   where features plug into the loop                    hooks
    Agent                                      the loop: caps, repeats, hooks                       agent
    RunResult, Usage                           what a run is and what it produced                   state
    Event, ModelRequest, ModelResponse,        what happens during a run                            events
      ToolStarted, ToolFinished, CapReached,
      RunPaused, FinalAnswer, TextDelta
  approvals/ (feature)
    Verdict, Pending, Decision, AuditLog,      a person's decision before a call runs; saved runs   approvals
      SavedRunError
  media/ (feature)
    find_media, MediaStore, Media,             images tools return: checked, registered, delivered  media
      MediaPolicy, MediaError, media_dir,
      Vision, image_input_for
  budget/ (feature)
    ResultCache, Price, estimate_tokens,       tokens, spill, trimming, cache, cost                 budget
      count_tokens, message_tokens,
      trim_history
  streaming/ (feature)
    Assembler                                  streamed replies put back together, quirks normalised streaming

Dependencies: pydantic, and openai once a client is made; python-dotenv only if you use `.env` files. The offline
practice model is a package of its own, `practice_model/`, beside this one and optional:
`connect()` imports it to start it when no provider is configured, or to ask whether a model
name given with a real provider is one of its personas (connection.py says how).

Logging: failures (with tracebacks) go to the "mini_framework" logger, silent until you
configure logging, e.g. `logging.basicConfig(level=logging.WARNING)`.
"""
from __future__ import annotations

import importlib
import logging
import os
from typing import TYPE_CHECKING, Any

logging.getLogger(__name__).addHandler(logging.NullHandler())

# name -> the module that defines it, imported on first use (module __getattr__, PEP 562)
_WHERE = {
    "connect": ".connection",
    "connect_async": ".connection",
    "load_settings": ".connection",
    "Connection": ".connection",
    "Settings": ".connection",
    "show": ".display",
    "dump": ".display",
    "tool": ".tools",
    "Tool": ".tools",
    "ToolOptions": ".tools",
    "ToolDefinitionError": ".schema",
    "Text": ".types",
    "ImgPath": ".types",
    "ImgUrl": ".types",
    "prepare": ".arguments",
    "ArgumentsError": ".arguments",
    "redact": ".redaction",
    "ToolCall": ".replies",
    "read_reply": ".replies",
    "ProviderError": ".replies",
    "Executor": ".executor",
    "ToolError": ".executor",
    "ToolResult": ".executor",
    "Hook": ".hooks",
    "Plan": ".hooks",
    "Request": ".hooks",
    "Run": ".hooks",
    "FeatureMissing": ".hooks",
    "Agent": ".agent",
    "RunResult": ".state",
    "Usage": ".state",
    "Event": ".events",
    "ModelRequest": ".events",
    "ModelResponse": ".events",
    "ToolStarted": ".events",
    "ToolFinished": ".events",
    "CapReached": ".events",
    "RunPaused": ".events",
    "FinalAnswer": ".events",
    "TextDelta": ".events",
    "Verdict": ".approvals",
    "Pending": ".approvals",
    "Decision": ".approvals",
    "AuditLog": ".approvals",
    "SavedRunError": ".approvals",
    "find_media": ".media",
    "MediaStore": ".media",
    "Media": ".media",
    "MediaPolicy": ".media",
    "MediaError": ".media",
    "media_dir": ".media",
    "Vision": ".media",
    "image_input_for": ".media",
    "ResultCache": ".budget",
    "Price": ".budget",
    "estimate_tokens": ".budget",
    "count_tokens": ".budget",
    "message_tokens": ".budget",
    "trim_history": ".budget",
    "Assembler": ".streaming",
}

__all__ = ["Agent", "ArgumentsError", "Assembler", "AuditLog", "CapReached", "Connection", "Decision", "Event",
           "Executor", "FeatureMissing", "FinalAnswer", "Hook", "ImgPath", "ImgUrl", "Media", "MediaError",
           "MediaPolicy", "MediaStore", "ModelRequest", "ModelResponse", "Pending", "Plan", "Price", "ProviderError",
           "Request", "ResultCache", "Run", "RunPaused", "RunResult", "SavedRunError", "Settings", "Text",
           "TextDelta", "Tool", "ToolCall", "ToolDefinitionError", "ToolError", "ToolFinished", "ToolOptions",
           "ToolResult", "ToolStarted", "Usage", "Verdict", "Vision", "connect", "connect_async", "count_tokens",
           "dump", "estimate_tokens", "find_media", "image_input_for", "load_settings", "media_dir",
           "message_tokens", "prepare", "read_reply", "redact", "show", "tool", "trim_history"]

# `from mini_framework import *` gives what this copy has: the names of a feature folder it went without are left out
try:
    _HERE = {entry.removesuffix(".py") for entry in os.listdir(os.path.dirname(__file__))}
    __all__[:] = [name for name in __all__ if _WHERE[name][1:] in _HERE]
except OSError:  # not a folder on disk (a zip): every name stays
    pass

if TYPE_CHECKING:  # what a type checker and an editor see; at run time, __getattr__ below
    from .agent import Agent
    from .approvals import AuditLog, Decision, Pending, SavedRunError, Verdict
    from .arguments import ArgumentsError, prepare
    from .budget import Price, ResultCache, count_tokens, estimate_tokens, message_tokens, trim_history
    from .connection import Connection, Settings, connect, connect_async, load_settings
    from .display import dump, show
    from .events import (
        CapReached,
        Event,
        FinalAnswer,
        ModelRequest,
        ModelResponse,
        RunPaused,
        TextDelta,
        ToolFinished,
        ToolStarted,
    )
    from .executor import Executor, ToolError, ToolResult
    from .hooks import FeatureMissing, Hook, Plan, Request, Run
    from .media import Media, MediaError, MediaPolicy, MediaStore, Vision, find_media, image_input_for, media_dir
    from .redaction import redact
    from .replies import ProviderError, ToolCall, read_reply
    from .schema import ToolDefinitionError
    from .state import RunResult, Usage
    from .streaming import Assembler
    from .tools import Tool, ToolOptions, tool
    from .types import ImgPath, ImgUrl, Text


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(_WHERE[name], __name__)
    except ModuleNotFoundError as missing:
        if missing.name != f"{__name__}{_WHERE[name]}":
            raise
        from .hooks import feature

        module = feature(_WHERE[name][1:])  # a feature folder this copy went without: FeatureMissing names it
    value = getattr(module, name)
    globals()[name] = value  # found once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
