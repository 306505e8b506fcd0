"""Images that tools return: found in the return value, read safely, registered under a `media_id`.

    store = MediaStore()
    text, found = find_media(("Sales by month", ImgPath("charts/sales.png")))
    media = store.load(found[0], tool_name="draw_chart")     # read, sniffed, registered (or MediaError)
    media.media_id                                           # 'tool:draw_chart:3f9a1c2b'
    store.data_url(media)                                    # 'data:image/png;base64,...' (encoded once)

What counts as an image in a tool's return value (`find_media`), and nothing else:

    ImgPath(...) / ImgUrl(...)            alone, in a tuple or list with text, or as a value of a dict
    {"media": [{"kind": "image", "path" | "url": ...}], "text": ...}      the explicit protocol
    {"kind": "image", "path" | "url": ..., "mime_type": ...}               one image, explicitly
    {"path": "x.png", ...} / {"url": "https://.../x.png"}                  older tools: only with an image
                                          suffix, and used only if the file is in an allowed folder and
                                          really is an image (never an error: it may just be a file name)

The dicts are Python values the tool returned. A string is text, whatever it holds: JSON that looks
like one of these shapes (a web page, a file, another service's answer, which a tool passes on) is
never parsed into an image, so it cannot make the agent read a local file or fetch a URL.

A `media_id` is `tool:{tool name}:{8 hex digits of the bytes' SHA-256}`: it names the image, not
where it came from, so no path reaches the model through it. The store keeps the bytes for the
run (bounded), so a later turn (or `image_understand`) can refer to an image by id.

Concession: images only (no audio, video or files), and the store lives in memory.
"""
from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from .images import ImageInfo, sniff
from .sources import MediaError, MediaPolicy, fetch_url, read_data_url, read_path
from .types import Detail, ImgPath, ImgUrl

__all__ = ["IMAGE_SUFFIXES", "Media", "MediaError", "MediaStore", "find_media"]

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
MAX_PIXELS = 100_000_000  # an image claiming more (a hostile header) is refused
MAX_DESCRIPTIONS = 256  # descriptions kept per store


@dataclass(frozen=True)
class Found:
    """An image named in a return value, not read yet; `explicit` is False for an older tool's {"path": ...}."""

    image: ImgPath | ImgUrl
    explicit: bool = True


@dataclass(frozen=True)
class Media:
    """A registered image: its id, what it is, and its bytes."""

    media_id: str
    tool: str  # the tool that returned it
    info: ImageInfo
    data: bytes = field(repr=False)
    detail: Detail = "auto"

    def label(self) -> str:
        """How the model reads about it: 'tool:draw_chart:3f9a1c2b (PNG 640×400, 23 KB)'."""
        size = f"{self.info.width}×{self.info.height}, " if self.info.width else ""
        return f"{self.media_id} ({self.info.format} {size}{max(1, len(self.data) // 1024)} KB)"


# ----------------------------------------------------------------------------- finding images in a value

def find_media(value: Any) -> tuple[Any, list[Found]]:
    """The images in a tool's return value, and what is left of the value for the text.

    >>> find_media(("销售额", ImgPath("sales.png")))
    ('销售额', [Found(image=ImgPath(path=PosixPath('sales.png'), detail='auto'), explicit=True)])
    >>> find_media({"temperature": 22})
    ({'temperature': 22}, [])
    >>> find_media('{"kind": "image", "path": "/etc/passwd.png"}')    # text is text: never parsed
    ('{"kind": "image", "path": "/etc/passwd.png"}', [])
    """
    if isinstance(value, (ImgPath, ImgUrl)):
        return None, [Found(value)]
    if isinstance(value, (tuple, list)) and any(isinstance(v, (ImgPath, ImgUrl)) for v in value):
        texts = [v for v in value if not isinstance(v, (ImgPath, ImgUrl))]
        images = [Found(v) for v in value if isinstance(v, (ImgPath, ImgUrl))]
        return ("\n".join(t if isinstance(t, str) else _json(t) for t in texts) if texts else None), images
    if isinstance(value, dict):
        return _from_dict(value)
    return value, []


def _from_dict(value: dict[Any, Any]) -> tuple[Any, list[Found]]:
    """Images in a dict: the explicit protocol, one explicit image, image values, or an older tool's shape."""
    if isinstance(value.get("media"), list):
        images = [f for item in value["media"] if (f := _described(item)) is not None]
        if images:
            rest = {k: v for k, v in value.items() if k != "media"}
            return (rest.get("text") if set(rest) <= {"text"} else rest), images
    if "kind" in value and value["kind"] != "image":
        return value, []  # says what it is, and it is not an image
    if value.get("kind") == "image":
        one = _described(value)
        if one is not None:
            rest = {k: v for k, v in value.items() if k not in ("kind", "path", "url", "mime_type", "detail")}
            return (rest or None), [one]
    images = [Found(v) for v in value.values() if isinstance(v, (ImgPath, ImgUrl))]
    if images:
        return {k: ("(image)" if isinstance(v, (ImgPath, ImgUrl)) else v) for k, v in value.items()}, images
    older = _older_shape(value)
    return value, ([older] if older else [])


