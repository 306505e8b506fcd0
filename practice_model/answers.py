"""Stage 5 of the planner: the text reply, in the user's language, worded as an assistant would.

    compose_answer(s)   from the results when calls were made; else a greeting, a thank-you, a
                        goodbye or an 'OK' for small talk (never a call: `planning`), a
                        question for the inputs a tool still needs, a confident (made-up) date for
                        a date question nobody gave it a clock for, or an honest "no tool fits"
    render(value, zh)   a JSON result as a short readable phrase ('温度 22°C，天气 晴')
    call_text(n, args)  a call as a learner would write it ('add(a=1, b=2)'): for logs, never for answers

How an answer is put together:

- every result that was not just a stepping stone of a chain is reported (the user id that led
  to the orders is left out; so is a failure that a later call of the same tool put right),
  labelled by what it is about ('北京：…'); several tools asked about the same thing make one
  line ('北京：温度 22，湿度 35，风力 东北风3级，空气质量指数 160');
- a conversion reads as one ('100 美元约合 710 元人民币。' / '100 USD is about 710 CNY.'), from the
  parameters' roles and the values' kinds;
- a computation reads as one ('123 加 456 等于 579。' / '123 + 456 = 579.'; '按原价 200、折扣系数
  0.8 计算，结果是 160。' when the tool's words name no single operation);
- a result about zoned times reads as one (`zones.time_answer`: '北京时间 16:30 是东京时间 17:30（东京比
  北京快 1 小时）。', '伦敦现在是 06:58。'), times and the difference only, never the date or weekday;
- a text result is relayed as it is (no quotes around it, no label when it already names its
  subject); numbers lose a trailing '.0'; keys become labels with the unit their name carries
  (`temp_c` -> 温度 …°C / temperature …°C); known status words are said in Chinese for a Chinese
  answer ('pending' -> 待发货 where orders are the subject, else 待处理);
- a failed call is one sentence in the user's language ('查询深圳的天气失败：服务在 0.5 秒内没有
  响应，已被停止。' / "I couldn't get the weather for Paris: city not found."), the error's detail
  kept short (`phrasing.error_summary`);
- when the question compares ('哪个更暖和') the winner is named; when it asks for the date and a
  result carries one, the answer says what day it is.

Images: when the request (or the labelled tool output after it) carries image parts, which only a
vision persona is ever sent, the answer describes each from its bytes (`vision.say`) and answers a
'which is highest?' question from the text a PNG stores. A text-only persona reads the labelled
output's text instead: a vision model's description ('auto'), or a note that an image exists,
which it says it cannot see. A result that is only a file name ('{"path": "chart.png"}') is said as
one ('图表已保存为 chart.png。'): a name is all the model got, and it invents nothing more.

A result cut for length (a spilled one, or a long log asked about an error) is answered by
`spilled.long_answer` first: from what a file-reading tool found, or from the part shown.

It never echoes function-call syntax ('add_numbers(a=1, b=2) 的结果是 …') at the user. The
wording comes from `phrasing`, which is generic over tools: nothing here knows a tool's name.

Concessions: results are rendered, not summarised (at most 12 keys, 8 list items and TRUNCATE
characters of text each); a comparison looks at one numeric key shared by every result; a
yes/no question gets the facts, not a verdict.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from typing import Any

from .filling import fill_arguments, param_kind, param_role
from .language import (
    COMPARE,
    LOWER_IS_ASKED,
    STOP_REPEATING,
    TIME_QUESTION,
    has_cjk,
    is_date_question,
    small_talk,
    tags_of,
)
from .phrasing import (
    action,
    as_number,
    error_summary,
    is_status_key,
    key_label,
    number,
    operator_words,
    status_word,
    value_kind,
    value_name,
    with_unit,
)
from .planning import call_key, looks_at_media, next_calls
from .ranking import relevant_tools
from .schemas import Param, enum_of
from .situation import TRUNCATE, Call, OfferedTool, Situation, error_of, scalars
from .spilled import long_answer
from .vision import figure_answer, look, quoted_texts, say
from .wire import canonical_json
from .zones import time_answer

_WORD = re.compile(r"\S+")
SHORT = 40              # characters of an argument value quoted in a label ('北京')
LISTED = 8              # tools (or missing parameters) named in one answer
DESCRIBED = 100         # characters of a parameter's description quoted when asking for it
MADE_UP_TODAY = dt.datetime(2024, 6, 12, 15, 0)   # what a model without a clock believes (see `made_up_date`)
_LEAD_KEYS = ("name", "title", "product", "product_name", "item", "item_name", "label", "city", "symbol",
              "flight", "flight_no", "hotel")      # the key that names an object in a list ('绿茶（数量 2）')
_ORDER_WORDS = re.compile(r"(?i)order|ship|deliver|eta|tracking|订单|发货|物流")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?")
_EXPRESSION = re.compile(r"^[\d\s.+\-*/×÷()（）^%]*\d[\d\s.]*[+\-*/×÷^%][\s\d.+\-*/×÷()（）^%]*$")
_WEEKDAYS_ZH = "一二三四五六日"
DAY_ASKED = re.compile(r"(?i)几号|几月|日期|日子|星期|礼拜|周几|哪天|\b(?:date|day|weekday|month|year)\b")


def _unwrap(result: Any) -> Any:
    """The payload of a success envelope: {'status': 'success', 'data': X} -> X."""
    if isinstance(result, dict) and str(result.get("status", "")).lower() in ("success", "ok") and len(result) <= 3:
        for key in ("data", "result"):
            if key in result:
                return result[key]
    return result


def _one_line(text: str, limit: int) -> str:
    """Whitespace runs collapsed to one space, cut at `limit` characters ('…' when cut); reads no further than needed.

    >>> _one_line("  a\\n\\t b  ", 10), _one_line("word " * 1_000_000, 9)
    ('a b', 'word word…')
    """
    words: list[str] = []
    size = -1
    for m in _WORD.finditer(text):
        words.append(m.group())
        size += len(words[-1]) + 1
        if size > limit:
            return " ".join(words)[:limit] + "…"
    return " ".join(words)


# -----------------------------------------------------------------------------
# rendering values


def _pair(key: str, value: Any, zh: bool, depth: int, orders: bool) -> str:
    """One 'label value' pair of an object: '温度 22°C', '状态 待发货', 'items 绿茶（数量 2）'."""
    label, unit = key_label(key, zh)
    if isinstance(value, bool):
        if zh and has_cjk(label):
            return label if value else f"不{label}"
        return f"{label}: {'yes' if value else 'no'}" if not zh else f"{label} {'是' if value else '否'}"
    if isinstance(value, str) and is_status_key(key):
        return f"{label} {status_word(value, zh, orders)}"
    text = render(value, zh, depth + 1, orders)
    if unit and isinstance(value, (int, float)):
        text = with_unit(text, unit)
    return f"{label} {text}"


def render(value: Any, zh: bool, depth: int = 0, orders: bool = False) -> str:
    """A JSON value as a short readable phrase: objects as 'label value' pairs, lists as enumerations.

    `orders`: orders or shipping are the subject (a 'pending' status is then 待发货, not 待处理).

    >>> render({"temperature": 22, "condition": "晴"}, zh=True)
    '温度 22，天气 晴'
    >>> render({"temp_c": 21.0, "status": "pending"}, zh=True), render({"temp_c": 21.0}, zh=False)
    ('温度 21°C，状态 待处理', 'temperature 21°C')
    >>> render({"items": [{"product": "绿茶", "quantity": 2, "price": 68.0}]}, zh=True)
    '商品 绿茶（数量 2，价格 68）'
    """
    sep = "，" if zh else ", "
    if value is None:
        return "无" if zh else "none"
    if isinstance(value, bool):
        return ("是" if value else "否") if zh else ("yes" if value else "no")
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, str):
        return _one_line(value, TRUNCATE)
    if isinstance(value, dict):
        if not value:
            return "（空）" if zh else "(empty)"
        if depth >= 3:
            return json.dumps(value, ensure_ascii=False)[:TRUNCATE]
        orders = orders or any(_ORDER_WORDS.search(str(k)) for k in value)
        lead = next((k for k in _LEAD_KEYS if isinstance(value.get(k), str) and value[k]), None)
        lead = lead if depth >= 1 else None
        pairs = sep.join(_pair(str(k), v, zh, depth, orders) for k, v in list(value.items())[:12] if k != lead)
        if lead is not None:
            name = _one_line(value[lead], TRUNCATE)
            return (f"{name}（{pairs}）" if zh else f"{name} ({pairs})") if pairs else name
        return (f"（{pairs}）" if zh else f"({pairs})") if depth >= 2 else pairs
    if isinstance(value, list):
        if not value:
            return "没有结果（空列表）" if zh else "no results (empty list)"
        items = [render(v, zh, max(depth, 1) + (1 if depth else 0), orders) for v in value[:8]]
        named = all(not isinstance(v, (dict, list)) or (isinstance(v, dict) and any(
            isinstance(v.get(k), str) and v[k] for k in _LEAD_KEYS)) for v in value[:8])
        joiner = ("、" if zh else ", ") if named and depth else ("；" if zh else "; ") if not named else (
            "、" if zh else ", ")
        return joiner.join(items) + (("……" if zh else " …") if len(value) > 8 else "")
    return render(str(value), zh, depth, orders)


def short(value: Any) -> str:
    """An argument value for a label: strings bare and cut at SHORT characters, numbers as an answer writes them.

    >>> short("北京"), short(3.5), short(200.0), short({"a": "x" * 50}), short("y" * 50)[-3:]
    ('北京', '3.5', '200', '{…}', 'yy…')
    """
    if isinstance(value, (dict, list)) and len(json.dumps(value, ensure_ascii=False)) > SHORT:
        return "{…}" if isinstance(value, dict) else "[…]"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHORT else text[:SHORT] + "…"


def call_text(name: str, arguments: dict) -> str:
    """A call as a learner would write it (for logs and the misbehaving personas' notes, never for an answer).

    >>> call_text('add', {'a': 1, 'b': 2})
    'add(a=1, b=2)'
    """
    return f"{name}({', '.join(f'{k}={short(v)}' for k, v in arguments.items())})"


def _joined(parts: list[str], zh: bool) -> str:
    """'a、b' / 'a and b' / 'a, b and c'."""
    if zh or len(parts) < 2:
        return "、".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# -----------------------------------------------------------------------------
# what each result is about


def _fold(calls: list[Call]) -> list[Call]:
    """The calls with repeats folded (a model that checked twice reports once): each (name, arguments) where it
    first appeared, with its latest result, unless that one only refused to run it again."""
    folded: dict[str, Call] = {}
    for c in calls:
        key = call_key(c.name, c.arguments)
        refused = c.result is not None and bool(STOP_REPEATING.search(json.dumps(c.result, ensure_ascii=False)))
        if key not in folded or not refused:
            folded[key] = c
    return list(folded.values())


def _label(call: Call, shown: list[Call], request_text: str, zh: bool = True) -> str:
    """What a result is about: the entity ('北京'), the values that tell same-tool results apart, or ''."""
    plain = {k: v for k, v in call.arguments.items() if not isinstance(v, (dict, list))}
    siblings = [c for c in shown if c.name == call.name]
    if len(siblings) > 1:
        differing = [k for k, v in plain.items() if any(c.arguments.get(k) != v for c in siblings)]
        if differing:
            return ("，" if zh else ", ").join(short(plain[k]) for k in differing)
    if len(plain) == 1:
        return short(next(iter(plain.values())))
    asked = [short(v) for v in plain.values() if not isinstance(v, bool) and str(v) and str(v) in request_text]
    return ("、" if zh else ", ").join(asked) if 0 < len(asked) <= 3 else ""


def _consumed(call: Call, later: list[Call], request_text: str) -> bool:
    """Whether a later call took an argument out of this call's result (so it was an intermediate step)."""
    if error_of(call) is not None:
        return False
    inside = {canonical_json(v) for _, v, _ in scalars(call.result)}
    given = {canonical_json(v) for v in call.arguments.values() if not isinstance(v, (dict, list))}
    for other in later:
        for v in other.arguments.values():
            if isinstance(v, (dict, list, bool)) or str(v) in request_text or canonical_json(v) in given:
                continue                                # a value the user gave (or this call was given) is no result
            if canonical_json(v) in inside or canonical_json(str(v)) in inside:
                return True
    return False


def _comparison(s: Situation, shown: list[Call]) -> str:
    """'上海的温度更高（25）。' when the user asked which one is warmer / cheaper / ..."""
    if not COMPARE.search(s.request.text):
        return ""
    rows = [(c, _unwrap(c.result)) for c in shown if error_of(c) is None]
    rows = [(c, r) for c, r in rows if isinstance(r, dict)]

    def numeric(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if len(rows) < 2:
        return ""
    common = [k for k, v in rows[0][1].items() if numeric(v) and all(numeric(r.get(k)) for _, r in rows)]
    if not common:
        return ""
    key = next((k for k in common if tags_of(k) & s.request.tags), common[0])
    low = bool(LOWER_IS_ASKED.search(s.request.text))
    target = (min if low else max)(r[key] for _, r in rows)
    winners = [_label(c, shown, s.request.text, s.zh) for c, r in rows if r[key] == target]
    label, unit = key_label(key, s.zh)
    value = with_unit(number(target), unit)
    if s.zh:
        degree = ("更" if len(rows) == 2 else "最") + ("低" if low else "高")
        return f"{'、'.join(winners)}的{label}{degree}（{value}）。"
    degree = ("lower" if low else "higher") if len(rows) == 2 else ("lowest" if low else "highest")
    verb = "has" if len(winners) == 1 else "have"
    return f"{' and '.join(winners)} {verb} the {degree} {label} ({value})."


# -----------------------------------------------------------------------------
# sentences


def _param_label(tool: OfferedTool | None, name: str, zh: bool) -> str:
    """How to name an argument in a sentence: a short description in the user's language ('原价'), else the key."""
    p = next((q for q in tool.params if q.name == name), None) if tool else None
    clause = re.split(r"[，,。;；:：（(]|\.\s|\.$", p.description.strip(), maxsplit=1)[0].strip() if p else ""
    if clause and has_cjk(clause) == zh and (len(clause) <= 10 if zh else len(clause.split()) <= 3):
        return clause
    return key_label(name, zh)[0]


def _computation(call: Call, tool: OfferedTool | None, zh: bool) -> str | None:
    """'123 加 456 等于 579' / '123 + 456 = 579' for a call that computed a number; None for any other call."""
    value = _unwrap(call.result)
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))          # {"result": 579}
    result = as_number(value)
    args = call.arguments
    if result is None or not args or len(args) > 4:
        return None
    answer = number(result)
    values = list(args.values())
    if len(values) == 1 and isinstance(values[0], str) and _EXPRESSION.match(values[0].strip()):
        expression = values[0].strip()
        return f"{expression} 等于 {answer}" if zh else f"{expression} = {answer}"
    numbers = [as_number(v) for v in values]
    if any(n is None for n in numbers):
        return None
    op = operator_words(tool.features) if tool else None
    if op and len(numbers) == 2:
        a, b = (number(n) for n in numbers if n is not None)
        return f"{a} {op[0]} {b} 等于 {answer}" if zh else f"{a} {op[1]} {b} = {answer}"
    given = [f"{_param_label(tool, k, zh)} {number(as_number(v) or 0)}" for k, v in args.items()]
    if zh:
        return f"按{'、'.join(given)} 计算，结果是 {answer}"
    return f"With {_joined(given, False)}, the result is {answer}"


