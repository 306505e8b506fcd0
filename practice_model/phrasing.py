"""Putting tool results into words, in 中文 or English: what `answers` builds its sentences from.

    number(22.0)                      '22'          (a float that is an integer loses its '.0')
    key_label('temp_c', zh=True)      ('温度', '°C') a result key as a label, and the unit its name carries
    with_unit('22', '°C')             '22°C'
    status_word('pending', ...)       '待发货' / '待处理' for a Chinese answer; English answers keep the value
    value_name('USD', zh=True)        '美元'        a currency or unit as said after a number ('CNY' -> '元人民币')
    action(call, tool, label, zh)     '查询深圳的天气' / 'get the weather for Shenzhen': what a call was doing
    error_summary(text, zh)           a tool's error, short, in the answer's language where it is a known kind
    operator_of(tool)                 '#add' when the tool's name or description says it adds, ...

Everything here is generic over tools: labels come from the words of a key ('max_temp_c' ->
最高温度 °C), actions from the words of a tool's name ('get_order_detail' -> 查询…的订单详情),
error kinds from the wording of the error (a timeout, an unknown tool, bad arguments, a
missing record, a Python exception), never from a particular tool's name.

Concessions: the tables are small and hand-written; a key whose words are not all in the Chinese
table keeps its English words (a Chinese answer then says 'feels like 21', not a guess); an
English error detail of an unknown kind in a Chinese answer is quoted briefly after a Chinese
lead-in rather than translated.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .language import VALUE_KINDS, VALUE_SURFACES, has_cjk, split_identifier, tags_of

ERROR_DETAIL = 160      # characters of an error's detail kept in an answer

# -----------------------------------------------------------------------------
# numbers


def number(value: float) -> str:
    """A number as an answer writes it: 22.0 -> '22', 0.1 + 0.2 -> '0.3', 1e20 stays.

    >>> number(22.0), number(0.1 + 0.2), number(1111111110.0), number(-3), number(2.5)
    ('22', '0.3', '1111111110', '-3', '2.5')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return json.dumps(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(round(value, 10))
    return str(value)


def as_number(value: Any) -> float | int | None:
    """A number, or a string that is only a number ('27', '1111111110.0'); else None.

    >>> as_number("27"), as_number(" 3.5 "), as_number("27 apples"), as_number(True)
    (27, 3.5, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s*", value):
        text = value.strip()
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)
    return None


# -----------------------------------------------------------------------------
# keys as labels, with the unit a key's name carries

_ZH_KEYS = {    # whole keys first ('created_at'), then word by word ('max' + 'temp')
    "created_at": "创建时间", "updated_at": "更新时间", "user_id": "用户ID", "order_id": "订单号",
    "feels_like": "体感温度", "wind_speed": "风速", "wind_dir": "风向", "wind_direction": "风向",
    "air_quality": "空气质量", "exchange_rate": "汇率", "unit_price": "单价", "order_count": "订单数",
    "phone_number": "电话", "zip_code": "邮编", "due_date": "截止日期", "start_time": "开始时间",
    "end_time": "结束时间", "id_number": "证件号", "api_key": "API key", "shipped_at": "发货时间",
    "delivered_at": "送达时间", "from_currency": "原货币", "to_currency": "目标货币",
}
_ZH_WORDS = {
    "temperature": "温度", "temp": "温度", "condition": "天气", "conditions": "天气", "weather": "天气",
    "humidity": "湿度", "wind": "风力", "status": "状态", "state": "状态", "price": "价格", "total": "合计",
    "amount": "金额", "name": "名称", "items": "商品", "item": "商品", "product": "商品", "products": "商品",
    "quantity": "数量", "qty": "数量", "count": "数量", "date": "日期", "city": "城市", "result": "结果",
    "message": "消息", "unit": "单位", "description": "描述", "email": "邮箱", "phone": "电话",
    "address": "地址", "currency": "货币", "rate": "汇率", "symbol": "代码", "title": "标题",
    "orders": "订单", "order": "订单", "time": "时间", "value": "数值", "change": "涨跌", "eta": "预计送达",
    "max": "最高", "min": "最低", "high": "最高", "low": "最低", "avg": "平均", "average": "平均",
    "speed": "速度", "direction": "方向", "aqi": "空气质量指数", "level": "等级", "quality": "质量",
    "air": "空气", "pm25": "PM2.5", "uv": "紫外线", "index": "指数", "visibility": "能见度",
    "pressure": "气压", "rain": "降雨", "precipitation": "降水", "forecast": "预报", "advice": "建议",
    "suggestion": "建议", "reason": "原因", "reasons": "原因", "verdict": "结论", "conclusion": "结论",
    "recommendation": "建议", "summary": "摘要", "suitable": "适合", "weekday": "星期",
    "day": "日期", "balance": "余额", "stock": "库存", "distance": "距离", "duration": "时长",
    "weight": "重量", "size": "大小", "score": "分数", "rating": "评分", "category": "类别",
    "type": "类型", "note": "备注", "notes": "备注", "id": "编号", "user": "用户", "customer": "客户",
    "flight": "航班", "hotel": "酒店", "room": "房间", "departure": "出发", "arrival": "到达",
    "origin": "出发地", "destination": "目的地", "seats": "座位", "available": "可用", "url": "链接",
    "link": "链接", "text": "文本", "translation": "译文", "language": "语言", "country": "国家",
    "population": "人口", "area": "面积", "discount": "折扣", "final": "最终", "original": "原",
    "tax": "税", "fee": "费用", "cost": "费用", "sunrise": "日出", "sunset": "日落", "current": "当前",
    "location": "位置", "region": "地区", "code": "代码", "error": "错误", "tracking": "物流",
    "carrier": "承运商", "from": "从", "to": "到", "source": "来源", "target": "目标", "start": "开始",
    "end": "结束", "total_price": "总价",
}
_EN_WORDS = {"temp": "temperature", "qty": "quantity", "eta": "ETA", "id": "ID", "pct": "percent",
             "avg": "average", "desc": "description", "num": "number", "amt": "amount", "addr": "address",
             "aqi": "AQI", "uv": "UV", "pm25": "PM2.5", "url": "URL", "dir": "direction"}
_UNITS = {      # the last word of a key -> (unit in a Chinese answer, unit in an English one)
    "c": ("°C", "°C"), "celsius": ("°C", "°C"), "f": ("°F", "°F"), "fahrenheit": ("°F", "°F"),
    "kph": ("km/h", "km/h"), "kmh": ("km/h", "km/h"), "mph": ("mph", "mph"), "mps": ("m/s", "m/s"),
    "pct": ("%", "%"), "percent": ("%", "%"), "mm": ("mm", "mm"), "cm": ("cm", "cm"), "km": ("km", "km"),
    "kg": ("kg", "kg"), "usd": ("USD", "USD"), "cny": ("CNY", "CNY"), "rmb": ("CNY", "CNY"),
    "eur": ("EUR", "EUR"), "jpy": ("JPY", "JPY"), "gbp": ("GBP", "GBP"), "ms": ("毫秒", "ms"),
    "sec": ("秒", "s"), "secs": ("秒", "s"), "seconds": ("秒", "s"), "minutes": ("分钟", "min"),
    "hours": ("小时", "h"), "hrs": ("小时", "h"),
    "days": ("天", "days"),
}
_TIGHT = ("°C", "°F", "%")          # written right after the number, no space


def key_label(key: str, zh: bool) -> tuple[str, str]:
    """A result key as a label, and the unit its name carries ('' when none).

    >>> key_label("temp_c", True), key_label("temp_c", False), key_label("wind_kph", True)
    (('温度', '°C'), ('temperature', '°C'), ('风力', 'km/h'))
    >>> key_label("max_temp", True), key_label("order_id", False), key_label("feels_like_c", True)
    (('最高温度', ''), ('order ID', ''), ('体感温度', '°C'))
    """
    words = list(split_identifier(key)) or [key]
    unit = ""
    if len(words) > 1 and words[-1] in _UNITS:
        unit = _UNITS[words.pop()][0 if zh else 1]
    joined = "_".join(words)
    if zh:
        if joined in _ZH_KEYS:
            return _ZH_KEYS[joined], unit
        if all(w in _ZH_WORDS for w in words):
            return "".join(_ZH_WORDS[w] for w in words), unit
        return " ".join(words), unit
    return " ".join(_EN_WORDS.get(w, w) for w in words), unit


def with_unit(text: str, unit: str) -> str:
    """A value with its unit: '22°C', '12 km/h', '3小时' (Chinese units hug the number too).

    >>> with_unit("22", "°C"), with_unit("12", "km/h"), with_unit("3", "小时"), with_unit("x", "")
    ('22°C', '12 km/h', '3小时', 'x')
    """
    if not unit:
        return text
    tight = unit in _TIGHT or not unit.isascii()
    return f"{text}{unit}" if tight else f"{text} {unit}"


# -----------------------------------------------------------------------------
# status words

_STATUS_ZH = {
    "shipped": "已发货", "delivered": "已送达", "cancelled": "已取消", "canceled": "已取消",
    "processing": "处理中", "completed": "已完成", "complete": "已完成", "done": "已完成", "failed": "失败",
    "paid": "已付款", "unpaid": "未付款", "refunded": "已退款", "in_transit": "运输中", "active": "生效中",
    "inactive": "未生效", "closed": "已关闭", "success": "成功", "succeeded": "成功", "ok": "正常",
    "error": "出错", "running": "运行中", "queued": "排队中", "approved": "已批准", "rejected": "已拒绝",
    "expired": "已过期", "draft": "草稿", "returned": "已退货", "out_for_delivery": "派送中",
    "confirmed": "已确认", "open": "未完成", "in_progress": "进行中", "on_hold": "已暂停",
}
_PENDING_ZH = ("待处理", "待发货")   # pending in general / pending where orders or shipping are the subject


def status_word(value: str, zh: bool, orders: bool = False) -> str:
    """A status value as the answer says it: translated for a Chinese answer when it is a known word.

    >>> status_word("pending", True, orders=True), status_word("pending", True), status_word("in_transit", False)
    ('待发货', '待处理', 'in transit')
    """
    key = value.strip().lower().replace(" ", "_").replace("-", "_")
    if not zh:
        return value.replace("_", " ") if key in _STATUS_ZH or key == "pending" else value
    if key == "pending":
        return _PENDING_ZH[orders]
    return _STATUS_ZH.get(key, value)


def is_status_key(key: str) -> bool:
    """Whether a result key holds a status ('status', 'order_status', 'state').

    >>> is_status_key("order_status"), is_status_key("statement")
    (True, False)
    """
    words = split_identifier(key)
    return bool(words) and words[-1] in ("status", "state")


# -----------------------------------------------------------------------------
# values of a kind (currencies, units, ...) named in the answer's language

_VALUE_NAMES = {    # where the first Chinese word of `language._VALUES` is not what an answer says after a number
    "CNY": ("元人民币", "CNY"), "celsius": ("摄氏度", "°C"), "fahrenheit": ("华氏度", "°F"),
}


def value_kind(value: Any) -> tuple[str, str] | None:
    """(kind, code) of a value the tables know ('美元' -> ('currency', 'USD')), else None.

    >>> value_kind("usd"), value_kind("美元"), value_kind("celsius"), value_kind("meter")
    (('currency', 'USD'), ('currency', 'USD'), ('unit', 'celsius'), None)
    """
    if not isinstance(value, str):
        return None
    found = sorted(t for t in tags_of(value) if t in VALUE_KINDS)
    return (VALUE_KINDS[found[0]], found[0][1:]) if len(found) == 1 else None


def value_name(value: Any, zh: bool) -> str:
    """A currency or unit as an answer says it after a number: '美元' / 'USD', '元人民币' / 'CNY', '摄氏度' / '°C';
    a value the tables do not know stays as sent.

    >>> value_name("USD", True), value_name("usd", False), value_name("CNY", True), value_name("meter", True)
    ('美元', 'USD', '元人民币', 'meter')
    """
    known = value_kind(value)
    if known is None:
        return str(value)
    code = known[1]
    if code in _VALUE_NAMES:
        return _VALUE_NAMES[code][0 if zh else 1]
    if zh:
        return next((w for w in VALUE_SURFACES.get(code, ()) if has_cjk(w)), code)
    return code


# -----------------------------------------------------------------------------
# what a call was doing: a verb from the first word of the tool's name, a noun from the rest

_VERBS = {      # first word of a tool name -> (Chinese verb, English verb)
    "get": ("查询", "get"), "fetch": ("查询", "get"), "query": ("查询", "look up"), "lookup": ("查询", "look up"),
    "look": ("查询", "look up"), "check": ("查询", "check"), "read": ("读取", "read"), "load": ("读取", "load"),
    "find": ("查找", "find"), "search": ("搜索", "search for"), "list": ("列出", "list"), "show": ("查看", "show"),
    "send": ("发送", "send"), "create": ("创建", "create"), "make": ("创建", "make"), "new": ("创建", "create"),
    "update": ("更新", "update"), "set": ("设置", "set"), "delete": ("删除", "delete"), "remove": ("删除", "remove"),
    "book": ("预订", "book"), "reserve": ("预订", "reserve"), "cancel": ("取消", "cancel"),
    "calculate": ("计算", "calculate"), "compute": ("计算", "compute"), "convert": ("换算", "convert"),
    "translate": ("翻译", "translate"), "run": ("运行", "run"), "execute": ("执行", "run"),
    "write": ("写入", "write"), "save": ("保存", "save"), "upload": ("上传", "upload"),
    "download": ("下载", "download"), "add": ("添加", "add"), "place": ("提交", "place"), "pay": ("支付", "pay"),
}
_ZH_NOUNS = {
    "weather": "天气", "forecast": "天气预报", "order": "订单", "orders": "订单", "detail": "详情",
    "details": "详情", "user": "用户", "users": "用户", "info": "信息", "information": "信息", "profile": "资料",
    "flight": "航班", "flights": "航班", "hotel": "酒店", "hotels": "酒店", "stock": "股票", "price": "价格",
    "prices": "价格", "email": "邮件", "mail": "邮件", "news": "新闻", "file": "文件", "files": "文件",
    "time": "时间", "date": "日期", "rate": "汇率", "rates": "汇率", "exchange": "汇率", "currency": "货币",
    "event": "日程", "events": "日程", "reminder": "提醒", "balance": "余额", "account": "账户",
    "product": "商品", "products": "商品", "inventory": "库存", "temperature": "气温", "humidity": "湿度",
    "wind": "风力", "air": "空气", "quality": "质量", "aqi": "空气质量", "status": "状态", "discount": "折扣",
    "route": "路线", "distance": "距离", "customer": "客户", "customers": "客户", "invoice": "发票",
    "invoices": "发票", "payment": "付款", "text": "文本", "document": "文档", "documents": "文档",
    "docs": "文档", "notes": "笔记", "note": "笔记", "message": "消息", "messages": "消息", "room": "房间",
    "ticket": "票", "tickets": "票", "contact": "联系人", "contacts": "联系人", "task": "任务", "tasks": "任务",
    "meeting": "会议", "calendar": "日历", "location": "位置", "address": "地址", "running": "跑步",
    "conditions": "条件", "condition": "状况", "current": "", "by": "", "city": "", "name": "", "id": "",
}


def action(tool_name: str, label: str, zh: bool) -> str:
    """What a call was doing, for a sentence about it: '查询深圳的天气' / 'get the weather for Shenzhen'.

    >>> action("get_weather", "深圳", True), action("get_weather", "Paris", False)
    ('查询深圳的天气', 'get the weather for Paris')
    >>> action("get_order_detail", "", True), action("frobnicate", "x", True), action("frobnicate", "", False)
    ('查询订单详情', '调用 frobnicate（x）', 'run frobnicate')
    """
    words = list(split_identifier(tool_name))
    verb = _VERBS.get(words[0]) if words else None
    rest = words[1:] if verb else words
    if zh:
        nouns = [_ZH_NOUNS.get(w) for w in rest]
        if verb is None or any(n is None for n in nouns) or not "".join(n or "" for n in nouns):
            return f"调用 {tool_name}" + (f"（{label}）" if label else "")
        noun = "".join(n or "" for n in nouns)
        return f"{verb[0]}{label}的{noun}" if label else f"{verb[0]}{noun}"
    if verb is None or not rest:
        return f"run {tool_name}" + (f" for {label}" if label else "")
    rest = [w for w in rest if w not in ("by", "current")] or rest
    return f"{verb[1]} the {' '.join(rest)}" + (f" for {label}" if label else "")


# -----------------------------------------------------------------------------
# errors: kept short, said in the answer's language where their kind is known

_KINDS = [      # (pattern over the error text, Chinese summary; {0} is the first group when there is one)
    (r"(?i)did not (?:finish|answer|respond) within ([\d.]+)\s*s\b", "服务在 {0} 秒内没有响应，已被停止"),
    (r"(?i)\btimed? ?out\b|\btimeout\b", "服务响应超时"),
    (r"(?i)unknown tool|no such tool|tool .* does not exist", "没有这个工具"),
    (r"(?i)invalid arguments|validation error|field required|expected an? \w+", "调用参数不对"),
    (r"(?i)already called .* same arguments|repeated call|same call", "重复调用被拒绝"),
    (r"(?i)failed \d+ times|do not call it again|retry budget|gave up", "多次失败后不再重试"),
    (r"(?i)rate limit|too many requests|\b429\b", "请求太频繁，被限流了"),
    (r"(?i)permission|forbidden|denied|unauthori[sz]ed|\b40[13]\b|not allowed", "没有权限"),
    (r"(?i)\bnot (?:found|supported)\b|\b404\b|does not exist|no such|unknown (?:city|user|order|location)",
     "没有找到相关数据"),
    (r"(?i)connection|network|unreachable|refused|\b50[0-4]\b|unavailable", "服务暂时不可用"),
]
_EXCEPTION = re.compile(r"(?:(?:^|failed:\s*))(\w+(?:Error|Exception))\b:?\s*([^.\n]{0,60})")


def _first_sentence(text: str, limit: int) -> str:
    """The text up to its first sentence end (or line end), cut at `limit` characters.

    >>> _first_sentence("Timeout. Try again later.", 80), _first_sentence("a" * 10, 4)
    ('Timeout', 'aaaa…')
    """
    text = " ".join(text.split())
    m = re.search(r"(?<=[^\s.])(?:\.\s|。|！|!|？|\?|\n)|\.$", text)
    head = text[:m.start() + (1 if m and text[m.start()] in "。！？!?" else 0)] if m else text
    head = head.rstrip("。.") or text
    return head if len(head) <= limit else head[:limit] + "…"


_INSTRUCTION = re.compile(r"(?i)^(?:fix|try|please|use|do not|don't|check|call|tell|answer|retry|请|不要|可以)\b")


def _for_the_user(text: str) -> str:
    """An error without the lines that instruct the model ('Fix these arguments and call … again.').

    >>> _for_the_user("Invalid arguments for f:\\n- city: expected a string\\nFix these arguments and call f again.")
    'Invalid arguments for f: city: expected a string'
    """
    lines = [line.strip().lstrip("-*• ").strip() for line in str(text).splitlines()]
    kept = [line for line in lines if line and not _INSTRUCTION.match(line)]
    return " ".join(kept or lines)


def mostly_chinese(text: str) -> bool:
    """Whether Chinese characters make up a good share of a text's letters (a name in it is not enough).

    >>> mostly_chinese("天气服务暂时查不到深圳"), mostly_chinese('city: got ["北京"]; expected a string')
    (True, False)
    """
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(1 for c in letters if has_cjk(c)) >= 0.3 * len(letters)


def error_summary(text: str, zh: bool) -> str:
    """A tool's error for the user: short, and in Chinese for a Chinese answer when its kind is known.

    >>> error_summary("get_weather did not finish within 0.5 s and was stopped. Try again later.", True)
    '服务在 0.5 秒内没有响应，已被停止'
    >>> error_summary("KeyError: 'city'", True), error_summary("天气服务暂时查不到深圳。请查别的城市", True)
    ("工具内部出错（KeyError: 'city'）", '天气服务暂时查不到深圳')
    >>> error_summary("upstream timeout", False), error_summary("Unknown tool 'x'. Available: a, b.", False)
    ('upstream timeout', "Unknown tool 'x'")
    >>> error_summary('Invalid arguments for f:\\n- city: got ["北京"]; expected a string\\nFix them.', True)
    '调用参数不对'
    """
    flat = " ".join(_for_the_user(text).split())
    if not zh or mostly_chinese(flat):
        return _first_sentence(flat, ERROR_DETAIL)
    exception = _EXCEPTION.search(flat)
    if exception:
        detail = exception.group(2).strip()
        return f"工具内部出错（{exception.group(1)}{': ' + detail if detail else ''}）"
    for pattern, summary in _KINDS:
        m = re.search(pattern, flat)
        if m:
            return summary.format(*m.groups())
    return f"工具返回了错误（{_first_sentence(flat, 60)}）"


# -----------------------------------------------------------------------------
# arithmetic

_OPERATORS = {"#add": ("加", "+"), "#subtract": ("减", "-"), "#multiply": ("乘以", "×"), "#divide": ("除以", "÷")}


def operator_words(features: frozenset[str]) -> tuple[str, str] | None:
    """('加', '+') when a tool's features name exactly one arithmetic operation, else None.

    >>> operator_words(frozenset({"#add", "#calculate"})), operator_words(frozenset({"#calculate"}))
    (('加', '+'), None)
    """
    found = [words for tag, words in _OPERATORS.items() if tag in features]
    return found[0] if len(found) == 1 else None
