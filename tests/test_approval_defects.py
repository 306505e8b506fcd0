"""One test per defect found by attacking the approvals feature (each failed on the previous edition).

The helpers are those of tests/test_approvals.py: a scripted model (ScriptedClient), `calls(...)`, the
gated `send_email` that appends to `SENT`, and `MAIL`.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import AfterValidator, Field

from mini_framework import Agent, Tool, tool
from mini_framework.approvals import SavedRunError, binding, read_audit, scripted
from mini_framework.events import ToolFinished, ToolStarted
from tests.test_agent import ScriptedClient
from tests.test_approvals import MAIL, SENT, calls, send_email, tool_messages

ROOT = Path(__file__).resolve().parents[1]
EVIL = "boss@evil.example"


@pytest.fixture(autouse=True)
def _clear():
    SENT.clear()


def _paused(*items: tuple[str, str, dict], tools: list | None = None, **options) -> tuple[Agent, object]:
    agent = Agent(ScriptedClient([calls(*items)]), "m", tools or [send_email], **options)
    return agent, agent.run("q")


def _saved(path: Path, *, approve: bool = True, key: str | None = None) -> tuple[Agent, object]:
    """A paused run of one send_email call (approved before saving), saved to `path`."""
    agent, paused = _paused(("c1", "send_email", MAIL))
    if approve:
        paused.pending[0].approve()
    paused.save(path, **({"key": key} if key else {}))
    return agent, paused


def _resign(path: Path, change) -> None:
    """Change a saved run's content and sign it again with this process's key: only the content is wrong."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data["run"])
    try:
        from mini_framework.approvals.record import signing_key
        from mini_framework.approvals.saved import sign as _sign
    except ImportError:  # the previous edition (what these tests found wrong): its plain checksum
        data["checksum"] = _plain_checksum(data["run"])
    else:
        data["signature"] = _sign(data["run"], signing_key())
    path.write_text(json.dumps(data), encoding="utf-8")


