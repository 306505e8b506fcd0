"""Checks for lesson 11b (each provider's accent).

Exercise 1 runs the learner's normaliser row over streams with the shapes Ollama and Gemini send (no
`index` on the tool call deltas), then through the framework's assembler with its own rows switched off
(`Assembler(quirks=())`), which refuses a delta without an index.
Exercise 2 checks a translated conversation against the rules of Anthropic's Messages API, as its
documentation states them:
https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls (tool_use and
tool_result blocks), https://platform.claude.com/docs/en/agents-and-tools/tool-use/parallel-tool-use
(every result of one turn in the next user message) and https://docs.anthropic.com/en/api/messages
(roles "user" and "assistant"; the system prompt is the top-level `system` field). Two rules seen in 400s:
a text block must not be empty ("messages: text content blocks must be non-empty",
https://github.com/anthropics/anthropic-sdk-python/issues/461), and a key the API does not know is refused
("messages.0.name: Extra inputs are not permitted", https://github.com/microsoft/autogen/issues/3034).
"""
from __future__ import annotations

import copy
import json
from typing import Any, Callable

from mini_framework.streaming.assembler import Assembler, StreamError

from .checking import CheckResult, Hints, run_check, solved
from .lesson11 import ARGS0, ARGS1, EXPECTED, calls_chunk, chunk, split, two_calls

# ----------------------------------------------------------------------------- exercise 1

OLLAMA = [chunk({"role": "assistant", "content": ""}),
          calls_chunk({"id": "call_ypgg1j0n", "type": "function",
                       "function": {"name": "get_weather", "arguments": '{"city":"北京"}'}}),
          calls_chunk({"id": "call_8xk2mq0z", "type": "function",
                       "function": {"name": "get_weather", "arguments": '{"city":"上海"}'}}),
          chunk({}, "tool_calls")]
GEMINI = [calls_chunk({"id": "function-call-1", "type": "function",
                       "function": {"name": "get_weather", "arguments": '{"ci'}}),
          calls_chunk({"id": "", "type": "", "function": {"arguments": 'ty":"北'}}),
          calls_chunk({"id": None, "function": {"arguments": '京"}'}}),
          calls_chunk({"id": "function-call-2", "type": "function",
                       "function": {"name": "get_time", "arguments": '{"tz":'}}),
          calls_chunk({"id": "", "type": "", "function": {"arguments": '"Asia/Shanghai"}'}}),
          chunk({}, "stop")]
