"""Budget (a feature): what long results, long histories and repeated calls cost, and how to pay less.

    tokens.py     token counts, offline (tiktoken only if its files are already cached)
    spill.py      a too-long tool result saved to a file, the model shown its head and tail
    trimming.py   a history fitted to a token budget, tool calls kept with their answers
    cache.py      a tool's result reused for the same arguments
    cost.py       what a run's tokens cost
    options.py    the tool options it reads (cache, too_long_to_file, reads_files)
    hooks.py      how it plugs into the loop: CacheHook, SpillHook, TrimHook

Needs: the core (mini_framework/*.py). Nothing else.
"""

from .cache import ResultCache
from .cost import Price
from .hooks import CacheHook, SpillHook, TrimHook, default_hooks, hooks_for
from .options import OPTIONS
from .tokens import count_tokens, estimate_tokens, message_tokens
from .trimming import trim_history

__all__ = ["CacheHook", "OPTIONS", "Price", "ResultCache", "SpillHook", "TrimHook", "count_tokens", "default_hooks",
           "estimate_tokens", "hooks_for", "message_tokens", "trim_history"]
