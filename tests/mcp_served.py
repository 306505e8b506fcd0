"""Tools that tests/test_mcp_serve.py serves over MCP, in-process and as `python -m mini_framework.mcp serve
tests.mcp_served:tools` (a real stdio server process)."""
from __future__ import annotations

import asyncio
import struct
import zlib
from typing import Literal, Optional

from pydantic import BaseModel

from mini_framework import ImgPath, tool
from mini_framework.media import media_dir

print("printed while importing: this must not reach the MCP client's stdout")

SECRET = "sk-proj-" + "abcdefghijklmnopqrstuvwxyz0123"  # built here: a traceback shows the line that raises
RAN: list[str] = []  # what the gated tools really did (in this process)


def _png(width: int = 4, height: int = 3) -> bytes:
    """A real PNG, one colour (as tests/media_helpers.py makes them; that module is not importable here)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + bytes((30, 90, 200)) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


PNG = _png()


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


class Address(BaseModel):
    city: str
    street: Optional[str] = None


@tool(strict=True)
def ship(address: Address, speed: Literal["slow", "fast"] = "slow", notes: list[str] | None = None) -> str:
    """Ship a parcel to an address."""
    return f"{address.city} ({speed})"


@tool
def boom(city: str) -> str:
    """Look up a city in a database that is down."""
    raise RuntimeError(f"connect failed with password {SECRET} for {city}")


@tool(timeout=0.2)
async def slow() -> str:
    """Take far too long."""
    await asyncio.sleep(30)
    return "never"


@tool
def chart(title: str) -> tuple[str, ImgPath]:
    """Draw a chart, as an image."""
    path = media_dir() / "mcp_served_chart.png"
    path.write_bytes(PNG)
    return title, ImgPath(path)


@tool
def fake_chart() -> ImgPath:
    """Return a file that is named like an image but is not one."""
    path = media_dir() / "mcp_served_fake.png"
    path.write_text("not an image at all")
    return ImgPath(path)


@tool
def outside() -> ImgPath:
    """Return an image path outside the allowed folders."""
    return ImgPath("/etc/hostname.png")


@tool
def length(text: str) -> int:
    """How many characters a text has."""
    return len(text)


@tool
def ping() -> str:
    """Check that the server answers."""
    return "pong"


@tool(side_effects=True)
def log_note(text: str) -> str:
    """Write a note to the log."""
    return "noted"


@tool(requires_approval=True)
def delete_file(path: str, times: int = 1) -> str:
    """Delete a file."""
    RAN.append(f"delete_file {path} {times}")
    return f"deleted {path}"


@tool(requires_approval=lambda args: not args.to.endswith("@corp.example"))
def send_note(to: str, text: str) -> str:
    """Send a note; outside the company only with a person's approval."""
    RAN.append(f"send_note {to}")
    return f"sent to {to}"


tools = [add, ship, boom, slow, chart, fake_chart, outside, length, ping, log_note, delete_file, send_note]
