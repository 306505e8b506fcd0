"""Summaries: what the practice model answers when it is asked to summarise a conversation.

    summary_request(text) -> str | None     the transcript after 'Summarise this conversation:', or None
    summarise(transcript) -> str            a few lines, in the conversation's language

`trimming.model_summary` asks a model to summarise the part of a history it is about to drop: one
user message, 'Summarise this conversation:' and then a transcript, one message per line, as
`trimming._line` writes it:

    user: 北京和上海天气？
    assistant: [calls get_weather({"city": "北京"})] [calls get_weather({"city": "上海"})]
    tool: 多云
    tool: 晴
    assistant: 北京晴，上海多云。

A real model paraphrases. The practice model copies: its summary is extractive, one line per user
turn, saying who asked what, what each tool returned and what the assistant answered, so every
word in it comes from the transcript (JSON results are rendered as the planner's answers render
them, `answers.render`). It is in the language of the latest question, and short: at most
MAX_TURNS turns in full, the questions of earlier ones on one more line, each quote cut.

The transcript has no `tool_call_id`s, so when one assistant message made several calls, which
result answers which call is not known. A result is paired with a call only when it names that
call's argument values and no other call's (or is the one left over when all the others are
paired); the rest are listed as results of the round, without pretending to know whose they are.
A long text result (a log) is reduced to its error lines, or its first line, and a spilled one
(`spilled.cut_of`) says where its full text is. An earlier summary in the transcript (a system
line) is carried over, its lines first.

Concessions: a transcript line that happens to begin with 'user: ' inside a tool result starts a
new message (the format cannot tell); only the first MAX_TRANSCRIPT characters are read.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .answers import render, short
from .language import has_cjk
from .situation import MAX_TRANSCRIPT, TOOL_OUTPUT_LABEL, Call, error_of, parse_json, summary_request
from .spilled import cut_of, key_lines

__all__ = ["facts", "summarise", "summary_request"]

SUMMARY_LABEL = "Summary of the earlier conversation"
"""How the framework's summary message begins (`trimming.SUMMARY_LABEL`, copied: see the package rule)."""
MAX_TURNS = 6               # turns summarised in full (the latest ones); earlier ones: their questions only
MAX_EARLIER = 6             # lines kept of an earlier summary
MAX_ROUND = 8               # calls (and results) of one round said; a bigger round is listed, not paired
QUESTION = 120              # characters quoted of a question
ANSWER = 160                # characters quoted of an answer
RESULT = 160                # characters of one result's facts

_ROLE = re.compile(r"^(system|developer|user|assistant|tool|function): ?(.*)$")
_CALL = re.compile(r"\[calls ([^\s()\[\]]{1,128})\(")


# ---------------------------------------------------------------------------------------------
# Reading the transcript.


@dataclass
class _Round:
    """One assistant message's calls and the results that followed it."""

    calls: list[Call] = field(default_factory=list)
    results: list[str] = field(default_factory=list)


@dataclass
class _Turn:
    """One user question and what happened after it."""

    question: str | None
    rounds: list[_Round] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)          # the framework's labelled tool output (images)
    answer: str = ""


def _messages(transcript: str) -> list[tuple[str, str]]:
    """(role, text) per message; a line that does not start with a role continues the message before it."""
    out: list[tuple[str, str]] = []
    for line in transcript.splitlines():
        m = _ROLE.match(line)
        if m:
            out.append((m.group(1), m.group(2)))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
    return out


def _calls(text: str) -> tuple[list[Call], str]:
    """The '[calls name(arguments)]' markers of an assistant line, and the text around them."""
    calls: list[Call] = []
    rest, pos = [], 0
    decoder = json.JSONDecoder()
    for m in _CALL.finditer(text):
        if m.start() < pos:
            continue
        try:
            arguments, end = decoder.raw_decode(text, m.end())
        except ValueError:
            arguments, end = None, text.find(")]", m.end())
        if end < 0 or not text.startswith(")]", end):
            continue
        rest.append(text[pos:m.start()])
        calls.append(Call(m.group(1), arguments if isinstance(arguments, dict) else {}, None, text[m.end():end]))
        pos = end + 2
    rest.append(text[pos:])
    return calls, " ".join(part.strip() for part in rest if part.strip())


