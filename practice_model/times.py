"""Times of day in a request, in 中文 and English, and which place's time each one is.

    clocks(text)                 -> [(start, end, 'HH:MM')]   '下午4点半' 16:30, '4:30 pm' 16:30, '九点一刻' 09:15,
                                                             '16:30', 'quarter past 9', 'noon'
    clock_roles(text, clocks, places) -> ['from' | 'to' | '']  whose time is given ('北京时间下午4点半',
                                                             'when it is 9:15 in London') and whose is asked
                                                             ('是东京几点', 'what time is it in New York')
    TIME_ZONE                    an IANA zone name written out ('Asia/Tokyo') or UTC / GMT

`language.extract_entities` turns each time into a 'clock' entity (its value 'HH:MM', 24-hour) and,
when a request holds one, gives the places around it these roles, so a tool's `source_timezone` and
`target_timezone` are filled as the sentence means them (`filling`, `zones`).

A time written with 点 is also how Chinese writes a decimal ('三点五' is 3.5) and a small amount ('便宜一点'):
such a form counts as a time only with a word that makes it one (上午/下午/…, 半, 一刻, N分, 钟, 整), or
when the request is about time at all (几点, 时间, 时区, 'time'); otherwise it stays a number.

Concessions: a time is hours and minutes (seconds are dropped); '4点' with no 上午/下午 is 04:00, as
written; roles come from a handful of cue words around the places, and with two places and no cue, the one
written next to the time is the one whose time it is.
"""
from __future__ import annotations

import re

from .numerals import parse_number

_CN_NUM = "[零〇一二两三四五六七八九十]{1,3}"
_PERIODS = "凌晨|清晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间|半夜"
_DAY_PERIODS = ("今晚", "明晚", "今早", "明早")   # dates too ('今晚8点'): read before a time, never part of it
_ZH_CLOCK = re.compile(
    rf"(?:(?P<period>{_PERIODS})\s*)?(?:(?P<h>\d{{1,2}})|(?P<hz>{_CN_NUM}))\s*(?:点|時|时(?![间候区差刻代期段长]))"
    rf"(?:\s*(?P<m>半|[一三1３3]刻|整|钟|过?(?:(?P<md>\d{{1,2}})|(?P<mz>{_CN_NUM}))(?P<unit>分钟|分)?))?")
_COLON_CLOCK = re.compile(
    rf"(?:(?P<period>{_PERIODS})\s*)?(?<![\d:.：])(?P<h>[01]?\d|2[0-4])[:：](?P<m>[0-5]\d)(?![\d:：])"
    r"(?:\s*(?P<ap>[ap])\.?m\b\.?)?", re.IGNORECASE)
_EN_CLOCK = re.compile(
    r"(?<![\d:.])(?P<h>1[0-2]|0?[1-9])(?:\s*(?P<ap>[ap])\.?m\b\.?|\s*o'?clock\b)"
    r"|\b(?P<part>half|(?:a )?quarter|\d{1,2} minutes?) (?P<rel>past|after|to) (?P<ph>1[0-2]|0?[1-9])\b"
    r"(?:\s*(?P<pap>[ap])\.?m\b\.?)?"
    r"|\b(?P<word>noon|midday|midnight)\b", re.IGNORECASE)
TIME_ZONE = re.compile(r"(?<![A-Za-z/])(?:(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific)"
                       r"/[A-Z][A-Za-z_-]+(?:/[A-Z][A-Za-z_-]+)?|UTC|GMT)(?![A-Za-z/])")
_ABOUT_TIME = re.compile(r"(?i)几点|几时|时间|时区|时差|点钟|\btime\b|\bclock\b|\btimezone")
_EVENING = ("下午", "傍晚", "晚上", "夜里", "夜间", "今晚", "明晚")
_NIGHT = ("晚上", "夜里", "夜间", "半夜", "凌晨", "今晚", "明晚")


def _hhmm(hour: int, minute: int) -> str | None:
    """'HH:MM', or None when it is no time of day (24:00 is midnight)."""
    if hour == 24 and minute == 0:
        hour = 0
    return f"{hour:02d}:{minute:02d}" if 0 <= hour <= 23 and 0 <= minute <= 59 else None


def _with_period(hour: int, period: str) -> int:
    """The 24-hour hour of '下午4点' (16), '晚上12点' (0), '中午1点' (13), '上午10点' (10)."""
    if period in _EVENING and 1 <= hour < 12 and not (period in _NIGHT and hour < 5):
        return hour + 12
    if period == "中午" and 1 <= hour <= 3:
        return hour + 12
    if period in _NIGHT and hour == 12:
        return 0
    return hour


def _with_ap(hour: int, ap: str | None) -> int | None:
    """The 24-hour hour of '4 pm' (16), '12 am' (0); None for '13 pm'."""
    if not ap:
        return hour
    if not 1 <= hour <= 12:
        return None
    return hour % 12 + (12 if ap.lower() == "p" else 0)


