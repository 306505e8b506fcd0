"""Stage 2 of the planner: which offered tools the request points at.

    score(tool, reading)   shared features, weighted: concepts ('#weather') 3, values ('=USD') 2,
                           words and bigrams 1, broad concepts ('#search') 1; the tool's name counts twice
    rank_tools(s)          every tool with its score, best first
    relevant_tools(s)      the tools above zero and within RELEVANCE_RATIO of the best

This is what makes the course's claim true that descriptions decide which tool is picked: a
tool whose description says 天气 wins a weather question even when its name says nothing.

Concessions: overlap of bags of features, no meaning; ties keep the order the tools were sent in.
"""
from __future__ import annotations

from .language import Reading
from .situation import OfferedTool, Situation

RELEVANCE_RATIO = 0.5   # a tool is relevant when it scores at least this share of the best score
_BROAD = {"#calculate", "#search", "#detail", "#location", "#send", "#time"}   # concepts too broad to decide alone


def _weight(feature: str) -> int:
    """Concepts weigh most (broad ones least), values next, plain words and bigrams least."""
    return 1 if feature in _BROAD else 3 if feature[:1] == "#" else 2 if feature[:1] == "=" else 1


def score(tool: OfferedTool, reading: Reading) -> int:
    """How strongly a request points at a tool: shared features, the tool's name counting double."""
    shared = reading.features & tool.features
    return sum(_weight(f) for f in shared) + sum(_weight(f) for f in shared & tool.name_features)


def rank_tools(s: Situation) -> list[tuple[int, OfferedTool]]:
    """Every tool with its score, best first (ties keep the request's order)."""
    scored = [(score(t, s.request), i, t) for i, t in enumerate(s.tools)]
    return [(sc, t) for sc, _, t in sorted(scored, key=lambda x: (-x[0], x[1]))]


def relevant_tools(s: Situation) -> list[OfferedTool]:
    """The tools scoring above zero and close to the best."""
    ranked = rank_tools(s)
    best = ranked[0][0] if ranked else 0
    return [t for sc, t in ranked if sc > 0 and sc >= RELEVANCE_RATIO * best]