def _turns(messages: list[tuple[str, str]]) -> tuple[list[_Turn], list[str]]:
    """The user turns of a transcript, and the lines of any earlier summary in it."""
    turns: list[_Turn] = []
    earlier: list[str] = []
    for role, text in messages:
        if role in ("system", "developer"):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            earlier += [line for line in lines if not line.startswith(SUMMARY_LABEL)]
            continue
        if role == "user" and not text.lstrip().startswith(TOOL_OUTPUT_LABEL):
            turns.append(_Turn(text.strip()))
            continue
        if not turns:
            turns.append(_Turn(None))               # the transcript starts in the middle of a turn
        turn = turns[-1]
        if role == "user":                          # the labelled tool output (images a tool produced)
            turn.notes.append(text.lstrip()[len(TOOL_OUTPUT_LABEL):].lstrip(" .:：\n"))
        elif role == "assistant":
            calls, said = _calls(text)
            if calls:
                turn.rounds.append(_Round(calls))
            elif said:
                turn.answer = said
        elif role in ("tool", "function"):
            if not turn.rounds:
                turn.rounds.append(_Round())
            turn.rounds[-1].results.append(text)
    return turns, earlier[:MAX_EARLIER]


# ---------------------------------------------------------------------------------------------
# Writing the summary.


