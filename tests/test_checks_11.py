"""The exercise checker of lesson 11: the solution passes, the stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import functools
import json

from checker_cases import boom, checker_tests, stub

from course import lesson11

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
    """`function` with these options, as a learner's answer: the same options give the same answer."""
    return _wrong(function, tuple(sorted(options.items())))


@functools.cache
def _wrong(function, options):
    def wrapped(*args):
        return function(*args, **dict(options))
    return wrapped


# Each answer is checked once in this module: the table's tests and the messages tests read the same result
# (the check is deterministic: recorded streams, no model).
check = functools.cache(lesson11.assemble)


def content_or_calls(chunks):
    """Text or calls from a delta, never both: `if content is not None: ... elif tool_calls: ...`."""
    text, slots, finish = "", {}, None
    for chunk in chunks:
        for choice in chunk["choices"]:
            delta = choice.get("delta") or {}
            if delta.get("content") is not None:
                text += delta["content"]
            elif delta.get("tool_calls"):
                for part in delta["tool_calls"]:
                    slot = slots.setdefault(part["index"], {"id": None, "name": None, "arguments": ""})
                    function = part.get("function") or {}
                    slot["id"] = slot["id"] or part.get("id")
                    slot["name"] = slot["name"] or function.get("name")
                    slot["arguments"] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return text or None, [slots[i] for i in sorted(slots)], finish


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


CASES = {
    "assemble": (check, [assemble], [stub], [
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
        [content_or_calls],  # text or calls, never both: GLM's calls beside content "" lost

        [parsed_arguments],  # arguments returned as dicts
        [repaired],  # a cut value closed and called complete
        [message_shaped],  # the message instead of (text, calls, finish_reason)
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_wrong_answers_get_messages_that_teach():
    said = {name: check(answer).message for name, answer in [
        ("arrival", wrong(assemble, by="arrival")), ("parse", wrong(assemble, parse=True)),
        ("names", wrong(assemble, add_names=True)), ("finish", always_tool_calls),
        ("usage", wrong(assemble, every_choice=False))]}
    assert "index names" in said["arrival"] and "not JSON on its own" in said["parse"]
    assert "never add names up" in said["names"] and "'length'" in said["finish"] and "choices: []" in said["usage"]


def test_the_new_wrong_answers_get_the_message_that_fits():
    said = {name: check(answer).message for name, answer in [
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
    assert "Beijing" in check(lambda chunks: ("x", [], "stop")).message
    by_id = check(wrong(assemble, by="id")).message
    assert "keying the calls by id" in by_id and "content" not in by_id, by_id
    assert "read both" in check(content_or_calls).message
