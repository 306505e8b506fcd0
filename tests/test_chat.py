"""Chat: history across user turns (tool messages included), trimming by whole turns, a pause that blocks a
new turn until decided, signed save and load, and a failed turn that loses nothing that ran."""
from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest

from mini_framework import Agent, ProviderError, connect, tool
from mini_framework.chat import Chat, ChatPaused, SavedChatError

KEY = "a test key of sixteen bytes or more"
SENT: list[dict] = []


@tool
def get_weather(city: str) -> dict:
    """Get the current weather for a city."""
    return {"city": city, "temperature": {"北京": 22, "上海": 25}.get(city, 18), "condition": "晴"}


@tool
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail (really sends)."""
    SENT.append({"to": to, "subject": subject, "body": body})
    return f"sent to {to}"


MAIL = "给 zhang@example.com 发一封邮件，主题是会议改期，内容是会议改到周五。"


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("MINI_FRAMEWORK_HOME", str(tmp_path / "home"))  # the record of spent approvals
    SENT.clear()


@pytest.fixture(scope="module")
def practice():
    return connect()


def agent_of(practice, client=None, **options) -> Agent:
    return Agent(client or practice.client, practice.model, [get_weather, add, send_email], **options)


def roles(messages) -> list[str]:
    return [m["role"] for m in messages]


def answered_in_order(messages) -> bool:
    """Every tool message answers a call of the assistant message before it, and every call is answered."""
    open_ids: set[str] = set()
    for m in messages:
        if m["role"] == "tool":
            if m["tool_call_id"] not in open_ids:
                return False
            open_ids.discard(m["tool_call_id"])
        elif open_ids:
            return False
        if m["role"] == "assistant":
            open_ids = {c["id"] for c in m.get("tool_calls") or ()}
    return not open_ids


class Failing:
    """The practice model, failing on the request numbers given: a 500 (after the SDK's retries), or with
    `unreadable`, a reply with no choices (the Agent raises ProviderError)."""

    def __init__(self, real, fail_on: set[int], unreadable: bool = False):
        self.real, self.fail_on, self.count, self.unreadable = real, fail_on, 0, unreadable
        self.chat = self
        self.completions = self

    def create(self, **params):
        self.count += 1
        if self.count in self.fail_on and self.unreadable:
            return {"id": "x", "object": "chat.completion", "choices": []}
        if self.count in self.fail_on:
            response = httpx.Response(500, request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
            raise openai.InternalServerError("Error code: 500 - the server had an error", response=response, body=None)
        return self.real.chat.completions.create(**params)


# ----------------------------------------------------------------------------- turns and history


def test_the_history_grows_across_turns_with_the_tool_messages(practice):
    chat = Chat(agent_of(practice))
    assert "22" in (chat.send("北京现在天气怎么样？").text or "")
    second = chat.send("那上海呢？")
    assert "25" in (second.text or "") and "上海" in (second.text or "")
    assert roles(chat.messages) == ["user", "assistant", "tool", "assistant"] * 2
    assert second.messages[:4] == chat.messages[:4]            # the second turn was sent the first one
    assert "168" in (chat.send("一百二十三加四十五等于多少？").text or "")
    assert answered_in_order(chat.messages) and not chat.paused and chat.result is not None


def test_a_chat_goes_on_from_given_messages_and_async(practice):
    start = [{"role": "system", "content": "You are a weather assistant."},
             {"role": "user", "content": "北京现在天气怎么样？"}, {"role": "assistant", "content": "北京：22 度。"}]
    chat = Chat(agent_of(practice), messages=start)
    result = asyncio.run(chat.asend("上海现在天气怎么样？"))
    assert chat.messages[:3] == start and "25" in (result.text or "")
    with pytest.raises(ValueError, match="non-empty"):
        chat.send("")
    with pytest.raises(TypeError):
        Chat("not an agent")  # type: ignore[arg-type]


def test_trimming_drops_whole_old_turns_and_never_splits_a_call_from_its_answers(practice):
    chat = Chat(agent_of(practice, instructions="Answer briefly."), max_history_tokens=300)
    for city in ["北京", "上海", "广州", "深圳", "成都", "杭州"]:
        chat.send(f"{city}现在天气怎么样？")
        assert chat.messages[0]["role"] == "system" and chat.messages[1]["role"] == "user"
        assert answered_in_order(chat.messages)
    assert chat.dropped >= 8 and chat.dropped % 4 == 0           # whole turns: user, call, answer, reply
    assert chat.messages[1]["content"] != "北京现在天气怎么样？" and chat.messages[-4]["content"] == "杭州现在天气怎么样？"
    with pytest.raises(ValueError, match="smaller than what must be kept"):
        chat.send("很长的问题" * 400)
    assert chat.messages[-4]["content"] == "杭州现在天气怎么样？"     # refused before anything changed


# ----------------------------------------------------------------------------- pauses


def test_a_pending_approval_blocks_a_new_turn_with_a_clear_message(practice):
    chat = Chat(agent_of(practice))
    chat.send("北京现在天气怎么样？")
    paused = chat.send(MAIL)
    assert paused.paused and chat.paused and [p.name for p in chat.pending] == ["send_email"] and not SENT
    before = list(chat.messages)
    with pytest.raises(ChatPaused) as refused:
        chat.send("算了，先告诉我上海的天气")
    message = str(refused.value)
    assert "send_email(to='zhang@example.com'" in message and chat.pending[0].id in message
    assert "approve()" in message and "chat.resume()" in message
    assert chat.messages == before and not SENT                  # nothing sent, nothing answered
    with pytest.raises(ValueError, match="not paused"):
        Chat(agent_of(practice)).resume()


def test_approve_and_resume_then_the_next_turn_works(practice):
    chat = Chat(agent_of(practice))
    chat.send(MAIL)
    chat.pending[0].approve()
    done = chat.resume()
    assert SENT == [{"to": "zhang@example.com", "subject": "会议改到周五", "body": "会议改到周五"}]
    assert not chat.paused and "zhang@example.com" in (done.text or "")
    assert "25" in (chat.send("上海现在天气怎么样？").text or "")
    assert answered_in_order(chat.messages) and len(SENT) == 1


def test_a_denied_call_is_answered_and_the_chat_goes_on(practice):
    chat = Chat(agent_of(practice))
    chat.send(MAIL)
    chat.pending[0].deny("not today")
    chat.resume()
    assert not SENT and any(m["role"] == "tool" and "not today" in m["content"] for m in chat.messages)
    chat.send("北京现在天气怎么样？")
    assert answered_in_order(chat.messages)


# ----------------------------------------------------------------------------- a turn that raises


def test_a_turn_that_fails_before_anything_ran_leaves_the_history_unchanged(practice):
    chat = Chat(agent_of(practice, Failing(practice.client, {3})))
    first = chat.send("北京现在天气怎么样？")                        # requests 1 and 2
    before = list(chat.messages)
    with pytest.raises(openai.InternalServerError) as failed:
        chat.send("那上海呢？")                                      # request 3 fails
    assert chat.messages == before and chat.result is first
    assert failed.value.partial_result.messages[-1] == {"role": "user", "content": "那上海呢？"}
    assert "25" in (chat.send("那上海呢？").text or "")                # sent again: it works


def test_a_turn_that_fails_after_a_tool_ran_keeps_what_ran(practice):
    chat = Chat(agent_of(practice, Failing(practice.client, {4})))
    chat.send("北京现在天气怎么样？")
    with pytest.raises(openai.InternalServerError):
        chat.send("那上海呢？")                                      # the call runs (3), the answer fails (4)
    assert roles(chat.messages)[-3:] == ["user", "assistant", "tool"] and answered_in_order(chat.messages)
    assert '"temperature": 25' in chat.messages[-1]["content"]
    chat.send("结果呢？")
    assert answered_in_order(chat.messages)


def test_an_unreadable_reply_is_a_provider_error_that_loses_nothing(practice):
    chat = Chat(agent_of(practice, Failing(practice.client, {2, 3}, unreadable=True)))
    with pytest.raises(ProviderError, match="no choices"):
        chat.send("北京现在天气怎么样？")                             # the call ran (1), its answer unreadable (2)
    assert roles(chat.messages) == ["user", "assistant", "tool"] and chat.result is None
    kept = list(chat.messages)
    with pytest.raises(ProviderError):
        chat.send("谢谢")                                            # nothing ran (3): unchanged
    assert chat.messages == kept


def test_a_resume_that_fails_keeps_what_ran(practice):
    chat = Chat(agent_of(practice, Failing(practice.client, {2})))
    chat.send(MAIL)
    chat.pending[0].approve()
    with pytest.raises(openai.InternalServerError):
        chat.resume()                                                 # the mail is sent, the answer fails
    assert len(SENT) == 1 and chat.messages[-1]["role"] == "tool" and not chat.paused
    chat.send("发了吗？")
    assert len(SENT) == 1 and answered_in_order(chat.messages)


# ----------------------------------------------------------------------------- save and load


def test_save_and_load_round_trip(practice, tmp_path):
    path = tmp_path / "chat.json"
    chat = Chat(agent_of(practice), max_history_tokens=4000)
    chat.send("北京现在天气怎么样？")
    chat.save(path, key=KEY)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = Chat.load(path, agent_of(practice), key=KEY)
    assert again.messages == chat.messages and again.max_history_tokens == 4000 and not again.paused
    again.send("那上海呢？")
    assert roles(again.messages) == ["user", "assistant", "tool", "assistant"] * 2


def test_a_paused_chat_saved_and_loaded_is_decided_and_resumed(practice, tmp_path):
    path = tmp_path / "chat.json"
    chat = Chat(agent_of(practice))
    chat.send("北京现在天气怎么样？")
    chat.send(MAIL)
    chat.save(path, key=KEY)
    loaded = Chat.load(path, agent_of(practice), key=KEY)
    assert loaded.paused and [p.name for p in loaded.pending] == ["send_email"] and loaded.messages == chat.messages
    with pytest.raises(ChatPaused):
        loaded.send("hello")
    loaded.pending[0].approve()
    loaded.resume()
    assert len(SENT) == 1
    loaded.send("上海现在天气怎么样？")
    assert answered_in_order(loaded.messages) and len(SENT) == 1


def test_an_approval_in_a_saved_chat_runs_once_whatever_the_copies(practice, tmp_path):
    path = tmp_path / "chat.json"
    chat = Chat(agent_of(practice))
    chat.send(MAIL)
    chat.pending[0].approve()
    chat.save(path, key=KEY)
    first, second = (Chat.load(path, agent_of(practice), key=KEY) for _ in range(2))
    assert first.pending[0].decision is not None                     # the decision was saved with it
    first.resume()
    second.resume()
    assert len(SENT) == 1


@pytest.mark.parametrize("damage,message", [
    (lambda d: d["chat"]["messages"][0].update(content="给所有人发邮件"), "changed after it was saved"),
    (lambda d: d.pop("signature"), "changed after it was saved, or was never signed"),
    (lambda d: d["chat"].update(dropped=-1), "changed after it was saved"),
    (lambda d: d.update(format="mini_framework.chat/0"), "not a saved chat of this version"),
])
def test_an_edited_or_unsigned_file_is_refused(practice, tmp_path, damage, message):
    path = tmp_path / "chat.json"
    chat = Chat(agent_of(practice))
    chat.send("北京现在天气怎么样？")
    chat.save(path, key=KEY)
    data = json.loads(path.read_text(encoding="utf-8"))
    damage(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(SavedChatError, match=message):
        Chat.load(path, agent_of(practice), key=KEY)


def test_a_tampered_paused_chat_is_refused_and_nothing_runs(practice, tmp_path):
    path = tmp_path / "chat.json"
    chat = Chat(agent_of(practice))
    chat.send(MAIL)
    chat.save(path, key=KEY)
    data = json.loads(path.read_text(encoding="utf-8"))
    call = data["chat"]["paused_run"]["run"]["messages"][-1]["tool_calls"][0]["function"]
    call["arguments"] = call["arguments"].replace("zhang@example.com", "boss@example.com")
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(SavedChatError, match="changed after it was saved"):
        Chat.load(path, agent_of(practice), key=KEY)
    with pytest.raises(SavedChatError, match="another key"):
        chat.save(path, key=KEY)
        Chat.load(path, agent_of(practice), key="another key, sixteen bytes long")
    for text in ["", "{not json", "[]"]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(SavedChatError):
            Chat.load(path, agent_of(practice), key=KEY)
    with pytest.raises(SavedChatError, match="no saved chat"):
        Chat.load(tmp_path / "missing.json", agent_of(practice), key=KEY)
    assert not SENT


def test_messages_with_unanswered_calls_are_refused(practice):
    calls = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "北京"}'}}]}
    with pytest.raises(ValueError, match="not all answered"):
        Chat(agent_of(practice), messages=[{"role": "user", "content": "北京天气"}, calls])
