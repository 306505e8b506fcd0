"""Time zones for the practice model: a city's IANA zone, a zone's city, and a result about times said plainly.

    zone_of('东京') -> 'Asia/Tokyo'          the gazetteer's cities (`language.CITY_NAMES`), either spelling;
                                             an IANA name or UTC as written stays itself
    place_name(zone, zh, mentioned)         what to call a zone in an answer: the city the user named for it,
                                             else the table's first city ('Asia/Shanghai' -> 北京 / Beijing)
    time_answer(result, reading)            '北京时间 16:30 是东京时间 17:30（东京比北京快 1 小时）。' for a
                                             result holding two zoned times (a conversion), '伦敦现在是 06:58。'
                                             for one; None for any other result

A tool is recognised by its schema and its result, never its name: a parameter described as an IANA time
zone (`filling.param_kind` 'timezone') gets `zone_of` of the place the request names, and a result is
about times when it holds an ISO date-time next to a zone name (`{"timezone": ..., "datetime": ...}`,
as the reference MCP time server returns, nested under `source`/`target` for a conversion).

An answer says times and the difference only, never the date or the weekday: they change every day, and
what a notebook shows must not (a change of day is said as 次日 / 前一天, 'the next day').

Concessions: one zone per city (the country's, for China's cities Beijing time, as the law sets it); a
zone the table does not know is said by its IANA name; UTC offsets ('UTC+8') are not read.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from .language import CITY_NAMES, Reading, has_cjk
from .times import TIME_ZONE

_ZONES = """
Asia/Shanghai: 北京 上海 广州 深圳 杭州 南京 苏州 成都 重庆 武汉 西安 天津 长沙 郑州 青岛 厦门 济南 沈阳
               大连 哈尔滨 长春 合肥 福州 南昌 昆明 贵阳 南宁 海口 三亚 拉萨 乌鲁木齐 兰州 西宁 银川 呼和浩特
               太原 石家庄 宁波 无锡 东莞 佛山 珠海 桂林 丽江
