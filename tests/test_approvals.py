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
from typing import Annotated

import pytest
from pydantic import AfterValidator

from mini_framework import Agent, Verdict, tool
from mini_framework.approvals import binding, read_audit, scripted
from mini_framework.approvals.saved import SavedRunError
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
    paused.state.features["approvals"].spent.append(binding("send_email", MAIL, "c1"))  # as if it had been used
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
    (lambda text: text.replace("zhang.san@example.com", "x@evil.example"), "changed after it was saved"),
    (lambda text: text.replace("paused_run/2", "paused_run/9"), "not a saved run of this version"),
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
    from mini_framework.approvals.record import signing_key
    from mini_framework.approvals.saved import sign as _sign

    path = tmp_path / "paused.json"
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    agent.run("q").save(path)
    data = json.loads(path.read_text(encoding="utf-8"))

    def rewrite(change):
        copy = json.loads(json.dumps(data))
        change(copy["run"])
        copy["signature"] = _sign(copy["run"], signing_key())  # signed with the right key: only the content is wrong
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
    assert 'The model wants to run send_email (call c1):\n{\n  "to": "zhang.san@example.com",' in capsys.readouterr().out


# ----------------------------------------------------------------------------- what the review found (regressions)


def test_a_saved_run_is_resumed_once_whichever_copy_is_used(tmp_path):
    path = tmp_path / "paused.json"
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    paused.pending[0].approve()
    paused.save(path)
    agent.resume(paused)  # resumed in memory: the file is claimed
    with pytest.raises(SavedRunError, match="already loaded"):
        agent.load(path)
    assert len(SENT) == 1

    paused = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email]).run("q")
    paused.pending[0].approve()
    paused.save(path := tmp_path / "second.json")
    loaded = agent.load(path)  # taken out of the file
    with pytest.raises(SavedRunError, match="already loaded"):
        agent.load(path)
    with pytest.raises(SavedRunError, match="resume that copy"):
        agent.resume(paused)  # the in-memory original can't run it a second time
    agent.resume(loaded)
    assert len(SENT) == 2


def test_two_threads_resuming_one_run_resume_it_once():
    import threading

    for _ in range(10):
        agent = Agent(ScriptedClient([calls(("c1", "lookup", {"order_id": "A"}), ("c2", "send_email", MAIL))]),
                      "m", [lookup, send_email])
        paused = agent.run("q")
        paused.pending[0].approve()
        barrier, outcomes = threading.Barrier(2), []

        def go(agent=agent, paused=paused, barrier=barrier, outcomes=outcomes):
            barrier.wait()
            try:
                outcomes.append(len(tool_messages(agent.resume(paused))))
            except ValueError:
                outcomes.append("refused")

        threads = [threading.Thread(target=go) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes, key=str) == [2, "refused"]


def test_an_audit_log_that_fails_after_the_tool_ran_loses_no_result(tmp_path, caplog):
    log = tmp_path / "audit.jsonl"

    @tool(requires_approval=True)
    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        SENT.append({"to": to})
        os.remove(log)
        os.mkdir(log)  # the log becomes unwritable while the tool runs
        return "paid"

    agent = Agent(ScriptedClient([calls(("c1", "pay", {"to": "li", "amount": 100}))]), "m", [pay], audit_log=log)
    paused = agent.run("q")
    paused.pending[0].approve()
    result = agent.resume(paused)
    assert len(SENT) == 1 and tool_messages(result) == {"c1": "paid"} and result.text == "done"
    assert "could not be written" in caplog.text


def test_a_request_that_cannot_be_recorded_does_not_run(tmp_path):
    log = tmp_path / "audit.jsonl"
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email], audit_log=log,
                  approver=lambda item: True)
    log.unlink()
    log.mkdir()
    result = agent.run("q")
    assert SENT == [] and result.tool_results[0].failure == "denied"
    with pytest.raises(IsADirectoryError):
        Agent(ScriptedClient([]), "m", [send_email], audit_log=log)  # found when the agent is made
    (tmp_path / "target").write_text("")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "target")
    with pytest.raises(OSError):
        Agent(ScriptedClient([]), "m", [send_email], audit_log=tmp_path / "link.jsonl")  # never through a symlink


