"""Which characters are Chinese: one definition for the whole practice model.

    IDEOGRAPHS   CJK Unified Ideographs, Extension A and the Compatibility Ideographs: what
                 makes a message Chinese (`language.detect_language`) and what the planner
                 reads as character bigrams
    WIDE         IDEOGRAPHS plus CJK punctuation, kana, hangul and full-width forms: the
                 characters the token estimate (`wire.estimate_tokens`) counts as one token each

The two sets differ on purpose. "こんにちは" or "안녕하세요" is not Chinese, so a Japanese or Korean
question is answered in English; but a tokenizer spends about a token on each of those
characters (and on "，" or "？"), as it does on a Chinese one, not a quarter of a token as on
ASCII letters.

Concessions: ranges as regex character-class bodies (`f"[{IDEOGRAPHS}]"`); the rare ideographs
outside the Basic Multilingual Plane (Extension B onwards) are not counted as Chinese.
"""
from __future__ import annotations

IDEOGRAPHS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""CJK Unified Ideographs Extension A, CJK Unified Ideographs, CJK Compatibility Ideographs."""

WIDE = IDEOGRAPHS + "\u3000-\u30ff\uac00-\ud7af\uff00-\uffef"
"""IDEOGRAPHS, CJK Symbols and Punctuation, Hiragana, Katakana, Hangul Syllables, Halfwidth and Fullwidth Forms."""
