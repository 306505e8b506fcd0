"""Images and the practice model: the refusals (per provider wording), `practice-vision`'s descriptions computed
from the bytes, the tool-output label, the pitfalls of lesson 09, and bounded work on hostile images."""
from __future__ import annotations

import json
from typing import Any

import pytest

from mini_framework.practice import PracticeServer

TINY_PNG = "data:image/png;base64,iVBORw0KGgo="
LABEL = "Tool output, not a message from the user"


@pytest.fixture(scope="module")
def practice():
    """A practice server with the default personas."""
    with PracticeServer(timeout=5.0) as s:
        yield s


def image_part(url: str = TINY_PNG, detail: str = "auto") -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url, "detail": detail}}


def user_with_image(text: str = "What is in this picture?", url: str = TINY_PNG) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}, image_part(url)]}


def tool_round(content: Any, name: str = "draw_chart", call_id: str = "call_1",
               arguments: str = "{}") -> list[dict[str, Any]]:
    """An assistant message calling one tool, and the tool message answering it with `content`."""
    return [{"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": call_id, "content": content}]


# -- E: the refusals ----------------------------------------------------------------------------------

TOOL_IMAGE = ("Invalid 'messages[2]'. Image URLs are only allowed for messages with role 'user', but this message "
              "with role 'tool' contains an image URL.")
TEXT_ONLY = "Invalid content type. image_url is only supported by certain models."


def deepseek_message(index: int, line: int, column: int) -> str:
    return (f"Failed to deserialize the JSON body into the target type: messages[{index}]: unknown variant "
            f"`image_url`, expected `text` at line {line} column {column}")


@pytest.mark.parametrize("model", ["practice", "practice-vision", "practice-loop"])
def test_an_image_in_a_tool_message_gets_the_real_400(practice, api, model):
    messages = [{"role": "user", "content": "画一张销售图表"},
                *tool_round([{"type": "text", "text": "chart drawn"}, image_part()])]
    api.assert_error(api.post(practice, {"model": model, "messages": messages}), 400, TOOL_IMAGE,
                     param="messages[2]", code="invalid_value")


def test_an_image_in_an_assistant_message_gets_the_same_words(practice, api):
    messages = [{"role": "user", "content": "draw a cat"}, {"role": "assistant", "content": [image_part()]},
                {"role": "user", "content": "describe it"}]
    api.assert_error(api.post(practice, {"model": "practice-vision", "messages": messages}), 400,
                     TOOL_IMAGE.replace("[2]", "[1]").replace("role 'tool'", "role 'assistant'"),
                     param="messages[1]", code="invalid_value")


def test_a_text_only_persona_refuses_images_and_the_conversation_stays_broken(practice, api):
    messages = [{"role": "system", "content": "You are helpful."}, user_with_image()]
    api.assert_error(api.post(practice, {"model": "practice", "messages": messages}), 400, TEXT_ONLY,
                     param="messages.[1].content.[1].type", code=None)
    later = [*messages, {"role": "assistant", "content": "(the app showed an error)"},
             {"role": "user", "content": "你好？还在吗"}]
    for turn in (later, [*later, {"role": "assistant", "content": "…"}, {"role": "user", "content": "hello?"}]):
        api.assert_error(api.post(practice, {"model": "practice", "messages": turn}), 400, TEXT_ONLY,
                         param="messages.[1].content.[1].type")


def test_deepseek_wording_points_at_the_tag_in_the_raw_body(practice, api):
    body = {"model": "practice@deepseek", "messages": [{"role": "user", "content": "hi"}, user_with_image()]}
    raw = json.dumps(body, separators=(",", ":")).encode()
    column = raw.index(b'"type":"image_url"') + len(b'"type":"image_url"')   # the closing quote, 1-based
    api.assert_error(api.post(practice, raw), 400, deepseek_message(1, 1, column), param=None,
                     code="invalid_request_error")
    pretty = json.dumps(body, indent=2).encode()                              # several lines: line and column
    end = pretty.index(b'"type": "image_url"') + len(b'"type": "image_url"')
    line = pretty.count(b"\n", 0, end) + 1
    api.assert_error(api.post(practice, pretty), 400,
                     deepseek_message(1, line, end - (pretty.rfind(b"\n", 0, end) + 1)))


def test_deepseek_wording_finds_the_tag_after_the_image(practice, api):
    """Key order is the client's: a part written image first, type last, is refused after the whole image."""
    part = {"image_url": {"url": TINY_PNG}, "type": "image_url"}
    raw = json.dumps({"model": "practice@deepseek", "messages": [{"role": "user", "content": [part]}]},
                     separators=(",", ":")).encode()
    column = raw.rindex(b'"image_url"') + len(b'"image_url"')
    api.assert_error(api.post(practice, raw), 400, deepseek_message(0, 1, column))


@pytest.mark.parametrize("model", ["practice@deepseek", "practice-sloppy@deepseek"])
def test_deepseek_wording_every_later_turn_fails_the_same_way(practice, api, model):
    messages: list[dict[str, Any]] = [user_with_image("这张图里是什么？")]
    for follow_up in ("怎么不回答？", "算了，北京天气怎么样？"):
        raw = api.post(practice, {"model": model, "messages": messages})
        error = api.assert_error(raw, 400, param=None, code="invalid_request_error")
        assert error["message"].startswith("Failed to deserialize the JSON body into the target type: messages[0]: "
                                           "unknown variant `image_url`, expected `text` at line 1 column ")
        messages += [{"role": "assistant", "content": "…"}, {"role": "user", "content": follow_up}]


def test_deepseek_wording_applies_to_tool_messages_of_a_vision_persona(practice, api):
    messages = [{"role": "user", "content": "画图"}, *tool_round([image_part()])]
    error = api.assert_error(api.post(practice, {"model": "practice-vision@deepseek", "messages": messages}), 400)
    assert error["message"].startswith("Failed to deserialize the JSON body into the target type: messages[2]: ")


def test_the_flag_keeps_the_persona_and_echoes_the_model(practice, api):
    raw = api.post(practice, {"model": "practice-vision@deepseek", "messages": [user_with_image()]})
    assert raw.status == 200 and raw.json()["model"] == "practice-vision@deepseek"
    assert api.response_problems(raw.json()) == []
    raw = api.post(practice, {"model": "practice@openai", "messages": [{"role": "user", "content": "你好"}]})
    assert raw.status == 200 and raw.json()["model"] == "practice@openai"
    names = [m["id"] for m in api.request(practice, "GET", "/v1/models").json()["data"]]
    assert "practice-vision" in names and not any("@" in n for n in names)


@pytest.mark.parametrize("model", ["practice@nobody", "gpt-4o@deepseek", "practice@", "@deepseek"])
def test_an_unknown_flag_or_persona_is_a_404(practice, api, model):
    api.assert_error(api.post(practice, {"model": model, "messages": [user_with_image()]}), 404,
                     f"The model `{model}` does not exist or you do not have access to it.", code="model_not_found")
