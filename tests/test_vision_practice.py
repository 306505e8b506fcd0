"""Images end to end against the practice model: a vision agent, and a text-only one in auto / tool / off."""
from __future__ import annotations

import pytest
from media_helpers import png

from mini_framework import Agent, ImgPath, connect, tool

QUESTION = "画一张北京的销售图表，哪个月最高？"


@tool
def draw_sales_chart(city: str) -> tuple:
    """画出一个城市每月销售额的柱状图

    Args:
        city: 城市名，例如北京
    """
    return f"{city}的每月销售额图表", ImgPath("sales.png")


@pytest.fixture(autouse=True)
def chart(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sales.png").write_bytes(png(48, 30, (40, 90, 200), text="Sales by month: Jan 120, Feb 150, Mar 90"))


@pytest.mark.parametrize("model,options", [
    ("practice-vision", {}),                                                  # sees the image itself
    ("practice", {"vision": connect("practice-vision")}),                     # auto: a description
    ("practice", {"vision": connect("practice-vision"), "image_fallback": "tool"}),  # asks image_understand
])
def test_the_chart_question_is_answered_from_the_picture(model, options):
    client, name = connect(model)
    result = Agent(client, name, [draw_sales_chart], **options).run(QUESTION)
    assert "Feb" in result.text and "150" in result.text, result.text
    assert "[Description of image" not in result.text


def test_off_says_the_model_cannot_see_it():
    client, name = connect("practice")
    result = Agent(client, name, [draw_sales_chart], image_fallback="off").run(QUESTION)
    assert "看不到" in result.text and "150" not in result.text


def test_a_text_only_model_is_never_sent_the_image():
    client, name = connect("practice@deepseek")
    result = Agent(client, name, [draw_sales_chart]).run(QUESTION)  # a 400 would raise here
    assert result.text