Asia/Hong_Kong: 香港
Asia/Macau: 澳门
Asia/Taipei: 台北
Asia/Tokyo: 东京 大阪 京都
Asia/Seoul: 首尔 釜山
Asia/Singapore: 新加坡
Asia/Bangkok: 曼谷
Asia/Kuala_Lumpur: 吉隆坡
Asia/Ho_Chi_Minh: 河内
Asia/Jakarta: 雅加达
Asia/Manila: 马尼拉
Asia/Kolkata: 新德里 孟买
Asia/Dubai: 迪拜
Europe/Istanbul: 伊斯坦布尔
Europe/Moscow: 莫斯科
Europe/London: 伦敦
Europe/Paris: 巴黎
Europe/Berlin: 柏林 慕尼黑
Europe/Rome: 罗马 米兰
Europe/Madrid: 马德里 巴塞罗那
Europe/Amsterdam: 阿姆斯特丹
Europe/Brussels: 布鲁塞尔
Europe/Vienna: 维也纳
Europe/Zurich: 苏黎世 日内瓦
Europe/Stockholm: 斯德哥尔摩
Europe/Copenhagen: 哥本哈根
Europe/Oslo: 奥斯陆
Europe/Helsinki: 赫尔辛基
Europe/Dublin: 都柏林
Europe/Lisbon: 里斯本
Europe/Athens: 雅典
Europe/Prague: 布拉格
Europe/Warsaw: 华沙
Africa/Cairo: 开罗
Africa/Nairobi: 内罗毕
America/New_York: 纽约 波士顿 华盛顿 迈阿密
America/Los_Angeles: 洛杉矶 旧金山 西雅图 拉斯维加斯
America/Chicago: 芝加哥
America/Toronto: 多伦多 蒙特利尔
America/Vancouver: 温哥华
America/Mexico_City: 墨西哥城
America/Sao_Paulo: 圣保罗 里约热内卢
Australia/Sydney: 悉尼
Australia/Melbourne: 墨尔本
Pacific/Auckland: 奥克兰
"""
ZONES: dict[str, str] = {}              # a city, in either spelling -> its IANA zone
_FIRST: dict[str, tuple[str, str]] = {}  # a zone -> its first city's (中文, English) names
_zone = ""
for _line in _ZONES.strip().splitlines():
    _head, _sep, _rest = _line.partition(":")
    if _sep:
        _zone, _line = _head.strip(), _rest
    for _city in _line.split():
        _names = CITY_NAMES[_city]
        _FIRST.setdefault(_zone, _names)
        ZONES[_names[0]] = ZONES[_names[1]] = _zone
_ZONE_KEYS = ("timezone", "time_zone", "tz", "zone")
_TIME_KEYS = ("datetime", "date_time", "time", "local_time", "current_time")
_FROM_KEYS = ("source", "from", "origin", "src", "start")


def zone_of(place: Any) -> str | None:
    """The IANA zone of a city the gazetteer knows (either spelling), or of a zone name as written; else None.

    >>> zone_of("东京"), zone_of("San Francisco"), zone_of("Asia/Kolkata"), zone_of("Springfield")
    ('Asia/Tokyo', 'America/Los_Angeles', 'Asia/Kolkata', None)
    """
    if not isinstance(place, str):
        return None
    if place in ZONES:
        return ZONES[place]
    return place if TIME_ZONE.fullmatch(place) else None


def place_name(zone: str, zh: bool, mentioned: tuple[str, ...] = ()) -> str:
    """What to call a zone in an answer: the city the user named for it (in the answer's script first), else the
    table's first city for it, else the zone's own name.

    >>> place_name("Asia/Shanghai", True), place_name("Asia/Shanghai", True, ("上海",)), place_name("UTC", False)
    ('北京', '上海', 'UTC')
    """
    named = [m for m in mentioned if m in ZONES and ZONES[m] == zone]
    same_script = [m for m in named if has_cjk(m) == zh]
    if same_script or named:
        return (same_script or named)[0]
    first = _FIRST.get(zone)
    return (first[0] if zh else first[1]) if first else zone


def _moment(value: Any) -> tuple[str, dt.datetime] | None:
    """(zone, date-time) of an object holding a zone name and an ISO date-time with its offset, else None."""
    if not isinstance(value, dict):
        return None
    zone = next((value[k] for k in _ZONE_KEYS if isinstance(value.get(k), str)), None)
    stamp = next((value[k] for k in _TIME_KEYS if isinstance(value.get(k), str)), None)
    if zone is None or stamp is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.strip()[:40])
    except ValueError:
        return None
    return (zone, moment) if moment.utcoffset() is not None else None


def _span(minutes: int, zh: bool) -> str:
    """'1 小时' / '5 hours 30 minutes' / '45 分钟'."""
    hours, rest = divmod(abs(minutes), 60)
    if zh:
        return " ".join(p for p in (f"{hours} 小时" if hours else "", f"{rest} 分钟" if rest else "") if p)
    return " ".join(p for p in (f"{hours} hour{'s' * (hours != 1)}" if hours else "",
                                f"{rest} minute{'s' * (rest != 1)}" if rest else "") if p)


def _pad(name: str) -> str:
    """A name inside a Chinese sentence: a Latin one ('UTC') set off by spaces, a Chinese one as it is."""
    return f" {name} " if name.isascii() else name


def _conversion(given: tuple[str, dt.datetime], asked: tuple[str, dt.datetime], zh: bool,
                mentioned: tuple[str, ...]) -> str:
    """'北京时间 16:30 是东京时间 17:30（东京比北京快 1 小时）。' / '16:30 in Beijing is 17:30 in Tokyo (…).'"""
    (zone_a, a), (zone_b, b) = given, asked
    name_a, name_b = place_name(zone_a, zh, mentioned), place_name(zone_b, zh, mentioned)
    offset_a, offset_b = a.utcoffset(), b.utcoffset()
    minutes = int(((offset_b or dt.timedelta()) - (offset_a or dt.timedelta())).total_seconds() // 60)
    days = (b.date() - a.date()).days
    if zh:
        day = {1: "次日 ", -1: "前一天 "}.get(days, " ")
        diff = ("两地时间相同" if not minutes else
                f"{_pad(name_b)}比{_pad(name_a)}{'快' if minutes > 0 else '慢'} {_span(minutes, True)}")
        text = f"{_pad(name_a)}时间 {a:%H:%M} 是{_pad(name_b)}时间{day}{b:%H:%M}（{diff}）。"
        return re.sub(r" +", " ", text).replace("（ ", "（").strip()
    day = {1: " the next day", -1: " the previous day"}.get(days, "")
    diff = ("the same time in both" if not minutes else
            f"{name_b} is {_span(minutes, False)} {'ahead of' if minutes > 0 else 'behind'} {name_a}")
    return f"{a:%H:%M} in {name_a} is {b:%H:%M}{day} in {name_b} ({diff})."


def time_answer(result: Any, reading: Reading) -> str | None:
    """The answer for a result about times of day (a conversion, or the time now in a zone), else None.

    >>> from practice_model.language import read
    >>> result = {"source": {"timezone": "Asia/Shanghai", "datetime": "2026-12-02T16:30:00+08:00"},
    ...           "target": {"timezone": "Asia/Tokyo", "datetime": "2026-12-02T17:30:00+09:00"},
    ...           "time_difference": "+1.0h"}
    >>> time_answer(result, read("北京时间下午4点半是东京几点？"))
    '北京时间 16:30 是东京时间 17:30（东京比北京快 1 小时）。'
    >>> now = {"timezone": "Europe/London", "datetime": "2026-12-02T06:58:18+00:00"}
    >>> time_answer(now, read("What time is it in London?"))
    'It is 06:58 in London now.'
    """
    zh = reading.language == "zh"
    mentioned = tuple(str(e.value) for e in reading.entities if e.kind == "city")
    single = _moment(result)
    if single:
        zone, moment = single
        name = place_name(zone, zh, mentioned)
        return f"{name}{' ' if name.isascii() else ''}现在是 {moment:%H:%M}。" if zh else (
            f"It is {moment:%H:%M} in {name} now.")
    if not isinstance(result, dict):
        return None
    moments = [(str(k), m) for k, v in list(result.items())[:12] for m in [_moment(v)] if m]
    if len(moments) != 2:
        return None
    first = next((i for i, (k, _) in enumerate(moments) if k.lower() in _FROM_KEYS), 0)
    return _conversion(moments[first][1], moments[1 - first][1], zh, mentioned)
