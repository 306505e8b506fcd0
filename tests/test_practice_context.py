"""The practice model's context window (the real 400 `context_length_exceeded`) and prompt caching
(`usage.prompt_tokens_details.cached_tokens`): see `practice_model/context.py` and `practice_model/caching.py`.

Each caching test starts its own server: what a server has seen decides the numbers.
"""
from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI

from practice_model import Persona, PracticeServer, Reply, caching, context, errors, providers, wire
from practice_model.personas import DEFAULT_PERSONAS

LOG_LINE = "2026-11-30 12:00:00 INFO GET /api/orders 200 served in 12 ms\n"   # 61 characters
SYSTEM = "You are the support assistant of a small online shop. " * 40        # 2,160 characters: 540 tokens
QUESTION = "Where is my order 1234? " * 120                                  # 2,880 characters: 720 tokens


def chat(*messages: dict[str, Any], model: str = "scripted", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": list(messages), **extra}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def system(text: str = SYSTEM) -> dict[str, Any]:
    return {"role": "system", "content": text}


def tool_round(result: str, call_id: str = "call_1") -> list[dict[str, Any]]:
    """An assistant call of read_log and the tool message that answers it."""
    call = {"id": call_id, "type": "function", "function": {"name": "read_log", "arguments": "{}"}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": result}]


@pytest.fixture
def fresh(api) -> Iterator[PracticeServer]:
    """A server of its own (the scripted personas of conftest), so no other test's requests are in its cache."""
    with PracticeServer(personas=api.PERSONAS) as server:
        yield server


@pytest.fixture
def client(fresh) -> Iterator[OpenAI]:
    with OpenAI(base_url=fresh.base_url, api_key="practice", max_retries=0) as sdk:
        yield sdk


# -- the context window ---------------------------------------------------------------------------


def test_a_200000_character_tool_result_overflows_the_window_with_the_real_body(server, api):
    body = chat(user("What went wrong last night?"), *tool_round(LOG_LINE * 3279), tools=[api.WEATHER_TOOL])
    assert len(LOG_LINE * 3279) == 200_019
    assert wire.prompt_tokens(body) == 50_081 and wire.tool_tokens(body) == 48
    error = api.assert_error(api.post(server, body), 400, param="messages", code="context_length_exceeded")
    assert error["message"] == ("This model's maximum context length is 16384 tokens. However, your messages "
                                "resulted in 50081 tokens (50033 in the messages, 48 in the functions). Please "
                                "reduce the length of the messages or functions.")


@pytest.mark.parametrize("tools, max_tokens, words", [
    (False, None, "your messages resulted in 5007 tokens. Please reduce the length of the messages."),
    (True, None, "your messages resulted in 5055 tokens (5007 in the messages, 48 in the functions). Please reduce "
                 "the length of the messages or functions."),
    (False, 100, "you requested 5107 tokens (5007 in the messages, 100 in the completion). Please reduce the "
                 "length of the messages or completion."),
    (True, 100, "you requested 5155 tokens (5007 in the messages, 48 in the functions, and 100 in the completion). "
                "Please reduce the length of the messages, functions, or completion."),
])
def test_the_message_names_what_was_counted(server, api, tools, max_tokens, words):
    extra = {"tools": [api.WEATHER_TOOL]} if tools else {}
    if max_tokens:
        extra["max_completion_tokens" if tools else "max_tokens"] = max_tokens
    raw = api.post(server, chat(user("x" * 20_000), model="scripted@ctx=4096", **extra))
    api.assert_error(raw, 400, f"This model's maximum context length is 4096 tokens. However, {words}",
                     param="messages", code="context_length_exceeded")


def test_the_sdk_raises_bad_request_with_the_code_streamed_or_not(client):
    for stream in (False, True):
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="scripted", messages=[user("x" * 70_000)], stream=stream)
        assert caught.value.status_code == 400 and caught.value.code == "context_length_exceeded"
        assert caught.value.param == "messages" and caught.value.type == "invalid_request_error"
        assert "maximum context length is 16384 tokens" in caught.value.message


def test_deepseek_words_it_its_own_way(server, api):
    tools = {"tools": [api.WEATHER_TOOL]}
    raw = api.post(server, chat(user("x" * 20_000), model="scripted@deepseek@ctx=4096", **tools))
    api.assert_error(raw, 400, "This model's maximum context length is 4096 tokens. However, you requested 5055 "
                     "tokens (5055 in the messages, 0 in the completion). Please reduce the length of the messages "
                     "or completion.", param=None, code="invalid_request_error")
    raw = api.post(server, chat(user("x" * 20_000), model="scripted@ctx=4096@deepseek", max_tokens=8192))
    assert "you requested 13199 tokens (5007 in the messages, 8192 in the completion)" in raw.json()["error"]["message"]


def test_a_window_is_picked_per_request(server, api):
    body = chat(user("x" * 20_000))                                       # 5,007 tokens
    assert api.post(server, body).status == 200                           # the default window: 16,384
    assert api.post(server, {**body, "model": "scripted@ctx=4096"}).status == 400
    answered = api.post(server, {**body, "model": "scripted@ctx=5007"})
    assert answered.status == 200 and answered.json()["model"] == "scripted@ctx=5007"
    assert api.response_problems(answered.json()) == []
    assert api.post(server, {**body, "model": "scripted@ctx=5000"}).status == 400
    small = chat(user("hi"), max_tokens=50)                               # 8 tokens + 50 reserved
    assert api.post(server, {**small, "model": "scripted@ctx=58"}).status == 200
    assert api.post(server, {**small, "model": "scripted@ctx=57"}).status == 400


@pytest.mark.parametrize("model", ["scripted@ctx=0", "scripted@ctx=", "scripted@ctx=4k", "scripted@ctx=-1",
                                   "scripted@ctx=1@ctx=2", "scripted@deepseek@deepseek", "scripted@ctx=123456789"])
def test_a_bad_window_flag_is_an_unknown_model(server, api, model):
    api.assert_error(api.post(server, chat(user("hi"), model=model)), 404,
                     f"The model `{model}` does not exist or you do not have access to it.", code="model_not_found")


def test_other_refusals_come_first(server, api):
    orphan = {"role": "tool", "tool_call_id": "call_x", "content": "x" * 100_000}
    error = api.assert_error(api.post(server, chat(user("hi"), orphan)), 400)
    assert error["param"] == "messages.[1].role"


def test_every_persona_has_the_default_window_and_models_do_not_report_it(server, api):
    assert context.DEFAULT_WINDOW == 16_384
    for persona in DEFAULT_PERSONAS.values():
        assert context.window(persona, providers.Flags(persona.name)) == 16_384
    assert set(api.request(server, "GET", "/v1/models/scripted").json()) == {"id", "object", "created", "owned_by"}


def test_a_persona_may_carry_its_own_window(api):
    small = Persona("small", "a small window", lambda: (lambda request: Reply(content="ok")), context_window=100)
    assert small.context_window == 100 and Persona.of("x", lambda request: Reply()).context_window == 16_384
    assert context.window(small, providers.Flags("small")) == 100
    assert context.window(small, providers.Flags("small", window=500)) == 500
    with PracticeServer(personas=[small]) as server:
        assert api.post(server, chat(user("x" * 300), model="small")).status == 200     # 82 tokens
        raw = api.post(server, chat(user("x" * 400), model="small"))                     # 107 tokens
    assert "maximum context length is 100 tokens" in raw.json()["error"]["message"]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "4096", True, None])