def _conversion(call: Call, tool: OfferedTool | None, zh: bool) -> str | None:
    """'100 美元约合 710 元人民币' / '100 USD is about 710 CNY' for a call that converted an amount from one value
    of a kind (a currency, a unit) to another; None for any other call.

    Read from the parameters, never the tool's name: one number (the amount), two values of one kind whose
    parameters say which end they are (`from_currency` / `to_currency`, 'source unit' / '目标单位'), and a
    number as the result.
    """
    value = _unwrap(call.result)
    if isinstance(value, dict) and len(value) == 1:
        value = next(iter(value.values()))          # {"result": 710}
    result = as_number(value)
    if tool is None or result is None:
        return None
    amounts, ends = [], {}
    for p in tool.params:
        if p.name not in call.arguments:
            continue
        v, role = call.arguments[p.name], param_role(p)
        known = value_kind(v)
        kind = known[0] if known else param_kind(p)
        if role and kind in ("currency", "unit") and isinstance(v, str):
            ends[role] = (kind, v)
        elif as_number(v) is not None:
            amounts.append(as_number(v))
    if len(amounts) != 1 or set(ends) != {"from", "to"} or ends["from"][0] != ends["to"][0]:
        return None
    amount, answer = number(amounts[0] or 0), number(result)
    source, target = value_name(ends["from"][1], zh), value_name(ends["to"][1], zh)
    if zh:
        return f"{amount} {source}{' ' if source[-1:].isascii() else ''}约合 {answer} {target}"
    return f"{with_unit(amount, source)} is about {with_unit(answer, target)}"


