"""mini_framework: a small, production-minded toolkit for LLM tool calling, built lesson by lesson.

Public names, each from a module of its own:

    connect, connect_async, load_settings,     where requests go: the practice model     connection.py
      Connection, Settings                     or a real provider
    show, dump                                 conversations and JSON, readable           display.py
    tool, Tool, ToolDefinitionError            Python functions as tools: schema,         tools.py, schema.py
                                               validation, running them
    Text, ImgPath, ImgUrl                      values that are more than a string         types.py
    find_media, MediaStore, Media              images tools return: found, registered     media.py
                                               under a media_id
    MediaPolicy, MediaError, media_dir         where images may be read from: allowed     sources.py
                                               folders, public http(s) URLs
    Vision, image_input_for                    how images reach a model that sees, or     vision.py
                                               one that doesn't
    prepare, ArgumentsError                    untrusted arguments: repaired, coerced,    arguments.py
                                               explained
    redact                                     no secrets or paths in what a model reads  redaction.py
    ToolCall, read_reply, ProviderError        a model's reply, read and repaired         replies.py
    Executor, ToolError, ToolResult            running calls: unknown tools, errors,      executor.py
                                               timeouts
    Agent, RunResult, Usage                    the loop: caps, repeats, pause and resume  agent.py, state.py
    Verdict, Pending, Decision, AuditLog       decisions before a call runs: the          approvals.py
                                               checkpoint, a person's approval, audit log
    SavedRunError                              a paused run saved to JSON, loaded again   saved.py
    ResultCache                                tool results reused for the same call      cache.py
    Price                                      what a run's tokens cost                   cost.py
    estimate_tokens, count_tokens,             tokens, offline (tiktoken if cached)       tokens.py
      message_tokens
    trim_history                               a history fitted to a budget, pairs whole  trimming.py
    (spill.py: too long tool output to a file; mail.py: a gated send_email — imported by name)
    Event, ModelRequest, ModelResponse,        what happens during a run                  events.py
      ToolStarted, ToolFinished, CapReached,
      RunPaused, FinalAnswer, TextDelta
    Assembler                                  a streamed reply put back together, with   streaming.py
                                               each provider's quirks normalised

Dependencies: openai and pydantic; python-dotenv only if you use `.env` files. The offline
practice model is a package of its own, `practice_model/`, beside this one and optional:
`connect()` imports it to start it when no provider is configured, or to ask whether a model
name given with a real provider is one of its personas (connection.py says how).

Logging: failures (with tracebacks) go to the "mini_framework" logger, silent until you
configure logging, e.g. `logging.basicConfig(level=logging.WARNING)`.
"""
import logging

from .agent import Agent
from .approvals import AuditLog, Decision, Pending, Verdict
from .arguments import ArgumentsError, prepare
from .cache import ResultCache
from .connection import Connection, Settings, connect, connect_async, load_settings
from .cost import Price
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
from .media import Media, MediaStore, find_media
from .redaction import redact
from .replies import ProviderError, ToolCall, read_reply
from .saved import SavedRunError
from .schema import ToolDefinitionError
from .sources import MediaError, MediaPolicy, media_dir
from .state import RunResult, Usage
from .streaming import Assembler
from .tokens import count_tokens, estimate_tokens, message_tokens
from .tools import Tool, tool
from .trimming import trim_history
from .types import ImgPath, ImgUrl, Text
from .vision import Vision, image_input_for

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["Agent", "ArgumentsError", "Assembler", "AuditLog", "CapReached", "Connection", "Decision", "Event",
           "Executor", "FinalAnswer", "ImgPath", "ImgUrl", "Media", "MediaError", "MediaPolicy", "MediaStore",
           "ModelRequest", "ModelResponse", "Pending", "Price", "ProviderError", "ResultCache", "RunPaused",
           "RunResult", "SavedRunError", "Settings", "Text", "TextDelta", "Tool", "ToolCall", "ToolDefinitionError",
           "ToolError", "ToolFinished", "ToolResult", "ToolStarted", "Usage", "Verdict", "Vision", "connect",
           "connect_async", "count_tokens", "dump", "estimate_tokens", "find_media", "image_input_for",
           "load_settings", "media_dir", "message_tokens", "prepare", "read_reply", "redact", "show", "tool",
           "trim_history"]