def test_a_window_that_is_not_a_positive_whole_number_is_refused_when_the_persona_is_made(bad):
    with pytest.raises(ValueError, match=r"persona 'odd': context_window must be a whole number of tokens"):
        Persona.of("odd", lambda request: Reply(), context_window=bad)


# -- prompt caching -------------------------------------------------------------------------------


def cached(raw: Any) -> int:
    """`usage.prompt_tokens_details.cached_tokens` of a raw answer or an SDK completion."""
    if hasattr(raw, "usage"):
        return raw.usage.prompt_tokens_details.cached_tokens
    assert raw.status == 200, raw.body[:300]
    return raw.json()["usage"]["prompt_tokens_details"]["cached_tokens"]


def rounded(tokens: int) -> int:
    """What the cache can serve of a shared prefix: whole blocks of 128, at least 1,024, else nothing."""
    whole = tokens // 128 * 128
    return whole if whole >= 1024 else 0


def test_a_first_request_is_not_cached_and_a_repeat_is_up_to_its_last_whole_block(fresh, api):
    body = chat(system(), user(QUESTION))
    first = api.post(fresh, body)
    assert first.json()["usage"]["prompt_tokens"] == wire.prompt_tokens(body) == 4 + 540 + 4 + 720 + 3 == 1271
    assert cached(first) == 0
    assert cached(api.post(fresh, body)) == rounded(1271) == 1152


