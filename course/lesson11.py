"""Checks for lesson 11 (streaming tool calls).

Exercise 1 feeds the learner's assembler streams built here, as dict chunks shaped like the ones the
lesson printed: a text answer, two calls whose argument fragments interleave, split at every point of
their Chinese arguments (one written with `\\u` escapes) and at random (the same on every run), headers
out of order, a server that repeats the header with a new id on every chunk, streams shaped like Kimi's
and DashScope's (null or "" id, type and name on later chunks, a delta without `function`), a chunk after
the finish (finish_reason null), a finish_reason sent twice, a reply cut off inside the arguments.
Exercise 2 runs the learner's row over streams with the shapes Ollama and Gemini send, then through the
framework's assembler with its own rows switched off (`Assembler(quirks=())`), which refuses a delta
without an index.
Exercise 3 checks a translated conversation against the rules of Anthropic's Messages API, as its
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
import itertools
import json
import random
import re
import traceback
from typing import Any, Callable

from mini_framework.streaming.assembler import Assembler, StreamError

from .checking import CheckResult, Hints, NotSolved, run_check, solved, where_in_your_code

# ----------------------------------------------------------------------------- building streams

ID0, ID1 = "call_Vx3kB9tQe2", "call_p7LmW4sZa8"
ARGS0 = json.dumps({"city": "北京", "date": "明天"}, ensure_ascii=False)  # '{"city": "北京", "date": "明天"}'
ARGS1 = json.dumps({"city": "上海"})  # '{"city": "\\u4e0a\\u6d77"}': some servers escape non-ASCII like this


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    """A chat.completion.chunk with one choice."""
    return {"id": "chatcmpl-11", "object": "chat.completion.chunk", "created": 1767225600, "model": "m",
            "choices": [{"index": 0, "delta": {} if delta is None else delta, "logprobs": None,
                         "finish_reason": finish}]}


def usage_chunk() -> dict[str, Any]:
    """The last chunk when stream_options.include_usage is set: no choices."""
    return {"id": "chatcmpl-11", "object": "chat.completion.chunk", "created": 1767225600, "model": "m",
            "choices": [], "usage": {"prompt_tokens": 101, "completion_tokens": 22, "total_tokens": 123}}


def header(index: int, call_id: str, name: str = "get_weather", arguments: str = "") -> dict[str, Any]:
    return {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def fragment(index: int, arguments: str, **fields: Any) -> dict[str, Any]:
    """A later delta of a call: its index and a piece of the arguments (and, from some servers, `fields` such as
    "id": None, "type": "", or a "name" of None inside function)."""
    name = {"name": fields.pop("name")} if "name" in fields else {}
    return {"index": index, **fields, "function": {**name, "arguments": arguments}}


def calls_chunk(*deltas: dict[str, Any]) -> dict[str, Any]:
    return chunk({"tool_calls": list(deltas)})


def split(text: str, points: list[int]) -> list[str]:
    """`text` cut at `points`.

    >>> split('{"a": 1}', [2, 5])
    ['{"', 'a":', ' 1}']
    """
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def two_calls(first: list[str], second: list[str], rng: random.Random | None = None,
              headers: tuple[int, ...] = (0, 1), ids: tuple[str, str] = (ID0, ID1), later: dict | None = None,
              first_arguments: Any = "") -> list[dict[str, Any]]:
    """Two get_weather calls: both headers (their arguments `first_arguments`), then the fragments of the two
    interleaved (alternating, or in a random order from `rng`), each call's own fragments in order, each with
    the extra `later` fields; the finish chunk; the usage chunk."""
    stream = [chunk({"role": "assistant", "content": None})]
    stream += [calls_chunk(header(i, ids[i], arguments=first_arguments)) for i in headers]
    lanes = [[(0, p) for p in first], [(1, p) for p in second]]
    while lanes[0] or lanes[1]:
        if rng is None:
            order = [0, 1]
        else:
            order = [rng.randrange(2)]
        for lane in order:
            if lanes[lane]:
                index, piece = lanes[lane].pop(0)
                stream.append(calls_chunk(fragment(index, piece, **(later or {}))))
    return stream + [chunk({}, "tool_calls"), usage_chunk()]


EXPECTED = [{"id": ID0, "name": "get_weather", "arguments": ARGS0},
            {"id": ID1, "name": "get_weather", "arguments": ARGS1}]

TEXT = ["北京", "明天", "晴，", "最高", " 25", "°C", "。"]  # Beijing tomorrow: sunny, up to 25°C.
TEXT_STREAM = ([chunk({"role": "assistant", "content": "", "refusal": None})] + [chunk({"content": t}) for t in TEXT]
               + [chunk({}, "stop"), usage_chunk()])

# ----------------------------------------------------------------------------- exercise 1


DELTA_FIELDS = {"id", "type", "name", "function", "arguments", "content", "role", "index", "tool_calls", "delta",
                "finish_reason", "choices"}


def _explained(error: Exception) -> str:
    """A teaching sentence for the errors an assembler typically raises, or '' for others."""
    where = where_in_your_code(error)
    if isinstance(error, json.JSONDecodeError):
        return (f"json.loads raised on a fragment{where}: a fragment is a piece of text cut anywhere ('{{\"ci', "
                "'ty\": \"北') and is not JSON on its own. Add the pieces up as text and leave the parsing to whoever "
                "runs the call, after the stream has ended")
    if isinstance(error, IndexError):
        line = traceback.extract_tb(error.__traceback__)[-1].line or ""  # the line that raised
        if "choices" in line:
            return (f"IndexError{where}: the last chunk (the usage, asked for with stream_options.include_usage) "
                    "has choices: [], so choices[0] fails. Loop over chunk['choices'] instead")
        return (f"IndexError{where}: a list position that is not there yet. Headers can come out of order (this "
                "check sends the header of index 1 before the header of index 0), so a list that grows as headers "
                "arrive has no place for them. Keep the calls in a dict keyed by index, and sort by index at the end")
    if isinstance(error, (TypeError, AttributeError)) and "NoneType" in str(error):
        return (f"{type(error).__name__}: {error}{where}. A field in a delta can be null (the first chunk has "
                "\"content\": null when the reply starts with a call; llama.cpp's server sends \"tool_calls\": null, "
                "others \"function\": null): treat null and missing alike, e.g. delta.get('tool_calls') or []")
    if isinstance(error, KeyError) and error.args and error.args[0] in DELTA_FIELDS:
        without = (" Some servers even send a call delta without 'function' at all ({\"index\": 1, \"id\": \"\"}, "
                   "closing a call): treat a missing function like an empty one."
                   if error.args[0] == "function" else "")
        return (f"KeyError {error}{where}: not every delta has every field. The header of a call brings index, id "
                "and name; the fragments after it bring only index and function.arguments; the finish chunk has an "
                f"empty delta.{without} Read fields with .get()")
    return ""


def _run(assemble: Callable[[Any], Any], chunks: list[dict[str, Any]], what: str) -> tuple[Any, list[dict], Any]:
    """The learner's (text, calls, finish_reason) for a copy of `chunks`, checked for shape."""
    try:
        result = assemble(copy.deepcopy(chunks))
    except (json.JSONDecodeError, IndexError, TypeError, AttributeError, KeyError) as error:
        if not (said := _explained(error)):
            raise
        raise AssertionError(said) from None
    if result is None or result is Ellipsis:
        raise NotSolved
    if not (isinstance(result, tuple) and len(result) == 3):
        raise AssertionError(f"return three things, (text, calls, finish_reason), not {result!r:.100} (for {what})")
    text, calls, finish = result
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise AssertionError(f"calls should be a list of dicts with id, name and arguments, not {calls!r:.100}")
    for call in calls:
        if not isinstance(call.get("arguments"), str):
            raise AssertionError(
                f"a call's arguments should stay the JSON text that was sent, not "
                f"{type(call.get('arguments')).__name__} "
                f"{call.get('arguments')!r:.60}: the text goes back to the API as it is, and is parsed only when the "
                "tool runs")
    return text, calls, finish


