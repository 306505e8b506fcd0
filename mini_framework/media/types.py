"""Values that are more than a string: `Text`, `ImgPath` (a local image) and `ImgUrl` (a web image).

A model can only send JSON, so as tool *parameters* all three arrive as strings; Pydantic turns
them into these objects on the way in (the hooks below), and the JSON schema says what the string
should contain (`format` "path" or "uri", and a description unless the parameter has its own).
As tool *return values* they tell the executor to send an image (lesson 09).

Concession: these are plain values. Nothing here opens a file or fetches a URL; where images may
come from (allowed folders, public http(s) only, size and MIME checks) is the media layer's job.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic_core import core_schema

Detail = Literal["auto", "low", "high"]  # the image_url `detail` of the Chat Completions API


def _string_backed(hint: dict[str, Any]) -> tuple[classmethod, classmethod]:
    """Pydantic hooks for a type built from one string: validate `str -> cls`, describe as `hint`."""

    def core(kls: type, _source: Any, _handler: Any) -> core_schema.CoreSchema:
        def build(value: Any, as_str: core_schema.ValidatorFunctionWrapHandler) -> Any:
            return value if isinstance(value, kls) else kls(as_str(value))

        return core_schema.no_info_wrap_validator_function(
            build, core_schema.str_schema(), serialization=core_schema.to_string_ser_schema()
        )

    def json_schema(kls: type, _core: Any, _handler: Any) -> dict[str, Any]:
        return dict(hint)

    return classmethod(core), classmethod(json_schema)


class Text(str):
    """A plain string, marked as text content (as opposed to a path or a URL).

    >>> Text("hello").upper()
    'HELLO'
    """

    __get_pydantic_core_schema__, __get_pydantic_json_schema__ = _string_backed({"type": "string"})


@dataclass(frozen=True)
class ImgPath:
    """An image file on this machine, e.g. a chart a tool just drew.

    >>> ImgPath("charts/sales.png", detail="low").path.name
    'sales.png'
    """

    path: Path  # where the image is; a str is turned into a Path
    detail: Detail = "auto"  # how closely a vision model should look (costs tokens)

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        if self.detail not in ("auto", "low", "high"):
            raise ValueError(f"detail must be 'auto', 'low' or 'high', not {self.detail!r}")

    def __str__(self) -> str:
        return str(self.path)

    __get_pydantic_core_schema__, __get_pydantic_json_schema__ = _string_backed(
        {"type": "string", "format": "path", "description": "Path of a local image file, e.g. 'charts/sales.png'."}
    )


@dataclass(frozen=True)
class ImgUrl:
    """An image on the web, given by its http(s) URL.

    >>> str(ImgUrl("https://example.com/cat.png"))
    'https://example.com/cat.png'
    """

    url: str  # an http(s) URL (or a data: URL) of the image
    detail: Detail = "auto"  # as for ImgPath

    def __post_init__(self) -> None:
        if self.detail not in ("auto", "low", "high"):
            raise ValueError(f"detail must be 'auto', 'low' or 'high', not {self.detail!r}")

    def __str__(self) -> str:
        return self.url

    __get_pydantic_core_schema__, __get_pydantic_json_schema__ = _string_backed(
        {"type": "string", "format": "uri", "description": "URL of an image, e.g. 'https://example.com/cat.png'."}
    )