def _cut(text: str, limit: int) -> str:
    """One line, at most `limit` characters ('…' when cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"


def _who(call: Call, zh: bool) -> str:
    """A call named by its tool and argument values: 'get_weather（北京）' / 'get_weather (北京)'."""
    values = [short(v) for v in call.arguments.values()] or ([_cut(call.arguments_text, 40)]
                                                              if call.arguments_text.strip("{} ") else [])
    if not values:
        return call.name
    return f"{call.name}（{'，'.join(values)}）" if zh else f"{call.name} ({', '.join(values)})"


def facts(result: str, zh: bool) -> str:
    """What one tool result says, short: JSON rendered, an error as one, a long text by its key lines.

    >>> facts('{"order_id": "A1001", "status": "shipped"}', False), facts('{"error": "city not found"}', True)
    ('order ID A1001, status shipped', '出错：city not found')
    """
    value = parse_json(result)
    error = error_of(Call("", {}, value))
    if error is not None and not (isinstance(value, str) and "\n" in value.strip()):
        return _cut(("出错：" if zh else "error: ") + error, RESULT)
    if not isinstance(value, str):
        return _cut(render(value, zh), RESULT)
    cut = cut_of(value)
    where = ""
    if cut is not None:
        value = cut.visible
        saved = f"全文在 {cut.path}" if zh else f"the full text is in {cut.path}"
        lost = "全文没能保存" if zh else "the full text was not saved"
        where = f"（输出过长被截断，{saved if cut.path else lost}）" if zh else \
            f" (too long, cut; {saved if cut.path else lost})"
    lines = [line.strip() for line in value.splitlines() if line.strip()]
    if len(lines) > 1:
        value = " / ".join(key_lines(lines, 2) or lines[:1])
    return _cut(value, RESULT) + where


def _results(r: _Round, zh: bool) -> list[str]:
    """'get_weather（北京）返回：晴' per paired result; the unpaired ones together, not attributed. A round of more
    than MAX_ROUND calls or results is not paired at all: its first ones are listed."""
    if len(r.calls) > MAX_ROUND or len(r.results) > MAX_ROUND:
        who = ("、" if zh else ", ").join(_who(c, zh) for c in r.calls[:MAX_ROUND])
        found = ("；" if zh else "; ").join(facts(result, zh) for result in r.results[:MAX_ROUND])
        return [f"{len(r.calls)} 次调用（{who}……）的 {len(r.results)} 个结果：{found}……" if zh else
                f"{len(r.calls)} calls ({who}, …) returned {len(r.results)} results: {found} …"]
    paired: dict[int, int] = {}                     # call index -> result index
    for j, result in enumerate(r.results):
        named = [i for i, c in enumerate(r.calls) if i not in paired and _names(result, c)]
        if len(named) == 1:
            paired[named[0]] = j
    left_calls = [i for i in range(len(r.calls)) if i not in paired]
    left_results = [j for j in range(len(r.results)) if j not in paired.values()]
    if len(left_calls) == 1 and len(left_results) == 1:
        paired[left_calls[0]], left_calls, left_results = left_results[0], [], []
    said = "返回：" if zh else " returned: "
    out = [f"{_who(r.calls[i], zh)}{said}{facts(r.results[j], zh)}" for i, j in sorted(paired.items())]
    if left_results:
        who = ("、" if zh else ", ").join(_who(r.calls[i], zh) for i in left_calls) or ("工具" if zh else "a tool")
        found = ("；" if zh else "; ").join(facts(r.results[j], zh) for j in left_results)
        out.append(f"{who}的结果（无法对应到具体调用）：{found}" if zh
                   else f"{who} returned (which result is whose is not known): {found}")
    elif left_calls:
        waiting = ("、" if zh else ", ").join(_who(r.calls[i], zh) for i in left_calls)
        out.append(f"{waiting}没有结果" if zh else f"{waiting}: no result")
    return out


def _names(result: str, call: Call) -> bool:
    """Whether a result mentions every plain argument value of a call (and the call has one)."""
    values = [str(v) for v in call.arguments.values() if isinstance(v, (str, int, float)) and str(v)]
    return bool(values) and all(v in result for v in values)


def _turn_line(turn: _Turn, zh: bool) -> str:
    """One turn as one line."""
    parts = []
    if turn.question is not None:
        asked = _cut(turn.question, QUESTION)
        parts.append(f"用户问：“{asked}”" if zh else f'the user asked "{asked}"')
    for r in turn.rounds:
        parts += _results(r, zh)
    for note in turn.notes:
        parts.append(f"工具输出：{_cut(note, RESULT)}" if zh else f"tool output: {_cut(note, RESULT)}")
    if turn.answer:
        said = _cut(turn.answer, ANSWER)
        parts.append(f"助手答：“{said}”" if zh else f'the assistant answered "{said}"')
    line = ("；" if zh else "; ").join(parts)
    return "- " + (line if zh else line[:1].upper() + line[1:])


def summarise(transcript: str, chinese: bool = False) -> str:
    """An extractive summary of a transcript, one line per turn, in the language of its latest question (with no
    question in it: Chinese if it has any, or if `chinese`, the language of the request).

    >>> print(summarise('user: 北京天气？\\nassistant: [calls get_weather({"city": "北京"})]\\ntool: 晴\\n'
    ...                 'assistant: 北京晴。'))
    - 用户问：“北京天气？”；get_weather（北京）返回：晴；助手答：“北京晴。”
    """
    turns, earlier = _turns(_messages(transcript[:MAX_TRANSCRIPT]))
    questions = [t.question for t in turns if t.question]
    zh = has_cjk(questions[-1]) if questions else chinese or has_cjk(transcript[:MAX_TRANSCRIPT])
    if not turns and not earlier:
        return "没有可以总结的内容：对话是空的。" if zh else "Nothing to summarise: the conversation is empty."
    lines = [line if line.startswith("- ") else "- " + line for line in earlier]
    older, recent = turns[:-MAX_TURNS], turns[-MAX_TURNS:]
    asked = [f"“{_cut(t.question, 60)}”" if zh else f'"{_cut(t.question, 60)}"' for t in older if t.question]
    if asked:
        listed = ("；" if zh else "; ").join(asked[:MAX_TURNS]) + ("……" if len(asked) > MAX_TURNS else "")
        lines.append(f"- 更早之前，用户还问过：{listed}。" if zh else f"- Before that, the user also asked: {listed}.")
    lines += [_turn_line(t, zh) for t in recent]
    return "\n".join(lines)