def _doing(call: Call, tool: OfferedTool | None, label: str, zh: bool) -> str:
    """What a call was doing: '计算 123 加 456' for arithmetic, else `phrasing.action` ('查询深圳的天气')."""
    op = operator_words(tool.features) if tool else None
    numbers = [as_number(v) for v in call.arguments.values()]
    if op and len(numbers) == 2 and all(n is not None for n in numbers):
        a, b = (number(n) for n in numbers if n is not None)
        return f"计算 {a} {op[0]} {b}" if zh else f"work out {a} {op[1]} {b}"
    return action(call.name, label, zh)


def _failure(call: Call, tool: OfferedTool | None, error: str, label: str, zh: bool) -> str:
    """One sentence about a call that failed, in the user's language."""
    doing = _doing(call, tool, label, zh)
    if zh:
        return f"{doing}{' ' if doing[-1].isascii() else ''}失败：{error_summary(error, True)}"
    return f"I couldn't {doing}: {error_summary(error, False)}"


def _dates_in(value: Any) -> list[re.Match]:
    """ISO dates (and times) inside a result, in document order."""
    texts = [v for _, v, _ in scalars(value) if isinstance(v, str)] if not isinstance(value, str) else [value]
    return [m for t in texts for m in _ISO_DATE.finditer(t)]


