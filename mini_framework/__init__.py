"""mini_framework: a small, production-minded toolkit for LLM tool calling, built lesson by lesson.

Public names, each from a module of its own:

    connect, load_settings   where requests go (practice model or a real provider)   connection.py
    show, dump               conversations and JSON, readable in notebooks           display.py
    tool, Tool               Python functions as tools: schema, validation           tools.py, schema.py
    Text, ImgPath, ImgUrl    values that are more than a string                      types.py
    prepare, ArgumentsError  untrusted arguments: repaired, coerced, explained        arguments.py
    Executor, ToolError      running calls: unknown tools, errors, timeouts          executor.py
    Agent, RunResult         the loop: caps, repeated calls, events, usage           agent.py

Logging: failures (with tracebacks) go to the "mini_framework" logger, silent until you
configure logging, e.g. `logging.basicConfig(level=logging.WARNING)`.
"""
import logging

from .agent import Agent, RunResult
from .arguments import ArgumentsError, prepare
from .connection import Connection, Settings, connect, connect_async, load_settings
from .display import dump, show
from .executor import Executor, ToolCall, ToolError, ToolResult
from .schema import ToolDefinitionError
from .tools import Tool, tool
from .types import ImgPath, ImgUrl, Text

logging.getLogger(__name__).addHandler(logging.NullHandler())

__all__ = ["Agent", "ArgumentsError", "Connection", "Executor", "ImgPath", "ImgUrl", "RunResult", "Settings", "Text",
           "Tool", "ToolCall", "ToolDefinitionError", "ToolError", "ToolResult", "connect", "connect_async", "dump",
           "load_settings", "prepare", "show", "tool"]