def _arrival(chunks: list[dict[str, Any]]) -> str:
    """The order in which the call deltas of a stream arrived, e.g. 'index 0, 0, 1, 0, 1'."""
    order = [str(d.get("index")) for c in chunks for ch in c["choices"] for d in ch["delta"].get("tool_calls") or []]
    return "index " + ", ".join(order[:12]) + (", …" if len(order) > 12 else "")


def _sent(chunks: list[dict[str, Any]]) -> tuple[dict[Any, list[Any]], dict[Any, str]]:
    """Per index: the ids its deltas sent (non-empty, in order), and its arguments without the pieces that rode
    in a chunk with an id or a name (what a reader that skips those pieces would get)."""
    ids: dict[Any, list[Any]] = {}
    bare: dict[Any, str] = {}
    for c in chunks:
        for ch in c["choices"]:
            for d in (ch.get("delta") or {}).get("tool_calls") or []:
                function = d.get("function") or {}
                if d.get("id"):
                    ids.setdefault(d.get("index"), []).append(d["id"])
                piece = function.get("arguments") if isinstance(function.get("arguments"), str) else ""
                bare[d.get("index")] = bare.get(d.get("index"), "") + ("" if d.get("id") or function.get("name")
                                                                       else piece)
    return ids, bare


def _same_calls(calls: list[dict], expected: list[dict], chunks: list[dict[str, Any]], what: str) -> None:
    sent_ids, bare = _sent(chunks)
    if len(calls) != len(expected):
        merged = " The two calls came out as one: a fragment belongs to the call its index names, not to the call " \
                 "that arrived (or opened) last." if len(calls) < len(expected) else ""
        extra = " A fragment carries no id, so keying the calls by id files every fragment under None." \
            if any(c.get("id") is None for c in calls) else ""
        raise AssertionError(f"{what}: you found {len(calls)} call(s), the stream carries {len(expected)}.{merged}"
                             f"{extra} (The call deltas arrived as {_arrival(chunks)}.)")
    for i, (got, want) in enumerate(zip(calls, expected)):
        if got.get("name") != want["name"]:
            doubled = " The name came more than once (this server repeats the header on later chunks): keep the " \
                      "first name a call gets, never add names up." if want["name"] in str(got.get("name")) else ""
            null = " This stream sends \"name\": null (or \"\") on the chunks after the header: null and \"\" " \
                   "mean 'nothing new here', not 'the name is now empty'. Keep the first name." \
                if not got.get("name") else ""
            raise AssertionError(f"{what}: call {i} is named {got.get('name')!r}, it should be "
                                 f"{want['name']!r}.{doubled}{null}")
        if got.get("id") != want["id"]:
            if got.get("id") in {w["id"] for w in expected}:
                why = (" The id comes in the header. Return the calls in the order of their index, whatever order "
                       "their headers arrived in.")
            elif got.get("id") in sent_ids.get(i, [])[1:]:
                why = (" This server sends the header again with a NEW id on every chunk of the same call (Poolside's "
                       "did): the first id is the call's, the one its result must answer. Keep the first; a later "
                       "id changes nothing.")
            elif not got.get("id"):
                why = (" The id comes in the header; this stream's later chunks send \"id\": null or \"\" (Kimi's "
                       "and DashScope's do). null and \"\" mean 'no id here', not 'the id is now empty': keep the "
                       "first id.")
            else:
                why = " The id comes once, in the header; the fragments after it carry none."
            raise AssertionError(f"{what}: call {i} has id {got.get('id')!r}, it should be {want['id']!r}.{why}")
        if got["arguments"] != want["arguments"] and re.sub(r"\s", "", got["arguments"]) == \
                re.sub(r"\s", "", want["arguments"]):
            raise AssertionError(
                f"{what}: call {i}'s arguments came out as {got['arguments']!r:.80}, they should be "
                f"{want['arguments']!r}. Add the fragments exactly as sent: a fragment's spaces are part of the "
                "text (inside a string value they are part of the value), so never strip them")
        if got["arguments"] != want["arguments"] and got["arguments"] == bare.get(i):
            raise AssertionError(
                f"{what}: call {i}'s arguments came out as {got['arguments']!r:.80}, they should be "
                f"{want['arguments']!r}. A chunk that carries the id and name can carry arguments too (this "
                "server sends some in its headers): add every delta's arguments, header or not")
        if got["arguments"] != want["arguments"]:
            raise AssertionError(
                f"{what}: call {i}'s arguments came out as {got['arguments']!r:.80}, they should be "
                f"{want['arguments']!r}. The fragments of the two calls arrive interleaved ({_arrival(chunks)}): "
                "append each fragment to the call its index names, in the order the fragments arrive")