def test_a_growing_conversation_is_served_up_to_the_shared_prefix(fresh, api):
    first = chat(system(), user(QUESTION))
    assert cached(api.post(fresh, first)) == 0
    second = chat(*first["messages"], {"role": "assistant", "content": "Let me look."}, user("Thanks."))
    shared = wire.prompt_tokens(first) - 3              # all but the three tokens that open the reply
    assert cached(api.post(fresh, second)) == rounded(shared) == 1152
    third = chat(*second["messages"], *tool_round(LOG_LINE * 20), user("And now?"))
    assert cached(api.post(fresh, third)) == rounded(wire.prompt_tokens(second) - 3) == 1280


def test_editing_the_first_message_makes_everything_expensive_again(fresh, api):
    body = chat(system(), user(QUESTION))
    api.post(fresh, body)
    assert cached(api.post(fresh, body)) == 1152
    edited = chat(system("Today is 2026-11-30. " + SYSTEM), *body["messages"][1:])
    assert cached(api.post(fresh, edited)) == 0
    assert cached(api.post(fresh, edited)) == rounded(wire.prompt_tokens(edited))   # its own prefix, from now on


def test_two_conversations_share_the_system_prompt_and_the_tools(fresh, api):
    tools = [api.WEATHER_TOOL] * 4
    first = chat(system(), user("What is the weather in Beijing? " * 60), tools=tools)
    second = chat(system(), user("Is it raining in Shanghai? " * 60), tools=tools)
    shared = wire.tool_tokens(first) + 4 + wire.estimate_tokens(SYSTEM) + 4     # tools, system, a user's role
    assert shared == 738 and wire.prompt_tokens(first) > wire.prompt_tokens(second) > 1024
    assert cached(api.post(fresh, first)) == 0
    assert cached(api.post(fresh, second)) == rounded(shared) == 0              # under 1,024: nothing
    longer = SYSTEM + "Answer in one sentence. " * 80                          # 480 tokens more
    first, second = (chat(system(longer), *b["messages"][1:], tools=tools) for b in (first, second))
    assert cached(api.post(fresh, first)) == 0
    assert cached(api.post(fresh, second)) == rounded(shared + 480) == 1152


def test_the_tools_and_the_schema_come_before_the_messages(fresh, api):
    body = chat(system(), user(QUESTION), tools=[api.WEATHER_TOOL])
    api.post(fresh, body)
    assert cached(api.post(fresh, body)) == rounded(wire.prompt_tokens(body))
    other_tool = {**api.WEATHER_TOOL, "function": {**api.WEATHER_TOOL["function"], "description": "Weather."}}
    assert cached(api.post(fresh, {**body, "tools": [other_tool]})) == 0
    schema = {"type": "json_schema", "json_schema": {"name": "order", "schema": {"type": "object"}}}
    assert cached(api.post(fresh, {**body, "response_format": schema})) == 0
    assert cached(api.post(fresh, {**body, "temperature": 0.2, "tool_choice": "auto"})) > 0   # no prompt tokens


def test_short_prompts_are_never_cached(fresh, api):
    body = chat(user("Where is my order 1234?"))
    assert [cached(api.post(fresh, body)) for _ in range(3)] == [0, 0, 0]


