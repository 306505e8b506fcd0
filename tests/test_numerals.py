"""`parse_number`: a whole string in digits, Chinese or English words -> a number.

Finding numbers inside free text and spelling them out are the practice model's business
(`practice_model/numbers.py`, tested in test_practice_numbers.py)."""
from __future__ import annotations

import pytest

from mini_framework.numerals import parse_number

PARSES = [
    # digits
    ("42", 42), ("-12", -12), ("+5", 5), ("3.5", 3.5), ("3.0", 3.0), ("0", 0), ("1,000", 1000),
    ("1,234,567", 1234567), ("１２３", 123), ("－７", -7), ("  42  ", 42), ("1e3", 1000.0),
    ("1.2万", 12000), ("3亿", 300000000), ("5千", 5000), ("2.5万", 25000),
    # Chinese
    ("零", 0), ("〇", 0), ("十", 10), ("十二", 12), ("二十", 20), ("一百二十三", 123), ("一百零二", 102),
    ("两千零五", 2005), ("一千零五十", 1050), ("二百五", 250), ("一万二", 12000), ("十万", 100000),
    ("十二万三千四百五十六", 123456), ("一亿二", 120000000), ("两", 2), ("三点五", 3.5), ("零点五", 0.5),
    ("三点一四", 3.14), ("负十二", -12), ("负三点五", -3.5), ("一点二万", 12000), ("二〇二四", 2024),
    ("壹贰叁", 123), ("壹佰贰拾叁", 123), ("兩千", 2000),
    # English
    ("twelve", 12), ("Twenty-One", 21), ("one hundred and five", 105), ("one hundred five", 105),
    ("five thousand and six", 5006), ("nineteen hundred", 1900), ("two million", 2000000), ("zero", 0),
    ("minus three", -3), ("negative seven", -7), ("three point five", 3.5), ("a dozen", 12),
    ("a hundred", 100),
]

REJECTS = ["abc", "12abc", "1.2.3", "", "  ", "万", "百", "千万", "点五", "一些", "one two", "twenty twelve",
           "thousand", "and", "a", "1,00", "3-5", "十十", "二二十", "NaN", "inf", "0x10", "负", "minus",
           "point five", "one and two", "二点"]


@pytest.mark.parametrize("text,expected", PARSES)
def test_parse_number(text, expected):
    value = parse_number(text)
    assert value == expected
    assert type(value) is type(expected), f"{text!r} gave {type(value).__name__}"


@pytest.mark.parametrize("text", REJECTS)
def test_parse_number_rejects(text):
    assert parse_number(text) is None


def test_parse_number_tolerates_non_strings():
    assert parse_number(None) is None  # type: ignore[arg-type]
    assert parse_number(12) is None    # type: ignore[arg-type]