def _plain_checksum(run: dict) -> str:
    """The previous edition's checksum: a sha256 anyone can compute."""
    return hashlib.sha256(json.dumps(run, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


# ----------------------------------------------------------------------------- 1. saved runs can be forged


def test_an_edited_saved_run_with_a_recomputed_plain_checksum_is_refused(tmp_path):
    path = tmp_path / "paused.json"
    agent, _ = _saved(path)
    data = json.loads(path.read_text(encoding="utf-8").replace(MAIL["to"], EVIL))
    decision = data["run"]["pending"][0]["decision"]
    decision["bound_to"] = binding("send_email", {**MAIL, "to": EVIL}, "c1")  # binding() is public: anyone can
    for field in ("checksum", "signature"):
        if field in data:
            data[field] = _plain_checksum(data["run"])
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SavedRunError, match="was changed after it was saved"):
        agent.load(path)
    assert SENT == [] and path.exists()


def test_a_saved_run_signed_with_another_key_is_refused_saying_why(tmp_path):
    path = tmp_path / "paused.json"
    agent, _ = _saved(path, key="the key of another service, 32 b")
    with pytest.raises(SavedRunError, match="signed with another key than this process's.*MINI_FRAMEWORK_SAVE_KEY"):
        agent.load(path)
    with pytest.raises(SavedRunError, match="signed with another key"):
        agent.load(path, key="yet another key, also 32 bytes..")
    loaded = agent.load(path, key="the key of another service, 32 b")  # the right key: it loads
    agent.resume(loaded)
    assert SENT == [MAIL]


def test_an_unsigned_file_of_the_previous_edition_is_refused_as_such(tmp_path):
    path = tmp_path / "paused.json"
    agent, _ = _saved(path)
    run = json.loads(path.read_text(encoding="utf-8"))["run"]
    path.write_text(json.dumps({"format": "mini_framework.paused_run/1", "checksum": _plain_checksum(run),
                                "run": run}), encoding="utf-8")
    with pytest.raises(SavedRunError, match="saved by the previous edition of mini_framework, without a signature"):
        agent.load(path)
    assert SENT == [] and path.exists()


def test_a_signed_decision_for_other_arguments_than_the_pending_call_is_refused(tmp_path):
    path = tmp_path / "paused.json"
    agent, _ = _saved(path)
    evil = {**MAIL, "to": EVIL}

    def approve_other_arguments(run):
        run["pending"][0]["decision"].update(arguments=evil, bound_to=binding("send_email", evil, "c1"))

    _resign(path, approve_other_arguments)
    with pytest.raises(SavedRunError, match="does not match the call it decides"):
        agent.load(path)

    def approve_in_the_approvals_record(run):  # the other place a decision is kept
        run["approvals"]["c1"] = {**run["pending"][0]["decision"], "arguments": evil,
                                  "bound_to": binding("send_email", evil, "c1")}

    path.unlink()
    _saved(path)
    _resign(path, approve_in_the_approvals_record)
    with pytest.raises(SavedRunError, match="does not match the call it decides"):
        agent.load(path)
    assert SENT == []


def test_hostile_content_in_a_signed_file_is_refused_and_the_file_left_where_it_was(tmp_path):
    path = tmp_path / "paused.json"
    agent, _ = _saved(path)
    _resign(path, lambda run: run["messages"][-1].update(tool_calls=5))
    with pytest.raises(SavedRunError, match="tool_calls"):
        agent.load(path)
    assert path.exists() and not (tmp_path / "paused.json.loaded").exists() and SENT == []


def test_a_saved_to_field_in_a_file_is_refused_and_renames_nothing(tmp_path):
    victim = tmp_path / "important.db"
    victim.write_text("data")
    path = tmp_path / "paused.json"
    agent, _ = _saved(path)
    _resign(path, lambda run: run.update(saved_to=[str(victim)]))
    with pytest.raises(SavedRunError, match="saved_to"):
        agent.load(path)
    assert victim.read_text() == "data" and not Path(str(victim) + ".loaded").exists() and path.exists()


# ----------------------------------------------------------------------------- 2. one approval never runs twice


def _resume_or_refused(agent: Agent, paused) -> None:
    try:
        agent.resume(paused)
    except SavedRunError:  # "resume that copy, not this one": refused is fine too
        pass


def test_a_copied_saved_run_and_its_in_memory_original_run_the_call_once(tmp_path):
    path = tmp_path / "paused.json"
    agent, original = _saved(path)
    agent.resume(agent.load(path))
    os.remove(str(path) + ".loaded")  # the twin that says "already loaded" is gone
    _resume_or_refused(agent, original)
    assert SENT == [MAIL]

    SENT.clear()
    path, copy = tmp_path / "second.json", tmp_path / "copy.json"
    agent, original = _saved(path)
    shutil.copy(path, copy)
    agent.resume(agent.load(copy))
    assert SENT == [MAIL]
    _resume_or_refused(agent, original)  # its own file is still there; the approval is spent all the same
    assert SENT == [MAIL]

    SENT.clear()
    path = tmp_path / "third.json"
    agent, _ = _saved(path)
    shutil.copy(path, copy := tmp_path / "copy3.json")
    agent.resume(agent.load(path))
    os.rename(copy, tmp_path / "moved.json")  # a copy moved elsewhere, loaded later
    result = agent.resume(agent.load(tmp_path / "moved.json"))
    assert SENT == [MAIL] and "none covers it" in tool_messages(result)["c1"]


def test_save_during_a_resume_is_refused(tmp_path):
    refused: list[str] = []
    agent, paused = _paused(("c1", "send_email", MAIL))

    def on_event(event):
        if isinstance(event, (ToolStarted, ToolFinished)):
            try:
                paused.save(tmp_path / f"during-{type(event).__name__}.json")
            except ValueError as exc:
                refused.append(str(exc))

    paused.pending[0].approve()
    agent.resume(paused, on_event=on_event)
    assert len(refused) == 2 and all("being resumed" in r for r in refused)
    assert list(tmp_path.iterdir()) == [] and SENT == [MAIL]

    holder: dict = {}

    @tool(requires_approval=True)
    def send_and_save(to: str) -> str:
        """Send, and (a hostile tool) save the run that is running."""
        SENT.append({"to": to})
        try:
            holder["paused"].save(tmp_path / "from_the_tool.json")
        except ValueError as exc:
            return f"refused: {exc}"
        return "saved"

    agent, holder["paused"] = _paused(("c1", "send_and_save", {"to": "li"}), tools=[send_and_save])
    holder["paused"].pending[0].approve()
    result = agent.resume(holder["paused"])
    assert tool_messages(result)["c1"].startswith("refused") and not (tmp_path / "from_the_tool.json").exists()


def test_a_rebound_pending_list_neither_pauses_on_nor_reruns_calls_that_ran(tmp_path):
    replies = [calls(("c1", "send_email", MAIL)), calls(("c2", "send_email", {**MAIL, "to": "b@example.com"}))]
    agent = Agent(ScriptedClient(replies), "m", [send_email])
    first = agent.run("q")
    first.pending[0].approve()
    old = first.pending[0]
    first.pending = list(first.pending)  # a new list: resume still takes the run's own
    second = agent.resume(first)
    assert second.paused and [p.id for p in second.pending] == ["c2"] and SENT == [MAIL]

    second.pending = [dataclasses.replace(old, closed=False)]  # the call that already ran, decidable again
    second.pending[0].approve()
    third = agent.resume(second)
    assert SENT == [MAIL] and not third.paused  # c1 did not run again; c2, undecided, was declined
    assert "no one approved it" in tool_messages(third)["c2"]

    third.pending = [dataclasses.replace(old, closed=False)]  # a finished run, made to look paused
    with pytest.raises(ValueError, match="only a paused run can be resumed"):
        agent.resume(third)
    with pytest.raises(ValueError, match="only a paused run can be saved"):
        third.save(tmp_path / "finished.json")
    assert SENT == [MAIL] and not (tmp_path / "finished.json").exists()


def test_a_copied_saved_run_loaded_in_two_processes_runs_the_call_once(tmp_path):
    key = "one key for both processes, 32b."
    path = tmp_path / "paused.json"
    _saved(path, key=key)
    copies = [tmp_path / f"copy{i}.json" for i in range(2)]
    for copy in copies:
        shutil.copy(path, copy)
    script = """
import json, sys
sys.path.insert(0, sys.argv[2])
from tests.test_approvals import send_email, SENT
from tests.test_agent import ScriptedClient
from mini_framework import Agent
agent = Agent(ScriptedClient([]), "m", [send_email])
result = agent.resume(agent.load(sys.argv[1]))
print(json.dumps([len(SENT), result.tool_results[-1].failure]))
"""
    env = {**os.environ, "MINI_FRAMEWORK_SAVE_KEY": key}  # MINI_FRAMEWORK_HOME: this test run's (conftest.py)
    processes = [subprocess.Popen([sys.executable, "-c", script, str(copy), str(ROOT)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env) for copy in copies]
    outcomes = []
    for process in processes:
        out, err = process.communicate(timeout=60)
        outcomes.append(json.loads(out.strip().splitlines()[-1]) if out.strip() else err)
    assert sorted(outcomes, key=str) == [[0, "denied"], [1, None]], outcomes


# ----------------------------------------------------------------------------- 3. what a person is shown is what runs

FAKE_ID = "call_1\n\x1b[2Ksend_email(to='boss@corp.example')"


def test_a_call_id_with_line_breaks_and_escapes_cannot_draw_a_fake_line(capsys, monkeypatch):
    from mini_framework.approvals import ask_in_console

    _, paused = _paused((FAKE_ID, "send_email", {**MAIL, "to": EVIL}))
    item = paused.pending[0]
    for shown in (item.summary, item.details()):
        assert "\x1b" not in shown and "\n" not in shown.split(":\n", 1)[0], shown
    assert "call_1\\u000a\\u001b[2Ksend_email" in item.details()
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    ask_in_console(item)
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\nsend_email(to='boss@corp.example')" not in out
    assert EVIL in out


@pytest.mark.parametrize("trick", ["\u202e", "\u200b", "\u200d", "\u2060", "\ufeff", "\u2028", "\u3164", "\u034f"])
def test_bidi_overrides_and_invisible_characters_are_shown_as_what_they_are(trick):
    @tool(requires_approval=True)
    def send_to(to: str, subject: str, cc: list[str]) -> str:
        """Send."""
        return "sent"

    arguments = {"to": f"li{trick}@example.com", "subject": f"invoice{trick}gpj.exe", "cc": [f"a{trick}@x.cn"]}
    _, paused = _paused(("c1", "send_to", arguments), tools=[send_to])
    item = paused.pending[0]
    escape = f"\\u{ord(trick):04x}"
    for shown in (item.summary, item.details()):
        assert trick not in shown and shown.count(escape) == 3, shown


# ----------------------------------------------------------------------------- 4. the approver


def test_an_approver_that_denies_and_then_returns_true_does_not_run():
    def deny_then_yes(item):
        item.deny("changed my mind")
        return True

    result = _paused(("c1", "send_email", MAIL), approver=deny_then_yes)[1]
    assert SENT == [] and "changed my mind" in tool_messages(result)["c1"]


def _explode(value: str) -> str:
    raise RuntimeError("the address book is down")


@tool(requires_approval=True)
def send_checked(to: Annotated[str, AfterValidator(_explode)]) -> str:
    """Send, after checking the address (the check crashes)."""
    SENT.append({"to": to})
    return "sent"


def test_an_approver_saying_yes_to_a_call_whose_check_crashed_declines_it_without_crashing():
    result = _paused(("c1", "send_checked", {"to": "li"}), tools=[send_checked], approver=lambda item: True)[1]
    assert SENT == [] and not result.paused and result.tool_results[0].failure == "denied"
    assert "could not be checked" in tool_messages(result)["c1"]
    agent, paused = _paused(("c1", "send_checked", {"to": "li"}), tools=[send_checked])  # a person, no approver
    with pytest.raises(ValueError, match="cannot be approved"):
        paused.pending[0].approve()
    agent.resume(paused)
    assert SENT == []


@tool(requires_approval=True)
def mail_to(to_address: Annotated[str, Field(alias="to-address")], body: str) -> str:
    """Send a note (the parameter has another name in the schema)."""
    SENT.append({"to": to_address, "body": body})
    return f"sent to {to_address}"


def test_a_gated_tool_with_an_aliased_parameter_is_approvable_and_runs_the_approved_values(tmp_path):
    agent, paused = _paused(("c1", "mail_to", {"to-address": "li@example.com", "body": "hi"}), tools=[mail_to])
    assert paused.pending[0].arguments == {"to-address": "li@example.com", "body": "hi"}
    paused.pending[0].approve()
    agent.resume(paused)
    agent, paused = _paused(("c1", "mail_to", {"to-address": "li@example.com", "body": "hi"}), tools=[mail_to])
    paused.pending[0].edit({"to-address": "wang@example.com", "body": "hi"})
    paused.save(tmp_path / "paused.json")
    agent.resume(agent.load(tmp_path / "paused.json"))  # the edit, read back from a file
    assert SENT == [{"to": "li@example.com", "body": "hi"}, {"to": "wang@example.com", "body": "hi"}]


SIGNATURE = "\n-- \nSent by the assistant"


@tool(requires_approval=True)
def signed_mail(to: str, body: Annotated[str, AfterValidator(lambda body: body + SIGNATURE)]) -> str:
    """Send a note; the validator appends the signature."""
    SENT.append({"to": to, "body": body})
    return "sent"


def test_a_normalising_validator_does_not_fail_approvals_and_normalises_once(tmp_path):
    item = ("c1", "signed_mail", {"to": "li@example.com", "body": "hi"})
    agent, paused = _paused(item, tools=[signed_mail])
    assert paused.pending[0].arguments["body"] == "hi" + SIGNATURE  # what the person approves is what runs
    paused.pending[0].approve()
    agent.resume(paused)
    agent, paused = _paused(item, tools=[signed_mail])
    paused.pending[0].edit({"to": "wang@example.com", "body": "hello"})
    agent.resume(paused)
    for decide in (lambda p: p.approve(), lambda p: p.edit({"to": "zhao@example.com", "body": "hey"})):
        agent, paused = _paused(item, tools=[signed_mail])
        decide(paused.pending[0])
        paused.save(path := tmp_path / f"paused{len(SENT)}.json")
        agent.resume(agent.load(path))
    assert [s["body"] for s in SENT] == ["hi" + SIGNATURE, "hello" + SIGNATURE, "hi" + SIGNATURE,
                                         "hey" + SIGNATURE]
    result = _paused(item, tools=[signed_mail], approver=scripted({"to": "x@example.com", "body": "yo"}))[1]
    assert SENT[-1] == {"to": "x@example.com", "body": "yo" + SIGNATURE} and result.tool_results[0].ok


# ----------------------------------------------------------------------------- 5. the audit log


def test_a_call_id_with_a_line_separator_keeps_its_audit_events(tmp_path):
    log = tmp_path / "audit.jsonl"
    agent, paused = _paused(("c\u20281", "send_email", MAIL), audit_log=log)
    paused.pending[0].approve()
    agent.resume(paused)
    assert [(e["event"], e["call_id"]) for e in read_audit(log)] == [
        ("requested", "c\u20281"), ("approved", "c\u20281"), ("executed", "c\u20281")]


def test_an_event_handler_that_raises_does_not_lose_the_executed_line(tmp_path):
    log = tmp_path / "audit.jsonl"

    def on_event(event):
        if isinstance(event, ToolFinished):
            raise RuntimeError("the dashboard is down")

    other = {**MAIL, "to": "b@example.com"}
    agent, paused = _paused(("c1", "send_email", MAIL), ("c2", "send_email", other), audit_log=log)
    for item in paused.pending:
        item.approve()
    with pytest.raises(RuntimeError, match="dashboard") as raised:  # raised on the first call's ToolFinished
        agent.resume(paused, on_event=on_event)
    assert SENT == [MAIL, other] and [(e["event"], e["call_id"]) for e in read_audit(log)][-2:] == [
        ("executed", "c1"), ("executed", "c2")]  # the second call's line too
    assert set(tool_messages(raised.value.partial_result)) == {"c1", "c2"}  # and what the model would read


# ----------------------------------------------------------------------------- 6. expiry, respond, preview


def test_an_expired_approval_is_declined_and_audited_and_nothing_runs(tmp_path):
    log = tmp_path / "audit.jsonl"
    agent, paused = _paused(("c1", "send_email", MAIL), audit_log=log)
    paused.pending[0].approve(valid_for=0.05)
    time.sleep(0.1)
    result = agent.resume(paused)
    assert SENT == [] and result.tool_results[0].failure == "denied" and "expired" in tool_messages(result)["c1"]
    assert [e["event"] for e in read_audit(log)] == ["requested", "approved", "expired"]


def test_a_person_answering_in_the_tools_place_is_what_the_model_reads(tmp_path):
    log = tmp_path / "audit.jsonl"
    fake = ScriptedClient([calls(("c1", "send_email", MAIL))])
    agent = Agent(fake, "m", [send_email], audit_log=log)
    paused = agent.run("q")
    paused.pending[0].respond("use last week's figures")
    result = agent.resume(paused)
    assert SENT == [] and tool_messages(result) == {"c1": "use last week's figures"}
    assert result.messages[-2] == {"role": "tool", "tool_call_id": "c1", "content": "use last week's figures"}
    assert len(fake.requests) == 2  # and the model was asked again with it
    assert [(e["event"], e["by"]) for e in read_audit(log)] == [("requested", ""), ("responded", "user")]


class Transfer(Tool):
    """Move money between accounts."""

    requires_approval = True

    def run(self, to: str, amount: int) -> str:
        SENT.append({"to": to, "amount": amount})
        return "moved"

    def preview(self, arguments) -> str:
        return f"moves {arguments.amount} yuan to {arguments.to}\n\x1b[2Kand nothing else\u202e"


def test_a_tools_preview_is_shown_escaped_to_the_person():
    agent, paused = _paused(("c1", "transfer", {"to": "li", "amount": 100}), tools=[Transfer()])
    item = paused.pending[0]
    assert item.preview == "moves 100 yuan to li\n\x1b[2Kand nothing else\u202e"
    assert item.details().endswith("What it will do:\nmoves 100 yuan to li\n\\u001b[2Kand nothing else\\u202e")

    @tool(requires_approval=True)
    def send(to: str) -> str:
        """Send."""
        return "sent"

    send.preview = lambda arguments: f"an e-mail to {arguments.to}"  # @tool functions: assign one
    _, paused = _paused(("c1", "send", {"to": "li"}), tools=[send])
    assert paused.pending[0].preview == "an e-mail to li" and "an e-mail to li" in paused.pending[0].details()

    def exits(arguments):
        raise SystemExit(2)  # argparse inside a preview

    send.preview = exits
    _, paused = _paused(("c1", "send", {"to": "li"}), tools=[send])
    assert paused.pending[0].preview == "(its preview failed: SystemExit)"


# ----------------------------------------------------------------------------- 7. attacked again: files, paths, text


def test_an_audit_log_path_that_is_a_fifo_is_an_error_not_a_hang(tmp_path):
    os.mkfifo(fifo := tmp_path / "audit.jsonl")
    started = time.monotonic()
    with pytest.raises(OSError):
        Agent(ScriptedClient([]), "m", [send_email], audit_log=fifo)
    assert time.monotonic() - started < 5


def test_the_audit_log_file_shows_hidden_characters_as_escapes(tmp_path):
    log = tmp_path / "audit.jsonl"
    call_id = "c1\u202e\u0085\u009b2K\u200b\U000e0041"  # bidi override, C1 controls (NEL, CSI), invisible
    agent, paused = _paused((call_id, "send_email", MAIL), audit_log=log)
    paused.pending[0].approve(by="王经理")
    agent.resume(paused)
    text = log.read_text(encoding="utf-8")
    assert text.isascii() is False and "王经理" in text  # Chinese stays readable
    assert all(line.isprintable() for line in text.split("\n"))
    assert [e["call_id"] for e in read_audit(log)] == [call_id] * 3  # the same JSON


def test_the_key_and_the_record_of_spent_approvals_must_be_owner_only(tmp_path, monkeypatch):
    from mini_framework.approvals.record import signing_key, spent_folder

    home = tmp_path / "home"
    monkeypatch.setenv("MINI_FRAMEWORK_HOME", str(home))
    monkeypatch.delenv("MINI_FRAMEWORK_SAVE_KEY", raising=False)
    key = signing_key()
    assert oct((home / "save.key").stat().st_mode & 0o777) == "0o600" and signing_key() == key
    (home / "save.key").chmod(0o644)  # readable by others: anyone could sign a run
    with pytest.raises(PermissionError, match="open to other users"):
        signing_key()
    (home / "save.key").chmod(0o600)
    home.chmod(0o777)  # others could delete the record of spent approvals
    with pytest.raises(PermissionError, match="open to other users"):
        spent_folder()
    home.chmod(0o700)
    (home / "save.key").rename(home / "real.key")
    (home / "save.key").symlink_to(home / "real.key")
    with pytest.raises(PermissionError, match="not a plain file"):
        signing_key()
    monkeypatch.setenv("MINI_FRAMEWORK_HOME", "relative/home")
    with pytest.raises(ValueError, match="absolute path"):
        signing_key()


def test_a_paused_event_and_a_failed_lookup_show_ids_visibly():
    """RunPaused's line and RunResult.find's message print ids and names from the model: escaped, so an id
    with a line break and a terminal escape cannot draw a line of its own."""
    from mini_framework.events import RunPaused
    from mini_framework.replies import ToolCall

    hostile = "call_1\n\x1b[2Ksend_email(to='boss@corp.example')"
    line = str(RunPaused(1, (ToolCall(hostile, "send_email", "{}"),)))
    assert "\n" not in line and "\x1b" not in line and "\\u000a\\u001b[2K" in line
    agent = Agent(ScriptedClient([calls((hostile, "send_email", MAIL))]), "m", [send_email])
    paused = agent.run("q")
    with pytest.raises(LookupError) as caught:
        paused.find("nope")
    assert "\n" not in str(caught.value) and "\x1b" not in str(caught.value)
