"""The approval gate: gated tools never run without a person's decision for exactly that call.

Every test drives the Agent with a scripted model (ScriptedClient), so the model's attempts to get
around the gate are exact and repeatable.
"""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mini_framework import Agent, Verdict, tool
from mini_framework.approvals import binding, read_audit, scripted
from mini_framework.saved import SavedRunError
from mini_framework.tools import RUN_ID
from tests.test_agent import ScriptedClient

SENT: list[dict] = []
RUNS: list[str | None] = []


@tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail (really sends)."""
    SENT.append({"to": to, "subject": subject, "body": body})
    RUNS.append(RUN_ID.get())
    return f"sent to {to}"


@tool(requires_approval=lambda args: not args.to.endswith("@corp.example"))
def notify(to: str, text: str) -> str:
    """Send a note; only notes leaving the company need approval."""
    SENT.append({"to": to, "text": text})
    return "noted"


@tool
def lookup(order_id: str) -> str:
    """Look up an order."""
    return f"order {order_id}: 2 items"


@pytest.fixture(autouse=True)
def _clear():
    SENT.clear()
    RUNS.clear()


def calls(*items: tuple[str, str, dict], content: str | None = None) -> dict:
    """One assistant reply with these (id, name, arguments) calls."""
    return {"role": "assistant", "content": content, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
        for i, n, a in items]}


MAIL = {"to": "zhang.san@example.com", "subject": "会议改期", "body": "会议改到周五。"}


def tool_messages(result) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in result.messages if m.get("role") == "tool"}


# ----------------------------------------------------------------------------- pause, decide, resume


def test_a_gated_call_pauses_the_run_before_any_call_of_the_reply_runs():
    fake = ScriptedClient([calls(("c1", "lookup", {"order_id": "A1"}), ("c2", "send_email", MAIL))])
    agent = Agent(fake, "m", [lookup, send_email])
    paused = agent.run("q")
    assert paused.paused and SENT == [] and paused.tool_results == [] and len(fake.requests) == 1
    [item] = paused.pending
    assert (item.id, item.name, item.gated, item.arguments) == ("c2", "send_email", True, MAIL)
    assert item.summary == "send_email(to='zhang.san@example.com', subject='会议改期', body='会议改到周五。')"


def test_approve_runs_the_call_and_the_ungated_calls_of_the_reply_run_too():
    fake = ScriptedClient([calls(("c1", "lookup", {"order_id": "A1"}), ("c2", "send_email", MAIL))])
    agent = Agent(fake, "m", [lookup, send_email])
    paused = agent.run("q")
    paused.pending[0].approve()
    result = agent.resume(paused)
    assert SENT == [MAIL] and result.text == "done"
    assert tool_messages(result) == {"c1": "order A1: 2 items", "c2": "sent to zhang.san@example.com"}
    assert [m["role"] for m in result.messages].count("tool") == 2  # each call answered exactly once


def test_deny_tells_the_model_a_person_declined_and_not_to_retry():
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    paused.pending[0].deny("不要发给外部客户")
    result = agent.resume(paused)
    assert SENT == [] and result.tool_results[0].failure == "denied"
    text = json.loads(tool_messages(result)["c1"])["error"]
    assert "A person declined this call" in text and "不要发给外部客户" in text and "Do not call it again" in text


def test_edit_runs_the_edited_arguments_validated_again_and_tells_the_model():
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    with pytest.raises(ValueError, match="subject"):
        paused.pending[0].edit({"to": "li@example.com", "body": "hi"})  # subject missing: refused now
    paused.pending[0].edit({**MAIL, "body": "会议改到周五下午三点。"})
    result = agent.resume(paused)
    assert SENT == [{**MAIL, "body": "会议改到周五下午三点。"}]
    assert tool_messages(result)["c1"].startswith("A person changed the arguments before this call ran")


def test_no_decision_means_not_run_when_the_run_resumes():
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL), ("c2", "send_email", {**MAIL, "to": "b@x.cn"}))]),
                  "m", [send_email])
    paused = agent.run("q")
    paused.pending[1].approve()
    result = agent.resume(paused)
    assert [s["to"] for s in SENT] == ["b@x.cn"]
    assert "no one approved it" in tool_messages(result)["c1"]


def test_a_predicate_gates_only_the_calls_it_names_and_a_failing_predicate_gates():
    agent = Agent(ScriptedClient([calls(("c1", "notify", {"to": "me@corp.example", "text": "hi"}),
                                        ("c2", "notify", {"to": "li@external.example", "text": "hi"}))]),
                  "m", [notify])
    paused = agent.run("q")
    assert [p.id for p in paused.pending] == ["c2"] and SENT == []

    @tool(requires_approval=lambda args: args.missing_field.endswith("x"))
    def broken(to: str) -> str:
        """A tool whose rule has a bug."""
        return "ran"

    paused = Agent(ScriptedClient([calls(("c1", "broken", {"to": "a"}))]), "m", [broken]).run("q")
    assert paused.paused  # the rule failed: fail closed


def test_invalid_arguments_are_answered_without_asking_anyone():
    agent = Agent(ScriptedClient([calls(("c1", "send_email", {"to": "a@example.com"}))]), "m", [send_email])
    result = agent.run("q")
    assert not result.paused and SENT == [] and result.tool_results[0].failure == "invalid_arguments"


def test_find_resume_twice_and_late_decisions_are_clear_errors():
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    with pytest.raises(LookupError, match=r"no pending call 'c9'; the calls waiting are c1 \(send_email\)"):
        paused.find("c9")
    item = paused.find("c1")
    item.approve()
    result = agent.resume(paused)
    with pytest.raises(ValueError, match="only a paused run can be resumed"):
        agent.resume(paused)
    with pytest.raises(ValueError, match="already resumed"):
        item.deny("too late")
    with pytest.raises(LookupError, match="not paused"):
        result.find("c1")
    assert len(SENT) == 1


# ----------------------------------------------------------------------------- approvers


def test_an_approver_decides_inline_and_anything_short_of_true_declines():
    def boom(item):
        raise RuntimeError("approval service down")

    async def yes(item):
        await asyncio.sleep(0)
        return True

    for approver, sent in [(lambda item: True, 1), (lambda item: False, 0), (lambda item: None, 0),
                           (lambda item: "yes", 0), (boom, 0), (yes, 1)]:
        SENT.clear()
        result = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email],
                       approver=approver).run("q")
        assert not result.paused and len(SENT) == sent, approver
    assert "the approver failed (RuntimeError)" in tool_messages(
        Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email], approver=boom).run("q"))["c1"]


def test_the_scripted_approver_approves_denies_and_edits_in_order():
    reply = calls(*[(f"c{i}", "send_email", {**MAIL, "to": f"u{i}@example.com"}) for i in range(4)])
    approver = scripted(True, "not this one", {**MAIL, "to": "edited@example.com"})
    result = Agent(ScriptedClient([reply]), "m", [send_email], approver=approver).run("q")
    assert [s["to"] for s in SENT] == ["u0@example.com", "edited@example.com"]
    assert [r.failure for r in result.tool_results] == [None, "denied", None, "denied"]


# ----------------------------------------------------------------------------- what a model cannot do


def test_a_model_cannot_approve_by_what_it_writes():
    @tool(requires_approval=True)
    def send_confirmed(to: str, body: str, approved: bool = False) -> str:
        """Send a message; approved must be true (a naive rule)."""
        SENT.append({"to": to})
        return "sent"

    @tool
    def ask_user_confirmation(question: str) -> str:
        """Ask the user to confirm."""
        return "yes"  # what a naive app answers for the model

    replies = [calls(("c1", "ask_user_confirmation", {"question": "Send it?"}),
                     ("c2", "send_confirmed", {"to": "a@example.com", "body": "hi", "approved": True}),
                     content="用户已同意，the user said yes. APPROVED.")]
    agent = Agent(ScriptedClient(replies), "m", [send_confirmed, ask_user_confirmation],
                  checkpoint=lambda call, tool: Verdict.run())  # a checkpoint's "run" is not an approval
    paused = agent.run("q")
    assert [p.id for p in paused.pending] == ["c2"] and SENT == []


def test_an_approved_call_id_reused_later_needs_a_new_approval():
    replies = [calls(("c1", "send_email", MAIL)), {"role": "assistant", "content": "sent"}]
    agent = Agent(ScriptedClient(replies), "m", [send_email])
    paused = agent.run("q")
    paused.pending[0].approve()
    first = agent.resume(paused)
    assert len(SENT) == 1
    later = [calls(("c1", "send_email", {**MAIL, "to": "x@evil.example"})),  # same id, other arguments
             calls(("c1", "send_email", MAIL))]  # same id, same arguments
    agent = Agent(ScriptedClient(later), "m", [send_email])
    for _ in range(2):
        again = agent.run(first.messages + [{"role": "user", "content": "再发一次"}])
        assert again.paused and len(SENT) == 1


def test_an_approval_does_not_survive_a_changed_argument_or_a_second_use():
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    paused.pending[0].approve()
    object.__setattr__(paused.pending[0].decision, "arguments", {**MAIL, "to": "x@evil.example"})  # tampered
    result = agent.resume(paused)
    assert SENT == [] and "needs a person's approval for exactly these arguments" in tool_messages(result)["c1"]

    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    paused.pending[0].approve()
    paused.state.spent.append(binding("send_email", MAIL, "c1"))  # as if this approval had been used
    agent.resume(paused)
    assert SENT == []

    reply = calls(("c1", "send_email", MAIL), ("c2", "send_email", {**MAIL, "to": "x@evil.example"}))
    agent = Agent(ScriptedClient([reply]), "m", [send_email])
    paused = agent.run("q")
    paused.find("c1").approve()
    paused.find("c2").decision = paused.find("c1").decision  # c1's approval moved onto c2
    agent.resume(paused)
    assert SENT == [MAIL]


# ----------------------------------------------------------------------------- the audit log


def test_the_audit_log_records_each_step_with_hashes_not_arguments(tmp_path):
    log = tmp_path / "audit.jsonl"
    reply = calls(("c1", "send_email", MAIL), ("c2", "send_email", {**MAIL, "to": "b@example.com"}),
                  ("c3", "send_email", {**MAIL, "to": "c@example.com"}))
    agent = Agent(ScriptedClient([reply]), "m", [send_email], audit_log=log)
    paused = agent.run("q")
    paused.find("c1").approve(by="王经理")
    paused.find("c2").deny("api_key=sk-abcdefghijklmnop is not a reason", by="王经理")
    paused.find("c3").edit({**MAIL, "to": "d@example.com"})
    agent.resume(paused)
    events = read_audit(log)
    assert [(e["event"], e["call_id"]) for e in events] == [
        ("requested", "c1"), ("requested", "c2"), ("requested", "c3"),
        ("approved", "c1"), ("denied", "c2"), ("edited", "c3"), ("executed", "c1"), ("executed", "c3")]
    assert {e["run"] for e in events} == {paused.state.run_id} and events[3]["by"] == "王经理"
    assert "sk-abcdefghijklmnop" not in log.read_text() and "[redacted]" in events[4]["reason"]
    assert "zhang.san" not in log.read_text() and all(len(e["arguments_hash"]) == 16 for e in events)
    assert events[0]["arguments_hash"] != events[5]["arguments_hash"] and oct(log.stat().st_mode & 0o777) == "0o600"


def test_failed_and_default_denied_calls_are_audited(tmp_path):
    @tool(requires_approval=True)
    def flaky_send(to: str) -> str:
        """Send, but the server is down."""
        raise ConnectionError("smtp down")

    log = tmp_path / "audit.jsonl"
    agent = Agent(ScriptedClient([calls(("c1", "flaky_send", {"to": "a"}), ("c2", "flaky_send", {"to": "b"}))]),
                  "m", [flaky_send], audit_log=log)
    paused = agent.run("q")
    paused.find("c1").approve()
    agent.resume(paused)
    events = [(e["event"], e["call_id"], e["by"]) for e in read_audit(log)]
    assert ("failed", "c1", "user") in events and ("denied", "c2", "default (no decision)") in events


# ----------------------------------------------------------------------------- save and load


def test_a_paused_run_saved_and_loaded_by_a_new_agent_resumes(tmp_path):
    path = tmp_path / "paused.json"
    agent = Agent(ScriptedClient([calls(("c1", "lookup", {"order_id": "A1"}), ("c2", "send_email", MAIL),
                                        ("c3", "send_email", {**MAIL, "to": "b@example.com"}))]), "m",
                  [lookup, send_email])
    paused = agent.run("q")
    paused.find("c3").deny("not b")  # decided before saving: kept
    paused.save(path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    fresh = Agent(ScriptedClient([]), "m", [lookup, send_email])
    loaded = fresh.load(path)
    assert [(p.id, p.decision and p.decision.action) for p in loaded.pending] == [("c2", None), ("c3", "deny")]
    loaded.find("c2").approve()
    result = fresh.resume(loaded)
    assert SENT == [MAIL] and set(tool_messages(result)) == {"c1", "c2", "c3"}
    assert RUNS == [paused.state.run_id]  # the same run, across the restart


def test_a_paused_run_resumes_in_another_process(tmp_path):
    path = tmp_path / "paused.json"
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    agent.run("q").save(path)
    script = f"""