REPEATED_IDS = [calls_chunk({"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}),
                calls_chunk({"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": ""}}),
                calls_chunk({"id": "call_a", "function": {"arguments": '{"city": '}}),
                calls_chunk({"id": "call_b", "function": {"arguments": '{"city": '}}),
                calls_chunk({"id": "call_a", "function": {"arguments": '"北京"}'}}),
                calls_chunk({"id": "call_b", "function": {"arguments": '"上海"}'}}),
                chunk({}, "tool_calls")]
STANDARD = two_calls(split(ARGS0, [9, 20]), split(ARGS1, [10]))

ROW_CASES = [
    ("Ollama's stream (each call whole, with its own id, no index)", OLLAMA,
     [("call_ypgg1j0n", "get_weather", '{"city":"北京"}'), ("call_8xk2mq0z", "get_weather", '{"city":"上海"}')],
     "a delta whose id you have not seen opens a new call, at the next index: 0 for the first call, 1 for the next"),
    ("Gemini's stream (later fragments with id \"\" or null)", GEMINI,
     [("function-call-1", "get_weather", '{"city":"北京"}'), ("function-call-2", "get_time", '{"tz":"Asia/Shanghai"}')],
     "a delta without an id (missing, null or \"\") continues the call that came last; only a non-empty id you "
     "have not seen opens a call"),
    ("a stream whose fragments repeat their call's id, interleaved", REPEATED_IDS,
     [("call_a", "get_weather", '{"city": "北京"}'), ("call_b", "get_weather", '{"city": "上海"}')],
     "an id you have seen before belongs to that call: give the delta the index you gave that id"),
    ("a stream that has indexes (OpenAI's shape, fragments interleaved, a usage chunk at the end)", STANDARD,
     [(c["id"], c["name"], c["arguments"]) for c in EXPECTED],
     "a delta that has an index keeps it: the fragments carry no id, so renumbering them sends them to the wrong call"),
]


def add_index(add_index: Callable[[Any], Any]) -> CheckResult:
    """Exercise 1: the row for streams without an index, on the shapes Ollama and Gemini send."""
    def test() -> str:
        for what, stream, expected, rule in ROW_CASES:
            given = copy.deepcopy(stream)
            fixed = add_index(given)
            if fixed is None and given != stream:
                raise AssertionError(f"{what}: your function changed the chunks and returned None: end it with "
                                     "`return chunks` (the check, like the assembler after a row, reads what the "
                                     "row returns)")
            fixed = solved(fixed)
            if not isinstance(fixed, list):
                raise AssertionError(f"return the list of chunks (with every tool call delta given an index), not "
                                     f"{type(fixed).__name__} {fixed!r:.60}")
            if len(fixed) != len(stream):
                raise AssertionError(f"{what}: {len(stream)} chunks went in and {len(fixed)} came out. Give each delta "
                                     "an index and leave the chunks where they are")
            deltas = [d for c in fixed if isinstance(c, dict) for ch in c.get("choices") or []
                      for d in (ch.get("delta") or {}).get("tool_calls") or []]
            for d in deltas:
                if "index" in d and not isinstance(d["index"], int):
                    raise AssertionError(f"{what}: index {d['index']!r} is a {type(d['index']).__name__}; it must be "
                                         "an int (0, 1, …), as in OpenAI's streams: an assembler keys its slots by "
                                         "it, and '0' and 0 are different keys")
            assembler = Assembler(quirks=())  # the framework's assembler with every row switched off
            try:
                for c in fixed:
                    assembler.feed(c)
            except StreamError as error:
                sent = str(error).partition("; the provider sent ")[2]
                raise AssertionError(f"{what}: after your row a tool call delta still has no index: {sent:.120}. "
                                     f"Every delta needs an int index. The rule for this one: {rule}") from None
            numbers = sorted({d["index"] for d in deltas})
            if numbers != list(range(len(numbers))):
                raise AssertionError(f"{what}: the indexes are {numbers}; number the calls 0, 1, … as OpenAI's "
                                     "streams do: the first call of a reply is index 0")
            message = assembler.finish()["choices"][0]["message"]
            got = [(c.get("id"), c["function"]["name"], c["function"]["arguments"])
                   for c in message.get("tool_calls", [])]
            if got != expected:
                shown = "; ".join(f"{i}: {n}({a})" for i, n, a in got) or "none"
                raise AssertionError(f"{what}: the assembler found {len(got)} call(s), {shown:.200}. Expected "
                                     f"{len(expected)}: " + "; ".join(f"{i}: {n}({a})" for i, n, a in expected)
                                     + f". The rule: {rule}")
        return f"{len(ROW_CASES)} streams: Ollama's and Gemini's indexless calls placed, indexes kept where they were"
    return run_check(1, test, "Without an index, the id is the only clue to which call a delta belongs. What does "
                              "a delta without an id belong to?", recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

CONVERSATION = [
    {"role": "system", "content": "你是天气助手，回答简短。"},
    {"role": "user", "content": "北京和上海现在天气怎么样？"},
    {"role": "assistant", "content": "我查一下两个城市的天气。", "tool_calls": [
        {"id": "call_bj01", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}},
        {"id": "call_sh02", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}]},
    {"role": "tool", "tool_call_id": "call_bj01", "content": '{"temperature": 22, "condition": "晴"}'},
    {"role": "tool", "tool_call_id": "call_sh02", "content": '{"temperature": 25, "condition": "多云"}'},
    {"role": "assistant", "content": "北京 22°C，晴；上海 25°C，多云。"},
]
"""The conversation of exercise 3 (the notebook shows the same one)."""

TWO_TURNS = [
    {"role": "user", "content": "What's the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "functions.get_weather:0", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "functions.get_weather:0",
     "content": '{"temperature": 18, "condition": "cloudy"}'},
    {"role": "assistant", "content": "18°C and cloudy in Paris."},
    {"role": "user", "content": "And 3.5 plus 4?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_Zq81", "type": "function",
         "function": {"name": "add_numbers", "arguments": '{"a": 3.5, "b": 4}'}}]},
    {"role": "tool", "tool_call_id": "call_Zq81", "content": "7.5"},
    {"role": "assistant", "content": "3.5 + 4 = 7.5."},
]


