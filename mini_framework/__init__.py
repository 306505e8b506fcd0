"""mini_framework: a small, production-minded toolkit for LLM tool calling, built lesson by lesson.

Layers (each imports only those above it, and nothing imports up; tests/test_layers.py holds the rule):

    core        mini_framework/*.py      tools, schema, arguments, replies, executor, the loop, hooks, state,
                                         events, redaction, concurrency, connection, text
    features    approvals/ media/ budget/ streaming/ delegation/  each plugs into the loop through hooks (hooks.py)
                numerals/ schemas/ strict/ display/     used by name when asked for (hooks.feature)
                functions/ chat/                        used by your code: @llm_function, Chat
    built-in    builtin/                 ready-made tools (mail: a gated send_email; files: FileToolset)

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
    Text, ImgPath, ImgUrl, find_media,         images tools take and return: checked, registered,   media
      MediaStore, Media, MediaPolicy,          delivered
      MediaError, media_dir, Vision,
      image_input_for
  budget/ (feature)
    ResultCache, Price, estimate_tokens,       tokens, spill, trimming, cache, cost                 budget
      count_tokens, message_tokens,
      trim_history
  streaming/ (feature)
    Assembler                                  streamed replies put back together, quirks normalised streaming
  functions/ (feature)
    llm_function, LLMFunctionError             a docstring as the prompt, the return type enforced  functions
  builtin/files/ (built-in tools)
    FileToolset                                read_file, grep, sed, echo_into in one workspace     builtin.files
  delegation/ (feature)
    as_tool, SubAgentEvent, Delegated          an Agent (or an LLM function) as another agent's tool  delegation
  chat/ (feature)
    Chat, ChatPaused, SavedChatError           a conversation over many turns: history, pauses, saved  chat

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
from typing import Any

logging.getLogger(__name__).addHandler(logging.NullHandler())

# name -> the module that defines it, imported on first use (module __getattr__, PEP 562)
_WHERE = {name: module for module, names in {
    ".connection": "connect connect_async load_settings Connection Settings",
    ".display": "show dump",
    ".tools": "tool Tool ToolOptions",
    ".schema": "ToolDefinitionError",
    ".arguments": "prepare ArgumentsError",
    ".redaction": "redact",
    ".replies": "ToolCall read_reply ProviderError",
    ".executor": "Executor ToolError ToolResult",
    ".hooks": "Hook Plan Request Run FeatureMissing",
    ".agent": "Agent",
    ".state": "RunResult Usage",
    ".events": "Event ModelRequest ModelResponse ToolStarted ToolFinished CapReached RunPaused FinalAnswer TextDelta",
    ".approvals": "Verdict Pending Decision AuditLog SavedRunError",
    ".media": "Text ImgPath ImgUrl find_media MediaStore Media MediaPolicy MediaError media_dir Vision image_input_for",
    ".budget": "ResultCache Price estimate_tokens count_tokens message_tokens trim_history",
    ".streaming": "Assembler",
    ".functions": "llm_function LLMFunctionError",
    ".builtin.files": "FileToolset",
    ".delegation": "as_tool SubAgentEvent Delegated",
    ".chat": "Chat ChatPaused SavedChatError",
}.items() for name in names.split()}
__all__ = sorted(_WHERE)  # what each name is, for type checkers and editors: __init__.pyi

# `from mini_framework import *` gives what this copy has: the names of a feature folder it went without are left out
try:
    _HERE = os.path.dirname(__file__)
    _PATHS = {name: os.path.join(_HERE, *module[1:].split(".")) for name, module in _WHERE.items()}  # folder or .py
    __all__[:] = [name for name in __all__ if os.path.isdir(_PATHS[name]) or os.path.isfile(_PATHS[name] + ".py")]
except OSError:  # not a folder on disk (a zip): every name stays
    pass


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