def assemble(assemble: Callable[[Any], Any]) -> CheckResult:
    """Exercise 1: streams split and interleaved every way, the text, the calls by index, the finish_reason."""
    def test() -> str:
        text, calls, finish = _run(assemble, TEXT_STREAM, "a text answer")
        assert text == "".join(TEXT), (f"for a streamed text answer the text should be {''.join(TEXT)!r} (Beijing "
                                       f"tomorrow: sunny, up to 25°C), got {text!r:.80}: add up every delta's "
                                       "content, in order")
        assert calls == [], f"a text answer has no calls, but you returned {calls!r:.80}"
        assert finish == "stop", (f"finish_reason should be 'stop' (the chunk before the usage chunk says so), not "
                                  f"{finish!r}: keep the last finish_reason a choice sends")
        basic = two_calls(split(ARGS0, [9, 20]), split(ARGS1, [10]))
        text, calls, finish = _run(assemble, basic, "two calls")
        _same_calls(calls, EXPECTED, basic, "two calls whose fragments take turns")
        assert not text, f"this stream has no text (its content is null), but you returned text {text!r:.60}"
        assert finish == "tool_calls", f"finish_reason should be 'tool_calls', not {finish!r}"
        streams = 2
        for a, b in itertools.product(range(1, len(ARGS0)), range(1, len(ARGS1))):
            stream = two_calls(split(ARGS0, [a]), split(ARGS1, [b]))
            where = f"with the arguments split at {ARGS0[:a]!r} | {ARGS0[a:]!r} and {ARGS1[:b]!r} | {ARGS1[b:]!r}"
            _same_calls(_run(assemble, stream, where)[1], EXPECTED, stream, where)
            streams += 1
        rng = random.Random(11)
        for _ in range(300):
            first = split(ARGS0, sorted(rng.sample(range(1, len(ARGS0)), rng.randint(1, 10))))
            second = split(ARGS1, sorted(rng.sample(range(1, len(ARGS1)), rng.randint(1, 14))))
            stream = two_calls(first, second, rng)
            _same_calls(_run(assemble, stream, "random splits")[1], EXPECTED, stream,
                        f"with fragments {first} and {second} in a random order")
            streams += 1
        late = two_calls(split(ARGS0, [9]), split(ARGS1, [10]), headers=(1, 0))
        _same_calls(_run(assemble, late, "index 1 first")[1], EXPECTED, late,
                    "a stream where the header of index 1 arrived before the header of index 0")
        repeated = ([chunk({"role": "assistant", "content": None}), calls_chunk(header(0, ID0))]
                    + [calls_chunk(header(0, f"call_again{n}", arguments=p))
                       for n, p in enumerate(split(ARGS0, [7, 16]))]
                    + [calls_chunk(header(1, ID1, arguments=ARGS1)), chunk({}, "tool_calls")])
        _same_calls(_run(assemble, repeated, "a repeated header")[1], EXPECTED, repeated,
                    "a server that sends the header again, with a new id, on every chunk of the same call")
        spaces = [[i for i, c in enumerate(args) if c == " "] for args in (ARGS0, ARGS1)]
        kimi_ids = ("functions.get_weather:0", "functions.get_weather:1")
        kimi = two_calls(split(ARGS0, spaces[0]), split(ARGS1, spaces[1]), ids=kimi_ids,
                         later={"id": None, "type": None, "name": None}, first_arguments=None)
        _same_calls(_run(assemble, kimi, "a stream shaped like Kimi's")[1],
                    [{**c, "id": i} for c, i in zip(EXPECTED, kimi_ids)], kimi,
                    "a stream shaped like Kimi's (\"arguments\": null in the header; id, type and name null on the "
                    "chunks after it)")
        dashscope = two_calls(split(ARGS0, [9, 20]), split(ARGS1, [10]), later={"id": "", "type": "function",
                                                                                 "name": None})
        dashscope[-2:-2] = [calls_chunk({"index": 0, "id": "", "type": "function", "function": {}}),
                            calls_chunk({"index": 1, "id": ""})]
        _same_calls(_run(assemble, dashscope, "a stream shaped like DashScope's")[1], EXPECTED, dashscope,
                    "a stream shaped like DashScope's (id \"\" and name null on the chunks after the header, then "
                    "a delta with \"function\": {} and one without function)")
        nulls = two_calls(split(ARGS0, [9, 20]), split(ARGS1, [10]))  # llama.cpp's server: null for "none here"
        nulls[0] = chunk({"role": "assistant", "content": None, "function_call": None, "tool_calls": None})
        nulls[-2] = chunk({"role": None, "content": None, "function_call": None, "tool_calls": None}, "tool_calls")
        nulls.insert(-2, calls_chunk({"index": 1, "id": None, "type": None, "function": None}))
        _same_calls(_run(assemble, nulls, "a stream with nulls")[1], EXPECTED, nulls,
                    "a stream with \"tool_calls\": null on its first and last chunks (llama.cpp's server sends "
                    "them so) and a call delta with \"function\": null")
        streams += 1
        after = basic[:-1] + [chunk({}), usage_chunk()]
        finish = _run(assemble, after, "a chunk after the finish")[2]
        assert finish == "tool_calls", (
            f"finish_reason should be 'tool_calls', not {finish!r}, for a stream with one more chunk after the "
            "finish chunk (an empty delta, finish_reason null; some servers send their last bits so). null means "
            "'nothing new', not 'not finished': keep the last finish_reason that was sent")
        twice = basic[:-2] + [chunk({}, "stop"), chunk({}, "tool_calls"), usage_chunk()]
        finish = _run(assemble, twice, "finish_reason twice")[2]
        assert finish == "tool_calls", (
            f"finish_reason should be 'tool_calls', not {finish!r}, for a stream that says 'stop' on one chunk and "
            "'tool_calls' on the last one: the last finish_reason sent is the reply's, so a later one replaces an "
            "earlier one")
        cut = [chunk({"role": "assistant", "content": None}), calls_chunk(header(0, ID0)),
               calls_chunk(fragment(0, '{"city": "北')), chunk({}, "length"), usage_chunk()]
        _, calls, finish = _run(assemble, cut, "a cut reply")
        assert finish == "length", (
            f"for a reply cut off by max_tokens the finish_reason should be 'length', not {finish!r}. Keep it: it is "
            "how the caller learns that the arguments stop mid-value and the call must not run")
        assert [c.get("arguments") for c in calls] == ['{"city": "北'], (
            f"return the cut arguments exactly as sent ('{{\"city\": \"北'), not "
            f"{[c.get('arguments') for c in calls]!r:.80}: "
            "the assembler only adds up; with finish_reason 'length' the caller runs nothing")
        return (f"{streams + 7} streams assembled: interleaved fragments split at every point of '北京' and '\\u4e0a', "
                "headers out of order, a header repeated with new ids, Kimi's, DashScope's and llama.cpp's nulls and "
                "empty strings, finish_reason null after the finish and sent twice, a reply cut off by max_tokens")
    return run_check(1, test, "One slot per index: each fragment goes to the slot its index names. What else does "
                              "a chunk carry that you must keep?", recipe=hint.recipes[1])


