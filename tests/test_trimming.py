"""trim_history: fits a budget, never splits a tool call from its answers, and the practice server accepts the result."""
from __future__ import annotations

import copy
import json
import random

import pytest
from openai.types.chat import ChatCompletionMessage

from mini_framework.budget.tokens import as_dict, message_tokens
from mini_framework.budget.trimming import SUMMARY_LABEL, model_summary, trim_history
from mini_framework.executor import TOOL_OUTPUT_LABEL
from practice_model import checks
from practice_model.errors import ApiError
from practice_model.personas import registry

PERSONAS = registry(None)
PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/2vjJmQAAAABJRU5ErkJggg=="
WORDS = ["weather", "Paris", "order", "北京", "天气", "订单", "张三", "shipped", "temperature", "明天", "refund", "上海"]


def accepted(messages: list) -> None:
    """The practice server's own request checks (vision persona: delivery messages carry images)."""
    body = {"model": "practice-vision", "messages": [as_dict(m) for m in messages]}
    checks.check(json.loads(json.dumps(body, ensure_ascii=False)), PERSONAS)


def text(rng: random.Random, n: int = 8) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, n)))


def conversation(rng: random.Random) -> list:
    """A random, valid conversation: system prompts, user turns, tool rounds (with images now and then), answers."""
    messages: list = [{"role": rng.choice(["system", "developer"]), "content": text(rng)}
                      for _ in range(rng.randint(0, 2))]
    ids = iter(f"call_{i}" for i in range(10_000))
    for turn in range(rng.randint(1, 6)):
        messages.append({"role": "user", "content": text(rng, 20)})
        if rng.random() < 0.1:
            messages.append({"role": "system", "content": "Mid-conversation note: " + text(rng)})
        for _ in range(rng.randint(0, 3)):
            calls = [{"id": next(ids), "type": "function",
                      "function": {"name": rng.choice(["get_weather", "get_order"]), "arguments": json.dumps(
                          {"q": text(rng, 3)}, ensure_ascii=False)}} for _ in range(rng.randint(1, 3))]
            assistant = {"role": "assistant", "content": rng.choice([None, text(rng)]), "tool_calls": calls}
            messages.append(ChatCompletionMessage.model_validate(assistant) if rng.random() < 0.3 else assistant)
            answers = [{"role": "tool", "tool_call_id": c["id"], "content": text(rng, 40)} for c in calls]
            rng.shuffle(answers)
            messages += answers
            if rng.random() < 0.3:
                messages.append({"role": "user", "content": [
                    {"type": "text", "text": f"{TOOL_OUTPUT_LABEL}: the image from {calls[0]['id']}."},
                    {"type": "image_url", "image_url": {"url": PIXEL}}]})
        if rng.random() < 0.8 or turn == 0:
            messages.append({"role": "assistant", "content": text(rng, 30)})
    return messages


def units_intact(kept: list) -> None:
    """Every assistant tool-call message kept has all its answers right after it (the checks say the same)."""
    for i, m in enumerate(kept):
        m = as_dict(m)
        if m.get("role") == "assistant" and m.get("tool_calls"):
            following = {as_dict(x).get("tool_call_id") for x in kept[i + 1: i + 1 + len(m["tool_calls"])]}
            assert following == {c["id"] for c in m["tool_calls"]}