def test_the_person_sees_every_argument_in_full(capsys, monkeypatch):
    from mini_framework.approvals import ask_in_console

    body = "Dear team, " + "the quarterly numbers are attached. " * 5 + "P.S. Pay IBAN DE89 3704 0044 0532 0130 00."
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    paused = Agent(ScriptedClient([calls(("c1", "send_email", {**MAIL, "body": body}))]), "m", [send_email]).run("q")
    assert "characters)" in paused.pending[0].summary  # the one-line summary says it is shortened
    ask_in_console(paused.pending[0])
    assert "IBAN DE89 3704 0044 0532 0130 00" in capsys.readouterr().out


def test_strange_strings_and_deep_arguments_do_not_crash_a_run(tmp_path):
    agent = Agent(ScriptedClient([calls(("c\ud800", "send_email", {**MAIL, "body": "hi \ud800"}))]), "m",
                  [send_email], audit_log=tmp_path / "a.jsonl", approver=lambda item: True)
    assert agent.run("q").tool_results[0].ok and len(read_audit(tmp_path / "a.jsonl")) == 3

    @tool
    def store(doc: dict) -> str:
        """Store a document."""
        return "stored"

    deep: dict = {}
    node = deep
    for _ in range(600):
        node["x"] = {}
        node = node["x"]
    result = Agent(ScriptedClient([calls(("c1", "store", {"doc": deep}))]), "m", [store]).run("q")
    assert len(result.tool_results) == 1


def test_a_gated_tool_that_times_out_tells_the_model_not_to_retry():
    import time as clock

    @tool(requires_approval=True, timeout=0.2)
    def wire(to: str) -> str:
        """Wire money."""
        clock.sleep(0.5)
        return "done"

    result = Agent(ScriptedClient([calls(("c1", "wire", {"to": "li"}))]), "m", [wire], approver=lambda i: True).run("q")
    assert "whether it did what it was asked is unknown" in result.tool_results[0].content
    assert "Do not call it again" in result.tool_results[0].content


def test_the_audit_log_keeps_no_secret_in_ids_and_can_key_its_fingerprints(tmp_path, monkeypatch):
    from mini_framework.approvals.audit import arguments_hash

    log = tmp_path / "a.jsonl"
    agent = Agent(ScriptedClient([calls(("api_key=sk-proj-abcdefghijklmnop", "send_email", MAIL))]), "m",
                  [send_email], audit_log=log)
    paused = agent.run("q")
    paused.pending[0].approve(by="ops token=ghp_abcdefghijklmnopqrstuvwx")
    agent.resume(paused)
    assert "sk-proj-abcdefghijklmnop" not in log.read_text() and "ghp_abcdefghijklmnopqrstuvwx" not in log.read_text()
    plain = arguments_hash({"pin": "493817"})
    monkeypatch.setenv("MINI_FRAMEWORK_AUDIT_KEY", "a secret of this service")
    assert arguments_hash({"pin": "493817"}) != plain


def test_approver_contract_timeout_and_a_sync_approver_off_the_event_loop():
    def approve_then_none(item):
        item.approve()

    def edit_then_no(item):
        item.edit({**MAIL, "to": "x@example.com"})
        return "no"

    for approver in (approve_then_none, edit_then_no):
        Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email], approver=approver).run("q")
    assert SENT == []

    async def never(item):
        await asyncio.sleep(3600)

    result = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email], approver=never,
                   approval_timeout=0.2).run("q")
    assert SENT == [] and "no decision within 0.2 s" in result.tool_results[0].content

    ticks = []

    def slow(item):
        import time as clock
        clock.sleep(0.3)
        return True

    async def both():
        async def tick():
            for _ in range(10):
                ticks.append(1)
                await asyncio.sleep(0.02)
        agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email], approver=slow)
        await asyncio.gather(agent.arun("q"), tick())

    asyncio.run(both())
    assert len(ticks) == 10 and len(SENT) == 1