def say_date(moment: dt.datetime, zh: bool, with_time: bool = False) -> str:
    """'今天是 2024 年 6 月 12 日，星期三。' / 'Today is Wednesday, June 12, 2024.' (with the hour when asked).

    >>> say_date(dt.datetime(2024, 6, 12, 15), True), say_date(dt.datetime(2024, 6, 12, 15), False, True)
    ('今天是 2024 年 6 月 12 日，星期三。', "It's around 3 PM on Wednesday, June 12, 2024.")
    """
    weekday = moment.weekday()
    if zh:
        day = f"{moment.year} 年 {moment.month} 月 {moment.day} 日"
        if with_time:
            half = "上午" if moment.hour < 12 else "下午"
            return f"现在是 {day}（星期{_WEEKDAYS_ZH[weekday]}）{half} {moment.hour % 12 or 12} 点左右。"
        return f"今天是 {day}，星期{_WEEKDAYS_ZH[weekday]}。"
    day = f"{moment.strftime('%A')}, {moment.strftime('%B')} {moment.day}, {moment.year}"
    if with_time:
        return f"It's around {moment.hour % 12 or 12} {'AM' if moment.hour < 12 else 'PM'} on {day}."
    return f"Today is {day}."


def _date_answer(s: Situation, shown: list[Call]) -> str | None:
    """For a date question, the date a result carries, said as a date; None when no result carries one, or when
    only the time of day is asked ('现在伦敦几点？') and a result says it for a zone (`zones.time_answer` does)."""
    if not is_date_question(s.request.text):
        return None
    if not DAY_ASKED.search(s.request.text) and any(
            time_answer(_unwrap(c.result), s.request) for c in shown if error_of(c) is None):
        return None
    for call in shown:
        if error_of(call) is not None:
            continue
        for m in _dates_in(_unwrap(call.result)):
            try:
                moment = dt.datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)),
                                     int(m.group(4) or 0), int(m.group(5) or 0))
            except ValueError:
                continue
            return say_date(moment, s.zh, bool(m.group(4)) and bool(TIME_QUESTION.search(s.request.text)))
    return None