def test_the_cache_is_per_model_and_per_prompt_cache_key(fresh, api):
    body = chat(system(), user(QUESTION))
    api.post(fresh, body)
    assert cached(api.post(fresh, {**body, "model": "scripted-vision"})) == 0
    assert cached(api.post(fresh, {**body, "model": "scripted@ctx=20000"})) == 0
    assert cached(api.post(fresh, {**body, "prompt_cache_key": "user-42"})) == 0
    assert cached(api.post(fresh, {**body, "prompt_cache_key": "user-42"})) == 1152
    assert cached(api.post(fresh, body)) == 1152


def test_the_streamed_usage_chunk_reports_it_too(fresh, client):
    messages = [system(), user(QUESTION)]
    client.chat.completions.create(model="scripted", messages=messages)
    chunks = list(client.chat.completions.create(model="scripted", messages=messages, stream=True,
                                                 stream_options={"include_usage": True}))
    assert chunks[-1].choices == [] and cached(chunks[-1]) == 1152
    assert cached(client.chat.completions.create(model="scripted", messages=messages)) == 1152


def test_a_refused_request_leaves_nothing_behind(api):
    tries = []

    def busy_once(request: dict[str, Any]) -> Reply:
        tries.append(1)
        if len(tries) == 1:
            raise errors.rate_limited("busy-once", retry_after=0.01)
        return Reply(content="ok")

    body = chat(system(), user(QUESTION), model="busy-once")
    with PracticeServer(personas={"busy-once": busy_once}) as server:
        assert api.post(server, body).status == 429
        assert [cached(api.post(server, body)) for _ in range(2)] == [0, 1152]


def test_the_numbers_are_the_same_on_every_server(api):
    bodies = [chat(system(), user(QUESTION)),
              chat(system(), user(QUESTION), {"role": "assistant", "content": "Looking."},
                   user("Thanks! " * 200))]
    runs = []
    for _ in range(2):
        with PracticeServer(personas=api.PERSONAS) as server:
            runs.append([cached(api.post(server, body)) for body in bodies + bodies])
    assert runs[0] == runs[1] == [0, 1152, 1152, 1664]


def test_a_cached_answer_still_validates(fresh, api):
    body = chat(system(), user("one call"), tools=[api.WEATHER_TOOL] * 20)
    api.post(fresh, body)
    raw = api.post(fresh, body)
    assert cached(raw) > 0 and api.response_problems(raw.json()) == []
    usage = raw.json()["usage"]
    assert usage["prompt_tokens_details"]["cached_tokens"] <= usage["prompt_tokens"]


def test_deepseek_reports_its_cache_in_its_own_two_fields(fresh, api):
    body = chat(system(), user(QUESTION), model="scripted@deepseek")
    answers = [api.post(fresh, body).json() for _ in range(2)]
    assert [api.response_problems(a) for a in answers] == [[], []]      # extra usage fields are allowed
    first, second = answers[0]["usage"], answers[1]["usage"]
    prompt = wire.prompt_tokens(body)
    assert first == {"prompt_tokens": prompt, "completion_tokens": first["completion_tokens"],
                     "total_tokens": prompt + first["completion_tokens"],
                     "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": prompt}
    assert second["prompt_cache_hit_tokens"] == rounded(prompt) > 0
    assert second["prompt_cache_hit_tokens"] + second["prompt_cache_miss_tokens"] == second["prompt_tokens"]
    streamed = api.post(fresh, {**body, "stream": True, "stream_options": {"include_usage": True}})
    assert api.sse_chunks(streamed.body.decode())[-1]["usage"] == second
    assert cached(api.post(fresh, chat(system(), user(QUESTION)))) == 0     # another model name, another cache


def test_the_framework_reads_either_shape_of_cached_tokens(fresh, client):
    from mini_framework.replies import read_reply

    for model in ("scripted", "scripted@deepseek"):
        body = {"model": model, "messages": [system(), user(QUESTION)]}
        replies = [read_reply(client.chat.completions.create(**body)) for _ in range(2)]
        assert [r.cached_tokens for r in replies] == [0, rounded(replies[1].prompt_tokens)], model


# -- the layout, unit by unit ---------------------------------------------------------------------


def random_text(rng: random.Random) -> str:
    alphabet = "abc xyz{}\":,\n北京上海天气，。こんにちは한국😀\udc80"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 700)))