@pytest.mark.parametrize("seed", range(40))
def test_property_trimmed_histories_fit_and_are_accepted_by_the_practice_server(seed):
    rng = random.Random(seed)
    messages = conversation(rng)
    accepted(messages)  # the generator makes valid conversations
    before = copy.deepcopy([as_dict(m) for m in messages])
    full = int(message_tokens(messages))
    last_user = max(i for i, m in enumerate(messages) if as_dict(m).get("role") == "user"
                    and not str(as_dict(m).get("content")).startswith("[{"))
    for budget in sorted({rng.randint(0, full + 20) for _ in range(12)} | {full, full - 1}):
        try:
            trimmed = trim_history(messages, budget)
        except ValueError as err:
            assert f"budget of {budget} tokens" in str(err)
            assert [as_dict(m) for m in messages] == before
            continue
        kept = trimmed.messages
        accepted(kept)
        units_intact(kept)
        assert trimmed.tokens == int(message_tokens(kept)) <= budget
        assert [as_dict(m) for m in messages] == before, "the input was changed"
        kept_ids = {id(m) for m in kept}
        assert all(m in kept for m in messages if as_dict(m)["role"] in ("system", "developer"))
        assert len(kept) + trimmed.dropped_count == len(messages)
        assert {id(m) for m in trimmed.dropped}.isdisjoint(kept_ids)
        assert [m for m in messages if id(m) in kept_ids] == kept, "kept messages keep their order"
        tail = [m for m in messages if messages.index(m) >= min(last_user, len(messages))]
        assert kept[-len(tail):] == tail if tail else True
        dropped_at = [messages.index(m) for m in trimmed.dropped]
        middle_kept = [messages.index(m) for m in kept if as_dict(m)["role"] not in ("system", "developer")]
        assert not dropped_at or not middle_kept or max(dropped_at) < min(middle_kept), "no gaps"


def test_ten_thousand_messages_trim_in_one_pass():
    rng = random.Random(7)
    messages = [{"role": "system", "content": "Be brief."}]
    while len(messages) < 10_000:
        messages += [m for m in conversation(rng) if as_dict(m)["role"] not in ("system", "developer")]
    accepted(messages)
    trimmed = trim_history(messages, 4_000)
    accepted(trimmed.messages)
    assert trimmed.tokens <= 4_000 and trimmed.dropped_count > 9_000


# ---------------------------------------------------------------------------------------------
# Units.

CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}},
    {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "上海"}'}}]}
ANSWERS = [{"role": "tool", "tool_call_id": "c2", "content": "多云"}, {"role": "tool", "tool_call_id": "c1", "content": "晴"}]
IMAGES = {"role": "user", "content": [{"type": "text", "text": f"{TOOL_OUTPUT_LABEL}: chart"},
                                      {"type": "image_url", "image_url": {"url": PIXEL}}]}
HISTORY = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "北京和上海天气？"},
           CALL, *ANSWERS, IMAGES, {"role": "assistant", "content": "北京晴，上海多云。"},
           {"role": "user", "content": "明天呢？"}]


def five_each(messages):
    return 5 * len(messages)


def test_a_turn_goes_whole_its_question_calls_answers_images_and_reply():
    trimmed = trim_history(HISTORY, 20, count=five_each)
    assert trimmed.messages == [HISTORY[0], HISTORY[-1]]
    assert trimmed.dropped == HISTORY[1:-1] and trimmed.dropped_tokens == 30
    trimmed = trim_history(HISTORY, 39, count=five_each)  # one short of keeping the whole turn
    assert trimmed.messages == [HISTORY[0], HISTORY[-1]]
    assert trim_history(HISTORY, 40, count=five_each).messages == HISTORY


def test_an_answer_is_never_kept_without_the_question_it_answers():
    """The old rule kept ['system', 'assistant', 'user']: the last answer, without the question that asked it."""
    history = [HISTORY[0]]
    for n in range(5):
        history += [{"role": "user", "content": f"q{n}"}, *copy.deepcopy([CALL, *ANSWERS]),
                    {"role": "assistant", "content": f"a{n}"}]
    history.append({"role": "user", "content": "last"})
    where = {id(m): i for i, m in enumerate(history)}
    for budget in range(10, 5 * len(history) + 1):
        kept = [where[id(m)] for m in trim_history(history, budget, count=five_each).messages]
        for i in kept:
            if history[i]["role"] in ("assistant", "tool"):
                turn = max(j for j in range(i) if history[j]["role"] == "user")
                assert set(range(turn, i)) <= set(kept), (budget, [history[k]["role"] for k in kept])


def test_the_system_prompt_and_latest_turn_are_kept_and_a_budget_below_them_is_refused():
    assert trim_history(HISTORY, 10, count=five_each).messages == [HISTORY[0], HISTORY[-1]]
    before = copy.deepcopy(HISTORY)
    with pytest.raises(ValueError, match=r"budget of 9 tokens is smaller than what must be kept: 10 tokens"):
        trim_history(HISTORY, 9, count=five_each)
    assert HISTORY == before


