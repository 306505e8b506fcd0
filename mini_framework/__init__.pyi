"""Type information for the front door (`mini_framework/__init__.py` loads each name on first use)."""
from typing import Any

from .agent import Agent
from .approvals import AuditLog, Decision, Pending, SavedRunError, Verdict
from .arguments import ArgumentsError, prepare
from .budget import Price, ResultCache, count_tokens, estimate_tokens, message_tokens, trim_history
from .builtin.files import FileToolset
from .chat import Chat, ChatPaused, SavedChatError
from .connection import Connection, Settings, connect, connect_async, load_settings
from .delegation import Delegated, SubAgentEvent, as_tool
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
from .functions import LLMFunctionError, llm_function
from .hooks import FeatureMissing, Hook, Plan, Request, Run
from .media import (
           ImgPath,
           ImgUrl,
           Media,
           MediaError,
           MediaPolicy,
           MediaStore,
           Text,
           Vision,
           find_media,
           image_input_for,
           media_dir,
)
from .redaction import redact
from .replies import ProviderError, ToolCall, read_reply
from .schema import ToolDefinitionError
from .state import RunResult, Usage
from .streaming import Assembler
from .tools import Tool, ToolOptions, tool

__all__ = ["Agent", "ArgumentsError", "Assembler", "AuditLog", "CapReached", "Connection", "Decision", "Event",
           "Executor", "FeatureMissing", "FinalAnswer", "Hook", "ImgPath", "ImgUrl", "Media", "MediaError",
           "MediaPolicy", "MediaStore", "ModelRequest", "ModelResponse", "Pending", "Plan", "Price", "ProviderError",
           "Request", "ResultCache", "Run", "RunPaused", "RunResult", "SavedRunError", "Settings", "Text",
           "TextDelta", "Tool", "ToolCall", "ToolDefinitionError", "ToolError", "ToolFinished", "ToolOptions",
           "ToolResult", "ToolStarted", "Usage", "Verdict", "Vision", "connect", "connect_async", "count_tokens",
           "dump", "estimate_tokens", "find_media", "image_input_for", "load_settings", "media_dir",
           "message_tokens", "prepare", "read_reply", "redact", "show", "tool", "trim_history"]
__all__ += ["Chat", "ChatPaused", "LLMFunctionError", "SavedChatError", "llm_function"]  # chat/, functions/
__all__ += ["FileToolset"]  # builtin/files
__all__ += ["Delegated", "SubAgentEvent", "as_tool"]

def __getattr__(name: str) -> Any: ...