def _period_before(text: str, start: int) -> str:
    """A period word written just before a time but taken by another entity ('今晚8点': 今晚 is a date)."""
    before = text[max(0, start - 3):start].strip()
    return next((p for p in (*_PERIODS.split("|"), *_DAY_PERIODS) if before.endswith(p)), "")


def _zh_clock(m: re.Match, text: str, about_time: bool) -> str | None:
    """The 'HH:MM' of a Chinese time, or None when it is not one ('三点五' is a number, '便宜一点' an amount)."""
    hour = int(m["h"]) if m["h"] else parse_number(m["hz"])
    period = m["period"] or _period_before(text, m.start())
    minutes = m["m"] or ""
    marked = bool(period) or bool(m["unit"]) or minutes[:1] in ("半", "整", "钟") or minutes.endswith("刻")
    if not isinstance(hour, int) or not (marked or about_time):
        return None
    if not marked and m["hz"] and hour == 1 and not minutes:
        return None                                 # '一点' alone is 'a little' far more often than 1 o'clock
    if minutes == "半":
        minute = 30
    elif minutes.endswith("刻"):
        minute = 15 if minutes[0] in "一1" else 45
    elif m["md"] or m["mz"]:
        value = int(m["md"]) if m["md"] else parse_number(m["mz"])
        if not isinstance(value, int) or (not m["unit"] and not m["md"] and value < 10 and not m["mz"].startswith(
                ("零", "〇"))):
            return None                             # '三点五' is 3.5; '三点零五' and '三点五分' are times
        minute = value
    else:
        minute = 0
    return _hhmm(_with_period(hour, period), minute)


def _en_clock(m: re.Match) -> str | None:
    """The 'HH:MM' of '4 pm', "9 o'clock", 'half past 9', 'quarter to 10 pm', 'noon'."""
    if m["word"]:
        return "00:00" if m["word"].lower() == "midnight" else "12:00"
    if m["h"]:
        hour = _with_ap(int(m["h"]), m["ap"])
        return None if hour is None else _hhmm(hour, 0)
    part = m["part"].lower()
    minutes = 30 if part == "half" else 15 if "quarter" in part else int(part.split()[0])
    hour = _with_ap(int(m["ph"]), m["pap"])
    if hour is None or not 0 < minutes < 60:
        return None
    if m["rel"].lower() == "to":
        hour, minutes = hour - 1, 60 - minutes
    return _hhmm(hour % 24, minutes)


def clocks(text: str) -> list[tuple[int, int, str]]:
    """Every time of day in a text as (start, end, 'HH:MM'), in order; the first form found wins an overlap.

    >>> [c for _, _, c in clocks("北京时间下午4点半是东京几点？九点一刻呢？晚上10:05 呢？")]
    ['16:30', '09:15', '22:05']
    >>> [c for _, _, c in clocks("at 4:30 pm, 9 am, 12 am, half past 9, a quarter to 10, noon, 21:45")]
    ['16:30', '09:00', '00:00', '09:30', '09:45', '12:00', '21:45']
    >>> clocks("三点五乘以二"), clocks("便宜一点"), [c for _, _, c in clocks("东京三点五十是几点")]
    ([], [], ['03:50'])
    """
    found: list[tuple[int, int, str]] = []
    taken = bytearray(len(text))
    about_time = bool(_ABOUT_TIME.search(text))

    def add(start: int, end: int, value: str | None) -> None:
        while end > start and text[end - 1].isspace():
            end -= 1
        while start < end and text[start].isspace():
            start += 1
        if value and not any(taken[start:end]):
            found.append((start, end, value))
            taken[start:end] = b"\1" * (end - start)

    for m in _COLON_CLOCK.finditer(text):
        hour = _with_ap(int(m["h"]), m["ap"])
        if hour is not None and m["period"]:
            hour = _with_period(hour, m["period"])
        add(m.start(), m.end(), None if hour is None else _hhmm(hour, int(m["m"])))
    for m in _ZH_CLOCK.finditer(text):
        add(m.start(), m.end(), _zh_clock(m, text, about_time))
    for m in _EN_CLOCK.finditer(text):
        add(m.start(), m.end(), _en_clock(m))
    return sorted(found)


# -----------------------------------------------------------------------------
# whose time: the places around a time of day

_ZH_ASKED_AFTER = re.compile(r"^\s*(?:的)?(?:当地)?(?:时间)?\s*(?:现在)?\s*(?:是|为)?\s*"
                             r"(?:几点|几时|什么时间|什么时候|多少点)")
