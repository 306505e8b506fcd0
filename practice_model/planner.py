"""The practice model's brain: a deterministic planner over ANY tools, in 中文 and English.

    plan(request) -> Reply          the `practice` persona: a Chat Completions body in, a Reply out

It is a pipeline of small pure functions, one module per stage, so the misbehaving personas
(`pitfalls.py`) can reuse the parts:

    situation.analyse(request)          -> Situation    what was asked (read by `language.read`),
                                                        the tools offered, the calls made since and
                                                        their parsed results
    ranking.rank_tools(situation)       -> [(score, OfferedTool)]   word / bigram / concept overlap
    filling.fill_arguments(tool, s)     -> Filling      arguments by JSON-schema type, from the request
                                                        first and from earlier results second; one
                                                        variant per entity
    planning.next_calls(situation)      -> [(name, arguments)]   what to call now; [] = time to answer
    answers.compose_answer(situation)   -> str          the text: from the results, or an honest
                                                        "no tool fits"
    respond(situation)                  -> Reply        `tool_choice` and `parallel_tool_calls` applied

Two requests take a short way. 'Summarise this conversation: …' (what `trimming.model_summary`
sends) is answered by `summaries.summarise`, an extractive summary, without calling a tool. A tool
result cut for length (`spilled.py`: the framework's `too_long_to_file` reminder) makes planning
read the file it names with a tool that reads files, when one is offered, and the answer come from
what was read, or say where the whole output is when none is. An instruction in a system message to
add something to every answer is followed (`standing.py`); the same words in a tool result are data.

Chaining is one rule: a required argument missing from the request is looked up in earlier
results (key `user_id`, or key `id` in the result of a tool whose name says `user`); when it is
not there yet, the tools that could *produce* it are planned first. A call (same name, same
arguments) is not repeated after the latest user message, and after `planning.MAX_ROUNDS`
rounds the planner answers, so every run ends.

Well-behaved is not perfect: the `practice` persona falls into the pitfalls real models fall
into, each one deterministic and written down where it happens, so a lesson can show it and
then the fix:

    ranking     a vague description loses to a better-described tool; one that contradicts the
                request loses outright (descriptions decide, names alone count half)
    planning    no `required` list: the first call leaves every argument out; a description that
                doubts its result ('如有疑问请再次调用确认') makes it call again, round after round
    filling     a key, password or ID number in the conversation goes into an `api_key`,
                `password` or `id_number` argument
    answers     asked the date with no clock tool, it names a confident, wrong one

Concessions: no real language understanding (see `language.py`); one fan-out dimension per tool;
optional object parameters are never filled; answers list results (intermediate steps of a chain
left out) and at most compare one number, they do not reason about them; each stage reads a
bounded part of the request (the first 128 tools, 64 parameters each, within a budget), so any
request is planned in well under a second, however large. The names below are re-exported, so
`from practice_model.planner import analyse, next_calls, ...` keeps working.
"""
from __future__ import annotations

import logging

from .answers import call_text, compose_answer, render
from .filling import Filling, fill_arguments, param_kind
from .planning import call_key, forced_calls, next_calls
from .ranking import rank_tools, relevant_tools
from .reply import PlannedCall, Reply
from .situation import Call, OfferedTool, Situation, analyse, error_of, offered_tool
from .standing import follow
from .summaries import summarise

__all__ = ["APOLOGY", "Call", "Filling", "OfferedTool", "Situation", "analyse", "call_key", "call_text",
           "compose_answer", "error_of", "fill_arguments", "forced_calls", "next_calls", "offered_tool", "param_kind",
           "plan", "rank_tools", "relevant_tools", "render", "respond"]

log = logging.getLogger("practice_model")

APOLOGY = "抱歉，练习模型内部出错了。Sorry, the practice model hit an internal error."


def respond(s: Situation) -> Reply:
    """The planner's decision for a Situation: tool calls, or a text answer."""
    if s.transcript is not None and s.choice.mode in ("auto", "none"):
        return Reply(content=summarise(s.transcript, s.zh))       # 'Summarise this conversation: …' needs no tool
    if s.choice.mode == "none" or not s.tools:
        return Reply(content=compose_answer(s))
    if s.choice.mode == "named":
        calls = forced_calls(s, s.choice.name)
    else:
        calls = next_calls(s)
        if not calls and s.choice.mode == "required":
            calls = forced_calls(s, rank_tools(s)[0][1].name)
    if calls:
        return Reply(tool_calls=tuple(PlannedCall.of(n, a) for n, a in (calls if s.parallel else calls[:1])))
    return Reply(content=compose_answer(s))


def plan(request: dict) -> Reply:
    """The `practice` persona: a request body in, a Reply out; never raises (a bug is logged, then apologised for).

    >>> plan({"messages": [{"role": "user", "content": "你好"}]}).content[:3]
    '你好！'
    """
    try:
        s = analyse(request)
        reply = respond(s)
        if reply.content and not reply.tool_calls and s.transcript is None:   # an operator's standing orders
            reply = Reply(content=follow(request.get("messages"), reply.content))
        return reply
    except Exception:                                         # a bug must not take the server down
        log.exception("practice model: the planner failed; answering with an apology")
        return Reply(content=APOLOGY)
