"""The practice model's number helpers: numbers inside free text, and numbers spelled out.

Both stand on the practice package's `parse_number` (practice_model/numerals.py, a deliberate copy of
mini_framework/numerals.py): `find_numbers` must read exactly what `parse_number` reads, and `spell_number`
must be its inverse. The copy must read the framework's test cases as the original does.
"""
from __future__ import annotations

import random

import pytest

from mini_framework import numerals as framework_numerals
from practice_model.numbers import MAX_NUMBER_WORDS, find_numbers, spell_number
from practice_model.numerals import parse_number
from tests.test_numerals import PARSES, REJECTS

FINDS = [
    ("A组本周新增客户35个，流失8个，净增多少", [35, 8]),
    ("新增客户35个，流失8个", [35, 8]),
    ("一百二十三加四百五十六", [123, 456]),
    ("123456789 + 987654321", [123456789, 987654321]),
    ("-12 degrees", [-12]),
    ("35-8", [35, 8]),
    ("3 - 5", [3, 5]),
    ("温度-5度", [-5]),
    ("1.2万人和3亿元", [12000, 300000000]),
    ("add twelve and one hundred and five", [12, 105]),
    ("minus three plus four", [-3, 4]),
    ("which one is better? one of them costs 1,000", [1000]),
    ("看一下统一的价格，一起算一点五和两个", [1.5, 2]),
    ("订单A1001和v1.2不是数字", []),
    ("version 1.2.3", []),
    ("５千米", [5]),
    ("", []),
]


@pytest.mark.parametrize("text,expected", FINDS)
def test_find_numbers(text, expected):
    assert [value for _, _, value in find_numbers(text)] == expected


def test_find_numbers_spans_point_at_the_written_number():
    text = "请计算123456789 + 987654321，再减去一百二十三"
    assert [text[s:e] for s, e, _ in find_numbers(text)] == ["123456789", "987654321", "一百二十三"]


def test_find_numbers_keeps_ints_and_floats_apart():
    values = [v for _, _, v in find_numbers("3.0 and 3")]
    assert values == [3.0, 3] and isinstance(values[0], float) and isinstance(values[1], int)


# -----------------------------------------------------------------------------
# spell_number: the inverse of parse_number (practice-sloppy sends "一百二十三" instead of 123)

SPELLS = [
    (0, "零", "zero"), (7, "七", "seven"), (10, "十", "ten"), (12, "十二", "twelve"), (20, "二十", "twenty"),
    (21, "二十一", "twenty-one"), (110, "一百一十", "one hundred ten"), (123, "一百二十三", "one hundred twenty-three"),
    (102, "一百零二", "one hundred two"), (1020, "一千零二十", "one thousand twenty"),
    (2005, "二千零五", "two thousand five"), (10500, "一万零五百", "ten thousand five hundred"),
    (100005, "十万零五", "one hundred thousand five"), (120000000, "一亿二千万", "one hundred twenty million"),
    (-12, "负十二", "minus twelve"), (3.5, "三点五", "three point five"), (0.8, "零点八", "zero point eight"),
    (3.0, "三点零", "three point zero"), (-0.25, "负零点二五", "minus zero point two five"),
]


@pytest.mark.parametrize("value,zh,en", SPELLS)
def test_spell_number(value, zh, en):
    assert spell_number(value, "zh") == zh and spell_number(value, "en") == en


def test_spell_number_round_trips_through_parse_number():
    rng = random.Random(7)
    values = list(range(-1200, 3000)) + [10**k + d for k in range(1, 15) for d in (-1, 0, 1, 10, 100, 1000)]
    values += [rng.randrange(10**rng.randint(1, 15)) for _ in range(5000)]
    values += [1.5, -3.25, 0.05, 1e-7, 123.456, 100000.5, 2.0, -0.0, 99999999.99]
    for value in values:
        for language in ("zh", "en"):
            back = parse_number(spell_number(value, language))
            assert back == value and type(back) is type(value), (value, language, spell_number(value, language))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 10**15, -10**16, 1e20])
def test_spell_number_refuses_what_it_cannot_spell(value):
    with pytest.raises(ValueError):
        spell_number(value, "zh")


@pytest.mark.parametrize("value", [True, "12", None])
def test_spell_number_wants_a_number(value):
    with pytest.raises(TypeError):
        spell_number(value, "en")  # type: ignore[arg-type]


def test_every_number_found_is_what_parse_number_reads_of_its_span():
    text = "请计算１２３ + 4,567，minus three point five，一百零二、负3.5度和 twenty-one"
    found = find_numbers(text)
    assert [v for _, _, v in found] == [123, 4567, -3.5, 102, -3.5, 21]
    for start, end, value in found:
        written = text[start:end]
        assert parse_number(written) == value or parse_number(written.lstrip("负")) == -value


def test_a_long_run_of_number_words_is_read_in_bounded_pieces():
    words = " ".join(["one"] * 5000)                     # each 'one' is its own number: 'one one' is not 21
    assert [v for _, _, v in find_numbers(words)] == [1] * 5000
    longest = spell_number(10**15 - 1, "en").replace("hundred ", "hundred and ")
    assert len(longest.replace("-", " ").split()) <= MAX_NUMBER_WORDS
    assert [v for _, _, v in find_numbers(f"minus {longest} apples")] == [-(10**15 - 1)]


@pytest.mark.parametrize("text", [text for text, _ in PARSES] + REJECTS + [None, 12, "3万5千", "二零二四"])
def test_the_copy_reads_what_the_framework_reads(text):
    """numerals.py is a copy, not an import: when one of the two changes, this says so."""
    ours, theirs = parse_number(text), framework_numerals.parse_number(text)
    assert (ours, type(ours)) == (theirs, type(theirs))