def made_up_date(s: Situation) -> str:
    """What a model with no clock says when asked the date: a confident, fixed, wrong date from its past.

    Real models answer from their training data unless a tool tells them the date; this is the
    practice model doing the same, deterministically (MADE_UP_TODAY), so a lesson can show why a
    clock tool is needed.
    """
    return say_date(MADE_UP_TODAY, s.zh, bool(TIME_QUESTION.search(s.request.text)))


def reported_calls(s: Situation) -> list[Call]:
    """The calls an answer reports: repeats folded, failures put right later and stepping stones left out."""
    calls = _fold(list(s.calls))
    calls = [c for i, c in enumerate(calls) if error_of(c) is None or not any(   # a failure put right later
        later.name == c.name and later.result is not None and error_of(later) is None for later in calls[i + 1:])]
    return [c for i, c in enumerate(calls) if not _consumed(c, calls[i + 1:], s.request.text)] or calls


def answer_from_results(s: Situation) -> str:
    """The final answer: every result that was not just a stepping stone, labelled, errors reported."""
    shown = reported_calls(s)
    dated = _date_answer(s, shown)
    if dated:
        return dated
    tools = {t.name: t for t in s.tools}
    lines: list[str] = []
    merged: dict[str, int] = {}                 # label -> the line several tools' results about it share
    said: dict[str, set[str]] = {}              # label -> the key=value pairs that line says already
    for c in shown:
        label, err, tool = _label(c, shown, s.request.text, s.zh), error_of(c), tools.get(c.name)
        if c.result is None:
            lines.append(f"{label}：没有收到结果" if s.zh else f"{label}: no result came back")
            continue
        if err is not None:
            lines.append(_failure(c, tool, err, label, s.zh))
            continue
        computed = (time_answer(_unwrap(c.result), s.request) or _conversion(c, tool, s.zh)
                    or _computation(c, tool, s.zh) or saved_file(_unwrap(c.result), s))
        if computed:
            lines.append(computed)
            continue
        result = _unwrap(c.result)
        if isinstance(result, dict) and len(result) > 1 and label in {short(v) for v in c.arguments.values()}:
            result = {k: v for k, v in result.items() if short(v) != label}      # the label already says it
        if isinstance(result, dict) and label and label in merged:      # said once is enough ('city 北京')
            result = {k: v for k, v in result.items() if f"{k}={canonical_json(v)}" not in said[label]} or result
        orders = bool(tool and tool.features & {"#order", "#shipping"})
        body = render(result, s.zh, orders=orders)
        if isinstance(result, dict) and label:
            said.setdefault(label, set()).update(f"{k}={canonical_json(v)}" for k, v in result.items())
        if isinstance(result, dict) and label and label in merged:
            lines[merged[label]] += ("，" if s.zh else ", ") + body
            continue
        if isinstance(result, str) and (not label or label in body):
            lines.append(body)                  # a sentence that names its subject already
            continue
        if isinstance(result, dict) and label:
            merged[label] = len(lines)
        lines.append((f"{label}：{body}" if s.zh else f"{label}: {body}") if label else body)
    if len(lines) == 1:
        text = lines[0] if lines[0][-1:] in "。.！!？?…" else lines[0] + ("。" if s.zh else ".")
    else:
        text = ("结果如下：\n" if s.zh else "Here is what I found:\n") + "\n".join(f"- {line}" for line in lines)
    compare = _comparison(s, shown)
    return f"{text}\n{compare}" if compare else text