FLIPS: list[str] = []


def _flaky(value: str) -> str:
    """A validator that refuses every other time it is asked."""
    FLIPS.append(value)
    if len(FLIPS) % 2:
        raise ValueError("not yet")
    return value


@tool(requires_approval=True)
def transfer(to: Annotated[str, AfterValidator(_flaky)]) -> str:
    """Transfer money."""
    SENT.append({"to": to})
    return "sent"


def test_validation_that_changes_its_mind_cannot_let_a_gated_call_through():
    for start in range(2):  # the validator refuses on the first look, or on the second
        FLIPS[:] = ["x"] * start
        result = Agent(ScriptedClient([calls(("c1", "transfer", {"to": "li"}))]), "m", [transfer]).run("q")
        assert SENT == [] and (result.paused or result.tool_results[0].failure in ("invalid_arguments", "denied"))


def test_a_predicate_that_exits_asks_for_a_person_and_a_repeat_is_not_asked_about(tmp_path):
    @tool(requires_approval=lambda args: (_ for _ in ()).throw(SystemExit(1)))
    def pay(to: str) -> str:
        """Pay."""
        SENT.append({"to": to})
        return "paid"

    assert Agent(ScriptedClient([calls(("c1", "pay", {"to": "li"}))]), "m", [pay]).run("q").paused

    log = tmp_path / "a.jsonl"
    agent = Agent(ScriptedClient([calls(("p0", "send_email", MAIL)), calls(("p1", "send_email", MAIL))]), "m",
                  [send_email], max_repeats=1, audit_log=log)
    result = agent.run("q")
    result.pending[0].approve()
    result = agent.resume(result)
    assert not result.paused and [r.failure for r in result.tool_results] == [None, "repeated"]
    assert [e["call_id"] for e in read_audit(log) if e["event"] == "requested"] == ["p0"]


def test_a_run_can_be_resumed_from_its_pause_event():
    from mini_framework import RunPaused

    results = []

    def on_event(event):
        if isinstance(event, RunPaused):
            event.result.pending[0].approve()
            results.append(agent.resume(event.result))

    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email], on_event=on_event)
    agent.run("q")
    assert len(SENT) == 1 and results[0].text == "done"


def test_crafted_saved_runs_with_a_valid_checksum_are_still_checked(tmp_path):
    from mini_framework.approvals.record import signing_key
    from mini_framework.approvals.saved import sign as _sign

    path = tmp_path / "paused.json"
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    paused.pending[0].approve()
    paused.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    for change, message in [(lambda run: run["pending"][0]["decision"].update(at=float("nan")), "at"),
                            (lambda run: run.update(iteration=-5), "iteration"),
                            (lambda run: run["usage"].update(requests=-1), "requests")]:
        copy = json.loads(json.dumps(data))
        change(copy["run"])
        copy["signature"] = _sign(copy["run"], signing_key())  # signed with the right key: only the content is wrong
        path.write_text(json.dumps(copy), encoding="utf-8")
        with pytest.raises(SavedRunError, match=message):
            agent.load(path)
        assert path.exists()  # a file that can't be resumed is put back, not taken
    os.mkfifo(fifo := tmp_path / "fifo.json")
    with pytest.raises(SavedRunError, match="not a regular file"):
        agent.load(fifo)
    with pytest.raises(FileNotFoundError, match="no such folder"):
        paused.save(tmp_path / "missing" / "paused.json")
    assert SENT == []


# ----------------------------------------------------------------------------- what lessons 12 and 12b teach


@tool
def ask_user(question: str) -> str:
    """Ask the user a question."""
    return "no one answered"


