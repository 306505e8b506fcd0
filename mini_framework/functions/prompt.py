"""The prompt of an LLM function: its docstring, with the call's arguments filled in.

    def translate(text: str, language: str = "English") -> str:
        '''Translate {text} into {language}.'''

    render(inspect.getdoc(translate), {"text": "你好", "language": "English"})   # 'Translate 你好 into English.'

The template syntax is `{name}` for a parameter called `name`, and nothing else: every other brace
is left as it is. `str.format_map` would be the obvious tool, and it misreads the JSON examples a
prompt often shows (`{"city": "北京"}` is a KeyError, `{"a": {"b": 1}}` needs every brace doubled),
so a docstring could not be written as plain text. A parameter the docstring does not name is
added after it as a `name: value` line: every argument reaches the model (as SimpleLLMFunc passes
them all), and a docstring that names none still works.

Values are shown as text: a string as it is, anything else as JSON (a Pydantic model by its
fields), so the model reads `[1, 2]`, not `<list object>`.

Concessions: a literal `{name}` for a parameter's own name cannot be written; an argument's text is
put in as it is, so an argument that says "ignore the above" is read by the model like any text
(an LLM function is not a boundary against prompt injection: validate what it returns).
"""
from __future__ import annotations

import json
import re
from typing import Any

from pydantic import TypeAdapter

__all__ = ["as_text", "render"]

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def render(template: str, values: dict[str, Any]) -> str:
    """`template` with each `{name}` of a parameter replaced by its value; the rest as `name: value` lines.

    >>> render('Sum {a} and b. Answer as {"sum": 3}.', {"a": 1, "b": [2, 3]})
    'Sum 1 and b. Answer as {"sum": 3}.\\n\\nb: [2, 3]'
    """
    used: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            return match.group(0)
        used.add(name)
        return as_text(values[name])

    text = PLACEHOLDER.sub(fill, template)
    rest = [f"{name}: {as_text(value)}" for name, value in values.items() if name not in used]
    return "\n\n".join(part for part in (text.strip(), "\n".join(rest)) if part)


def as_text(value: Any) -> str:
    """A value as the model reads it: a string as it is, anything else as JSON.

    >>> as_text("北京"), as_text({"n": 1}), as_text(None)
    ('北京', '{"n": 1}', 'null')
    """
    if isinstance(value, str):
        return value
    try:
        return json.dumps(TypeAdapter(Any).dump_python(value, mode="json"), ensure_ascii=False)
    except Exception:  # not JSON-able (a socket, a class): its repr, never a crash
        return repr(value)
