"""Numbers in a learner's question, and numbers spelled out: the practice model's side of number words.

    find_numbers(text)             numbers embedded in free text -> [(start, end, value), ...]
    spell_number(value, language)  123 -> "一百二十三" / "one hundred twenty-three" (what practice-sloppy sends)

Both stand on `parse_number` (`numerals.py`, the practice package's own copy of the framework's
parser): `find_numbers` only decides *where* a number is written and lets `parse_number` say
*what* it is, and `spell_number` is tested to be its exact inverse.

Concessions: the English vocabulary below repeats the words `parse_number` knows (its tables are
private); a run of number words longer than `MAX_NUMBER_WORDS` is read from its first
`MAX_NUMBER_WORDS` words; in free text a lone "一"/"one" inside common words ("一下", "统一",
"which one") is not taken for a number.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal

from .numerals import parse_number

Number = int | float
MAX_NUMBER_WORDS = 32   # longest run of English number words tried (10**15 - 1 needs about 30)

# -----------------------------------------------------------------------------
# the words, in order: spell_number indexes into them, find_numbers knows a number word by them

EN_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
           "sixteen seventeen eighteen nineteen").split()
EN_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
EN_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (10**3, "thousand"))
_EN_NUMBER_WORDS = frozenset([*EN_ONES, *EN_TENS.values(), *(w for _, w in EN_SCALES),
                              "hundred", "dozen", "and", "point", "minus", "negative", "a"])
ZH_DIGITS = "零一二三四五六七八九"

# -----------------------------------------------------------------------------
# finding numbers in free text

_WIDE = str.maketrans("０１２３４５６７８９．－＋−", "0123456789.-+-")       # same length: offsets survive
# "35", "-12", "1,000", "3.5", "1.2万" (but not the 千 of 千米/千克)
_DIGITS_IN_TEXT = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[万亿]|[千百](?![米克瓦]))?")
_CN_RUN = re.compile(r"[负負]?[零〇一二两兩三四五六七八九十百千万亿壹贰貳叁參肆伍陆陸柒捌玖拾佰仟萬億]+"
                     r"(?:[点點][零〇一二三四五六七八九壹贰貳叁參肆伍陆陸柒捌玖]+)?")
_EN_WORD = re.compile(r"[A-Za-z]+")
# words that contain a numeral but are not numbers ("看一下", "统一", "万一")
_NOT_NUMBERS = {"一下", "一起", "一样", "一些", "一直", "一般", "一定", "一共", "一旦", "一切", "一边",
                "一致", "一会", "一点", "一向", "一同", "一律", "一再", "统一", "万一", "唯一", "之一"}
# 'which one', 'one of', 'no one' are not numbers
_ONE_IS_A_PRONOUN = {"which", "this", "that", "the", "each", "any", "every", "no", "some", "another", "only"}


def _longest_number(words: list[str]) -> tuple[Number, int] | None:
    """The longest leading run of number words that `parse_number` reads, and how many words it took.

    Longer and longer prefixes are tried; a number can go on after at most two words that do not
    yet make one ('minus a' hundred, 'one hundred and' five, 'three point' five), so three misses
    in a row end the search.

    >>> _longest_number(["one", "hundred", "and", "five", "apples"]), _longest_number(["and"])
    ((105, 4), None)
    """
    best: tuple[Number, int] | None = None
    misses = 0
    for size in range(1, min(len(words), MAX_NUMBER_WORDS) + 1):
        value = parse_number(" ".join(words[:size]))
        if value is None:
            misses += 1
            if misses == 3:
                break
        else:
            best, misses = (value, size), 0
    return best


def find_numbers(text: str) -> list[tuple[int, int, Number]]:
    """Every number in free text as (start, end, value), in order of appearance.

    >>> [v for _, _, v in find_numbers("A组本周新增客户35个，流失8个")]
    [35, 8]
    >>> [v for _, _, v in find_numbers("123456789 + 987654321, minus three, 一百二十三加四百五十六")]
    [123456789, 987654321, -3, 123, 456]
    """
    if not isinstance(text, str):
        return []
    wide = text.translate(_WIDE)
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
        value = parse_number(wide[start:end])
        if before in "负負" and value is not None and value >= 0:
            start, value = start - 1, -value              # '负3.5度'
        add(start, end, value)
    for m in _CN_RUN.finditer(wide):
        start, end = m.span()
        if end - start == 1 and (wide[max(start - 1, 0):end] in _NOT_NUMBERS or wide[start:end + 1] in _NOT_NUMBERS):
            continue
        add(start, end, parse_number(m.group()))
    words = list(_EN_WORD.finditer(wide))
    lower = [w.group().lower() for w in words]
    i = 0
    while i < len(words):
        if lower[i] not in _EN_NUMBER_WORDS:
            i += 1
            continue
        j = i + 1                                         # number words joined by spaces or '-'
        while (j < len(words) and j - i < MAX_NUMBER_WORDS and lower[j] in _EN_NUMBER_WORDS
               and wide[words[j - 1].end():words[j].start()].strip() in ("", "-")):
            j += 1
        hit = _longest_number(lower[i:j])
        if hit and hit[1] == 1 and lower[i] == "one":
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
# spelling numbers out: the inverse of parse_number

SPELL_LIMIT = 10**15                                     # below a thousand trillion / 千万亿


def _zh_section(n: int, leading: bool) -> str:
    """0 < n < 10000 with 千百十 and the zeros between.

    >>> _zh_section(1020, True), _zh_section(12, True), _zh_section(12, False)
    ('一千零二十', '十二', '一十二')
    """
    out, zero = "", False
    for unit, char in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = n // unit % 10
        if digit == 0:
            zero = zero or bool(out)
            continue
        if zero:
            out, zero = out + "零", False
        out += ("" if unit == 10 and digit == 1 and leading and not out else ZH_DIGITS[digit]) + char
    return out


def _zh_int(n: int, leading: bool = True) -> str:
    """A non-negative integer in Chinese numerals.

    >>> _zh_int(100005), _zh_int(0)
    ('十万零五', '零')
    """
    if n == 0:
        return "零"
    for size, char in ((10**8, "亿"), (10**4, "万")):
        if n >= size:
            high, low = divmod(n, size)
            tail = "" if low == 0 else ("零" if low < size // 10 else "") + _zh_int(low, leading=False)
            return _zh_int(high, leading) + char + tail
    return _zh_section(n, leading)


def _en_int(n: int) -> str:
    """A non-negative integer in English words, without 'and'.

    >>> _en_int(123), _en_int(2_000_005)
    ('one hundred twenty-three', 'two million five')
    """
    if n < 20:
        return EN_ONES[n]
    if n < 100:
        return EN_TENS[n // 10] + (f"-{EN_ONES[n % 10]}" if n % 10 else "")
    if n < 1000:
        return f"{EN_ONES[n // 100]} hundred" + (f" {_en_int(n % 100)}" if n % 100 else "")
    size, word = next((size, word) for size, word in EN_SCALES if n >= size)
    high, low = divmod(n, size)
    return f"{_en_int(high)} {word}" + (f" {_en_int(low)}" if low else "")


def spell_number(value: Number, language: str = "en") -> str:
    """A number in words, Chinese ('zh') or English (anything else); `parse_number` reads it back.

    Decimals are spelled digit by digit after the point; magnitudes below `SPELL_LIMIT` are supported.

    >>> spell_number(123, "zh"), spell_number(123, "en")
    ('一百二十三', 'one hundred twenty-three')
    >>> spell_number(-3.5, "zh"), spell_number(0.8, "en"), spell_number(10500, "zh")
    ('负三点五', 'zero point eight', '一万零五百')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"spell_number needs an int or a float, not {type(value).__name__}")
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) >= SPELL_LIMIT:
        raise ValueError(f"cannot spell {value!r}: only finite numbers below {SPELL_LIMIT:.0e}")
    zh = language.lower().startswith("zh")
    whole, _, fraction = format(Decimal(repr(abs(value))), "f").partition(".")
    words = _zh_int(int(whole)) if zh else _en_int(int(whole))
    if isinstance(value, float):                          # digit by digit after the point: 3.14 -> 三点一四
        digits = [int(d) for d in fraction or "0"]
        words += ("点" + "".join(ZH_DIGITS[d] for d in digits)) if zh else (
            " point " + " ".join(EN_ONES[d] for d in digits))
    if value < 0:
        words = ("负" if zh else "minus ") + words
    return words
