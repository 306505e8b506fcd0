"""A bar chart as a PNG, written with zlib and struct alone (no Pillow), and a PNG's text taken out.

    data = bar_chart([89.0, 627.0, 399.0], title="张三's orders", caption="2024-04-18 89, 2024-05-20 627, ...")
    Path("orders.png").write_bytes(data)
    strip_text(data)                     # the same picture without its text chunks

A PNG is a signature and chunks (length, type, data, CRC-32): IHDR (size, 8-bit RGB), iTXt (text, UTF-8),
IDAT (the rows, each prefixed with filter byte 0, deflated), IEND. The chart has no lettering (that needs a
font); its title and values go in iTXt chunks, which is also where a vision model that reads metadata
(the practice model's practice-vision) finds them -- and where an attacker hides instructions, hence
`strip_text` for pictures that come from outside.

    >>> data = bar_chart([1.0, 3.0], title="t", caption="a 1, b 3")
    >>> data[:8] == SIGNATURE, b"iTXt" in data, b"iTXt" in strip_text(data)
    (True, True, False)

Concessions: bars only, one colour, no axes or labels drawn; at most MAX_BARS bars.
"""
from __future__ import annotations

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"
TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt")
MAX_BARS = 60
WHITE, BLUE, GREY = b"\xff\xff\xff", b"\x1e\x50\xdc", b"\xc8\xc8\xc8"


def chunk(kind: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC-32 of type and data."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(width: int, height: int, rows: list[bytes], texts: dict[str, str] | None = None) -> bytes:
    """An 8-bit RGB PNG from `height` rows of `width * 3` bytes, with UTF-8 text chunks (iTXt)."""
    header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    text = b"".join(chunk(b"iTXt", key.encode("latin-1")[:79] + b"\0\0\0\0\0" + value.encode("utf-8"))
                    for key, value in (texts or {}).items())
    pixels = zlib.compress(b"".join(b"\0" + row for row in rows), 9)
    return SIGNATURE + header + text + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def bar_chart(values: list[float], *, title: str = "", caption: str = "", width: int = 240,
              height: int = 120) -> bytes:
    """Bars for `values` (tallest bar = the chart's height), title and caption in text chunks."""
    values = [max(0.0, float(v)) for v in values[:MAX_BARS]] or [0.0]
    top = max(values) or 1.0
    slot = width // len(values)
    rows = []
    for y in range(height):
        level = (height - y) / height  # 1.0 at the top row
        row = b"".join(BLUE if x % slot < slot * 3 // 4 and values[min(x // slot, len(values) - 1)] / top >= level
                       else (GREY if y == height - 1 else WHITE) for x in range(width))
        rows.append(row)
    return png(width, height, rows, {"Title": title, "Description": caption})


def strip_text(data: bytes) -> bytes:
    """The PNG without its text chunks (what a tool should pass on of a picture from outside); other data as is."""
    if not data.startswith(SIGNATURE):
        return data
    out, at = [SIGNATURE], len(SIGNATURE)
    while at + 12 <= len(data):
        length = struct.unpack(">I", data[at:at + 4])[0]
        end = at + 12 + length
        if data[at + 4:at + 8] not in TEXT_CHUNKS:
            out.append(data[at:end])
        at = end
    return b"".join(out)