def _cut(text: str) -> str:
    """A description cut to DESCRIBED characters.

    >>> _cut("城市名称"), len(_cut("x" * 500))
    ('城市名称', 101)
    """
    return text if len(text) <= DESCRIBED else text[:DESCRIBED] + "…"


def _missing_inputs(s: Situation) -> tuple[OfferedTool, list[Param]] | None:
    """The best relevant tool that cannot be called for lack of inputs, and what it lacks."""
    for tool in relevant_tools(s):
        missing = set(fill_arguments(tool, s).missing)
        if missing:
            return tool, [p for p in tool.params if p.name in missing]
    return None


def _wanted(p: Param, zh: bool) -> str:
    """A missing input named for the user: its description, and the members an enum allows.

    >>> _wanted(Param("currency", {"enum": ["USD", "EUR"]}, True, "外币代码"), True)
    'currency（外币代码；可选：USD、EUR）'
    >>> _wanted(Param("unit", {"enum": ["celsius", "fahrenheit"]}, True, ""), False)
    'unit (one of: celsius, fahrenheit)'
    """
    members = enum_of(p.schema)
    allowed = ("、" if zh else ", ").join(short(m) for m in members[:LISTED]) + (
        ("等" if zh else ", …") if len(members) > LISTED else "")
    parts = [_cut(p.description)] if p.description else []
    parts += [("可选：" if zh else "one of: ") + allowed] if members else []
    if not parts:
        return p.name
    return f"{p.name}（{'；'.join(parts)}）" if zh else f"{p.name} ({'; '.join(parts)})"


def _would_call(name: str, arguments: dict, zh: bool) -> str:
    """A planned call named for a note: 'get_weather（北京）' / 'get_weather (北京)'."""
    values = [short(v) for v in arguments.values()]
    if not values:
        return name
    return f"{name}（{'，'.join(values)}）" if zh else f"{name} ({', '.join(values)})"


