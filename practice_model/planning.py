"""Stage 4 of the planner: which calls to make now.

    next_calls(s)        under tool_choice 'auto': the relevant tools' calls, or the calls that
                         produce their missing inputs first; [] means it is time to answer
    forced_calls(s, n)   under a named or 'required' tool_choice: that tool, arguments invented
                         where the request has none (as real models do rather than break the schema)

Small talk ('谢谢！', '好的', 'OK', '你好') is answered, never planned: none of its words is
taken for an argument value ('谢谢' is not a user name). Three rules keep every run finite and
sensible: a call (same name, same arguments) is never
repeated after the latest user message (but see doubt, below); after MAX_ROUNDS rounds the
planner answers whatever it has; a tool is left out when a clearly better one (OUTRANKED) uses
the same values ('打八折' goes to the discount tool, not also to multiply).

Two pitfalls happen here on purpose, because real models fall into them (lessons show them):

- **A schema without a `required` list** reads as "every parameter is optional": the first call
  of such a tool in a turn leaves every argument out (`get_weather` is called with `{}` for a
  question about 上海, so a tool that falls back on `args.get("city", "北京")` answers for 北京,
  and the model reports it with confidence). Only an error result makes it call again, with the
  arguments filled in; a result that looks fine is believed.
- **A description that casts doubt on the result** ('结果可能不准确，如有疑问请再次调用确认',
  'results may be stale; call again to confirm': `language.DOUBT`) makes the model check again:
  once nothing new is left to call, it repeats that tool's calls with the same arguments, round
  after round, until MAX_ROUNDS, an error, or a tool message that says to stop repeating
  (`language.STOP_REPEATING`, as the framework's repeated-call guard says). A description that
  states the result is authoritative ('查一次即可作答') causes nothing of the kind.

A tool clearly outranked (OUTRANKED) by a better one that cannot be called for lack of an input is not called
in its place with the values the better one would have used ('What time is 3 pm in Springfield in Tokyo?' is
not answered with the time now in Tokyo): the answer asks for the input. And a tool that itself takes a time
zone or a time of day is never planned as the *producer* of one (`USER_GIVEN`): those come from the user.

A tool that changes files (`spilled.writes_files`: a path parameter, and writing words in its name or at
the start of its description, like sed or echo_into) is planned only when the request asks for a change
(CHANGE_ASKED), as a careful model does: "read notes.txt" never overwrites notes.txt.

A result the framework spilled to a file (its `<system-reminder>` names the file) is followed up
before anything else: the offered tool that reads files is called on it (`spilled.reading_calls`),
once; then the planner answers.

An image a tool produced reaches a text-only model as a media id only ('tool' fallback): when the
request asks about it and a tool takes a `media_id` (`image_understand`), that tool is called with
the id and the user's question before anything else (`media_calls`); it is never planned otherwise.

Concessions: a chain is planned through at most three producers, for at most MAX_CHAINED missing
inputs of a tool, visiting at most MAX_EXPANSIONS tools in all (a ring of tools that each need
another's output would otherwise be explored combinatorially); a follow-up ('那上海呢？') reuses
the previous turn's tool only when the new message names a value of the same kind.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .filling import fill_arguments, param_kind, param_role
from .language import DOUBT, FINAL, STOP_REPEATING, describe, salient, small_talk, split_identifier
from .ranking import rank_tools, relevant_tools
from .schemas import Param, json_type
from .situation import Call, OfferedTool, Situation, error_of, once
from .spilled import reading_calls, writes_files
from .wire import canonical_json

# a request about what an image shows (asked after a tool drew or fetched one)
ABOUT_IMAGE = re.compile(r"(?i)图里|图中|图上|图表里|图表中|图片里|图片中|照片里|画面|显示|看到|看看|描述|内容|哪|什么|"
                         r"多少|几|趋势|\b(?:image|picture|photo|chart|graph|plot|"
                         r"show|shows|see|look|which|what|how many|how much|trend|describe)\b|[?？]")
CHANGE_ASKED = re.compile(r"(?i)\b(?:write|rewrite|overwrite|replace|change|edit|update|save|create|fix|modify|append|"
                          r"add|insert|delete|remove|rename|correct|substitute|put)\b|写|改|替换|保存|覆盖|创建|新建|"
                          r"更新|编辑|删除|添加|加上|追加")
MAX_ROUNDS = 8          # tool-call rounds after one user message before the planner insists on answering
MAX_CALLS = 8           # calls in one reply, all tools together
OUTRANKED = 0.75        # below this share of another tool's score, a tool using the same values is left out
MAX_EXPANSIONS = 256    # tools visited (filled, producers looked for) while planning one reply
MAX_CHAINED = 4         # missing inputs of one tool whose producers are looked for
USER_GIVEN = ("timezone", "clock")   # kinds of input a tool that takes the same kind is never the producer of


def call_key(name: str, arguments: Any) -> str:
    """Identity of a call: same name and same arguments.

    >>> call_key('f', {'b': 1, 'a': 2})
    'f {"a":2,"b":1}'
    """
    return f"{name} {canonical_json(arguments)}"


def producers(p: Param, consumer: OfferedTool, s: Situation) -> list[OfferedTool]:
    """Tools that could produce a missing input: `user_id` -> the tools whose name or text says 'user'."""
    return once(s, f"producers of {consumer.name}", p, lambda: _producers(p, consumer, s))


def _producers(p: Param, consumer: OfferedTool, s: Situation) -> list[OfferedTool]:
    """`producers`, computed."""
    words = [w for w in split_identifier(p.name) if w not in ("id", "ids", "name", "key", "no")]
    words = words or list(split_identifier(p.name))
    target = describe(" ".join(words))
    scored = []
    kind = param_kind(p)
    for t in s.tools:
        if t.name == consumer.name or p.name in t.required:
            continue
        if kind in USER_GIVEN and any(param_kind(q) == kind for q in t.params):
            continue                        # it takes a time zone itself: it is no source of one
        points = 2 * len(target & t.name_features) + len(target & t.features) + (3 if p.name in t.description else 0)
        if points:
            scored.append((points, t))
    best = max((sc for sc, _ in scored), default=0)
    return [t for sc, t in scored if sc == best]


def _plan_tool(tool: OfferedTool, s: Situation, done: set[str], visiting: frozenset[str],
               budget: list[int]) -> list[tuple[str, dict]]:
    """Calls for a tool, or for the tools that would produce its missing inputs (`budget`: expansions left)."""
    if budget[0] <= 0:
        return []
    budget[0] -= 1                                      # every visit counts, even one cut short below
    if tool.name in visiting or len(visiting) > 3:
        return []
    if not tool.lists_required:                         # no `required` list: every argument reads as optional
        earlier = [c for c in s.calls if c.name == tool.name]
        if not earlier:
            return [] if call_key(tool.name, {}) in done else [(tool.name, {})]
        if all(error_of(c) is None for c in earlier):
            return []                                   # it answered; the model believes it
    filling = fill_arguments(tool, s)
    if not filling.missing:
        return [(tool.name, a) for a in filling.variants if call_key(tool.name, a) not in done]
    by_name = {q.name: q for q in reversed(tool.params)}
    out: list[tuple[str, dict]] = []
    for name in filling.missing[:MAX_CHAINED]:
        for producer in producers(by_name[name], tool, s):
            if budget[0] <= 0:
                return out
            out += _plan_tool(producer, s, done, visiting | {tool.name}, budget)
    return out


def _follow_up(s: Situation, done: set[str]) -> list[tuple[str, dict]]:
    """'那上海呢？' / 'And London?': a tool of the previous turn that takes the new entity, with it swapped in."""
    for last in reversed(s.previous if s.request.entities else ()):
        tool = next((t for t in s.tools if t.name == last.name), None)
        filling = fill_arguments(tool, s) if tool else None
        if tool is None or not filling or not filling.from_request:
            continue
        new = [{k: v for k, v in a.items() if k in filling.from_request} for a in filling.variants]
        if not any(e.role for e in s.request.entities):
            new = [_to_the_asked_end(tool, a) for a in new]
        changed = [{**last.arguments, **a} for a in new]
        return [(tool.name, a) for a in changed if call_key(tool.name, a) not in done and a != last.arguments]
    return []


def _to_the_asked_end(tool: OfferedTool, new: dict) -> dict:
    """A follow-up's lone value with no cue ('那纽约呢？') changes the end that was asked about (the target zone,
    the destination), not the one given: it moves from a 'from' parameter to its 'to' twin of the same kind."""
    by_name = {p.name: p for p in tool.params}
    for name in [n for n in new if n in by_name and param_role(by_name[n]) == "from"]:
        twin = next((q.name for q in tool.params if param_role(q) == "to" and q.name not in new
                     and param_kind(q) == param_kind(by_name[name])), None)
        if twin is not None:
            new = {**{k: v for k, v in new.items() if k != name}, twin: new[name]}
    return new


def looks_at_media(tool: OfferedTool) -> bool:
    """Whether a tool examines an image by its media id (the framework's `image_understand(media_id, question)`).

    Such a tool is called by `media_calls` alone, once an id is known: the request never holds one.
    """
    return any(p.name == "media_id" for p in tool.params)


def media_calls(s: Situation, done: set[str]) -> list[tuple[str, dict]]:
    """'image_understand' for each image a tool produced this turn, with the user's question, when the request
    is about what the image shows (and the model cannot see it itself: it was sent no image parts)."""
    if s.images or not s.media_ids or not ABOUT_IMAGE.search(s.request.text):
        return []
    out = []
    for tool in (t for t in s.tools if looks_at_media(t)):
        for media_id in s.media_ids:
            args = {p.name: media_id if p.name == "media_id" else s.request.text for p in tool.params
                    if p.name == "media_id" or (p.required and json_type(p.schema) == "string")
                    or p.name in ("question", "prompt", "query")}
            if call_key(tool.name, args) not in done:
                out.append((tool.name, args))
        break                                               # one such tool is enough
    return out[:MAX_CALLS]


def next_calls(s: Situation) -> list[tuple[str, dict]]:
    """The calls to make now under tool_choice 'auto'; [] means it is time to answer.

    >>> from practice_model.situation import analyse
    >>> s = analyse({"messages": [{"role": "user", "content": "北京天气"}], "tools": [{"type": "function",
    ...     "function": {"name": "get_weather", "description": "查询天气", "parameters": {"type": "object",
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})
    >>> next_calls(s)
    [('get_weather', {'city': '北京'})]
    """
    if s.rounds >= MAX_ROUNDS or small_talk(s.request.text):
        return []                           # '谢谢！' / 'OK' asks for nothing: no tool, none of its words an argument
    done = {call_key(c.name, c.arguments) for c in s.calls}
    reading = reading_calls(s)                  # a spilled result: read its file first, then answer
    if reading is not None:
        return [(n, a) for n, a in reading if call_key(n, a) not in done][:MAX_CALLS]
    looking = media_calls(s, done)
    if looking:
        return looking
    asked_change = CHANGE_ASKED.search(s.request.text)
    relevant = [t for t in relevant_tools(s) if not looks_at_media(t) and (asked_change or not writes_files(t))]
    budget = [MAX_EXPANSIONS]
    scores = {t.name: sc for sc, t in rank_tools(s)}

    def outranks(other: str, name: str) -> bool:            # clearly the better fit, not just first
        return scores.get(name, 0) < OUTRANKED * scores.get(other, 0)

    def values(args: dict) -> set[str]:
        return {canonical_json(v) for v in args.values() if not isinstance(v, (dict, list))}

    per_tool = [(t, _plan_tool(t, s, done, frozenset(), budget)) for t in relevant]
    stuck = {t.name: values(fill_arguments(t, s).variants[0]) for t, calls in per_tool
             if not calls and fill_arguments(t, s).missing}

    def in_place_of_stuck(tool: OfferedTool, args: dict) -> bool:     # 'Springfield' has no known zone:
        used = values(args)                                            # not get_current_time(Tokyo) instead
        return bool(used) and any(outranks(b, tool.name) and used <= had for b, had in stuck.items())

    planned = [c for t, calls in per_tool for c in calls
               if c[0] != t.name or not in_place_of_stuck(t, c[1])] if relevant else _follow_up(s, done)

    if not planned:
        return doubted_calls(s)
    unique: dict[str, tuple[str, dict]] = {}
    covered: dict[str, str] = {}                            # argument value -> the (better) tool that uses it
    for call in s.calls:                                    # what was already done counts too
        for v in call.arguments.values():
            if not isinstance(v, (dict, list)):
                covered.setdefault(canonical_json(v), call.name)
    for name, args in planned:                              # best-scoring tools first
        values = {canonical_json(v) for v in args.values() if not isinstance(v, (dict, list))}
        if values and all(v in covered and covered[v] != name and outranks(covered[v], name) for v in values):
            continue                    # a clearly better tool does this with the same values (discount vs multiply)
        for v in values:
            covered.setdefault(v, name)
        unique.setdefault(call_key(name, args), (name, args))
    return list(unique.values())[:MAX_CALLS]


def doubts(tool: OfferedTool) -> bool:
    """Whether a tool's description makes a model doubt its result and call it again to confirm.

    >>> from practice_model.situation import offered_tool
    >>> doubts(offered_tool({"name": "w", "description": "查询天气。结果可能不准确，如有疑问请再次调用确认"}))
    True
    >>> doubts(offered_tool({"name": "w", "description": "查询天气，数据直接来自气象服务，查一次即可作答"}))
    False
    """
    return bool(DOUBT.search(tool.description))


def doubted_calls(s: Situation) -> list[tuple[str, dict]]:
    """The calls a doubtful description makes the model repeat, same arguments (one of each), or [].

    Not once a result is an error or says to stop (repeating, or calling at all): then it answers.
    """
    doubtful = {t.name for t in s.tools if doubts(t)}
    latest: dict[str, Call] = {}
    for c in s.calls:
        if c.name in doubtful:
            latest[call_key(c.name, c.arguments)] = c
    out = []
    for call in latest.values():
        text = json.dumps(call.result, ensure_ascii=False) if not isinstance(call.result, str) else call.result
        if call.result is None or error_of(call) is not None or STOP_REPEATING.search(text) or FINAL.search(text):
            return []
        out.append((call.name, call.arguments))
    return out[:MAX_CALLS]


def invented(p: Param, s: Situation) -> Any:
    """What a model forced to call a tool puts in a required argument it has no value for.

    Real models make something up rather than break the schema; so does this one, visibly: the
    salient words of the request for a string, 0 for a number, the first member of an enum. Small
    talk is never made into a value: a forced call after '谢谢！' repeats what the previous turn
    sent under that parameter's name, or sends the name itself.

    >>> from practice_model.situation import analyse
    >>> s = analyse({"messages": [{"role": "user", "content": "Tell me a joke"}]})
    >>> invented(Param("city", {"type": "string"}, True, ""), s)
    'a joke'
    """
    kind = json_type(p.schema)
    if isinstance(p.schema.get("enum"), list) and p.schema["enum"]:
        return p.schema["enum"][0]
    if small_talk(s.request.text):              # '谢谢！' is nobody's name: what was asked before, else the name
        earlier = next((c.arguments[p.name] for c in reversed(s.previous) if p.name in c.arguments), None)
        return p.name if earlier is None else earlier
    return {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(
        kind, salient(s.request.text) or p.name)


def forced_calls(s: Situation, name: str) -> list[tuple[str, dict]]:
    """Calls of exactly this tool, arguments filled as well as possible (invented where the request has
    nothing); repeated if already done."""
    tool = next((t for t in s.tools if t.name == name), None)
    if tool is None:
        return [(name, {})]
    done = {call_key(c.name, c.arguments) for c in s.calls}
    filling = fill_arguments(tool, s)
    made_up = {p.name: invented(p, s) for p in tool.params if p.name in filling.missing}
    variants = [{p.name: {**a, **made_up}[p.name] for p in tool.params if p.name in {**a, **made_up}}
                for a in filling.variants]
    fresh = [a for a in variants if call_key(name, a) not in done]
    return [(name, a) for a in (fresh or variants[:1])]
