"""Number words: read "1,000", "一百二十三", "1.2万" or "one hundred and five" as numbers.

Two places need this. The framework's argument coercion turns a model's `{"a": "一百二十三"}`
back into `123` (lesson 04), and the practice model reads the numbers out of a
learner's question ("A组本周新增客户35个，流失8个" -> 35, 8) with its own copy of this parser
(`practice_model/numerals.py`: the test double shares no code with what it tests).

    parse_number(text)  a whole string that is one number -> int | float | None

Concessions, to stay small: no ordinals ("第三", "third"), fractions ("三分之一", "1/2"),
percentages or ranges; mixed forms like "3万5千" are read as two numbers; a run of Chinese
digits without units ("二零二四") is read digit by digit.
"""
from __future__ import annotations

import re
from decimal import Decimal

Number = int | float

# -----------------------------------------------------------------------------
# digits: "42", "-3.5", "1,000", full-width "１２３", "1.2万"

_WIDE = str.maketrans("０１２３４５６７８９．－＋−", "0123456789.-+-")
_DIGITS = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_SCALED = re.compile(r"([+-]?\d+(?:\.\d+)?)([万亿千百])")


def _digits(text: str) -> Number | None:
    """A whole string written with digits, or None: '1,000' -> 1000, '3.0' -> 3.0."""
    if _DIGITS.fullmatch(text):
        plain = text.replace(",", "")
        return float(plain) if any(c in plain for c in ".eE") else int(plain)
    m = _SCALED.fullmatch(text)
    if m:
        return _exact(Decimal(m.group(1)) * _CN_UNITS[m.group(2)])
    return None


def _exact(value: Decimal) -> Number:
    """An int when the value is whole, else a float: Decimal('12000.0') -> 12000."""
    return int(value) if value == value.to_integral_value() else float(value)


# -----------------------------------------------------------------------------
# Chinese: "一百二十三", "两千零五", "一万二", "三点五", "负十二", "壹佰", "二〇二四"

_CN_FORMAL = str.maketrans("壹貳贰參叁肆伍陸陆柒捌玖拾佰仟萬億兩點負〇", "一二二三三四五六六七八九十百千万亿两点负零")
_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10**4, "亿": 10**8}
_CN_NUMBER = re.compile(r"(负)?([零一二两三四五六七八九十百千万亿]+)(?:点([零一二两三四五六七八九]+))?([万亿])?")


def _section(text: str) -> int | None:
    """A number below 10000 written with 千/百/十: '三百零五' -> 305, '一百二' -> 120."""
    value, digit, last_unit, zero_seen, seen = 0, None, 10**4, False, False
    for ch in text:
        if ch in _CN_DIGITS:
            if digit is not None:
                return None                     # two digits in a row need a unit between them
            seen = True
            if _CN_DIGITS[ch] == 0:
                zero_seen = True
            else:
                digit = _CN_DIGITS[ch]
        elif ch in _CN_SMALL:
            unit = _CN_SMALL[ch]
            if unit >= last_unit or (digit is None and unit != 10):
                return None                     # '百千' or a bare '百'
            value += (1 if digit is None else digit) * unit
            digit, last_unit, zero_seen, seen = None, unit, False, True
        else:
            return None
    if not seen:
        return None
    if digit is not None:
        # '一百二' means 120: a trailing digit counts in the next smaller unit, unless after a 零
        value += digit if zero_seen or last_unit == 10**4 else digit * last_unit // 10
    return value


def _chinese_int(text: str) -> int | None:
    """A whole Chinese integer: '一万二' -> 12000, '两千零五' -> 2005, '二〇二四' -> 2024."""
    if len(text) > 1 and all(ch in _CN_DIGITS for ch in text):
        return int("".join(str(_CN_DIGITS[ch]) for ch in text))      # read digit by digit
    for char, size in (("亿", 10**8), ("万", 10**4)):
        if char in text:
            head, _, tail = text.partition(char)
            high = _chinese_int(head)
            if not high:
                return None                     # '万' alone, '零万'
            if not tail:
                return high * size
            if len(tail) == 1 and _CN_DIGITS.get(tail):
                return high * size + _CN_DIGITS[tail] * size // 10    # '一万二' = 12000
            low = _chinese_int(tail)
            return None if low is None or low >= size else high * size + low
    return _section(text)


def _chinese(text: str) -> Number | None:
    """A whole string of Chinese numerals: '负三点五' -> -3.5, '一点二万' -> 12000."""
    m = _CN_NUMBER.fullmatch(text.translate(_CN_FORMAL))
    if not m:
        return None
    sign, whole, fraction, unit = m.groups()
    integer = _chinese_int(whole)
    if integer is None or (unit and not fraction):
        return None                             # a trailing 万 without 点 is part of `whole`
    value: Number = integer
    if fraction:
        decimal = Decimal(f"{integer}.{''.join(str(_CN_DIGITS[c]) for c in fraction)}")
        value = _exact(decimal * _CN_UNITS[unit]) if unit else float(decimal)
    return -value if sign else value


# -----------------------------------------------------------------------------
# English: "twelve", "one hundred and five", "minus three", "three point five", "a dozen"

_EN_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine".split())}
_EN_TEENS = {w: i + 10 for i, w in enumerate(
    "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_EN_TENS = {w: (i + 2) * 10 for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_EN_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_EN_WORDS = set(_EN_UNITS) | set(_EN_TEENS) | set(_EN_TENS) | set(_EN_SCALES) | {
    "hundred", "dozen", "and", "point", "minus", "negative", "a"}


def _english_prefix(words: list[str]) -> tuple[Number, int] | None:
    """The longest number at the start of lowercase words: ['two', 'and'] -> (2, 1)."""
    i, sign, total, group, last, limit = 0, 1, 0, 0, "", 10**15
    best: tuple[Number, int] | None = None
    if words and words[0] in ("minus", "negative"):
        i, sign = 1, -1
    if i + 1 < len(words) and words[i] == "a" and words[i + 1] in ("hundred", "dozen", *_EN_SCALES):
        i, group, last = i + 1, 1, "unit"
    while i < len(words):
        w = words[i]
        if w in _EN_UNITS and last in ("", "tens", "hundred", "scale", "and") and (w != "zero" or not last):
            group, last = group + _EN_UNITS[w], "unit"
        elif w in _EN_TEENS and last in ("", "hundred", "scale", "and"):
            group, last = group + _EN_TEENS[w], "teen"
        elif w in _EN_TENS and last in ("", "hundred", "scale", "and"):
            group, last = group + _EN_TENS[w], "tens"
        elif w == "hundred" and last in ("unit", "teen", "tens") and group < 100:
            group, last = group * 100, "hundred"
        elif w == "dozen" and last == "unit" and group < 10:
            group, last = group * 12, "dozen"
        elif w in _EN_SCALES and last in ("unit", "teen", "tens", "hundred", "dozen") and _EN_SCALES[w] < limit:
            total, group, limit, last = total + group * _EN_SCALES[w], 0, _EN_SCALES[w], "scale"
        elif w == "and" and last in ("hundred", "scale"):
            last, i = "and", i + 1
            continue                                    # 'and' must be followed by more number
        elif w == "point" and last in ("unit", "teen", "tens", "hundred", "scale"):
            digits = [str(_EN_UNITS[d]) for d in _takewhile_units(words[i + 1:])]
            if digits:
                return sign * float(f"{total + group}.{''.join(digits)}"), i + 1 + len(digits)
            break
        else:
            break
        i += 1
        best = (sign * (total + group), i)
    return best


def _takewhile_units(words: list[str]) -> list[str]:
    """The leading words that are single digits: ['one', 'four', 'x'] -> ['one', 'four']."""
    out = []
    for w in words:
        if w not in _EN_UNITS:
            break
        out.append(w)
    return out


def _english(text: str) -> Number | None:
    """A whole string of English number words: 'one hundred and five' -> 105."""
    words = [w for w in re.split(r"[\s\-]+", text.lower()) if w]
    if not words or any(w not in _EN_WORDS for w in words):
        return None
    found = _english_prefix(words)
    return found[0] if found and found[1] == len(words) else None


# -----------------------------------------------------------------------------
# the public helper

def parse_number(text: str) -> Number | None:
    """The number a whole string spells, in digits, Chinese or English words; else None.

    >>> parse_number("1,000"), parse_number("一百二十三"), parse_number("1.2万"), parse_number("twelve")
    (1000, 123, 12000, 12)
    >>> parse_number("12abc") is None, parse_number("3.0"), parse_number("负3.5")
    (True, 3.0, -3.5)
    """
    if not isinstance(text, str):
        return None
    text = text.strip().translate(_WIDE)
    if not text:
        return None
    for reader in (_digits, _chinese, _english):
        value = reader(text)
        if value is not None:
            return value
    if text[0] in "负負" and (value := _digits(text[1:].strip())) is not None and value >= 0:
        return -value                                     # '负3.5': a Chinese sign on digits
    return None
