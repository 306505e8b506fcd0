"""Checks for lesson 11 (streaming tool calls: assembling a stream).

The exercise feeds the learner's assembler streams built here, as dict chunks shaped like the ones the
lesson printed: a text answer, two calls whose argument fragments interleave, split at every point of
their Chinese arguments (one written with `\\u` escapes) and at random (the same on every run), headers
out of order, a server that repeats the header with a new id on every chunk, streams shaped like Kimi's,
DashScope's and llama.cpp's (null or "" id, type and name on later chunks, a delta without `function`,
`"tool_calls": null`), a chunk after the finish (finish_reason null), a finish_reason sent twice, a reply
cut off inside the arguments. Lesson 11b's checks (`lesson11b.py`) build their streams with the helpers here.
"""
from __future__ import annotations

import copy
import itertools
import json
import random
import re
import traceback
from typing import Any, Callable

from .checking import CheckResult, Hints, NotSolved, run_check, where_in_your_code

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
                "'ty\": \"北') and is not JSON on its own. Add the p"
                "ieces up as text and leave the parsing to whoever "
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
        glm = ([chunk({"role": "assistant", "content": ""})]
               + [chunk({"content": "", "tool_calls": [header(i, (ID0, ID1)[i], arguments=a)]})
                  for i, a in enumerate((ARGS0, ARGS1))] + [chunk({"content": ""}, "tool_calls"), usage_chunk()])
        text, calls, _ = _run(assemble, glm, "calls beside content \"\"")
        if not calls:
            raise AssertionError(
                "a stream shaped like GLM's and Ollama's (each call whole in one chunk, with \"content\": \"\" in "
                "the same delta): you found no calls. One delta can carry text and tool calls at once: read both, "
                "never one instead of the other")
        _same_calls(calls, EXPECTED, glm, "a stream shaped like GLM's (each call whole, \"content\": \"\" beside it)")
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
                "empty strings, GLM's calls beside content \"\", finish_reason null after the finish and sent twice, "
                "a reply cut off by max_tokens")
    return run_check(1, test, "One slot per index: each fragment goes to the slot its index names. What else does "
                              "a chunk carry that you must keep?", recipe=hint.recipes[1])


# What check.hint(N) prints: the approach, for a learner who asks (a ❌ shows it too).
hint = Hints({
    1: ("Keep three things while you read: the text so far, a dict of slots keyed by each tool call delta's "
        "index, and the finish_reason. Skip chunks without choices (the usage chunk). Treat a missing delta, "
        "'tool_calls', 'function', 'id' or 'name' that is null the same as an absent one. A slot takes the first "
        "id and the first name it receives and never changes them; its arguments grow by each fragment's text, "
        "unparsed. A finish_reason that is null changes nothing. At the end, return the slots sorted by index.\n"
        "中文：读的时候记三样：目前的文字、按每个工具调用增量的 index "
        "存的槽（字典）、finish_reason。没有 choices 的块"
        "（用量块）跳过。delta、tool_calls、function、id、n"
        "ame 为 null 时当作没有。每个槽只取收到的第一个 id 和 name，"
        "之后不改；参数按片段文本依次拼接，不解析。finish_reason 为 null 时不变。最后按 index 排序返回各槽。"),
})
