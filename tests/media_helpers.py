"""Image bytes and a loopback HTTP server for the media tests (no Pillow needed)."""
from __future__ import annotations

import http.server
import socket
import struct
import threading
import zlib
from contextlib import contextmanager
from typing import Callable, Iterator


def png(width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (30, 90, 200), text: str | None = None) -> bytes:
    """A real PNG: one colour, optionally a tEXt chunk ("Description", text)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    extra = chunk(b"tEXt", b"Description\0" + text.encode("latin-1")) if text else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


GIF = b"GIF89a" + struct.pack("<HH", 7, 5) + b"\x00\x00\x00;"
JPEG = (b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
        + b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 48, 64, 1) + b"\x01\x11\x00" + b"\xff\xd9")
WEBP_LOSSLESS = b"RIFF" + struct.pack("<I", 30) + b"WEBPVP8L" + struct.pack("<I", 10) + b"\x2f" + struct.pack(
    "<I", (9 - 1) | ((6 - 1) << 14)) + b"\0" * 8


Handler = Callable[[http.server.BaseHTTPRequestHandler], None]


@contextmanager
def serving(routes: dict[str, Handler]) -> Iterator[tuple[int, list[dict[str, str]]]]:
    """An HTTP server on 127.0.0.1 answering `routes` (path -> handler); yields (port, requests seen)."""
    seen: list[dict[str, str]] = []

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            seen.append({"path": self.path, "host": self.headers.get("Host", "")})
            handler = routes.get(self.path.split("?")[0])
            if handler is None:
                self.send_error(404)
            else:
                handler(self)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def body(data: bytes, content_type: str = "image/png", status: int = 200) -> Handler:
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)
    return answer


def redirect(location: str) -> Handler:
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(302)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()
    return answer


def loopback_only(monkeypatch) -> list[tuple[str, int]]:
    """Make any connection to an address other than 127.0.0.1/::1 fail the test; return the attempts seen."""
    attempts: list[tuple[str, int]] = []
    real = socket.create_connection

    def guarded(address, *args, **kwargs):
        attempts.append((str(address[0]), int(address[1])))
        if address[0] not in ("127.0.0.1", "::1"):
            raise AssertionError(f"a connection to {address[0]} was attempted")
        return real(address, *args, **kwargs)

    real_connect = socket.socket.connect

    def refuse(self, address):
        if isinstance(address, tuple) and address[0] in ("127.0.0.1", "::1"):
            return real_connect(self, address)
        raise AssertionError(f"a raw socket connection to {address} was attempted")

    monkeypatch.setattr(socket, "create_connection", guarded)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts
