"""Number words: read "1,000", "一百二十三", "1.2万" or "one hundred and five" as numbers.

Two places need this. The framework's argument coercion turns a model's `{"a": "一百二十三"}`
back into `123` (the article's §4.1 pitfall), and the practice model reads the numbers out of a
learner's question ("A组本周新增客户35个，流失8个" -> 35, 8).

    parse_number(text)  a whole string that is one number -> int | float | None
    find_numbers(text)  numbers embedded in free text     -> [(start, end, value), ...]
    spell_number(value, language)  the inverse of parse_number: 123 -> "一百二十三" / "one hundred twenty-three"

Concessions, to stay small: no ordinals ("第三", "third"), fractions ("三分之一", "1/2"),
percentages or ranges; mixed forms like "3万5千" are read as two numbers; a run of Chinese
digits without units ("二零二四") is read digit by digit; in free text a lone "一"/"one" inside
common words ("一下", "统一", "which one") is not taken for a number.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

Number = int | float

# -----------------------------------------------------------------------------
# digits: "42", "-3.5", "1,000", full-width "１２３", "1.2万"

_WIDE = str.maketrans("０１２３４５６７８９．－＋−", "0123456789.-+-")
_DIGITS = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_SCALED = re.compile(r"([+-]?\d+(?:\.\d+)?)([万亿千百])")
# in free text: "35", "-12", "1,000", "3.5", "1.2万" (but not the 千 of 千米/千克)
_DIGITS_IN_TEXT = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[万亿]|[千百](?![米克瓦]))?")


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
_CN_RUN = re.compile(r"[负負]?[零〇一二两兩三四五六七八九十百千万亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟萬億]+"
                     r"(?:[点點][零〇一二三四五六七八九壹贰貳叁參肆伍陆陸柒捌玖]+)?")
# words that contain a numeral but are not numbers ("看一下", "统一", "万一")
_NOT_NUMBERS = {"一下", "一起", "一样", "一些", "一直", "一般", "一定", "一共", "一旦", "一切", "一边",
                "一致", "一会", "一点", "一向", "一同", "一律", "一再", "统一", "万一", "唯一", "之一"}


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
_EN_WORD = re.compile(r"[A-Za-z]+")
# 'which one', 'one of', 'no one' are not numbers
_ONE_IS_A_PRONOUN = {"which", "this", "that", "the", "each", "any", "every", "no", "some", "another", "only"}


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
# the public helpers

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


def find_numbers(text: str) -> list[tuple[int, int, Number]]:
    """Every number in free text as (start, end, value), in order of appearance.

    >>> [v for _, _, v in find_numbers("A组本周新增客户35个，流失8个")]
    [35, 8]
    >>> [v for _, _, v in find_numbers("123456789 + 987654321, minus three, 一百二十三加四百五十六")]
    [123456789, 987654321, -3, 123, 456]
    """
    if not isinstance(text, str):
        return []
    wide = text.translate(_WIDE)                          # same length, so offsets still match
    found: list[tuple[int, int, Number]] = []
    taken = bytearray(len(text))                          # 1 where a number was already found

    def add(start: int, end: int, value: Number | None) -> None:
        if value is not None and not any(taken[start:end]):
            found.append((start, end, value))
            taken[start:end] = b"\1" * (end - start)

    for m in _DIGITS_IN_TEXT.finditer(wide):
        start, end = m.span()
        before = wide[start - 1] if start else " "
        if wide[start] == "-" and before.isascii() and (before.isalnum() or before in ")"):
            start, before = start + 1, "-"                # '35-8': the dash is an operator
        if before.isascii() and (before.isalnum() or before in "_.") or re.match(r"\.\d", wide[end:end + 2]):
            continue                                      # part of 'A1001', 'v1.2' or '1.2.3'
        value = _digits(wide[start:end])
        if before in "负負" and value is not None and value >= 0:
            start, value = start - 1, -value              # '负3.5度'
        add(start, end, value)
    for m in _CN_RUN.finditer(wide):
        start, end = m.span()
        if end - start == 1 and (wide[max(start - 1, 0):end] in _NOT_NUMBERS or wide[start:end + 1] in _NOT_NUMBERS):
            continue
        add(start, end, _chinese(m.group()))
    words = list(_EN_WORD.finditer(wide))
    lower = [w.group().lower() for w in words]
    i = 0
    while i < len(words):
        if lower[i] not in _EN_WORDS:
            i += 1
            continue
        j = i + 1                                         # number words joined by spaces or '-'
        while (j < len(words) and lower[j] in _EN_WORDS
               and wide[words[j - 1].end():words[j].start()].strip() in ("", "-")):
            j += 1
        lowered = lower[i:j]
        hit = _english_prefix(lowered)
        if hit and lowered[:hit[1]] == ["one"]:
            before = lower[i - 1] if i else ""
            after = lower[i + 1] if i + 1 < len(lower) else ""
            hit = None if before in _ONE_IS_A_PRONOUN or after == "of" else hit
        if hit:
            add(words[i].start(), words[i + hit[1] - 1].end(), hit[0])
            i += hit[1]
        else:
            i += 1
    return sorted(found)


# -----------------------------------------------------------------------------
# spelling numbers out (what `practice-sloppy` sends instead of 123): the inverse of parse_number

_SPELL_LIMIT = 10**15                                    # below a thousand trillion / 千万亿
_ZH_DIGITS = "零一二三四五六七八九"
_EN_ONES = [*_EN_UNITS, *_EN_TEENS]                     # 'zero' ... 'nineteen', in order
_EN_TEN_WORDS = {v // 10: w for w, v in _EN_TENS.items()}


def _zh_section(n: int, leading: bool) -> str:
    """0 < n < 10000 with 千百十 and the zeros between: 1020 -> '一千零二十', 12 -> '十二' when leading."""
    out, zero = "", False
    for unit, char in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // unit % 10
        if digit == 0:
            zero = zero or bool(out)
            continue
        if zero:
            out, zero = out + "零", False
        out += ("" if unit == 10 and digit == 1 and leading and not out else _ZH_DIGITS[digit]) + char
    return out


def _zh_int(n: int, leading: bool = True) -> str:
    """A non-negative integer in Chinese numerals: 100005 -> '十万零五'."""
    if n == 0:
        return "零"
    for size, char in ((10**8, "亿"), (10**4, "万")):
        if n >= size:
            high, low = divmod(n, size)
            tail = "" if low == 0 else ("零" if low < size // 10 else "") + _zh_int(low, leading=False)
            return _zh_int(high, leading) + char + tail
    return _zh_section(n, leading)


def _en_int(n: int) -> str:
    """A non-negative integer in English words, without 'and': 123 -> 'one hundred twenty-three'."""
    if n < 20:
        return _EN_ONES[n]
    if n < 100:
        return _EN_TEN_WORDS[n // 10] + (f"-{_EN_ONES[n % 10]}" if n % 10 else "")
    if n < 1000:
        return f"{_EN_ONES[n // 100]} hundred" + (f" {_en_int(n % 100)}" if n % 100 else "")
    for word, size in sorted(_EN_SCALES.items(), key=lambda item: -item[1]):
        if n >= size:
            high, low = divmod(n, size)
            return f"{_en_int(high)} {word}" + (f" {_en_int(low)}" if low else "")
    raise AssertionError("unreachable")


def spell_number(value: Number, language: str = "en") -> str:
    """A number in words, Chinese ('zh') or English (anything else); `parse_number` reads it back.

    Decimals are spelled digit by digit after the point; magnitudes up to 10**15 are supported.

    >>> spell_number(123, "zh"), spell_number(123, "en")
    ('一百二十三', 'one hundred twenty-three')
    >>> spell_number(-3.5, "zh"), spell_number(0.8, "en"), spell_number(10500, "zh")
    ('负三点五', 'zero point eight', '一万零五百')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"spell_number needs an int or a float, not {type(value).__name__}")
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) >= _SPELL_LIMIT:
        raise ValueError(f"cannot spell {value!r}: only finite numbers below {_SPELL_LIMIT:.0e}")
    zh = language.lower().startswith("zh")
    whole, _, fraction = format(Decimal(repr(abs(value))), "f").partition(".")
    words = _zh_int(int(whole)) if zh else _en_int(int(whole))
    if isinstance(value, float):                          # digit by digit after the point: 3.14 -> 三点一四
        digits = [int(d) for d in fraction or "0"]
        words += ("点" + "".join(_ZH_DIGITS[d] for d in digits)) if zh else (
            " point " + " ".join(_EN_ONES[d] for d in digits))
    if value < 0:
        words = ("负" if zh else "minus ") + words
    return words
