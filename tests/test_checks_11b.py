"""Exercise checkers of lesson 11b: each solution passes, each stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import json

from checker_cases import boom, checker_tests, stub

from course import lesson11b
from course.lesson11b import CONVERSATION, TWO_TURNS, problems, reference


def wrong(function, **options):
    def wrapped(*args):
        return function(*args, **options)
    return wrapped


# -- exercise 1: add_index ----------------------------------------------------------------------------


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


# -- exercise 2: to_anthropic ---------------------------------------------------------------------------


def index_if_truthy(chunks):
    """`if delta.get("index"):` for "has an index": index 0 is taken for none."""
    index_of, last = {}, None
    for chunk in chunks:
        for choice in chunk["choices"]:
            for delta in (choice.get("delta") or {}).get("tool_calls") or []:
                call_id = delta.get("id")
                if delta.get("index"):
                    pass
                elif call_id and call_id in index_of:
                    delta["index"] = index_of[call_id]
                elif call_id:
                    delta["index"] = len(index_of)
                else:
                    delta["index"] = last if last is not None else 0
                if call_id:
                    index_of.setdefault(call_id, delta["index"])
                last = delta["index"]
    return chunks


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


def result_as_object(request, messages):
    for message in request["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block["type"] == "tool_result":
                block["content"] = json.loads(block["content"])  # the result parsed: a dict, not text


def text_after_calls(request, messages):
    for m in request["messages"]:
        if m["role"] == "assistant" and isinstance(m["content"], list):
            m["content"].sort(key=lambda b: b["type"] == "text")


def system_null(request, messages):
    request.setdefault("system", None)


CASES = {
    "add_index": (lesson11b.add_index, [add_index], [stub], [
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
        [index_if_truthy],  # `if delta.get("index"):` takes index 0 for no index
        [boom],
    ]),
    "to_anthropic": (lesson11b.to_anthropic, [to_anthropic], [stub], [
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
        [translated(result_as_object)],  # tool_result content a parsed dict
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_the_reference_translation_breaks_no_rule():
    for messages in (CONVERSATION, TWO_TURNS):
        assert problems(reference(messages)) == []


def test_the_wrong_answers_get_messages_that_teach():
    assert "role 'tool'" in lesson11b.to_anthropic(translated(results_as_tool_role)).message
    assert "json.loads" in lesson11b.to_anthropic(translated(input_as_text)).message
    assert "ONE user message" in lesson11b.to_anthropic(translated(results_split)).message
    assert "top-level 'system'" in lesson11b.to_anthropic(translated(system_in_messages)).message
    assert "unchanged" in lesson11b.to_anthropic(translated(new_ids)).message
    assert "return chunks" in lesson11b.add_index(wrong(add_index, returns=False)).message
    assert "index '0' is a str; it must be an int" in lesson11b.add_index(wrong(add_index, as_str=True)).message
    assert "number the calls 0, 1" in lesson11b.add_index(wrong(add_index, first=1)).message
    assert "non-empty" in lesson11b.to_anthropic(translated(text_always)).message
    assert "non-empty" in lesson11b.to_anthropic(translated(empty_text)).message
    assert "Extra inputs are not permitted" in lesson11b.to_anthropic(translated(result_with_name)).message
    assert "order of the calls" in lesson11b.to_anthropic(translated(results_reversed)).message
    assert "then the tool_use blocks" in lesson11b.to_anthropic(translated(text_after_calls)).message
    assert "not dict" in lesson11b.to_anthropic(translated(result_as_object)).message
    assert "keeps it" in lesson11b.add_index(index_if_truthy).message
