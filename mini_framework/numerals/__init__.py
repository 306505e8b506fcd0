"""Numerals (a feature): number words read as numbers, so a model's "一百二十三" reaches a tool as 123.

    words.py   parse_number("一百二十三") == 123, "1.2万" == 12000, "one hundred and five" == 105

The core's argument coercion (arguments.py) uses it when this folder is there; without it, only digits
("123", "3.5") are coerced, and a model that sends number words is told what to fix.

Needs: nothing (the standard library).
"""
from .words import parse_number

__all__ = ["parse_number"]
