"""Stage 5 of the planner: the text reply, in the user's language.

    compose_answer(s)   from the results when calls were made; else a greeting, a thank-you, a
                        question for the inputs a tool still needs, or an honest "no tool fits"
    render(value, zh)   a JSON result as a short readable phrase ('温度 22，天气 晴')
    call_text(n, args)  a call as a learner would write it ('add(a=1, b=2)')

An answer lists every result that was not just a stepping stone of a chain (the user id that
led to the orders is left out), labels each by what it is about ('北京：…'), reports errors as
errors, and when the question compares ('哪个更暖和') names the winner. It never echoes
function-call syntax at the user except to label a computation.

Concessions: results are rendered, not summarised (at most 12 keys, 8 list items and TRUNCATE
characters of text each); a comparison looks at one numeric key shared by every result.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .filling import fill_arguments
from .language import COMPARE, LOWER_IS_ASKED, is_greeting, is_thanks, split_identifier, tags_of
from .planning import next_calls
from .ranking import relevant_tools
from .schemas import Param
from .situation import TRUNCATE, Call, OfferedTool, Situation, error_of, scalars
from .wire import canonical_json

_WORD = re.compile(r"\S+")
SHORT = 40              # characters of an argument value quoted in a label ('北京', 'add(a=1, b=2)')
LISTED = 8              # tools (or missing parameters) named in one answer
DESCRIBED = 100         # characters of a parameter's description quoted when asking for it
_LABELS_ZH = {"temperature": "温度", "temp": "温度", "condition": "天气", "weather": "天气", "humidity": "湿度",
              "wind": "风力", "status": "状态", "price": "价格", "total": "合计", "amount": "金额", "name": "名称",
              "user_id": "用户ID", "order_id": "订单号", "items": "商品", "item": "商品", "product": "商品",
              "quantity": "数量", "qty": "数量", "count": "数量", "date": "日期", "city": "城市", "result": "结果",
              "message": "消息", "unit": "单位", "description": "描述", "email": "邮箱", "phone": "电话",
              "address": "地址", "currency": "货币", "rate": "汇率", "symbol": "代码", "title": "标题",
              "orders": "订单", "created_at": "创建时间", "time": "时间", "value": "数值", "change": "涨跌"}


def _key_label(key: str, zh: bool) -> str:
    """A result key as a label: 'temperature' -> '温度' in Chinese, 'order_id' -> 'order id' in English."""
    return _LABELS_ZH.get(key.lower(), key) if zh else key.replace("_", " ")


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


def render(value: Any, zh: bool, depth: int = 0) -> str:
    """A JSON value as a short readable phrase: objects as 'label value' pairs, lists as enumerations.

    >>> render({"temperature": 22, "condition": "晴"}, zh=True)
    '温度 22，天气 晴'
    """
    sep = "，" if zh else ", "
    if value is None:
        return "无" if zh else "none"
    if isinstance(value, bool):
        return ("是" if value else "否") if zh else ("yes" if value else "no")
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        text = _one_line(value, TRUNCATE)
        return (f"“{text}”" if zh else f'"{text}"') if depth == 0 else text
    if isinstance(value, dict):
        if not value:
            return "（空）" if zh else "(empty)"
        if depth >= 3:
            return json.dumps(value, ensure_ascii=False)[:TRUNCATE]
        pairs = sep.join(f"{_key_label(str(k), zh)} {render(v, zh, depth + 1)}" for k, v in list(value.items())[:12])
        return (f"（{pairs}）" if zh else f"({pairs})") if depth >= 2 else pairs
    if isinstance(value, list):
        if not value:
            return "没有结果（空列表）" if zh else "no results (empty list)"
        nested = any(isinstance(v, (dict, list)) for v in value)
        joiner = ("；" if zh else "; ") if nested else ("、" if zh else ", ")
        items = [render(v, zh, max(depth, 1) + (1 if depth else 0)) for v in value[:8]]
        return joiner.join(items) + (("……" if zh else " …") if len(value) > 8 else "")
    return render(str(value), zh, depth)


def short(value: Any) -> str:
    """An argument value for a label: strings bare and cut at SHORT characters, others as JSON.

    >>> short("北京"), short(3.5), short({"a": "x" * 50}), short("y" * 50)[-3:]
    ('北京', '3.5', '{…}', 'yy…')
    """
    if isinstance(value, (dict, list)) and len(json.dumps(value, ensure_ascii=False)) > SHORT:
        return "{…}" if isinstance(value, dict) else "[…]"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHORT else text[:SHORT] + "…"


def call_text(name: str, arguments: dict) -> str:
    """A call as a learner would write it.

    >>> call_text('add', {'a': 1, 'b': 2})
    'add(a=1, b=2)'
    """
    return f"{name}({', '.join(f'{k}={short(v)}' for k, v in arguments.items())})"


def _label(call: Call, shown: list[Call]) -> str:
    """What a result is about: the entity ('北京') or, when that is unclear, the call itself."""
    plain = {k: v for k, v in call.arguments.items() if not isinstance(v, (dict, list))}
    siblings = [c for c in shown if c.name == call.name]
    if len(siblings) > 1:
        differing = [k for k, v in plain.items() if any(c.arguments.get(k) != v for c in siblings)]
        if differing:
            return "，".join(short(plain[k]) for k in differing)
    if len(call.arguments) == 1 and len(plain) == 1:
        ((_, value),) = plain.items()
        if isinstance(value, str) and short(value) == value:
            return value
    return call_text(call.name, call.arguments)


def _consumed(call: Call, later: list[Call], request_text: str) -> bool:
    """Whether a later call took an argument out of this call's result (so it was an intermediate step)."""
    if error_of(call) is not None:
        return False
    inside = {canonical_json(v) for _, v, _ in scalars(call.result)}
    for other in later:
        for v in other.arguments.values():
            if isinstance(v, (dict, list, bool)) or str(v) in request_text:
                continue                                # a value the user gave is nobody's result
            if canonical_json(v) in inside or canonical_json(str(v)) in inside:
                return True
    return False


