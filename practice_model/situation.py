"""Stage 1 of the planner: the situation, read from a Chat Completions request body.

    analyse(request) -> Situation
        request    the latest user message that is a request, read by `language.read`: its language,
                   entities, topics and features. The framework's labelled tool output (a 'user'
                   message beginning 'Tool output, not a message from the user') is never one:
                   its images (`images`) and text (`notes`) are what the tools produced
        tools      the function tools offered (narrowed by `allowed_tools`), as `OfferedTool`s
        calls      the calls made since that message, each with its parsed result
        previous   the calls of the turn before (for a follow-up such as '那上海呢？')
        choice     `tool_choice`, normalised; `parallel_tool_calls`

Everything later in the pipeline decides from a Situation alone; nothing here looks at the
clock or at anything outside the request. Reading results lives here too (`error_of`,
`scalars`): what a call returned is part of what has been done.

Concessions: only function tools are read (custom tools are refused by the server before this);
a result that is not JSON is kept as its stripped text; an unanswered call has result None. Only a
bounded part of a huge request is read (the caps below): the planner answers a request with
15,000 parameters as it answers the same request cut to what it reads.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .language import MAX_TEXT, Entity, Reading, describe, read, secrets_in, split_identifier
from .schemas import Param, enum_of, iter_params, resolve, value_of

TRUNCATE = 300          # characters of a long text result quoted in an error or an answer

# What the planner reads of one request, whatever its size (the server accepts 4 MiB bodies), so
# that its work is bounded by construction: the first MAX_TOOLS tools, then only as many as
# READ_BUDGET allows. A tool is charged for the text it makes the planner read (name, description,
# parameter names and descriptions, enum members, each already cut by `schemas.read`) plus a fixed
# amount per tool, parameter and enum member for the work each one causes later; reading stops
# where the budget runs out (that tool keeps the parameters read so far, later tools are not read).
# A realistic request of 128 tools with a handful of parameters each fits. The other stages have
# their own caps (MAX_FILLS, MAX_EXPANSIONS, ...); tests/test_practice_limits.py checks each.
MAX_TOOLS = 128         # tools read (the API refuses more; see checks.MAX_TOOLS)
READ_BUDGET = 256_000   # characters (and charges) of tool definitions read per request
TOOL_COST = 128         # charged per tool read, on top of its text
PARAM_COST = 128        # charged per parameter read, on top of its text
ENUM_COST = 48          # charged per enum member read, on top of its text
MAX_CALLS_READ = 64     # calls of one turn read (the latest ones): the planner makes at most 8 x 8 itself
MAX_RESULT_TEXT = 20_000    # characters of a text result searched for a value (`filling.values_from_results`)
MAX_CONTEXT = 16        # other messages (system, developer, earlier user) searched for secrets, the latest ones
MAX_IMAGES = 8          # images (and tool-output messages) read per request
MAX_TRANSCRIPT = 200_000    # characters of a conversation to summarise that are read (`summaries.py`)
TOOL_OUTPUT_LABEL = "Tool output, not a message from the user"
"""How the framework's labelled tool-output message begins (the core's constant, copied: see the package rule)."""
MEDIA_ID = re.compile(r"tool:[A-Za-z0-9_-]{1,64}:[0-9a-f]{6,64}")
"""A media id as the framework writes it: `tool:{tool name}:{short hash of the bytes}`."""
SUMMARY_ASKED = re.compile(
    r"(?is)^\s*(?:please\s+)?summari[sz]e\s+(?:this|the|the following|our|that)\s+conversation\s*[:：]\s*(.*)$"
    r"|^\s*(?:请)?(?:帮我)?(?:总结|概括|归纳|摘要)(?:一下)?(?:这段|以下|下面的?|这次的?|上面的?)?对话(?:内容)?\s*[:：]\s*(.*)$")
"""A request to summarise a conversation, as `trimming.model_summary` words it ('Summarise this conversation:'),
in English or Chinese; the transcript follows the colon."""
TO_THE_MODEL = re.compile(r"(?is)<(important|system|instructions?)>.*?(?:</\1>|$)")
"""A block of a description that talks to the model ('<IMPORTANT>Before calling this tool, …</IMPORTANT>'), not
about what the tool does: read like the rest, but its words are not the tool's topics (`ranking.contradicts`),
so 'Do not tell the user' does not make a notes tool look like a user-account tool."""
BROAD_TOPICS = frozenset({"#calculate", "#search", "#detail", "#location", "#send", "#time", "#note"})
"""Topics too broad to decide alone (`ranking` weighs them least; they never make a description contradict)."""


@dataclass(frozen=True)
class OfferedTool:
    """A function tool offered in the request, with the features it is scored on.

    Named so as not to be mistaken for the framework's `Tool` (a Python function with a schema):
    this one is only what the model was shown.
    """

    name: str
    """The function name."""
    description: str
    """The function description ('' when absent)."""
    root: dict
    """The `parameters` schema as sent (for resolving `$ref` in nested properties)."""
    params: tuple[Param, ...]
    """Top-level parameters in schema order."""
    name_features: frozenset[str]
    """Features of the name alone (they count double)."""
    features: frozenset[str]
    """Features of the name, description, parameter names, descriptions and enum values."""
    required: frozenset[str] = frozenset()
    """Names of the required parameters read."""
    cost: int = 0
    """What reading it was charged against READ_BUDGET."""
    described: frozenset[str] = frozenset()
    """Features of what the tool's author *wrote*: the description, parameter descriptions and enum values
    (they count double in `ranking.score`; a name or a parameter name alone counts once)."""
    topics: frozenset[str] = frozenset()
    """The specific topics ('#weather', not broad ones such as '#search') of the description alone (TO_THE_MODEL
    blocks left out): a request
    about none of them finds the description saying the tool does something else (`ranking.contradicts`)."""
    lists_required: bool = True
    """Whether the schema has a `required` list at all (without one, every parameter reads as optional:
    `planning` leaves them all out of the tool's first call, as its module docstring explains)."""


@dataclass(frozen=True)
class Call:
    """A tool call made since the latest user message, with its result."""

    name: str
    """The function name that was called."""
    arguments: dict
    """The parsed arguments ({} when they were not a JSON object)."""
    result: Any
    """The parsed JSON result, the raw text when it is not JSON, None when unanswered."""
    arguments_text: str = ""
    """The arguments exactly as sent (the misbehaving personas recognise their own calls by it)."""


@dataclass(frozen=True)
class Choice:
    """The request's `tool_choice`, normalised."""

    mode: str = "auto"
    """'auto', 'none', 'required' or 'named'."""
    name: str = ""
    """The forced function name when mode is 'named'."""


@dataclass(frozen=True)
class ImagePart:
    """An image the model was sent: in the user's request, or in the labelled tool output after it."""

    url: str
    """The `image_url.url` (a `data:` URL, normally)."""
    name: str = ""
    """The media id the text before it names ('tool:draw_chart:3f9a1c2b'), '' when none."""
    from_tool: bool = False
    """Whether a tool produced it (it came in the labelled tool-output message)."""


@dataclass(frozen=True)
class Situation:
    """Everything the planner decides from; built by `analyse`."""

    request: Reading
    """The latest user message, read: language, entities, tags, features."""
    tools: tuple[OfferedTool, ...]
    """The tools the model may call (already narrowed by `allowed_tools`)."""
    calls: tuple[Call, ...] = ()
    """Calls made after the latest user message, in order, with their results."""
    rounds: int = 0
    """Assistant messages with tool calls after the latest user message."""
    previous: tuple[Call, ...] = ()
    """Calls of the turn before (for a follow-up such as '那上海呢？')."""
    choice: Choice = field(default_factory=Choice)
    """The normalised `tool_choice`."""
    parallel: bool = True
    """`parallel_tool_calls`: False means at most one call per reply."""
    context: tuple[Entity, ...] = ()
    """Secrets (API keys, passwords, ID numbers) written elsewhere in the conversation: the system prompt,
    earlier user messages. A model copies them into arguments as readily as what the latest message says."""
    images: tuple[ImagePart, ...] = ()
    """Images in the request itself and in the labelled tool output after it (at most MAX_IMAGES)."""
    notes: tuple[str, ...] = ()
    """The text of the labelled tool-output messages after the request (descriptions of images, notes that an
    image exists), label removed: tool results for the answer's wording, never a request."""
    media_ids: tuple[str, ...] = ()
    """Media ids ('tool:draw_chart:3f9a1c2b') named by the tool results and tool output since the request."""
    transcript: str | None = None
    """The conversation the latest request asks to summarise ('Summarise this conversation: …',
    `summaries.summary_request`), None when it asks for anything else."""
    memo: dict[tuple[str, int], tuple[Any, Any]] = field(default_factory=dict, init=False, compare=False, repr=False)
    """What later stages computed from this situation (see `once`); a `replace`d copy starts empty."""

    @property
    def zh(self) -> bool:
        """Whether to answer in Chinese (the latest user message contains Chinese)."""
        return self.request.language == "zh"


T = TypeVar("T")


def once(s: Situation, kind: str, subject: Any, compute: Callable[[], T]) -> T:
    """`compute()` the first time this situation asks about this subject, the remembered value after.

    The planner asks the same things several times per request (a tool's arguments while planning,
    again while composing the answer; a result's scalars for every parameter): asking once keeps
    the work linear. The subject is kept with the value, so its id cannot be reused while remembered.

    >>> s = analyse({"messages": []}); calls = []
    >>> once(s, "n", s, lambda: calls.append(1) or 42), once(s, "n", s, lambda: calls.append(1) or 43), calls
    (42, 42, [1])
    """
    key = (kind, id(subject))
    hit = s.memo.get(key)
    if hit is None or hit[0] is not subject:
        hit = s.memo[key] = (subject, compute())
    return hit[1]


def message_text(message: Any) -> str:
    """The text of a message: a string, or the text parts of a list.

    >>> message_text({'content': [{'type': 'text', 'text': 'hi'}]})
    'hi'
    """
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def is_tool_output(message: dict) -> bool:
    """Whether a message is the framework's labelled tool output (a 'user' message that is not the user's).

    >>> is_tool_output({"role": "user", "content": TOOL_OUTPUT_LABEL + ": 1 image."})
    True
    """
    return message.get("role") == "user" and message_text(message).lstrip().startswith(TOOL_OUTPUT_LABEL)


def summary_request(text: str) -> str | None:
    """The transcript a message asks to summarise ('Summarise this conversation:\\n\\n…'), None for other messages.

    >>> summary_request("Summarise this conversation:\\n\\nuser: hi"), summary_request("总结一下这段对话：user: 你好")
    ('user: hi', 'user: 你好')
    >>> summary_request("What's the weather?") is None
    True
    """
    m = SUMMARY_ASKED.match(text[:MAX_TRANSCRIPT] if isinstance(text, str) else "")
    if m is None:
        return None
    return (m.group(1) if m.group(1) is not None else m.group(2) or "").strip()


def _latest_request(messages: list[dict]) -> int:
    """Index of the latest user message that is a request (not the labelled tool output), or -1."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and not is_tool_output(messages[i]):
            return i
    return -1


def images_of(message: dict, from_tool: bool) -> list[ImagePart]:
    """The image parts of a message, each named by the media id in the text part just before it (if any).

    >>> [(i.name, i.from_tool) for i in images_of({"content": [{"type": "text", "text": "Image tool:chart:3f9a1c2b "
    ...     "(PNG 640×400) returned by chart:"}, {"type": "image_url", "image_url": {"url": "data:,"}}]}, True)]
    [('tool:chart:3f9a1c2b', True)]
    """
    content = message.get("content")
    out: list[ImagePart] = []
    before = ""
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            before = part["text"]
        image = part.get("image_url")
        if part.get("type") == "image_url" and isinstance(image, dict) and isinstance(image.get("url"), str):
            ids = MEDIA_ID.findall(before)
            out.append(ImagePart(image["url"], ids[-1] if ids else "", from_tool))
            before = ""
    return out[:MAX_IMAGES]


def parse_json(text: Any) -> Any:
    """JSON if the text is JSON, else the text itself.

    >>> parse_json('{"a": 1}')
    {'a': 1}
    """
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text.strip()


_CUT_OFF = re.compile(r'finish_reason "length"')   # how the framework's agent answers a call it did not run


def _calls_after(messages: list[dict], start: int) -> tuple[tuple[Call, ...], int]:
    """The calls made after messages[start] paired with their results (the last MAX_CALLS_READ), and how many
    rounds they took. Only the calls kept have their arguments and results parsed; a call answered as cut off
    (finish_reason "length": it never ran) is not kept."""
    answers = {m.get("tool_call_id"): m for m in messages[start + 1:] if m.get("role") == "tool"}
    made: list[tuple[dict, dict]] = []
    rounds = 0
    for m in messages[start + 1:]:
        if m.get("role") != "assistant" or not isinstance(m.get("tool_calls"), list) or not m["tool_calls"]:
            continue
        rounds += 1
        for tc in m["tool_calls"]:
            fn = tc.get("function") if isinstance(tc, dict) else None
            if isinstance(fn, dict):
                made.append((tc, fn))
    calls = []
    for tc, fn in made[-MAX_CALLS_READ:]:
        args = parse_json(fn.get("arguments"))
        text = value_of(fn, "arguments", str, "")
        answer = answers.get(tc.get("id"))
        if answer is not None and _CUT_OFF.search(message_text(answer)[:200]):
            continue  # answered without running: its reply was cut off, so the model makes the call again
        calls.append(Call(str(fn.get("name") or ""), args if isinstance(args, dict) else {},
                          parse_json(message_text(answer)) if answer is not None else None, text))
    return tuple(calls), rounds


def _param_cost(p: Param) -> int:
    """What reading a parameter is charged: its text, PARAM_COST, and ENUM_COST plus the text of each member."""
    return PARAM_COST + len(p.name) + len(p.description) + sum(ENUM_COST + len(str(v)) for v in enum_of(p.schema))


def offered_tool(entry: Any, budget: int = READ_BUDGET) -> OfferedTool | None:
    """An OfferedTool from one `tools` entry ({"type": "function", "function": {...}} or the flat form).

    Parameters are read in schema order while `budget` lasts (the first is always read).

    >>> t = offered_tool({"function": {"name": "get_weather", "description": "查询天气", "parameters": {
    ...     "properties": {"city": {"type": "string"}}, "required": ["city"]}}})
    >>> t.name, [p.name for p in t.params], t.required, "#weather" in t.features, t.cost
    ('get_weather', ['city'], frozenset({'city'}), True, 275)
    """
    if not isinstance(entry, dict):
        return None
    fn = value_of(entry, "function", dict, entry)
    name = value_of(fn, "name", str, "")
    if not name:
        return None
    description = value_of(fn, "description", str, "")[:MAX_TEXT]
    root = value_of(fn, "parameters", dict, {})
    cost = TOOL_COST + len(name) + len(description)
    params: list[Param] = []
    top = resolve(root, root)
    for p in iter_params(top, root):
        if params and cost + _param_cost(p) > budget:
            break
        params.append(p)
        cost += _param_cost(p)
    name_features = describe(" ".join(split_identifier(name)))
    own = describe(description)
    described = set(own)
    features = set(name_features)
    for p in params:
        features |= describe(" ".join(split_identifier(p.name)))
        described |= describe(p.description) | describe(" ".join(str(v) for v in enum_of(p.schema)))
    about = describe(TO_THE_MODEL.sub(" ", description)) if "<" in description else own
    topics = frozenset(f for f in about if f[:1] == "#" and f not in BROAD_TOPICS)
    return OfferedTool(name, description, root, tuple(params), name_features, frozenset(features | described),
                       frozenset(p.name for p in params if p.required), cost, frozenset(described), topics,
                       isinstance(top.get("required"), list) or not params)


def offered_tools(entries: Any) -> tuple[OfferedTool, ...]:
    """The tools of a request as the planner reads them: the first MAX_TOOLS, while READ_BUDGET lasts.

    >>> entry = {"function": {"name": "f", "parameters": {"properties": {"x": {"type": "string"}}}}}
    >>> len(offered_tools([entry] * 200)), len(offered_tools([entry] * 2000)) == MAX_TOOLS
    (128, True)
    """
    tools: list[OfferedTool] = []
    left = READ_BUDGET
    for entry in entries[:MAX_TOOLS] if isinstance(entries, list) else []:
        if left <= 0:
            break
        tool = offered_tool(entry, left)
        if tool is not None:
            tools.append(tool)
            left -= tool.cost
    return tuple(tools)


def _choice(raw: Any) -> tuple[Choice, set[str] | None]:
    """`tool_choice` as a Choice, plus the allowed tool names for the `allowed_tools` form."""
    if raw in ("none", "required"):
        return Choice(raw), None
    if isinstance(raw, dict):
        if raw.get("type") == "allowed_tools":
            inner = value_of(raw, "allowed_tools", dict, raw)
            names = set()
            for t in inner.get("tools") or []:
                if isinstance(t, dict):
                    names.add(str(value_of(t, "function", dict, t).get("name")))
            return Choice("required" if inner.get("mode") == "required" else "auto"), names
        name = value_of(value_of(raw, "function", dict, raw), "name", str, None)
        if name is not None:
            return Choice("named", name), None
    return Choice(), None


def analyse(request: dict) -> Situation:
    """Read a Chat Completions request body into a Situation (pure; never looks at the clock).

    >>> s = analyse({"messages": [{"role": "user", "content": "北京天气？"}]})
    >>> s.zh, [e.value for e in s.request.of_kind("city")], s.tools
    (True, ['北京'], ())
    """
    request = request if isinstance(request, dict) else {}
    raw = request.get("messages")
    messages = [m for m in raw if isinstance(m, dict)] if isinstance(raw, list) else []
    latest = _latest_request(messages)
    calls, rounds = _calls_after(messages, latest) if latest >= 0 else ((), 0)
    before = _latest_request(messages[:latest]) if latest > 0 else -1
    previous = _calls_after(messages[:latest], before)[0] if latest > 0 else ()
    tools = offered_tools(request.get("tools"))
    choice, allowed = _choice(request.get("tool_choice"))
    if allowed is not None:
        tools = tuple(t for t in tools if t.name in allowed)
    text = message_text(messages[latest]) if latest >= 0 else ""
    after = messages[latest + 1:] if latest >= 0 else []
    outputs = [m for m in after if is_tool_output(m)][-MAX_IMAGES:]
    images = images_of(messages[latest], False) if latest >= 0 else []
    images += [image for m in outputs for image in images_of(m, True)]
    notes = tuple(message_text(m).lstrip()[len(TOOL_OUTPUT_LABEL):].lstrip(" .:：\n")[:MAX_RESULT_TEXT]
                  for m in outputs)
    said = [message_text(m)[:MAX_RESULT_TEXT] for m in after[-MAX_CALLS_READ:] if m.get("role") == "tool"] + list(notes)
    media_ids = tuple(dict.fromkeys(i for t in said for i in MEDIA_ID.findall(t)))[:MAX_IMAGES]
    return Situation(read(text), tools, calls, rounds, previous, choice,
                     request.get("parallel_tool_calls") is not False, _context(messages, latest),
                     tuple(images[:MAX_IMAGES]), notes, media_ids, summary_request(text) if not calls else None)


def _context(messages: list[dict], latest: int) -> tuple[Entity, ...]:
    """The secrets of the other system, developer and user messages (the latest MAX_CONTEXT of them).

    >>> [e.value for e in _context([{"role": "system", "content": "API key: sk-abc123456789"}], -1)]
    ['sk-abc123456789']
    """
    others = [m for i, m in enumerate(messages) if i != latest and m.get("role") in ("system", "developer", "user")
              and not is_tool_output(m)]
    found: list[Entity] = []
    for m in others[-MAX_CONTEXT:]:
        text = message_text(m)[:MAX_TEXT]
        found += [Entity(kind, value, text[start:end], start, end) for kind, value, start, end in secrets_in(text)]
    return tuple(found)


def scalars(value: Any) -> list[tuple[tuple[str, ...], Any, Any]]:
    """Every scalar inside a JSON value as (path of keys, value, containing object), in document order.

    >>> scalars({"user": {"id": 7}, "tags": ["a"]})[0]
    (('user', 'id'), 7, {'id': 7})
    """
    out: list[tuple[tuple[str, ...], Any, Any]] = []

    def walk(node: Any, path: tuple[str, ...], parent: Any) -> None:
        if len(path) > 6 or len(out) > 500:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                if len(out) > 500:
                    break                       # full: a huge result is not walked to its end
                walk(v, path + (str(k),), node)
        elif isinstance(node, list):
            for v in node[:50]:
                walk(v, path, None if isinstance(v, dict) else parent)
        else:
            out.append((path, node, parent))

    walk(value, (), None)
    return out


_ERROR_TEXT = re.compile(r"(?i)\s*(?:error|错误|exception|traceback|failed|\w+(?:error|exception)\s*[:(])")


def error_of(call: Call) -> str | None:
    """The error message a result carries, or None: {'error': ...}, {'status': 'error'}, 'Error: ...',
    an exception's text ("KeyError: 'city'").

    >>> error_of(Call("f", {}, "KeyError: 'city'")), error_of(Call("f", {}, "ok"))
    ("KeyError: 'city'", None)
    """
    r = call.result
    if isinstance(r, dict):
        err = r.get("error")
        if err not in (None, False, "", {}):
            return str(err.get("message", err)) if isinstance(err, dict) else str(err)
        if str(r.get("status", "")).lower() in ("error", "failed", "failure", "fail") or r.get("success") is False:
            for key in ("message", "detail", "reason", "msg"):
                if r.get(key):
                    return str(r[key])
            return json.dumps(r, ensure_ascii=False)[:TRUNCATE]
    if isinstance(r, str) and _ERROR_TEXT.match(r):
        return r[:TRUNCATE]
    return None