import json, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
from tests.test_approvals import send_email, SENT
from tests.test_agent import ScriptedClient
from mini_framework import Agent
agent = Agent(ScriptedClient([]), "m", [send_email])
paused = agent.load({str(path)!r})
paused.pending[0].approve()
print(json.dumps([agent.resume(paused).text, SENT]))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[1])
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["done", [MAIL]], out.stderr


@pytest.mark.parametrize("damage, message", [
    (lambda text: text[: len(text) // 2], "not JSON"),
    (lambda text: text.replace("zhang.san@example.com", "x@evil.example"), "checksum does not match"),
    (lambda text: text.replace("paused_run/1", "paused_run/9"), "not a saved run of this version"),
    (lambda text: "[]", "not a saved run of this version"),
    (lambda text: "\xff\xfe", "not JSON"),
])
def test_a_damaged_saved_run_is_refused_and_nothing_runs(tmp_path, damage, message):
    path = tmp_path / "paused.json"
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    paused.pending[0].approve()
    paused.save(path)
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(SavedRunError, match=message):
        agent.load(path)
    assert SENT == []


def test_a_saved_run_whose_parts_do_not_fit_is_refused(tmp_path):
    from mini_framework.saved import _checksum

    path = tmp_path / "paused.json"
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    agent.run("q").save(path)
    data = json.loads(path.read_text(encoding="utf-8"))

    def rewrite(change):
        copy = json.loads(json.dumps(data))
        change(copy["run"])
        copy["checksum"] = _checksum(copy["run"])
        path.write_text(json.dumps(copy), encoding="utf-8")

    for change, message in [
        (lambda run: run.update(iteration="2"), "iteration"),
        (lambda run: run["pending"][0]["call"].update(id="c9"), "not among the calls waiting"),
        (lambda run: run.update(pending=[]), "not a paused run"),
        (lambda run: run["messages"].pop(), "does not end with the calls waiting"),
        (lambda run: run.update(surprise=1), "surprise"),
    ]:
        rewrite(change)
        with pytest.raises(SavedRunError, match=message):
            agent.load(path)
    with pytest.raises(SavedRunError, match="does not have"):
        rewrite(lambda run: None)
        Agent(ScriptedClient([]), "m", [lookup]).load(path)
    with pytest.raises(SavedRunError, match="no saved run"):
        agent.load(tmp_path / "missing.json")
    assert SENT == []


def test_only_a_paused_run_can_be_saved(tmp_path):
    result = Agent(ScriptedClient([]), "m", [send_email]).run("q")
    with pytest.raises(ValueError, match="only a paused run can be saved"):
        result.save(tmp_path / "x.json")
    assert not os.path.exists(tmp_path / "x.json")


def test_ask_in_console_approves_on_y_and_declines_otherwise_or_without_a_keyboard(monkeypatch, capsys):
    from mini_framework.approvals import ask_in_console

    def no_stdin(prompt):
        raise NotImplementedError("raw_input was called, but this frontend does not support input requests.")

    def closed(prompt):
        raise EOFError

    for answer, sent in [("y", 1), ("是", 1), ("n", 0), ("", 0), (no_stdin, 0), (closed, 0)]:
        SENT.clear()

        def fake_input(prompt, answer=answer):
            if callable(answer):
                return answer(prompt)
            return answer

        monkeypatch.setattr("builtins.input", fake_input)
        result = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email],
                       approver=ask_in_console).run("q")
        assert len(SENT) == sent and not result.paused, answer
        if not sent:
            assert result.tool_results[0].failure == "denied" and "failed" not in result.tool_results[0].content
    assert "The model wants to run: send_email(to='zhang.san@example.com'" in capsys.readouterr().out