_ZH_GIVEN_AFTER = re.compile(r"^\s*(?:的)?(?:当地)?时间")
_ZH_TO_BEFORE = re.compile(r"(?:换算成|换算为|换成|转成|转换成|转换为|转为|折合成?|到)\s*$")
_ZH_FROM_BEFORE = re.compile(r"(?:从|由)\s*$")
_ZH_THEN_BEFORE = re.compile(r"(?:是|在|对应|等于)\s*$")     # after the time: '下午3点是东京…', weaker
_EN_GIVEN_BEFORE = re.compile(r"(?i)\b(?:when|if|while|once)\s+(?:it\s+is|it's|its|it\s+was|it\s+will\s+be)\b"
                              r"[^,.;?!]{0,24}?\b(?:in|at)\s+(?:the\s+)?$|\bfrom\s+$")
_EN_ASKED_BEFORE = re.compile(r"(?i)\bwhat\s+time\s+(?:is\s+it|will\s+it\s+be|would\s+it\s+be|is\s+that|is\s+this|"
                              r"it\s+is|it's)?\s*(?:in|at)\s+(?:the\s+)?$|\b(?:to|into)\s+(?:the\s+)?$")
_EN_GIVEN_AFTER = re.compile(r"(?i)^\s+(?:local\s+)?time\b(?!\s+(?:is|will|would)\s+it)")
_AND = re.compile(r"(?i)\s*(?:和|与|跟|及|以及|、|,|，|and|or|或)\s*")
_NEAR = 3               # characters between a place and a time that still make them one phrase ('北京 下午4点')


def _strong_role(text: str, start: int, end: int) -> str:
    """The role explicit cue words give a place: 'to' (its time is asked: '是东京几点', 'what time is it in',
    '换算成'), 'from' (its time is given: '北京时间', 'when it is 9:15 in', '从'), or ''."""
    before, after = text[max(0, start - 40):start], text[end:end + 16]
    if _ZH_ASKED_AFTER.match(after) or _EN_ASKED_BEFORE.search(before) or _ZH_TO_BEFORE.search(before[-6:]):
        return "to"
    if (_ZH_GIVEN_AFTER.match(after) or _EN_GIVEN_BEFORE.search(before) or _ZH_FROM_BEFORE.search(before[-4:])
            or _EN_GIVEN_AFTER.match(after)):
        return "from"
    return ""


def _complete(roles: list[str]) -> list[str]:
    """The other ends: with the given place known, every other place is asked about; with only asked ones known,
    the one place left is the given one."""
    if "from" in roles and "to" not in roles:
        return [r or "to" for r in roles]
    if "to" in roles and "from" not in roles and roles.count("") == 1:
        return [r or "from" for r in roles]
    return roles


def _joined(text: str, places: list[tuple[int, int]], roles: list[str]) -> list[str]:
    """A place joined to another by 和 / 、 / 'and' shares its role ('东京和纽约几点': both are asked about)."""
    roles = list(roles)
    for _ in range(2):                                  # forwards and backwards through a list of places
        for i in range(len(places) - 1):
            if _AND.fullmatch(text[places[i][1]:places[i + 1][0]]) and bool(roles[i]) != bool(roles[i + 1]):
                roles[i] = roles[i + 1] = roles[i] or roles[i + 1]
    return roles


def clock_roles(text: str, times: list[tuple[int, int]], places: list[tuple[int, int]]) -> list[str]:
    """For each place (start, end) in a text that holds a time of day: 'from' when the time given is that
    place's, 'to' when the place's time is asked, '' when nothing tells.

    >>> text = "北京时间下午4点半是东京几点？"
    >>> clock_roles(text, [(4, 9)], [(0, 2), (10, 12)])
    ['from', 'to']
    >>> text = "What time is 9:15 in New York when it is that time in London?"
    >>> clock_roles(text, [(13, 17)], [(21, 29), (54, 60)])
    ['to', 'from']
    >>> text = "9:15 in London is what time in New York?"
    >>> clock_roles(text, [(0, 4)], [(8, 14), (31, 39)])
    ['from', 'to']
    """
    if not times:
        return [""] * len(places)
    roles = _complete(_joined(text, places, [_strong_role(text, s, e) for s, e in places]))
    for i, (s, _) in enumerate(places):                      # '下午3点是东京…': weaker, and never twice
        if not roles[i] and any(t_end <= s for _, t_end in times) and _ZH_THEN_BEFORE.search(text[max(0, s - 4):s]):
            roles[i] = "" if "to" in roles else "to"
    roles = _complete(roles)
    if roles and not any(roles):
        def next_to_time(s: int, e: int) -> bool:
            return any(0 <= t_start - e <= _NEAR or (0 <= s - t_end <= _NEAR + 3 and text[t_end:s].strip().lower()
                                                     in ("", "in", "at", "的")) for t_start, t_end in times)
        near = [next_to_time(s, e) for s, e in places]
        if len(places) == 2 and near.count(True) == 1:
            roles = ["from" if n else "to" for n in near]
        elif len(places) == 1:
            roles = ["from" if near[0] else "to"]
    return roles
