"""Strict (a feature): the schema OpenAI's strict mode accepts, for `@tool(strict=True)`.

    convert.py   strict_schema(schema): closed objects, every property required, optional ones nullable

Without this folder a tool with `strict=True` is refused when it is made (`FeatureMissing`); the default,
portable schema needs nothing from here.

Needs: the core.
"""
from .convert import STRICT_FORMATS, STRICT_KEYWORDS, strict_schema

__all__ = ["STRICT_FORMATS", "STRICT_KEYWORDS", "strict_schema"]