# -----------------------------------------------------------------------------
# images, and what the tools' labelled output says about them

# '[Description of image tool:draw_chart:3f9a1c2b (PNG 480×300, 3 KB), written by a vision model. …]'
_DESCRIPTION = re.compile(r"\[Description of image (\S+?)(?: \([^)\]]*\))?, written by a vision model\.[^\]]*\]")
_QUOTE = re.compile(r"“([^”]*)”")
_CHART = re.compile(r"(?i)图表|chart|graph|plot|diagram")
_PICTURE = re.compile(r"(?i)图片|图像|照片|截图|image|picture|photo|screenshot")
_PATH_KEYS = ("path", "file", "filename", "file_name", "file_path", "filepath", "saved_to", "output_path", "output")
_FILE_NAME = re.compile(r"^[^\s<>|\0]{0,200}\.[A-Za-z0-9]{2,5}$")


def image_answer(s: Situation) -> str:
    """What the images sent show, each described from its bytes; a question about their data answered first.

    The images are the user's (in the request) or the tools' (in the labelled tool output after it):
    either way the user's question is what is answered.
    """
    seen = [(image, look(image.url)) for image in s.images]
    numbered = len(seen) > 1
    lines = [say(v, s.zh, image.name or (str(k) if numbered else "")) for k, (image, v) in enumerate(seen, 1)]
    figure = figure_answer(s.request.text, "\n".join(quoted_texts(v) for _, v in seen), s.zh)
    body = lines[0] if len(lines) == 1 else "\n".join(f"- {line}" for line in lines)
    return f"{figure}\n{body}" if figure else body


def _described(notes: str) -> list[tuple[str, str]]:
    """(media id, description) for each '[Description of image …]' marker in the tool output's text."""
    marks = list(_DESCRIPTION.finditer(notes))
    return [(m.group(1), " ".join(notes[m.end():marks[k + 1].start() if k + 1 < len(marks) else None].split()))
            for k, m in enumerate(marks)]


def _from_descriptions(s: Situation, described: list[tuple[str, str]]) -> str | None:
    """The answer from vision models' descriptions: the figure asked about if the quoted text holds it, else
    what each description says; None when there is none."""
    if not described:
        return None
    quoted = " ".join(q for _, d in described for q in _QUOTE.findall(d)) or " ".join(d for _, d in described)
    figure = figure_answer(s.request.text, quoted, s.zh)
    if figure:
        return figure
    return "\n".join((f"根据视觉模型对图片 {i} 的描述：{_one_line(d, TRUNCATE)}" if s.zh
                      else f"According to a vision model's description of image {i}: {_one_line(d, TRUNCATE)}")
                     for i, d in described)


def notes_answer(s: Situation) -> str | None:
    """The answer a text-only model gives from the labelled tool output: from a vision model's description when
    there is one ('auto'), else that it cannot see the image ('off', or 'tool' with nothing examined yet);
    None when the output names no image at all."""
    described = _described("\n".join(s.notes))
    if described:
        return _from_descriptions(s, described)
    if not s.media_ids:
        return None
    ids = ("、" if s.zh else ", ").join(s.media_ids)
    if s.zh:
        return f"工具生成了图片（{ids}），但我是纯文本模型，看不到图片内容，所以没法告诉你图里有什么。"
    return (f"The tool produced an image ({ids}), but I am a text-only model and cannot see it, so I can't tell you "
            "what it shows.")


def saved_file(result: Any, s: Situation) -> str | None:
    """'图表已保存为 chart.png' / 'The chart was saved as chart.png.' for a result that is only a file name
    (`{"path": "chart.png"}`): the model got a name, not pixels, and says no more than that."""
    value = result.strip() if isinstance(result, str) else None
    if isinstance(result, dict) and 0 < len(result) <= 2:
        value = next((result[k] for k in _PATH_KEYS if isinstance(result.get(k), str)), None)
        if len(result) == 2 and not any(str(k).lower() in ("status", "ok", "success", "message") for k in result):
            value = None
    if not value or not _FILE_NAME.match(value):
        return None
    what = (("图表", "chart") if _CHART.search(s.request.text) else
            ("图片", "image") if _PICTURE.search(s.request.text) else ("文件", "file"))
    return f"{what[0]}已保存为 {value}。" if s.zh else f"The {what[1]} was saved as {value}."


