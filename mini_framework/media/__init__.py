"""Media (a feature): images that tools return, found, checked, registered, and delivered to the model.

    types.py     ImgPath, ImgUrl, Text: values a tool takes or returns that are more than a string
    images.py    format and pixel size sniffed from the bytes
    sources.py   where images may come from: allowed folders, public http(s) URLs (SSRF-safe fetch)
    store.py     images found in tool results, registered under a media_id
    vision.py    how images reach a model that sees, or one that doesn't
    hook.py      how it plugs into the loop: MediaHook

Needs: the core (mini_framework/*.py). Nothing else (Pillow is not used).
"""
from __future__ import annotations

import importlib
from typing import Any

# name -> the module of this folder that defines it; imported on first use (module __getattr__, PEP 562)
_WHERE = {
    "ImgPath": ".types",
    "ImgUrl": ".types",
    "Text": ".types",
    "Detail": ".types",
    "MediaHook": ".hook",
    "hooks_for": ".hook",
    "MediaError": ".sources",
    "MediaPolicy": ".sources",
    "media_dir": ".sources",
    "Media": ".store",
    "MediaStore": ".store",
    "find_media": ".store",
    "Vision": ".vision",
    "image_input_for": ".vision",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name], __name__), name)
    globals()[name] = value  # found once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