# ----------------------------------------------------------------------------- exercise 2

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
    """Exercise 2: the row for streams without an index, on the shapes Ollama and Gemini send."""
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
    return run_check(2, test, "Without an index, the id is the only clue to which call a delta belongs. What does "
                              "a delta without an id belong to?", recipe=hint.recipes[2])


# ----------------------------------------------------------------------------- exercise 3

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
    """Exercise 3: a conversation in Anthropic's Messages format, checked against its documented rules."""
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
    return run_check(3, test, "Same conversation, other field names: where does each piece of a Chat Completions "
                              "message go in Anthropic's?", recipe=hint.recipes[3])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("text = ''; slots = {}; finish = None. For each chunk, for each choice in chunk['choices'] (none in the "
        "usage chunk): delta = choice.get('delta') or {}; text += delta.get('content') or ''; for each part in "
        "delta.get('tool_calls') or []: slot = slots.setdefault(part['index'], {'id': None, 'name': None, "
        "'arguments': ''}); function = part.get('function') or {}; slot['id'] = slot['id'] or part.get('id'); "
        "slot['name'] = slot['name'] or function.get('name'); slot['arguments'] += function.get('arguments') or ''. "
        "Then finish = choice.get('finish_reason') or finish. Return (text or None, [slots[i] for i in "
        "sorted(slots)], finish)."),
    2: ("index_of = {} (id -> index); last = None; for each chunk, for each choice in chunk['choices'], for each "
        "delta in (choice.get('delta') or {}).get('tool_calls') or []: if isinstance(delta.get('index'), int): "
        "last = delta['index']; remember index_of[delta['id']] = last when it has an id; continue. Otherwise, with "
        "call_id = delta.get('id'): if call_id and call_id in index_of: delta['index'] = index_of[call_id]; elif "
        "call_id (new): delta['index'] = len(index_of), and index_of[call_id] = that; else: delta['index'] = last "
        "(0 if there is none). last = delta['index']. Return the chunks."),
    3: ("system = the text of the 'system' messages (leave 'system' out if there are none); out = []. A user "
        "message: {'role': 'user', 'content': its text}. An assistant message: blocks = [{'type': 'text', 'text': "
        "content}] if it has text, then for each call {'type': 'tool_use', 'id': call['id'], 'name': "
        "call['function']['name'], 'input': json.loads(call['function']['arguments'])}; append {'role': "
        "'assistant', 'content': blocks}. A tool message: {'type': 'tool_result', 'tool_use_id': "
        "m['tool_call_id'], 'content': m['content']}, appended to the user message just added for this turn (start "
        "one, {'role': 'user', 'content': []}, at the first result). Return {'system': system, 'messages': out}, or "
        "{'messages': out} when there is no system prompt."),
})