def reference(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The translation the check compares with (what a correct answer contains)."""
    system = "\n".join(m["content"] for m in messages if m["role"] == "system")
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "user":
            out.append({"role": "user", "content": m["content"]})
        elif m["role"] == "assistant":
            blocks = [{"type": "text", "text": m["content"]}] if m.get("content") else []
            blocks += [{"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                        "input": json.loads(c["function"]["arguments"] or "{}")} for c in m.get("tool_calls") or []]
            out.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            result = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(result)
            else:
                out.append({"role": "user", "content": [result]})
    return {"system": system, "messages": out} if system else {"messages": out}


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text_of(content: Any) -> str:
    return "".join(str(b.get("text", "")) for b in _blocks(content) if b.get("type") == "text")


ALLOWED_KEYS = {"text": {"type", "text", "cache_control", "citations"},
                "tool_use": {"type", "id", "name", "input", "cache_control"},
                "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"}}
"""The keys each block may have (the Messages API refuses others: "Extra inputs are not permitted")."""


def problems(request: Any) -> list[str]:
    """What Anthropic's Messages API would refuse in `request` ({"system": ..., "messages": [...]}), as sentences
    that say the rule; [] when it follows them. (The rules of the pages cited at the top of this module.)"""
    if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
        return [f"return a dict with a 'messages' list (and 'system' when there is a system prompt), not "
                f"{type(request).__name__} {request!r:.60}"]
    found: list[str] = []
    messages = request["messages"]
    if request.get("system", "") is None:
        found.append("'system' is null: leave the field out when there is no system prompt (when there is one, it "
                     "holds the prompt's text)")
    elif "system" in request and not isinstance(request["system"], (str, list)):
        found.append("'system' is the system prompt's text (or a list of text blocks)")
    for n, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        where = f"messages[{n}]"
        if role == "system":
            found.append(f"{where} has role 'system': the Messages API has no such role (a 400). The system prompt "
                         "goes in the request's top-level 'system' field")
        elif role == "tool":
            found.append(f"{where} has role 'tool': the Messages API has only 'user' and 'assistant'. A tool's result "
                         "is a tool_result block inside the user message that follows the assistant's tool_use blocks")
        elif role not in ("user", "assistant"):
            found.append(f"{where} has role {role!r}: only 'user' and 'assistant' exist")
        if not isinstance(m, dict):
            continue
        for key in ("tool_calls", "tool_call_id"):
            if key in m:
                found.append(f"{where} still has '{key}', a Chat Completions field: the Messages API carries calls as "
                             "tool_use blocks and results as tool_result blocks, inside 'content'")
        for key in sorted(set(m) - {"role", "content", "tool_calls", "tool_call_id"}):
            found.append(f"{where} has the key {key!r}: a message has only 'role' and 'content', and the API refuses "
                         f"any other key with a 400 (\"{where}.{key}: Extra inputs are not permitted\")")
        if m.get("content") == "":
            found.append(f"{where} has content \"\": Anthropic refuses empty text with a 400 (\"text content blocks "
                         "must be non-empty\")")
        if m.get("content") is None:
            found.append(f"{where} has content null: Anthropic's content is a string or a list of blocks. A reply "
                         "that only calls tools is a list of tool_use blocks")
        for b in _blocks(m.get("content")) if m.get("content") != "" else []:
            kind = b.get("type")
            extra = sorted(set(b) - ALLOWED_KEYS.get(kind, set(b)))
            if extra:
                found.append(f"{where}: a {kind} block has the key(s) {extra}; a {kind} block has only "
                             f"{sorted(ALLOWED_KEYS[kind] - {'cache_control'})}, and the API refuses any other key "
                             f"with a 400 (\"…{kind}.{extra[0]}: Extra inputs are not permitted\")")
            if kind == "text" and not (isinstance(b.get("text"), str) and b["text"].strip()):
                found.append(f"{where}: a text block with text {b.get('text')!r}. Anthropic answers a 400, \"text "
                             "content blocks must be non-empty\": a message whose content is null (a reply that only "
                             "calls tools) gets no text block at all")
            if kind == "tool_use":
                if role != "assistant":
                    found.append(f"{where}: a tool_use block belongs in an assistant message (the model asked for it)")
                if isinstance(b.get("input"), str):
                    found.append(f"{where}: a tool_use block's 'input' is the text {b['input']!r:.40}: Anthropic sends "
                                 "and takes the arguments as a JSON object, so parse the Chat Completions text "
                                 "(json.loads) into a dict")
                elif not isinstance(b.get("input"), dict):
                    found.append(f"{where}: a tool_use block needs 'input', an object of arguments")
                if not isinstance(b.get("id"), str) or not isinstance(b.get("name"), str):
                    found.append(f"{where}: a tool_use block needs its 'id' and 'name'")
            elif kind == "tool_result":
                if role != "user":
                    found.append(f"{where}: a tool_result block is in a message with role {role!r}. Results go in the "
                                 "user message right after the assistant message that asked for them")
                if not isinstance(b.get("tool_use_id"), str):
                    found.append(f"{where}: a tool_result block names the call it answers in 'tool_use_id' (not "
                                 f"'id' or 'tool_call_id'): got the keys {sorted(b)}")
                if not isinstance(b.get("content"), (str, list)):
                    found.append(f"{where}: a tool_result's 'content' is the result's text (or a list of text "
                                 f"blocks), not {type(b.get('content')).__name__}")
            elif kind != "text":
                found.append(f"{where}: a block of type {kind!r}; this conversation needs text, tool_use and "
                             "tool_result blocks")
    for n, m in enumerate(messages):
        if not (isinstance(m, dict) and m.get("role") == "assistant"):
            continue
        asked = [b.get("id") for b in _blocks(m.get("content")) if b.get("type") == "tool_use"]
        if not asked:
            continue
        after = messages[n + 1] if n + 1 < len(messages) else None
        if not (isinstance(after, dict) and after.get("role") == "user"):
            found.append(f"messages[{n}] asks for {len(asked)} tool(s), and the next message is not a user message "
                         "with their tool_result blocks: each tool_use must be answered in the very next message")
            continue
        blocks = _blocks(after.get("content"))
        answered = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if set(answered) != set(asked):
            later = [b.get("tool_use_id") for x in messages[n + 2:n + 4] if isinstance(x, dict)
                     for b in _blocks(x.get("content")) if b.get("type") == "tool_result"]
            split_up = (" The rest came in later messages: put every tool_result of one turn in ONE user message "
                        "(Anthropic's parallel tool use page says so)") if set(answered) | set(later) >= set(asked) \
                else ""
            found.append(f"messages[{n}] asks for the calls {asked}, and the user message after it answers "
                         f"{answered}: each tool_use id needs a tool_result with that tool_use_id, all in the next "
                         f"user message.{split_up}")
        kinds = [b.get("type") for b in blocks]
        last_result = max((i for i, k in enumerate(kinds) if k == "tool_result"), default=-1)
        if "text" in kinds[:last_result]:
            found.append(f"messages[{n + 1}]: a text block comes before a tool_result block; the tool_result blocks "
                         "come first in the message, any text after them")
    return found


def _compare(got: dict[str, Any], want: dict[str, Any], messages: list[dict[str, Any]], what: str) -> None:
    """What the rules allow but the translation lost or changed: the system prompt, texts, ids, inputs, results."""
    system = want.get("system")
    if system and _text_of(got.get("system")) != system:
        raise AssertionError(f"{what}: 'system' should hold the system prompt {system!r}, not "
                             f"{got.get('system')!r:.60}")
    if not system and got.get("system"):
        raise AssertionError(f"{what} has no system prompt, so leave 'system' out, not {got.get('system')!r:.40}")
    original = {c["id"]: c for m in messages for c in m.get("tool_calls") or []}
    uses = [b for m in got["messages"] for b in _blocks(m.get("content")) if b.get("type") == "tool_use"]
    for b in uses:
        if b.get("id") not in original:
            raise AssertionError(
                f"{what}: a tool_use block has id {b.get('id')!r}, which is no call's id. Carry each call's id over "
                f"unchanged ({', '.join(original)}): the tool_result's tool_use_id must match it, and it is the same "
                "pairing as tool_call_id in Chat Completions")
        call = original[b["id"]]
        if b.get("name") != call["function"]["name"] or b.get("input") != json.loads(call["function"]["arguments"]):
            raise AssertionError(f"{what}: the tool_use {b['id']!r} should be {call['function']['name']} with input "
                                 f"{json.loads(call['function']['arguments'])}, not {b.get('name')} {b.get('input')!r}")
    if len(uses) != len(original):
        raise AssertionError(f"{what}: the conversation has {len(original)} calls and your translation "
                             f"{len(uses)} tool_use blocks")
    for m in got["messages"]:
        kinds = [b.get("type") for b in _blocks(m.get("content"))]
        if "text" in kinds and "tool_use" in kinds and kinds.index("text") > kinds.index("tool_use"):
            raise AssertionError(f"{what}: a text block comes after the tool_use blocks. The model wrote its text "
                                 "first and then called; the API would take either order, but the translation "
                                 "should say what happened: the text block, then the tool_use blocks")
        answered = [b.get("tool_use_id") for b in _blocks(m.get("content")) if b.get("type") == "tool_result"]
        in_call_order = [i for i in original if i in answered]
        if answered != in_call_order and sorted(answered) == sorted(in_call_order):
            raise AssertionError(f"{what}: the tool_result blocks answer {answered}, the calls came as "
                                 f"{in_call_order}. The API pairs them by id, so it would accept this order; keep "
                                 "the order of the calls anyway, so the conversation reads as it happened (as the "
                                 "Chat Completions one does)")
    results = {b.get("tool_use_id"): b for m in got["messages"] for b in _blocks(m.get("content"))
               if b.get("type") == "tool_result"}
    for m in messages:
        if m["role"] == "tool":
            block = results.get(m["tool_call_id"])
            if block is None:
                raise AssertionError(f"{what}: the result of {m['tool_call_id']} is missing: a tool_result with "
                                     f"tool_use_id {m['tool_call_id']!r}")
            if _text_of(block.get("content")) != m["content"]:
                raise AssertionError(f"{what}: the tool_result for {m['tool_call_id']} should carry the tool's text "
                                     f"{m['content']!r}, not {block.get('content')!r:.60}")
    texts = [_text_of(m.get("content")) for m in got["messages"]]
    for m in messages:
        if m["role"] in ("user", "assistant") and m.get("content") and m["content"] not in texts:
            raise AssertionError(f"{what}: the text {m['content']!r} is missing. Keep every user and assistant text: "
                                 "an assistant's text beside its calls becomes a text block before the tool_use blocks")
    wanted_roles = [m["role"] for m in want["messages"]]
    if [m.get("role") for m in got["messages"]] != wanted_roles:
        raise AssertionError(f"{what}: the roles should go {wanted_roles}, yours go "
                             f"{[m.get('role') for m in got['messages']]}")


def to_anthropic(to_anthropic: Callable[[Any], Any]) -> CheckResult:
    """Exercise 2: a conversation in Anthropic's Messages format, checked against its documented rules."""
    def test() -> str:
        for messages, what in [(CONVERSATION, "the lesson's conversation"),
                               (TWO_TURNS, "a two-turn conversation without a system prompt")]:
            got = solved(to_anthropic(copy.deepcopy(messages)))
            found = problems(got)
            if found:
                more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
                raise AssertionError(f"{what}: {found[0]}{more}")
            _compare(got, reference(messages), messages, what)
        return ("two conversations translated: system on top, tool_use blocks with the calls' ids and inputs, all "
                "results of a turn in one user message")
    return run_check(2, test, "Same conversation, other field names: where does each piece of a Chat Completions "
                              "message go in Anthropic's?", recipe=hint.recipes[2])


# What check.hint(N) prints: the approach, for a learner who asks (a ❌ shows it too).
hint = Hints({
    1: ("Walk every tool call delta of every chunk in order, remembering two things: which index you gave each "
        "id, and the index of the delta you saw last. A delta that has an int index keeps it (and teaches you its "
        "id's index, if it has an id). A non-empty id you have not seen opens the next call: 0 for the first, then "
        "1, and so on. An id you have seen goes back to its index. A delta without an id (missing, null or \"\") "
        "continues the call that came last. Return the chunks.\n"
        "中文：按顺序遍历每个块的每个工具调用增量，记住两件事：每个 id"
        " 给了哪个 index，以及上一个增量的 index。已有整数 "
        "index 的保留（有 id 时记下它的 index）。没见过的非空 "
        "id 开一个新调用：第一个为 0，然后 1……。见过的 id 回到它的 "
        "index。没有 id（缺失、null 或 \"\"）的增量接着上一个调用。最后返回这些块。"),
    2: ("Go through the messages once. System messages become the top-level 'system' text (no key when there is "
        "none). A user message keeps its text. An assistant message becomes a list of blocks: a text block only "
        "if it has text, then one tool_use block per call, with the call's id, its name and its arguments parsed "
        "into an object. Tool messages become tool_result blocks that answer the tool_use id; all results of one "
        "turn go into a single user message, opened at the first of them, in the order of the calls.\n"
        "中文：把消息走一遍。system 消息变成顶层的 'system' 文"
        "本（没有就不写这个键）。user 消息保留文字。assistant 消息"
        "变成块的列表：有文字才放一个 text 块，然后每个调用一个 to"
        "ol_use 块（调用的 id、名字、解析成对象的参数）。tool "
        "消息变成回答对应 tool_use id 的 tool_result 块"
        "；同一轮的所有结果放进一条 user 消息（在第一个结果处新建），按调用"
        "的顺序。"),
})
