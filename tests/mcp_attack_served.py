"""Tools that tests/test_mcp_attacks.py serves as `python -m mini_framework.mcp serve tests.mcp_attack_served:tools`:
each misbehaves the way a careless tool author's code does (prints, reads stdin, starts a program that prints)."""
from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from mini_framework import tool


@tool
def chatty(text: str) -> str:
    """Print to stdout three ways (print, the file descriptor, a child program), then answer."""
    print("PRINTED-BY-PRINT", text)
    os.write(1, b"WRITTEN-TO-FD-1\n")
    subprocess.run([sys.executable, "-c", "print('PRINTED-BY-A-CHILD')"], check=False)
    return f"answered {text}"


@tool
def reader() -> str:
    """Read a line from stdin (which is the protocol's)."""
    return f"read {sys.stdin.readline()!r}"


@tool
async def wait(seconds: float, tag: str) -> str:
    """Wait, then say which call this was."""
    await asyncio.sleep(seconds)
    return tag


@tool
def nested(payload: dict) -> str:
    """Take any object."""
    return "ok"


tools = [chatty, reader, wait, nested]
