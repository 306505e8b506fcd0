"""show(): tool results beside their calls, problems visible, HTML safe."""
from __future__ import annotations

from openai.types.chat import ChatCompletion, ChatCompletionMessage

from mini_framework import dump, show


def call(call_id: str, name: str = "get_weather", arguments: str = '{"city":"北京"}') -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_results_sit_beside_their_calls_in_call_order():
    text = str(show([
        {"role": "user", "content": "北京和上海？"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_a"), call("call_b", arguments='{"city":"上海"}')]},
        {"role": "tool", "tool_call_id": "call_b", "content": "B"},
        {"role": "tool", "tool_call_id": "call_a", "content": "A"},
    ]))
    assert text.splitlines()[1:] == [
        '[assistant] → get_weather({"city":"北京"})  id=call_a', "            ← A",
        '            → get_weather({"city":"上海"})  id=call_b', "            ← B",  # one message: one label
    ]


def test_one_assistant_message_with_text_and_calls_is_drawn_as_one_message():
    conversation = [{"role": "assistant", "content": "我查一下。", "tool_calls": [call("call_a")]},
                    {"role": "tool", "tool_call_id": "call_a", "content": "A"},
                    {"role": "assistant", "content": None, "tool_calls": [call("call_b")]}]
    lines = str(show(conversation)).splitlines()
    assert lines[0] == "[assistant] 我查一下。" and lines[1].startswith("            → get_weather")
    assert lines[3].startswith("[assistant] → get_weather") and "id=call_b" in lines[3]  # the next message: labelled
    html_rows = show(conversation)._repr_html_().split("<tr>")[1:]
    assert [">assistant</td>" in row for row in html_rows] == [True, False, True]


def test_unanswered_calls_and_stray_results_are_flagged():
    text = str(show([
        {"role": "assistant", "content": None, "tool_calls": [call("call_a")]},
        {"role": "tool", "tool_call_id": "call_zzz", "content": "lost"},
    ]))
    assert "⚠ no result" in text
    assert "⚠ answers no tool call (tool_call_id=call_zzz): lost" in text


def test_a_second_answer_to_one_call_is_flagged():
    text = str(show([
        {"role": "assistant", "content": None, "tool_calls": [call("call_a")]},
        {"role": "tool", "tool_call_id": "call_a", "content": "one"},
        {"role": "tool", "tool_call_id": "call_a", "content": "two"},
    ]))
    assert "← one" in text and "a second answer to the same call" in text


def test_sdk_objects_and_whole_completions_are_accepted():
    message = ChatCompletionMessage(role="assistant", content="晴，22 度")
    completion = ChatCompletion(id="x", object="chat.completion", created=0, model="m", choices=[
        {"index": 0, "finish_reason": "stop", "message": message}])
    assert str(show(message)) == "[assistant] 晴，22 度"
    assert str(show(completion)) == "[assistant] 晴，22 度"
    assert '"content": "晴，22 度"' in dump(message)


def test_html_is_escaped_and_images_are_placeholders():
    html = show([{"role": "user", "content": [
        {"type": "text", "text": "<script>alert(1)</script>"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 4096}},
    ]}])._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "[image image/png, 3 KB inline]" in html and "AAAA" not in html


def test_long_messages_are_clipped():
    assert "more characters" in str(show({"role": "tool", "tool_call_id": "x", "content": "x" * 10_000}))
