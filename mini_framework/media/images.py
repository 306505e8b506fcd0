"""What kind of image some bytes are, read from the bytes themselves, never from a file name.

    >>> sniff(PNG_SIGNATURE + b"\\0\\0\\0\\rIHDR" + (640).to_bytes(4, "big") + (400).to_bytes(4, "big"))
    ImageInfo(mime='image/png', width=640, height=400)

A file called `chart.png` may hold anything (`.env`, an HTML error page, a ZIP): only PNG, JPEG, GIF
and WebP headers count, the four formats the Chat Completions API accepts for `image_url` parts.

Concession: the header is read, not the whole image. Width and height come from the header (0 when a
JPEG's size marker is beyond the first 64 KB); a file with a valid header and a broken body passes
here, and the model provider will say it cannot read it.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ImageInfo", "PNG_SIGNATURE", "sniff"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SEARCH_JPEG = 65536  # bytes of a JPEG searched for its size marker


@dataclass(frozen=True)
class ImageInfo:
    """An image's type and size in pixels."""

    mime: str  # image/png, image/jpeg, image/gif or image/webp
    width: int
    height: int

    @property
    def format(self) -> str:
        """The short name: PNG, JPEG, GIF or WEBP."""
        return self.mime.split("/")[1].upper()


def sniff(data: bytes) -> ImageInfo | None:
    """The image type and size of `data`, or None when it is not a PNG, JPEG, GIF or WebP."""
    if data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR" and len(data) >= 24:
        return ImageInfo("image/png", _big(data[16:20]), _big(data[20:24]))
    if data.startswith((b"GIF87a", b"GIF89a")) and len(data) >= 10:
        return ImageInfo("image/gif", _little(data[6:8]), _little(data[8:10]))
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return _webp(data)
    if data.startswith(b"\xff\xd8\xff"):
        return _jpeg(data)
    return None


def _big(b: bytes) -> int:
    return int.from_bytes(b, "big")


def _little(b: bytes) -> int:
    return int.from_bytes(b, "little")


def _webp(data: bytes) -> ImageInfo | None:
    """WebP comes in three layouts (lossy VP8, lossless VP8L, extended VP8X), each with its own size fields."""
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        return ImageInfo("image/webp", _little(data[26:28]) & 0x3FFF, _little(data[28:30]) & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:
        bits = _little(data[21:25])
        return ImageInfo("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        return ImageInfo("image/webp", _little(data[24:27]) + 1, _little(data[27:30]) + 1)
    return None


def _jpeg(data: bytes) -> ImageInfo:
    """Walk the JPEG markers to the first start-of-frame (SOF0–SOF15 except DHT, JPG and DAC), which holds the size."""
    i, end = 2, min(len(data), SEARCH_JPEG)
    while i + 9 <= end:
        if data[i] != 0xFF:
            break
        marker = data[i + 1]
        if marker == 0xFF:  # padding between markers
            i += 1
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            return ImageInfo("image/jpeg", _big(data[i + 7:i + 9]), _big(data[i + 5:i + 7]))
        i += 2 + _big(data[i + 2:i + 4])
    return ImageInfo("image/jpeg", 0, 0)