def test_a_clarifying_question_pauses_the_run_like_an_approval_and_the_answer_is_what_the_model_reads(tmp_path):
    from mini_framework.approvals import questions

    fake = ScriptedClient([calls(("q1", "ask_user", {"question": "张三的邮箱是什么？"})),
                           calls(("c1", "send_email", MAIL)), {"role": "assistant", "content": "done"}])
    agent = Agent(fake, "m", [ask_user, send_email], checkpoint=questions("ask_user"))
    paused = agent.run("给张三发邮件")
    [item] = paused.pending
    assert (item.kind, item.arguments, item.gated) == ("question", {"question": "张三的邮箱是什么？"}, False)
    paused.save(tmp_path / "q.json")  # a question survives a save, as a question
    loaded = agent.load(tmp_path / "q.json")
    assert loaded.pending[0].kind == "question"
    loaded.pending[0].respond("zhang.san@example.com")
    again = agent.resume(loaded)  # the model read the answer, then asked to send: an approval now
    assert tool_messages(again)["q1"] == "zhang.san@example.com" and SENT == []
    assert [(p.kind, p.gated) for p in again.pending] == [("approval", True)]
    again.pending[0].approve()
    assert agent.resume(again).text == "done" and SENT == [MAIL]


def test_an_undecided_question_is_asked_again_not_answered_by_the_tool():
    from mini_framework.approvals import questions

    agent = Agent(ScriptedClient([calls(("q1", "ask_user", {"question": "哪一天？"}))]), "m", [ask_user],
                  checkpoint=questions("ask_user"))
    paused = agent.run("q")
    again = agent.resume(paused)
    assert again.paused and again.pending[0].kind == "question" and "no one answered" not in str(again.messages)


def test_respond_answers_instead_of_the_tool_and_an_expired_approval_does_not_run(tmp_path):
    import time

    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL)), {"role": "assistant", "content": "ok"}]), "m",
                  [send_email], audit_log=tmp_path / "audit.jsonl")
    paused = agent.run("q")
    paused.pending[0].respond("先别发：会议改到下周一了。")
    assert tool_messages(agent.resume(paused))["c1"] == "先别发：会议改到下周一了。" and SENT == []
    agent = Agent(ScriptedClient([calls(("c1", "send_email", MAIL)), {"role": "assistant", "content": "ok"}]), "m",
                  [send_email])
    paused = agent.run("q")
    paused.pending[0].approve(valid_for=0.05)  # approved, then left "overnight"
    time.sleep(0.1)
    assert "expired" in tool_messages(agent.resume(paused))["c1"] and SENT == []


ORDERS = {"A1": {"customer": "李四", "card": "**** 4321", "paid": 299.0, "refunded": 100.0}}


@tool(requires_approval=True)
def refund(order_id: str) -> str:
    """Refund what is left of an order to the card it was paid with."""
    SENT.append({"refund": order_id})
    return "refunded"


def test_a_preview_shows_the_effect_of_a_call_by_an_opaque_id():
    def effect(args) -> str:
        order = ORDERS[args.order_id]
        return f"refunds {order['paid'] - order['refunded']:.2f} yuan to {order['customer']} ({order['card']})"

    refund.preview = effect
    try:
        paused = Agent(ScriptedClient([calls(("c1", "refund", {"order_id": "A1"}))]), "m", [refund]).run("q")
        item = paused.pending[0]
        assert item.summary == "refund(order_id='A1')"  # the arguments alone say nothing about the effect
        assert item.preview == "refunds 199.00 yuan to 李四 (**** 4321)" and item.preview in item.details()
        paused = Agent(ScriptedClient([calls(("c1", "refund", {"order_id": "B9"}))]), "m", [refund]).run("q")
        assert paused.pending[0].preview == "(its preview failed: KeyError)" and SENT == []  # still waits
    finally:
        del refund.preview