def _comparison(s: Situation, shown: list[Call]) -> str:
    """'上海的温度更高（25）。' when the user asked which one is warmer / cheaper / ..."""
    if not COMPARE.search(s.request.text):
        return ""
    rows = [(c, _unwrap(c.result)) for c in shown if error_of(c) is None]
    rows = [(c, r) for c, r in rows if isinstance(r, dict)]

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    if len(rows) < 2:
        return ""
    common = [k for k, v in rows[0][1].items() if number(v) and all(number(r.get(k)) for _, r in rows)]
    if not common:
        return ""
    key = next((k for k in common if tags_of(k) & s.request.tags), common[0])
    low = bool(LOWER_IS_ASKED.search(s.request.text))
    target = (min if low else max)(r[key] for _, r in rows)
    winners = [_label(c, shown) for c, r in rows if r[key] == target]
    if s.zh:
        degree = ("更" if len(rows) == 2 else "最") + ("低" if low else "高")
        return f"{'、'.join(winners)}的{_key_label(key, True)}{degree}（{render(target, True)}）。"
    degree = ("lower" if low else "higher") if len(rows) == 2 else ("lowest" if low else "highest")
    verb = "has" if len(winners) == 1 else "have"
    return f"{' and '.join(winners)} {verb} the {degree} {_key_label(key, False)} ({render(target, False)})."


def answer_from_results(s: Situation) -> str:
    """The final answer: every result that was not just a stepping stone, labelled, errors reported."""
    calls = list(s.calls)
    shown = [c for i, c in enumerate(calls) if not _consumed(c, calls[i + 1:], s.request.text)] or calls
    lines = []
    for c in shown:
        label, err = _label(c, shown), error_of(c)
        if err is not None and not s.zh:
            lines.append(f"I couldn't {' '.join(split_identifier(c.name))} ({label}): {err}")
            continue
        if c.result is None:
            body = "没有收到结果" if s.zh else "no result came back"
        elif err is not None:
            body = f"调用 {c.name} 失败：{err}"
        else:
            result = _unwrap(c.result)
            if isinstance(result, dict) and len(result) > 1 and label in c.arguments.values():
                result = {k: v for k, v in result.items() if v != label}      # the label already says it
            body = render(result, s.zh)
        if label == call_text(c.name, c.arguments) and err is None and not isinstance(_unwrap(c.result), (dict, list)):
            lines.append(f"{label} 的结果是 {body}" if s.zh else f"{label} returned {body}")  # a computation
        else:
            lines.append(f"{label}：{body}" if s.zh else f"{label}: {body}")
    if len(lines) == 1:
        text = lines[0] if lines[0][-1:] in "。.！!？?" else lines[0] + ("。" if s.zh else ".")
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


def compose_answer(s: Situation) -> str:
    """The text reply: from the results if there are any, else a greeting, a question or an honest 'no tool fits'."""
    if s.calls:
        return answer_from_results(s)
    zh, names = s.zh, ("、" if s.zh else ", ").join(t.name for t in s.tools[:LISTED])
    note = ""
    if s.choice.mode == "none" and s.tools:
        note = ('这次请求的 tool_choice 是 "none"，所以我不调用工具。' if zh
                else 'tool_choice is "none" in this request, so I will not call a tool. ')
        would = next_calls(s)
        if would:
            listed = ("、" if zh else ", ").join(call_text(n, a) for n, a in would)
            return note + (f"如果可以调用，我会调用 {listed}。" if zh else f"Otherwise I would call {listed}.")
    if is_thanks(s.request.text):
        return note + ("不客气！还有什么需要我用工具查的吗？" if zh
                       else "You're welcome! Anything else I can look up with the tools?")
    if is_greeting(s.request.text):
        if zh:
            return note + "你好！我是离线练习模型（practice model），回答是确定的，不需要 API key。" + (
                f"这次我可以使用这些工具：{names}。想让我做什么？" if s.tools
                else "这次请求没有提供工具，我只能简单聊几句。")
        return note + "Hello! I'm the offline practice model: deterministic, free, no API key needed. " + (
            f"The tools I can use this time: {names}. What would you like to do?" if s.tools
            else "This request has no tools, so all I can do is chat a little.")
    blocked = _missing_inputs(s) if s.choice.mode != "none" else None
    if blocked:
        tool, params = blocked
        wanted = ("、" if zh else ", ").join(
            (f"{p.name}（{_cut(p.description)}）" if zh else f"{p.name} ({_cut(p.description)})") if p.description
            else p.name for p in params[:LISTED])
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
