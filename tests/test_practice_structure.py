"""How the practice package is put together: the persona table, logged failures, one CJK definition."""
from __future__ import annotations

import logging
import re

import pytest

from practice_model import cjk, context, language, personas, pitfalls, planner, wire
from practice_model.reply import Reply
from practice_model.situation import OfferedTool

HI = {"model": "practice", "messages": [{"role": "user", "content": "北京天气"}]}


def test_the_misbehaving_personas_come_from_an_explicit_table():
    assert set(pitfalls.BUILDERS) == {"sloppy", "hallucinate", "loop", "flaky", "eager", "gullible"}
    assert {name for name in personas.DEFAULT_PERSONAS if name not in ("practice", "practice-vision")} == {
        f"practice-{suffix}" for suffix in pitfalls.BUILDERS}
    assert personas.DEFAULT_PERSONAS["practice-vision"].build is personas.DEFAULT_PERSONAS["practice"].build
    for suffix, build in pitfalls.BUILDERS.items():
        assert callable(build()), suffix
    for module in (personas, context):                  # a persona's attributes are fields, never looked up by name
        assert "getattr(" not in open(module.__file__, encoding="utf-8").read(), module.__name__


def test_a_name_that_is_not_in_the_table_is_not_looked_up_as_an_attribute():
    with pytest.raises(KeyError):
        personas._pitfall("safe")()          # `safe` is a function in pitfalls.py, but not a persona


def test_the_offered_tool_is_not_called_tool():
    assert OfferedTool.__name__ == "OfferedTool" and not hasattr(planner, "Tool")


def test_the_planner_logs_the_bug_it_apologises_for(monkeypatch, caplog):
    def boom(request):
        raise ZeroDivisionError("a bug in the planner")

    monkeypatch.setattr(planner, "analyse", boom)
    with caplog.at_level(logging.ERROR, logger="practice_model"):
        reply = planner.plan(HI)
    assert reply == Reply(content=planner.APOLOGY)
    [record] = [r for r in caplog.records if r.name == "practice_model"]
    assert record.exc_info and record.exc_info[0] is ZeroDivisionError and "planner" in record.getMessage()


def test_a_misbehaving_persona_logs_the_bug_it_apologises_for(caplog):
    def sloppy(request):
        raise KeyError("a bug in a persona")

    with caplog.at_level(logging.ERROR, logger="practice_model"):
        reply = pitfalls.safe(sloppy)(HI)
    assert reply == Reply(content=planner.APOLOGY)
    [record] = [r for r in caplog.records if r.name == "practice_model"]
    assert record.exc_info and record.exc_info[0] is KeyError and "sloppy" in record.getMessage()


def test_api_errors_pass_through_safe_unlogged(caplog):
    from practice_model import errors

    def busy(request):
        raise errors.rate_limited("x", retry_after=0.02)

    with caplog.at_level(logging.ERROR, logger="practice_model"), pytest.raises(errors.ApiError):
        pitfalls.safe(busy)(HI)
    assert caplog.records == []


# -----------------------------------------------------------------------------
# one definition of Chinese characters; the token estimate deliberately counts a wider set

IDEOGRAPHS = ["一", "龥", "㐀", "䶿", "豈", "﫿", "北", "京"]       # unified, extension A, compatibility
NOT_CHINESE_BUT_WIDE = ["、", "。", "「", "こ", "ン", "한", "，", "？", "Ａ"]   # punctuation, kana, hangul, full-width
NEITHER = ["a", "é", "Ж", "α", " ", "1", "€", "🙂"]


@pytest.mark.parametrize("char", IDEOGRAPHS)
def test_ideographs_are_chinese_and_one_token(char):
    assert language.has_cjk(char) and language.detect_language(f"hi {char}") == "zh"
    assert wire.estimate_tokens(char * 8) == 8


@pytest.mark.parametrize("char", NOT_CHINESE_BUT_WIDE)
def test_kana_hangul_and_wide_forms_are_not_chinese_but_count_one_token_each(char):
    assert not language.has_cjk(char) and language.detect_language(char * 3) == "en"
    assert wire.estimate_tokens(char * 8) == 8


@pytest.mark.parametrize("char", NEITHER)
def test_other_characters_count_a_quarter_token(char):
    assert not language.has_cjk(char) and wire.estimate_tokens(char * 8) == 2


def test_the_wide_set_extends_the_ideographs():
    assert cjk.WIDE.startswith(cjk.IDEOGRAPHS)
    ideograph, wide = re.compile(f"[{cjk.IDEOGRAPHS}]"), re.compile(f"[{cjk.WIDE}]")
    assert all(wide.match(chr(c)) for c in range(0x3400, 0xFB00) if ideograph.match(chr(c)))
