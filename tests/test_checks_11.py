"""Exercise checkers of lesson 11: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import json

from checker_cases import boom, checker_tests, stub

from course import lesson11
from course.lesson11 import CONVERSATION, TWO_TURNS, problems, reference

# -- exercise 1: assemble ---------------------------------------------------------------------------


def assemble(chunks, *, by="index", parse=False, finish_kept=True, add_names=False, sort=True, every_choice=True,
             overwrite=False, ids="first", names="first", strict_function=False, finish_rule="last_sent",
             strip=False, header_arguments=True, tool_calls_default=False, function_default=False):
    """The solution, and (through the options) the ways it goes wrong."""
    text, slots, order, finish = "", {}, [], None
    for chunk in chunks:
        choices = chunk["choices"] if every_choice else [chunk["choices"][0]]
        for choice in choices:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for part in delta.get("tool_calls", []) if tool_calls_default else delta.get("tool_calls") or []:
                function = (part["function"] if strict_function else part.get("function", {}) if function_default
                            else part.get("function") or {})
                if by == "index":
                    key = part["index"]
                elif by == "id":
                    key = part.get("id")
                else:  # by arrival: a new call at each id, fragments to the latest
                    key = len(slots) if part.get("id") else len(slots) - 1
                if key not in slots:
                    order.append(key)
                slot = slots.setdefault(key, {"id": None, "name": None, "arguments": ""})
                if ids == "get_default":  # slot["id"] = part.get("id", slot["id"]): null and "" overwrite it
                    slot["id"] = part.get("id", slot["id"])
                elif ids == "if_in":  # if "id" in part: slot["id"] = part["id"]
                    if "id" in part:
                        slot["id"] = part["id"]
                elif ids == "last":  # the last non-empty id wins
                    slot["id"] = part.get("id") or slot["id"]
                else:
                    slot["id"] = slot["id"] or part.get("id")
                if add_names:
                    slot["name"] = (slot["name"] or "") + (function.get("name") or "")
                elif names == "get_default":
                    slot["name"] = function.get("name", slot["name"])
                else:
                    slot["name"] = slot["name"] or function.get("name")
                piece = function.get("arguments") or ""
                if strip:
                    piece = piece.strip()
                if not header_arguments and (part.get("id") or function.get("name")):
                    piece = ""
                if parse and piece:
                    json.loads(piece)
                slot["arguments"] = piece if overwrite and piece else slot["arguments"] + piece
            if finish_rule == "every":  # overwritten by every chunk, null included
                finish = choice.get("finish_reason")
            elif finish_rule == "first":  # the first one kept
                finish = finish or choice.get("finish_reason")
            else:
                finish = choice.get("finish_reason") or finish
    keys = sorted(slots, key=lambda k: (k is None, k if isinstance(k, int) else 0)) if sort and by == "index" else order
    return text or None, [slots[k] for k in keys], finish if finish_kept else None


def wrong(function, **options):
    def wrapped(*args):
        return function(*args, **options)
    return wrapped


def list_slots(chunks):
    """Calls in a list that grows at each header, fragments put at calls[index]."""
    text, calls, finish = "", [], None
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for part in delta.get("tool_calls") or []:
                function = part.get("function") or {}
                if part.get("id") and part["index"] >= len(calls):
                    calls.append({"id": part["id"], "name": function.get("name"), "arguments": ""})
                calls[part["index"]]["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return text or None, calls, finish


def always_tool_calls(chunks):
    """Says "tool_calls" whenever there are calls: a cut reply looks complete."""
    text, calls, finish = assemble(chunks)
    return text, calls, "tool_calls" if calls else finish


def parsed_arguments(chunks):
    """Returns the arguments as dicts."""
    text, calls, finish = assemble(chunks)
    return text, [{**c, "arguments": json.loads(c["arguments"])} for c in calls], finish


def repaired(chunks):
    """Closes a cut value, as a lenient JSON repair would, and calls the reply complete."""
    text, calls, finish = assemble(chunks)
    for call in calls:
        if call["arguments"].count('"') % 2:
            call["arguments"] += '"}'
    return text, calls, "tool_calls" if calls else finish


def message_shaped(chunks):
    """Returns the assistant message instead of (text, calls, finish_reason)."""
    text, calls, _ = assemble(chunks)
    return {"role": "assistant", "content": text, "tool_calls": calls}


# -- exercise 2: add_index ----------------------------------------------------------------------------


def add_index(chunks, *, keep_index=True, empty_is_new=False, known=True, rule="ids", per_chunk=False,
              idless="last", first=0, as_str=False, returns=True):
    """The solution, and (through the options) the ways it goes wrong."""
    index_of, last, counter = {}, None, 0
    for chunk in chunks:
        for choice in chunk["choices"]:
            for position, delta in enumerate((choice.get("delta") or {}).get("tool_calls") or []):
                call_id = delta.get("id")
                has_id = call_id is not None if empty_is_new else bool(call_id)
                if keep_index and isinstance(delta.get("index"), int):
                    pass
                elif per_chunk:
                    delta["index"] = position
                elif rule == "zero":
                    delta["index"] = 0
                elif rule == "count":
                    delta["index"], counter = counter, counter + 1
                elif rule == "leave":
                    if has_id:
                        delta["index"] = index_of.setdefault(call_id, len(index_of))
                elif has_id and known and call_id in index_of:
                    delta["index"] = index_of[call_id]
                elif has_id:
                    delta["index"] = len(index_of) + first
                elif idless == "zero":  # an id-less delta goes to index 0
                    delta["index"] = 0
                else:
                    delta["index"] = last if last is not None else 0
                if has_id and "index" in delta:
                    index_of.setdefault(call_id, delta["index"])
                if not known and has_id:
                    index_of[object()] = None  # every id occurrence counts as a new call
                last = delta.get("index", last)
    if as_str:
        for chunk in chunks:
            for choice in chunk["choices"]:
                for delta in (choice.get("delta") or {}).get("tool_calls") or []:
                    delta["index"] = str(delta["index"])
    return chunks if returns else None


# -- exercise 3: to_anthropic ---------------------------------------------------------------------------


def to_anthropic(messages):
    return reference(messages)


def translated(change):
    """The reference translation with one mistake made by `change(request, messages)`."""
    def to_anthropic_(messages):
        request = reference(messages)
        return change(request, messages) or request
    return to_anthropic_


def results_as_tool_role(request, messages):
    out = []
    for m in request["messages"]:
        results = [b for b in m["content"] if isinstance(m["content"], list) and b.get("type") == "tool_result"]
        if results:
            out += [{"role": "tool", "content": [b]} for b in results]
        else:
            out.append(m)
    request["messages"] = out


def input_as_text(request, messages):
    for m in request["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_use":
                b["input"] = json.dumps(b["input"], ensure_ascii=False)


def results_split(request, messages):
    out = []
    for m in request["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            out += [{"role": "user", "content": [b]} for b in m["content"]]
        else:
            out.append(m)
    request["messages"] = out


def results_in_assistant(request, messages):
    out = []
    for m in request["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            out[-1] = {"role": "assistant", "content": out[-1]["content"] + m["content"]}
        else:
            out.append(m)
    request["messages"] = out


def new_ids(request, messages):
    fresh = {}
    for m in request["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_use":
                b["id"] = fresh.setdefault(b["id"], f"toolu_{len(fresh) + 1:02d}")
            if b.get("type") == "tool_result":
                b["tool_use_id"] = fresh.setdefault(b["tool_use_id"], f"toolu_{len(fresh) + 1:02d}")


def system_in_messages(request, messages):
    if "system" in request:
        request["messages"].insert(0, {"role": "system", "content": request.pop("system")})


def tool_call_id_key(request, messages):
    for m in request["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result":
                b["tool_call_id"] = b.pop("tool_use_id")


def text_dropped(request, messages):
    for m in request["messages"]:
        if isinstance(m["content"], list):
            m["content"] = [b for b in m["content"] if b.get("type") != "text"]


def content_null(request, messages):
    for m, original in zip([x for x in request["messages"] if x["role"] == "assistant"],
                           [x for x in messages if x["role"] == "assistant"]):
        if original.get("tool_calls") and not original.get("content"):
            m["content"] = None
            m["tool_calls"] = original["tool_calls"]


def openai_calls_kept(request, messages):
    for m, original in zip([x for x in request["messages"] if x["role"] == "assistant"],
                           [x for x in messages if x["role"] == "assistant"]):
        if original.get("tool_calls"):
            m["content"] = [b for b in m["content"] if b["type"] == "text"] or (original.get("content") or "")
            m["tool_calls"] = original["tool_calls"]


def result_after_text(request, messages):
    for m in request["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            m["content"].insert(0, {"type": "text", "text": "Here are the results."})


def text_always(request, messages):
    """[{"type": "text", "text": m["content"]}] for every assistant message, None included."""
    for m, original in zip([x for x in request["messages"] if x["role"] == "assistant"],
                           [x for x in messages if x["role"] == "assistant"]):
        if not original.get("content"):
            m["content"].insert(0, {"type": "text", "text": original.get("content")})


def empty_text(request, messages):
    """An empty text block where the assistant said nothing."""
    for m, original in zip([x for x in request["messages"] if x["role"] == "assistant"],
                           [x for x in messages if x["role"] == "assistant"]):
        if not original.get("content"):
            m["content"].insert(0, {"type": "text", "text": ""})


def result_with_name(request, messages):
    """A tool_result with the tool's name in it, as lesson 02's tool message could have."""
    for m in request["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else []:
            if b.get("type") == "tool_result":
                b["name"] = "get_weather"


def results_reversed(request, messages):
    for m in request["messages"]:
        if m["role"] == "user" and isinstance(m["content"], list):
            m["content"].reverse()


def text_after_calls(request, messages):
    for m in request["messages"]:
        if m["role"] == "assistant" and isinstance(m["content"], list):
            m["content"].sort(key=lambda b: b["type"] == "text")


def system_null(request, messages):
    request.setdefault("system", None)


CASES = {
    "assemble": (lesson11.assemble, [assemble], [stub], [
        [wrong(assemble, tool_calls_default=True)],  # delta.get("tool_calls", []): crashes on llama.cpp's null
        [wrong(assemble, function_default=True)],  # part.get("function", {}): crashes on "function": null
        [wrong(assemble, by="arrival")],  # a new call at each id, fragments to the latest
        [wrong(assemble, parse=True)],  # json.loads on each fragment
        [wrong(assemble, by="id")],  # keyed by id: the fragments carry none
        [wrong(assemble, finish_kept=False)],  # finish_reason dropped
        [always_tool_calls],  # "tool_calls" whenever there are calls: the cut reply looks complete
        [wrong(assemble, add_names=True)],  # names added up: get_weatherget_weather
        [wrong(assemble, sort=False)],  # calls in the order their headers arrived
        [wrong(assemble, every_choice=False)],  # choices[0] on the usage chunk
        [wrong(assemble, overwrite=True)],  # each fragment replaces the arguments so far
        [wrong(assemble, ids="get_default")],  # slot["id"] = part.get("id", slot["id"]): null/"" overwrite
        [wrong(assemble, ids="if_in")],  # if "id" in part: slot["id"] = part["id"]
        [wrong(assemble, ids="last")],  # the last id wins (a new id on every chunk)
        [wrong(assemble, names="get_default")],  # name = function.get("name", name): null overwrites
        [wrong(assemble, strict_function=True)],  # part["function"] unguarded
        [wrong(assemble, finish_rule="every")],  # finish_reason overwritten by every chunk, null included
        [wrong(assemble, finish_rule="first")],  # the first finish_reason kept
        [wrong(assemble, strip=True)],  # fragments stripped
        [wrong(assemble, header_arguments=False)],  # arguments that ride in a header skipped
        [list_slots],  # a list indexed by index: headers out of order

        [parsed_arguments],  # arguments returned as dicts
        [repaired],  # a cut value closed and called complete
        [message_shaped],  # the message instead of (text, calls, finish_reason)
        [boom],
    ]),
    "add_index": (lesson11.add_index, [add_index], [stub], [
        [wrong(add_index, rule="count")],  # every delta a new call
        [wrong(add_index, rule="zero")],  # every delta at index 0
        [wrong(add_index, keep_index=False)],  # indexes that were there renumbered by id
        [wrong(add_index, empty_is_new=True)],  # id "" taken for a new id
        [wrong(add_index, known=False)],  # a known id opens another call
        [wrong(add_index, per_chunk=True)],  # the position in the chunk's list taken for the index
        [wrong(add_index, rule="leave")],  # deltas without an id left without an index
        [wrong(add_index, idless="zero")],  # an id-less delta goes to index 0
        [wrong(add_index, first=1)],  # calls numbered from 1
        [wrong(add_index, as_str=True)],  # index as a str
        [wrong(add_index, returns=False)],  # fixed in place, None returned
        [boom],
    ]),
    "to_anthropic": (lesson11.to_anthropic, [to_anthropic], [stub], [
        [translated(results_as_tool_role)],  # results as role "tool"
        [translated(input_as_text)],  # input as a JSON string
        [translated(results_split)],  # one user message per result
        [translated(results_in_assistant)],  # results inside the assistant message
        [translated(new_ids)],  # ids not carried over
        [translated(system_in_messages)],  # system inside messages
        [translated(tool_call_id_key)],  # tool_call_id instead of tool_use_id
        [translated(text_dropped)],  # the assistant's text beside its calls dropped
        [translated(content_null)],  # content null with OpenAI tool_calls
        [translated(openai_calls_kept)],  # tool_calls kept beside the content
        [translated(result_after_text)],  # a text block before the tool_result blocks
        [translated(system_null)],  # "system": null when there is no system prompt
        [translated(text_always)],  # [{"type": "text", "text": m["content"]}] with content None
        [translated(empty_text)],  # an empty text block
        [translated(result_with_name)],  # an extra "name" key in tool_result
        [translated(results_reversed)],  # results not in the order of the calls
        [translated(text_after_calls)],  # the text block after the tool_use blocks
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_reference_translation_breaks_no_rule():
    for messages in (CONVERSATION, TWO_TURNS):
        assert problems(reference(messages)) == []


def test_the_wrong_answers_get_messages_that_teach():
    said = {name: lesson11.assemble(answer).message for name, answer in [
        ("arrival", wrong(assemble, by="arrival")), ("parse", wrong(assemble, parse=True)),
        ("names", wrong(assemble, add_names=True)), ("finish", always_tool_calls),
        ("usage", wrong(assemble, every_choice=False))]}
    assert "index names" in said["arrival"] and "not JSON on its own" in said["parse"]
    assert "never add names up" in said["names"] and "'length'" in said["finish"] and "choices: []" in said["usage"]
    assert "role 'tool'" in lesson11.to_anthropic(translated(results_as_tool_role)).message
    assert "json.loads" in lesson11.to_anthropic(translated(input_as_text)).message
    assert "ONE user message" in lesson11.to_anthropic(translated(results_split)).message
    assert "top-level 'system'" in lesson11.to_anthropic(translated(system_in_messages)).message
    assert "unchanged" in lesson11.to_anthropic(translated(new_ids)).message


def test_the_new_wrong_answers_get_the_message_that_fits():
    said = {name: lesson11.assemble(answer).message for name, answer in [
        ("list", list_slots), ("strip", wrong(assemble, strip=True)),
        ("header", wrong(assemble, header_arguments=False)), ("null id", wrong(assemble, ids="get_default")),
        ("last id", wrong(assemble, ids="last")), ("function", wrong(assemble, strict_function=True)),
        ("every", wrong(assemble, finish_rule="every")), ("first", wrong(assemble, finish_rule="first"))]}
    assert "out of order" in said["list"] and "choices: []" not in said["list"], said["list"]
    assert "exactly as sent" in said["strip"], said["strip"]
    assert "can carry arguments too" in said["header"], said["header"]
    assert "Keep the first" in said["null id"], said["null id"]  # the stream with new ids catches it first
    assert "NEW id on every chunk" in said["last id"], said["last id"]
    assert "without 'function'" in said["function"], said["function"]
    assert "null means" in said["every"] and "later one replaces" in said["first"], (said["every"], said["first"])
    assert "return chunks" in lesson11.add_index(wrong(add_index, returns=False)).message
    assert "index '0' is a str; it must be an int" in lesson11.add_index(wrong(add_index, as_str=True)).message
    assert "number the calls 0, 1" in lesson11.add_index(wrong(add_index, first=1)).message
    assert "Beijing" in lesson11.assemble(lambda chunks: ("x", [], "stop")).message
    assert "non-empty" in lesson11.to_anthropic(translated(text_always)).message
    assert "non-empty" in lesson11.to_anthropic(translated(empty_text)).message
    assert "Extra inputs are not permitted" in lesson11.to_anthropic(translated(result_with_name)).message
    assert "order of the calls" in lesson11.to_anthropic(translated(results_reversed)).message
    assert "then the tool_use blocks" in lesson11.to_anthropic(translated(text_after_calls)).message
