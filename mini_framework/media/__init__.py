"""Media (a feature): images that tools return, found, checked, registered, and delivered to the model.

    types.py     ImgPath, ImgUrl, Text: values a tool takes or returns that are more than a string
    images.py    format and pixel size sniffed from the bytes
    sources.py   where images may come from: allowed folders, public http(s) URLs (SSRF-safe fetch)
    store.py     images found in tool results, registered under a media_id
    vision.py    how images reach a model that sees, or one that doesn't
    hook.py      how it plugs into the loop: MediaHook

Needs: the core (mini_framework/*.py). Nothing else (Pillow is not used).
"""

from .hook import MediaHook, hooks_for
from .sources import MediaError, MediaPolicy, media_dir
from .store import Media, MediaStore, find_media
from .types import Detail, ImgPath, ImgUrl, Text
from .vision import Vision, image_input_for

__all__ = ["Detail", "ImgPath", "ImgUrl", "Media", "MediaError", "MediaHook", "MediaPolicy", "MediaStore", "Text",
           "Vision", "find_media", "hooks_for", "image_input_for", "media_dir"]
