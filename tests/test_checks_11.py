"""Exercise checkers of lesson 11: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import json

from checker_cases import boom, checker_tests, stub

from course import lesson11
from course.lesson11 import CONVERSATION, TWO_TURNS, problems, reference

# -- exercise 1: assemble ---------------------------------------------------------------------------


def assemble(chunks, *, by="index", parse=False, finish_kept=True, add_names=False, sort=True, every_choice=True,
             overwrite=False):
    """The solution, and (through the options) the ways it goes wrong."""
    text, slots, order, finish = "", {}, [], None
    for chunk in chunks:
        choices = chunk["choices"] if every_choice else [chunk["choices"][0]]
        for choice in choices:
            delta = choice.get("delta") or {}
            text += delta.get("content") or ""
            for part in delta.get("tool_calls") or []:
                function = part.get("function") or {}
                if by == "index":
                    key = part["index"]
                elif by == "id":
                    key = part.get("id")
                else:  # by arrival: a new call at each id, fragments to the latest
                    key = len(slots) if part.get("id") else len(slots) - 1
                if key not in slots:
                    order.append(key)
                slot = slots.setdefault(key, {"id": None, "name": None, "arguments": ""})
                slot["id"] = slot["id"] or part.get("id")
                if add_names:
                    slot["name"] = (slot["name"] or "") + (function.get("name") or "")
                else:
                    slot["name"] = slot["name"] or function.get("name")
                piece = function.get("arguments") or ""
                if parse and piece:
                    json.loads(piece)
                slot["arguments"] = piece if overwrite and piece else slot["arguments"] + piece
            finish = choice.get("finish_reason") or finish
    keys = sorted(slots, key=lambda k: (k is None, k if isinstance(k, int) else 0)) if sort and by == "index" else order
    return text or None, [slots[k] for k in keys], finish if finish_kept else None


def wrong(function, **options):
    def wrapped(*args):
        return function(*args, **options)
    return wrapped


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


def add_index(chunks, *, keep_index=True, empty_is_new=False, known=True, rule="ids", per_chunk=False):
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
                    delta["index"] = len(index_of)
                else:
                    delta["index"] = last if last is not None else 0
                if has_id and "index" in delta:
                    index_of.setdefault(call_id, delta["index"])
                if not known and has_id:
                    index_of[object()] = None  # every id occurrence counts as a new call
                last = delta.get("index", last)
    return chunks


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


def system_null(request, messages):
    request.setdefault("system", None)


CASES = {
    "assemble": (lesson11.assemble, [assemble], [stub], [
        [wrong(assemble, by="arrival")],  # a new call at each id, fragments to the latest
        [wrong(assemble, parse=True)],  # json.loads on each fragment
        [wrong(assemble, by="id")],  # keyed by id: the fragments carry none
        [wrong(assemble, finish_kept=False)],  # finish_reason dropped
        [always_tool_calls],  # "tool_calls" whenever there are calls: the cut reply looks complete
        [wrong(assemble, add_names=True)],  # names added up: get_weatherget_weather
        [wrong(assemble, sort=False)],  # calls in the order their headers arrived
        [wrong(assemble, every_choice=False)],  # choices[0] on the usage chunk
        [wrong(assemble, overwrite=True)],  # each fragment replaces the arguments so far
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
