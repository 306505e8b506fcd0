"""Delegation (a feature): an Agent, or an LLM function, used by another agent as a tool.

    tool.py      as_tool(agent, name=..., description=..., share=..., max_answer_chars=..., max_depth=...)
    hook.py      how it plugs into the loop: the Delegation hook (usage, shared budget, depth, cycles, pauses)
    events.py    SubAgentEvent: a sub-agent's events, nested in the parent's
    pending.py   Delegated: a call a sub-agent paused on, as the parent's result lists it
    options.py   the tool option it reads: delegate (set by as_tool)

Needs: the core (mini_framework/*.py). A sub-agent's gated calls need the approvals feature, as any gated call.
"""

from .events import SubAgentEvent
from .hook import Delegation, DelegationState, default_hooks, sub_agent_usage
from .options import OPTIONS
from .pending import Delegated
from .tool import Delegate, as_tool

__all__ = ["Delegate", "Delegated", "Delegation", "DelegationState", "OPTIONS", "SubAgentEvent", "as_tool",
           "default_hooks", "sub_agent_usage"]