def test_keep_last_turns_keeps_more_turns():
    trimmed = trim_history(HISTORY, 1000, count=five_each, keep_last_turns=2)
    assert trimmed.messages == HISTORY
    with pytest.raises(ValueError, match="40 tokens"):
        trim_history(HISTORY, 39, count=five_each, keep_last_turns=2)


def test_the_real_counter_and_tools():
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "天气",
                                               "parameters": {"type": "object", "properties": {}}}}]
    full = int(message_tokens(HISTORY, tools))
    trimmed = trim_history(HISTORY, full, tools=tools)
    assert trimmed.messages == HISTORY and trimmed.tokens == full
    assert trim_history(HISTORY, full - 1, tools=tools).dropped_count > 0


@pytest.mark.parametrize("bad", [-1, 1.5, "100", True, None])
def test_bad_budgets(bad):
    with pytest.raises(ValueError, match="budget must be"):
        trim_history(HISTORY, bad)


def test_bad_keep_last_turns_and_non_messages():
    with pytest.raises(ValueError, match="keep_last_turns"):
        trim_history(HISTORY, 100, keep_last_turns=0)
    with pytest.raises(TypeError, match=r"messages\[1\] is a str"):
        trim_history([HISTORY[0], "hello"], 100)


def test_no_user_message_and_empty_history():
    assert trim_history([], 5).messages == []
    only = [{"role": "system", "content": "x"}, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}]
    assert trim_history(only, 10, count=five_each).messages == [only[0], only[2]]


# ---------------------------------------------------------------------------------------------
# Odd input.


def test_sdk_objects_are_kept_as_the_same_objects():
    sdk = ChatCompletionMessage.model_validate(CALL)
    history = [HISTORY[0], HISTORY[1], sdk, *ANSWERS, HISTORY[-2], HISTORY[-1]]
    trimmed = trim_history(history, 10_000)
    assert trimmed.messages[2] is sdk
    accepted(trimmed.messages)
    trimmed = trim_history(history, int(message_tokens([history[0], history[-1]])))
    assert trimmed.messages == [history[0], history[-1]] and trimmed.dropped == history[1:-1]
    accepted(trimmed.messages)


def test_an_orphan_tool_message_is_kept_as_it_was_and_dropped_only_for_room():
    orphan = {"role": "tool", "tool_call_id": "call_gone", "content": "result of a call someone cut off"}
    history = [HISTORY[0], orphan, HISTORY[-2], HISTORY[-1]]
    assert trim_history(history, 100, count=five_each).messages == history  # not repaired behind your back
    with pytest.raises(ApiError, match="must be a response to a preceeding message"):
        accepted(history)
    trimmed = trim_history(history, 15, count=five_each)
    assert trimmed.dropped == [orphan]
    accepted(trimmed.messages)


def test_unanswered_calls_in_the_latest_turn_are_kept():
    pending = [HISTORY[0], {"role": "user", "content": "send it"}, CALL]  # a run paused before its tools ran
    assert trim_history(pending, 15, count=five_each).messages == pending


def test_binary_and_invalid_text_content_is_counted_and_kept_untouched():
    blob = b"\xff\xfe\x00binary\x89PNG"
    odd = "broken \udcff surrogate"
    history = [{"role": "user", "content": blob}, {"role": "assistant", "content": odd},
               {"role": "user", "content": [{"type": "text", "text": odd}]}]
    trimmed = trim_history(history, 10_000)
    assert trimmed.messages == history and trimmed.messages[0]["content"] is blob
    assert trim_history(history, trimmed.tokens - 1).dropped == history[:2]  # the first turn, whole


# ---------------------------------------------------------------------------------------------
# Summaries.


def test_a_summary_replaces_what_was_dropped_inside_the_budget():
    seen = []

    def summarize(dropped):
        seen.append(dropped)
        return "北京晴，上海多云。"

    trimmed = trim_history(HISTORY, 20, count=five_each, summarize=summarize)
    assert seen == [HISTORY[1:-1]]
    summary = trimmed.messages[1]
    assert summary == {"role": "system", "content": f"{SUMMARY_LABEL}\n北京晴，上海多云。"}
    assert trimmed.messages == [HISTORY[0], summary, HISTORY[-1]] and trimmed.tokens == 15
    assert trimmed.summary == "北京晴，上海多云。"