def _described(item: Any) -> Found | None:
    """An explicit `{"kind": "image", "path" | "url": ...}` entry as a Found image."""
    if not isinstance(item, dict) or item.get("kind", "image") != "image":
        return None
    detail: Detail = item["detail"] if item.get("detail") in ("auto", "low", "high") else "auto"
    if isinstance(item.get("path"), str) and item["path"]:
        return Found(ImgPath(Path(item["path"]), detail=detail))
    if isinstance(item.get("url"), str) and item["url"]:
        return Found(ImgUrl(item["url"], detail=detail))
    return None


def _older_shape(value: dict[Any, Any]) -> Found | None:
    """`{"path": "x.png"}` or `{"url": "https://.../x.png"}` from a tool that predates the protocol: only
    with an image suffix; whether it is really an image in an allowed place is decided when it is read."""
    path, url = value.get("path"), value.get("url")
    if isinstance(path, str) and PurePosixPath(path.replace("\\", "/")).suffix.lower() in IMAGE_SUFFIXES:
        return Found(ImgPath(Path(path)), explicit=False)
    if isinstance(url, str) and url.lower().startswith(("http://", "https://")):
        if PurePosixPath(urlsplit(url).path).suffix.lower() in IMAGE_SUFFIXES:
            return Found(ImgUrl(url), explicit=False)
    return None


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return "(unreadable value)"


# ----------------------------------------------------------------------------- the store

class MediaStore:
    """The images of a run (or a conversation) by `media_id`, bounded; thread-safe.

    >>> store = MediaStore()
    >>> png = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000100000000c")
    >>> store.add(png, "draw_chart").media_id
    'tool:draw_chart:2b6c815e'
    """

    def __init__(self, policy: MediaPolicy | None = None, max_items: int = 64, max_bytes: int = 64 * 2**20) -> None:
        self.policy = policy or MediaPolicy()
        self.max_items = max_items  # the oldest images are forgotten past these limits
        self.max_bytes = max_bytes
        self.items: OrderedDict[str, Media] = OrderedDict()
        self.urls: dict[str, str] = {}  # media_id -> data URL, encoded once
        self.descriptions: dict[tuple[str, str], str] = {}  # (media_id, question) -> what a vision model said
        self.lock = threading.Lock()

    def load(self, found: Found | ImgPath | ImgUrl, tool_name: str) -> Media:
        """Read an image within the policy, check it is one, and register it; MediaError says why not."""
        image = found.image if isinstance(found, Found) else found
        if isinstance(image, ImgPath):
            data = read_path(image.path, self.policy)
        elif image.url.lower().startswith("data:"):
            data = read_data_url(image.url, self.policy)
        else:
            data = fetch_url(image.url, self.policy)
        return self.add(data, tool_name, image.detail)

    def add(self, data: bytes, tool_name: str, detail: Detail = "auto") -> Media:
        """Register image bytes (the same bytes from the same tool: the same Media)."""
        info = sniff(data)
        if info is None:
            raise MediaError("the file is not a PNG, JPEG, GIF or WebP image (judged by its bytes, not its name)")
        if len(data) > self.policy.max_bytes:
            raise MediaError(f"the image is {len(data):,} bytes, over the limit of {self.policy.max_bytes:,}")
        if info.width * info.height > MAX_PIXELS:
            raise MediaError(f"the image claims {info.width}×{info.height} pixels, more than can be used")
        digest = hashlib.sha256(data).hexdigest()
        media_id = f"tool:{tool_name}:{digest[:8]}"
        with self.lock:
            known = self.items.get(media_id)
            if known is not None and known.data != data:  # 8 hex digits collided: use more
                media_id = f"tool:{tool_name}:{digest[:16]}"
                known = self.items.get(media_id)
            media = known if known is not None and known.detail == detail else Media(
                media_id, tool_name, info, data, detail)
            self.items[media_id] = media
            self.items.move_to_end(media_id)
            self._trim()
        return media

    def get(self, media_id: str) -> Media | None:
        """The image registered under `media_id`, if it is still kept."""
        with self.lock:
            return self.items.get(media_id) if isinstance(media_id, str) else None

    def data_url(self, media: Media) -> str:
        """The image as a `data:` URL, base64-encoded once per media_id."""
        with self.lock:
            url = self.urls.get(media.media_id)
        if url is None:
            url = f"data:{media.info.mime};base64,{base64.b64encode(media.data).decode('ascii')}"
            with self.lock:
                if media.media_id in self.items:
                    self.urls[media.media_id] = url
        return url

    def remember(self, key: tuple[str, str], description: str) -> None:
        """Keep what a vision model said about an image (the oldest forgotten past MAX_DESCRIPTIONS)."""
        with self.lock:
            if key[0] in self.items:
                self.descriptions[key] = description
            while len(self.descriptions) > MAX_DESCRIPTIONS:
                self.descriptions.pop(next(iter(self.descriptions)))

    def _trim(self) -> None:
        """Forget the oldest images beyond the limits (the newest one is always kept)."""
        total = sum(len(m.data) for m in self.items.values())
        while len(self.items) > 1 and (len(self.items) > self.max_items or total > self.max_bytes):
            old_id, old = self.items.popitem(last=False)
            total -= len(old.data)
            self.urls.pop(old_id, None)
            for key in [k for k in self.descriptions if k[0] == old_id]:
                del self.descriptions[key]
