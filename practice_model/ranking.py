"""Stage 2 of the planner: which offered tools the request points at.

    score(tool, reading)   shared features, weighted: concepts ('#weather') 3, values ('=USD') 2,
                           words and bigrams 1, broad concepts ('#search') 1; then counted by where
                           the tool has them: twice in what its author wrote (description, parameter
                           descriptions, enum values), once in its name, once in a parameter name
    contradicts(tool, r)   the description is about other topics than the request: the tool scores 0
    rank_tools(s)          every tool with its score, best first
    relevant_tools(s)      the tools above zero: within RELEVANCE_RATIO of the best, or sharing a topic

This is what makes the course's claim true that descriptions decide which tool is picked:

- a tool whose description says 天气 wins a weather question even when its name says nothing;
- a tool whose *name* fits but whose description says it does something else loses outright
  (`calculate_discount` described as "Converts temperatures between units" is not called for
  a discount, as a careful model would not call it);
- a tool with a vague description ("A helper.", parameters described "x" and "y") keeps only
  what its name says, at half weight, so a tool whose description matches the request better
  wins (the vague `calculate_discount` loses the discount question to a well-described `multiply`).

Concessions: overlap of bags of features, no meaning; "contradicts" only knows the topics of
`language`'s table; ties keep the order the tools were sent in.
"""
from __future__ import annotations

from .language import Reading
from .situation import BROAD_TOPICS, OfferedTool, Situation

RELEVANCE_RATIO = 0.5   # a tool is relevant when it scores at least this share of the best score
WRITTEN, NAMED = 2, 1   # how much a shared feature counts in the description (or parameter descriptions) / the name


def _weight(feature: str) -> int:
    """Concepts weigh most (broad ones least), values next, plain words and bigrams least."""
    return 1 if feature in BROAD_TOPICS else 3 if feature[:1] == "#" else 2 if feature[:1] == "=" else 1


def specific_topics(reading: Reading) -> frozenset[str]:
    """The request's topics that can decide alone ('#weather', '#discount'; not '#search')."""
    return frozenset(f for f in reading.tags if f[:1] == "#" and f not in BROAD_TOPICS)


def contradicts(tool: OfferedTool, reading: Reading) -> bool:
    """Whether the tool's description is about specific topics the request is not about at all.

    >>> from practice_model.situation import offered_tool
    >>> from practice_model.language import read
    >>> t = offered_tool({"name": "calculate_discount", "description": "Converts temperatures between units"})
    >>> contradicts(t, read("打八折后多少钱？")), contradicts(t, read("What is 30 celsius in fahrenheit?"))
    (True, False)
    """
    asked = specific_topics(reading)
    return bool(tool.topics and asked and not tool.topics & asked)


def score(tool: OfferedTool, reading: Reading) -> int:
    """How strongly a request points at a tool: shared features, counted where the tool has them.

    >>> from practice_model.situation import offered_tool
    >>> from practice_model.language import read
    >>> named = offered_tool({"name": "get_weather"})
    >>> described = offered_tool({"name": "tool_a", "description": "查询天气"})
    >>> score(named, read("北京天气")), score(described, read("北京天气"))
    (3, 8)
    """
    if contradicts(tool, reading):
        return 0
    total = 0
    for f in reading.features & tool.features:
        written = f in tool.described
        named = f in tool.name_features or not written       # not written: a parameter name has it
        total += _weight(f) * (WRITTEN * written + NAMED * named)
    return total


def rank_tools(s: Situation) -> list[tuple[int, OfferedTool]]:
    """Every tool with its score, best first (ties keep the request's order)."""
    scored = [(score(t, s.request), i, t) for i, t in enumerate(s.tools)]
    return [(sc, t) for sc, _, t in sorted(scored, key=lambda x: (-x[0], x[1]))]


def relevant_tools(s: Situation) -> list[OfferedTool]:
    """The tools scoring above zero and close to the best, or sharing one of the request's specific topics.

    A shared topic is strong evidence however verbose another tool's description is ('买了什么' needs the
    order details as well as the order list); `planning` still leaves out a tool that a clearly better one
    makes redundant (same values, OUTRANKED).
    """
    ranked = rank_tools(s)
    best = ranked[0][0] if ranked else 0
    asked = specific_topics(s.request)
    return [t for sc, t in ranked if sc > 0 and (sc >= RELEVANCE_RATIO * best or asked & t.features)]