def test_a_long_summary_is_cut_to_fit_and_one_that_cannot_fit_is_left_out():
    def by_length(messages):
        return sum(len(str(as_dict(m).get("content"))) for m in messages)

    fixed = by_length([HISTORY[0], HISTORY[-1]])
    budget = fixed + len(SUMMARY_LABEL) + 1 + 11
    trimmed = trim_history(HISTORY, budget, count=by_length, summarize=lambda d: "x" * 500)
    assert trimmed.summary.startswith("xx") and trimmed.summary.endswith("…") and len(trimmed.summary) < 20
    assert trimmed.tokens == budget
    trimmed = trim_history(HISTORY, fixed + 3, count=by_length, summarize=lambda d: "x" * 500)
    assert trimmed.summary is None and trimmed.messages == [HISTORY[0], HISTORY[-1]]


def test_an_earlier_summary_is_summarised_again_not_pinned():
    first = trim_history(HISTORY, 20, count=five_each, summarize=lambda d: "first summary")
    longer = first.messages[:-1] + [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "again"}]
    seen = []
    second = trim_history(longer, 15, count=five_each, summarize=lambda d: seen.append(d) or "second")
    assert seen[0][0]["content"].startswith(SUMMARY_LABEL)
    assert [m["content"] for m in second.messages] == ["Answer briefly.", f"{SUMMARY_LABEL}\nsecond", "again"]


def test_model_summary_sends_the_transcript_and_returns_the_text():
    class Client:
        def __init__(self):
            self.chat = self.completions = self
            self.sent = None

        def create(self, **params):
            self.sent = params
            message = type("M", (), {"content": "  The user asked about 北京 and 上海.  "})
            return type("R", (), {"choices": [type("C", (), {"message": message})]})

    client = Client()
    text = model_summary(client, "m")(HISTORY[1:6])
    assert text == "The user asked about 北京 and 上海."
    prompt = client.sent["messages"][-1]["content"]
    assert prompt.startswith("Summarise this conversation:")
    assert "get_weather" in prompt and "晴" in prompt and "[image]" not in prompt.split("chart")[0]


def test_model_summary_with_the_practice_model_runs():
    from mini_framework import connect

    client, model = connect("practice")
    text = model_summary(client, model)(HISTORY[1:6])
    assert text.startswith("- 用户问：“北京和上海天气？”") and "多云" in text  # tests/test_practice_summaries.py has more


def test_an_agent_with_a_history_budget_sends_whole_units_and_keeps_everything_in_the_result():
    from mini_framework import Agent
    from tests.test_agent import ScriptedClient, call, get_weather

    history = [{"role": "system", "content": "你是天气助手。"}]
    for i in range(30):
        history += [{"role": "user", "content": f"第{i}个问题：北京天气怎么样？" + "详细一点。" * 20},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": f"old_{i}", "type": "function",
                         "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]},
                    {"role": "tool", "tool_call_id": f"old_{i}", "content": '{"temperature": 22, "condition": "晴"}'},
                    {"role": "assistant", "content": "北京晴，22°C。"}]
    history.append({"role": "user", "content": "那上海呢？"})
    fake = ScriptedClient([call(1, "上海")])
    result = Agent(fake, "m", [get_weather], max_history_tokens=1500).run(history)
    assert len(result.messages) == len(history) + 3  # the run keeps the whole conversation
    for request in fake.requests:
        sent = request["messages"]
        assert len(sent) < len(history) and sent[0]["role"] == "system" and sent[-1]["role"] in ("user", "tool")
        body = {"model": "practice", "messages": sent, "tools": request.get("tools")}
        checks.check(json.loads(json.dumps(body, ensure_ascii=False)), PERSONAS)  # still a valid request
    with pytest.raises(ValueError, match="max_history_tokens"):
        Agent(fake, "m", [get_weather], max_history_tokens=0)