def random_request(rng: random.Random) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [system(random_text(rng))]
    for i in range(rng.randint(1, 8)):
        kind = rng.choice(["user", "parts", "assistant", "calls", "image"])
        if kind == "user":
            messages.append(user(random_text(rng)))
        elif kind == "parts":
            messages.append({"role": "user", "content": [{"type": "text", "text": random_text(rng)}] * 2})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": [{"type": "refusal", "refusal": random_text(rng)}]})
        elif kind == "image":
            messages.append({"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * rng.randint(0, 99)}}]})
        else:
            messages += tool_round(random_text(rng), f"call_{i}")
    tools = [{"type": "function", "function": {"name": "t", "description": random_text(rng)}}]
    return {"model": "practice", "messages": messages, **({"tools": tools} if rng.random() < 0.5 else {})}


@pytest.mark.parametrize("seed", range(40))
def test_the_layout_counts_what_wire_counts(seed):
    rng = random.Random(seed)
    request = random_request(rng)
    layout = caching.prompt_blocks(request)
    assert layout.tokens == wire.prompt_tokens(request)
    assert len(layout.blocks) == layout.tokens // caching.BLOCK


@pytest.mark.parametrize("seed", range(40))
def test_a_token_depends_only_on_the_text_before_its_end(seed):
    rng = random.Random(seed)
    text = random_text(rng) * 3
    ends = caching.token_ends(text)
    assert len(ends) == wire.estimate_tokens(text) and ends == sorted(ends) and (not ends or ends[-1] == len(text))
    cut = rng.randint(0, len(text))
    assert [e for e in caching.token_ends(text[:cut]) if e < cut] == [e for e in ends if e < cut]


def test_requests_that_share_a_prefix_share_its_blocks_and_no_more():
    head = [system(), user(QUESTION)]
    a = caching.prompt_blocks(chat(*head, {"role": "assistant", "content": "A" * 2000}))
    b = caching.prompt_blocks(chat(*head, {"role": "assistant", "content": "B" * 2000}))
    shared = wire.prompt_tokens(chat(*head)) - 3 + 4       # the assistant's role marks are the same too
    same = sum(x == y for x, y in zip(a.blocks, b.blocks))
    assert same == shared // 128 and a.blocks[:same] == b.blocks[:same]
    assert all(x != y for x, y in zip(a.blocks[same:], b.blocks[same:]))    # chained: once apart, always apart


def test_the_memory_is_bounded_and_forgets_the_least_recently_used():
    cache = caching.PromptCache(max_blocks=24)
    bodies = [chat(user(f"{i} " + "x" * 5000)) for i in range(3)]      # 1,258 tokens: 9 blocks each
    layouts = [caching.prompt_blocks(b).blocks for b in bodies]
    for blocks in layouts:
        cache.remember(blocks)
    assert len(cache) == 24
    assert cache.cached(layouts[0]) == 0 and cache.cached(layouts[1]) == cache.cached(layouts[2]) == 1152
    cache.clear()
    assert len(cache) == 0 and cache.cached(layouts[2]) == 0


def test_a_huge_image_is_hashed_once_per_block_not_per_token():
    url = "data:image/png;base64," + "A" * 3_000_000
    body = chat(system(), {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]})
    assert caching.prompt_blocks(body).tokens == wire.prompt_tokens(body) == 540 + 4 + 4 + 85 + 3


def test_the_request_body_is_not_changed():
    body = chat(system(), user("北京天气 " * 400), tools=[{"type": "function", "function": {"name": "t"}}])
    before = json.dumps(body, sort_keys=True)
    caching.prompt_blocks(body)
    assert json.dumps(body, sort_keys=True) == before


def test_ascii_text_is_cut_as_any_other_text():
    """ASCII is cut by arithmetic, other text by `token_ends`: a message that gains a Chinese tail keeps its blocks."""
    plain, tailed = caching.Layout(), caching.Layout()
    plain.text("x" * 5000)
    tailed.text("x" * 5000 + "北京")
    assert caching.token_ends("x" * 5000)[-3:] == [4992, 4996, 5000]
    assert plain.blocks == tailed.blocks[:len(plain.blocks)] and len(plain.blocks) == 9