def _with_long_output(s: Situation) -> str | None:
    """The answer about a spilled (or long, cut) output (`spilled.long_answer`), the turn's other results after it;
    None when there is none."""
    found = long_answer(s)
    if found is None:
        return None
    text, used = found
    others = tuple(c for c in s.calls if not any(c is u for u in used))
    return f"{text}\n\n{answer_from_results(replace(s, calls=others))}" if others else text


def compose_answer(s: Situation) -> str:
    """The text reply: about the images when there are any; from the results (and the labelled tool output) if
    there are any; else a greeting, a question or an honest 'no tool fits'."""
    if s.images:
        return image_answer(s)
    media_tools = {t.name for t in s.tools if looks_at_media(t)}
    looked = [c for c in s.calls if c.name in media_tools and c.result is not None and error_of(c) is None]
    if looked:                                  # 'tool' fallback: answered from what image_understand said
        said = "\n".join(str(_unwrap(c.result)) for c in looked)
        return _from_descriptions(s, _described(said)) or "\n".join(render(_unwrap(c.result), s.zh) for c in looked)
    noted = notes_answer(s) if s.notes else None
    if noted:
        return noted
    if s.calls:
        return _with_long_output(s) or answer_from_results(s)
    zh, names = s.zh, ("、" if s.zh else ", ").join(t.name for t in s.tools[:LISTED])
    note = ""
    if s.choice.mode == "none" and s.tools:
        note = ('这次请求的 tool_choice 是 "none"，所以我不调用工具。' if zh
                else 'tool_choice is "none" in this request, so I will not call a tool. ')
        would = next_calls(s)
        if would:
            listed = ("、" if zh else ", ").join(_would_call(n, a, zh) for n, a in would)
            return note + (f"如果可以调用工具，我会调用 {listed}。" if zh else f"Otherwise I would call {listed}.")
    chat = small_talk(s.request.text)
    if "thanks" in chat:
        return note + ("不客气！还有什么需要我用工具查的吗？" if zh
                       else "You're welcome! Anything else I can look up with the tools?")
    if "goodbye" in chat:
        return note + ("再见！有需要随时找我。" if zh else "Goodbye! Ask me any time.")
    if "greeting" in chat:
        if zh:
            return note + "你好！我是离线练习模型（practice model），回答是确定的，不需要 API key。" + (
                f"这次我可以使用这些工具：{names}。想让我做什么？" if s.tools
                else "这次请求没有提供工具，我只能简单聊几句。")
        return note + "Hello! I'm the offline practice model: deterministic, free, no API key needed. " + (
            f"The tools I can use this time: {names}. What would you like to do?" if s.tools
            else "This request has no tools, so all I can do is chat a little.")
    if chat:                                                  # '好的', 'OK', '收到': an acknowledgement
        return note + ("好的！还有什么需要我用工具查的吗？" if zh
                       else "Sure! Anything else I can look up with the tools?")
    relevant = relevant_tools(s) if s.tools else []
    if is_date_question(s.request.text) and not relevant:
        return note + made_up_date(s)
    blocked = _missing_inputs(s) if s.choice.mode != "none" else None
    if blocked:
        tool, params = blocked
        wanted = ("、" if zh else ", ").join(_wanted(p, zh) for p in params[:LISTED])
        wanted += ("等" if zh else ", …") if len(params) > LISTED else ""
        return (f"要调用 {tool.name}，我还需要知道：{wanted}。请补充后再问我一次。" if zh
                else f"To use {tool.name} I still need: {wanted}. Tell me and ask again.")
    more = ("等" if zh else ", …") if len(s.tools) > LISTED else ""
    if zh:
        tools = f"这次的工具（{names}{more}）都不适合这个请求。" if s.tools else "这次请求没有提供任何工具。"
        return (note + "我是离线练习模型（practice model），只会通过调用工具来回答，" + tools +
                "想和真正的大模型对话，请在 .env 里设置 LLM_BASE_URL（以及 LLM_API_KEY、LLM_MODEL）。")
    tools = f"none of the tools in this request ({names}{more}) fits." if s.tools else "this request has no tools."
    return (note + "I'm the offline practice model: I can only answer by calling tools, and " + tools +
            " To talk to a real model, set LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL) in .env.")
