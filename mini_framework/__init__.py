"""mini_framework: a small, production-minded toolkit for LLM tool calling, built lesson by lesson.

Public names grow with the course; each lives in a module of its own:

    connect, load_settings   where requests go (practice model or a real provider)   connection.py
    show, dump               conversations and JSON, readable in notebooks           display.py
"""
from .connection import Connection, Settings, connect, connect_async, load_settings
from .display import dump, show

__all__ = ["Connection", "Settings", "connect", "connect_async", "dump", "load_settings", "show"]
