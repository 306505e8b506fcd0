"""The practice model summarises a conversation when asked (what `trimming.model_summary` sends): extractive,
deterministic, short, in the conversation's language, never a fact that was not in it."""
from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from mini_framework import connect
from mini_framework.budget.spill import spill
from mini_framework.budget.tokens import as_dict
from mini_framework.budget.trimming import SUMMARY_LABEL, _line, model_summary, trim_history
from practice_model import planner, summaries
from tests.test_trimming import HISTORY, accepted, conversation


@pytest.fixture(scope="module")
def practice() -> tuple[Any, str]:
    return connect("practice")


def transcript(messages: list) -> str:
    """The transcript `model_summary` sends for these messages."""
    return "\n".join(_line(as_dict(m)) for m in messages)


def asked(text: str, tools: list | None = None, **extra: Any) -> str | None:
    body: dict[str, Any] = {"messages": [{"role": "system", "content": "You summarise."},
                                         {"role": "user", "content": text}], **extra}
    if tools:
        body["tools"] = tools
    reply = planner.plan(body)
    return reply.content if not reply.tool_calls else None


def call(call_id: str, name: str, **arguments: Any) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(
        arguments, ensure_ascii=False)}}


SHOP = [
    {"role": "user", "content": "Where is my order A1001?"},
    {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_order", order_id="A1001")]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"order_id": "A1001", "status": "shipped", "total": 99.5}'},
    {"role": "assistant", "content": "Order A1001 has shipped; the total was 99.5."},
    {"role": "user", "content": "And the weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [call("c2", "get_weather", city="Paris")]},
    {"role": "tool", "tool_call_id": "c2", "content": '{"error": "weather service unavailable"}'},
    {"role": "assistant", "content": "I couldn't get the weather for Paris: the service is unavailable."},
]


def test_the_practice_model_summarises_what_model_summary_sends(practice):
    client, model = practice
    text = model_summary(client, model)(SHOP)
    assert text == (
        '- The user asked "Where is my order A1001?"; get_order (A1001) returned: order ID A1001, status shipped, '
        'total 99.5; the assistant answered "Order A1001 has shipped; the total was 99.5."\n'
        '- The user asked "And the weather in Paris?"; get_weather (Paris) returned: error: weather service '
        'unavailable; the assistant answered "I couldn\'t get the weather for Paris: the service is unavailable."')
    assert model_summary(client, model)(SHOP) == text            # deterministic


def test_a_chinese_conversation_gets_a_chinese_summary_and_results_it_cannot_pair_are_not_paired(practice):
    client, model = practice
    text = model_summary(client, model)(HISTORY[1:7])
    assert text == ("- 用户问：“北京和上海天气？”；get_weather（北京）、get_weather（上海）的结果（无法对应到具体调用）：多云；晴；"
                    "工具输出：chart [image]；助手答：“北京晴，上海多云。”")


def test_results_that_name_their_call_are_paired_and_the_last_one_by_elimination():
    messages = [{"role": "user", "content": "北京、上海和广州的天气？"},
                {"role": "assistant", "content": None, "tool_calls": [
                    call("a", "get_weather", city="北京"), call("b", "get_weather", city="上海"),
                    call("c", "get_weather", city="广州")]},
                {"role": "tool", "tool_call_id": "b", "content": '{"city": "上海", "temperature": 25}'},
                {"role": "tool", "tool_call_id": "c", "content": "多云"},
                {"role": "tool", "tool_call_id": "a", "content": '{"city": "北京", "temperature": 22}'}]
    text = summaries.summarise(transcript(messages))
    assert "get_weather（北京）返回：城市 北京，温度 22" in text and "get_weather（上海）返回：城市 上海，温度 25" in text
    assert "get_weather（广州）返回：多云" in text


def test_an_earlier_summary_is_carried_over_and_old_turns_keep_only_their_questions():
    earlier = {"role": "system", "content": f"{SUMMARY_LABEL}\n- The user asked \"hi\"; the assistant answered \"hello\""}
    turns = []
    for i in range(9):
        turns += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    lines = summaries.summarise(transcript([earlier, *turns])).splitlines()
    assert lines[0] == '- The user asked "hi"; the assistant answered "hello"'
    assert lines[1] == '- Before that, the user also asked: "question 0"; "question 1"; "question 2".'
    assert lines[2] == '- The user asked "question 3"; the assistant answered "answer 3"'
    assert len(lines) == 2 + summaries.MAX_TURNS


def test_a_spilled_log_is_summarised_by_its_error_and_where_the_rest_is(tmp_path):
    log = "\n".join(f"INFO step {i} ok" for i in range(3000)) + "\nFAILED: 2 tests (exit code 1)"
    cut = spill(log, "run_tests", threshold=300, folder=tmp_path)
    messages = [{"role": "user", "content": "Run the tests"},
                {"role": "assistant", "content": None, "tool_calls": [call("t", "run_tests")]},
                {"role": "tool", "tool_call_id": "t", "content": cut.content}]
    text = summaries.summarise(transcript(messages))
    assert text == (f'- The user asked "Run the tests"; run_tests returned: FAILED: 2 tests (exit code 1) (too long, cut; '
                    f'the full text is in {cut.path})')


def test_long_quotes_are_cut_and_the_summary_stays_short():
    messages = [{"role": "user", "content": "问" * 500}, {"role": "assistant", "content": "答" * 500}]
    [line] = summaries.summarise(transcript(messages)).splitlines()
    assert line == f"- 用户问：“{'问' * summaries.QUESTION}…”；助手答：“{'答' * summaries.ANSWER}…”"


@pytest.mark.parametrize("text", ["Summarise this conversation:\n\n", "Please summarize the conversation:",
                                  "总结一下这段对话：", "请总结以下对话：\n"])
def test_the_ways_of_asking_and_an_empty_conversation(text):
    assert asked(text) == ("没有可以总结的内容：对话是空的。" if "对话" in text
                           else "Nothing to summarise: the conversation is empty.")


def test_asking_with_tools_offered_still_summarises_unless_a_call_is_forced():
    tools = [{"type": "function", "function": {"name": "get_order", "description": "Look up an order",
                                               "parameters": {"type": "object", "properties": {
                                                   "order_id": {"type": "string"}}, "required": ["order_id"]}}}]
    prompt = "Summarise this conversation:\n\n" + transcript(SHOP)
    assert asked(prompt, tools).startswith('- The user asked "Where is my order A1001?"')
    assert asked(prompt, tools, tool_choice="required") is None
    assert not asked("What is the status of order A1001?", tools)        # an ordinary request calls the tool


def test_text_that_only_mentions_summarising_is_not_a_summary_request():
    assert summaries.summary_request("Can you summarise the weather in Paris?") is None
    assert summaries.summary_request("user: Summarise this conversation: x") is None


TEMPLATE = ("The user asked; the assistant answered; returned: (which result is whose is not known): error: no result "
            "tool output: Before that, the user also asked: a tool " + "用户问 助手答 返回 的结果 无法对应到具体调用 工具输出 "
            "更早之前 用户还问过 出错 没有结果 工具 " + SUMMARY_LABEL)


@pytest.mark.parametrize("seed", range(30))
def test_property_every_word_of_a_summary_comes_from_the_conversation_or_the_wording(seed):
    rng = random.Random(seed)
    messages = conversation(rng)
    said = transcript(messages)
    summary = summaries.summarise(said)
    assert summary == summaries.summarise(said)
    assert len(summary.splitlines()) <= summaries.MAX_TURNS + 1 + summaries.MAX_EARLIER
    for word in re.findall(r"[A-Za-z0-9_.]+|[\u4e00-\u9fff]+", summary):
        assert word in said or word in TEMPLATE, word


def test_a_trimmed_history_with_a_practice_summary_is_accepted_and_answered(practice):
    client, model = practice
    history = [{"role": "system", "content": "Be brief."}, *SHOP, {"role": "user", "content": "Thanks!"}]
    trimmed = trim_history(history, 120, summarize=model_summary(client, model))
    accepted(trimmed.messages)
    assert trimmed.summary is not None and "A1001" in trimmed.summary and trimmed.tokens <= 120
    assert trimmed.messages[1]["content"].startswith(SUMMARY_LABEL)
    reply = client.chat.completions.create(model=model, messages=trimmed.messages)
    assert reply.choices[0].message.content


def test_a_round_of_many_calls_is_listed_not_paired():
    calls = " ".join(f'[calls f({{"i": {i}}})]' for i in range(20))
    text = summaries.summarise("user: go\nassistant: " + calls + "\n" + "\n".join(f"tool: r{i}" for i in range(20)))
    assert text == ('- The user asked "go"; 20 calls (f (0), f (1), f (2), f (3), f (4), f (5), f (6), f (7), …) '
                    'returned 20 results: r0; r1; r2; r3; r4; r5; r6; r7 …')


def test_only_the_start_of_a_huge_transcript_is_read():
    # Bounded by construction (tests/test_practice_limits.py explains why nothing here is timed): a transcript is
    # summarised as its first MAX_TRANSCRIPT characters are, and one line of thousands of calls is parsed.
    line = "assistant: " + " ".join(f'[calls get_weather({{"city": "城{i}"}})]' for i in range(20_000))
    huge = "user: 天气？\n" + line + "\n" + "tool: 晴\n" * 10_000
    assert len(huge) > summaries.MAX_TRANSCRIPT
    assert summaries.summarise(huge) == summaries.summarise(huge[:summaries.MAX_TRANSCRIPT])
    assert asked("Summarise this conversation:\n" + huge) == summaries.summarise(
        huge[:summaries.MAX_TRANSCRIPT - len("Summarise this conversation:\n")])
