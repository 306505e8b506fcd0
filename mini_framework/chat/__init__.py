"""Chat (a feature): a conversation over several user turns with one agent.

    conversation.py   Chat: history across turns (tool messages included), trimming, pauses for decisions
    saved.py          a chat as a signed JSON file, loaded again in another process

Needs: the core; the budget feature for `max_history_tokens`, the approvals feature for save and load.
"""
from .conversation import Chat, ChatPaused, answered_prefix
from .saved import SavedChatError

__all__ = ["Chat", "ChatPaused", "SavedChatError", "answered_prefix"]
