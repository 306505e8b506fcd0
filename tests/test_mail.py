"""The builtin send_email tool: arguments refused before approval, one send per message, a limit per run,
an outbox of real .eml files, and a real SMTP server (aiosmtpd, started here on 127.0.0.1)."""
from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
import subprocess
import sys
import threading
import time
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from mini_framework import Executor, ToolCall, tool
from mini_framework.approvals import Approvals
from mini_framework.builtin.mail import (
    Entry,
    Ledger,
    MailError,
    NotSent,
    Outbox,
    SMTPSender,
    check_address,
    is_internal,
    make_send_email,
    message_key,
)
from mini_framework.tools import RUN_ID

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-live-0123456789abcdefghijKLMNOP"
CHINESE_SUBJECT = "您的订单 #42 已发货"
CHINESE_BODY = "王先生您好：\n\n您的订单已发货，预计三天内送达。\n.这一行以句点开头。\n\n此致\n小店"


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A fresh working directory, so the outbox shows up as outbox/..."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def outbox(here):
    return Outbox(here / "outbox")


def run(tool, *arguments, run_id=None, **executor_options):
    """Call the tool as a model would (JSON arguments, through the Executor, every call approved by a person):
    the results, in order."""
    calls = [ToolCall(f"call_{i}", tool.name, json.dumps(a, ensure_ascii=False)) for i, a in enumerate(arguments)]
    token = RUN_ID.set(run_id)
    executor_options.setdefault("hooks", [Approvals(approver=lambda item: True)])
    try:
        return Executor([tool], **executor_options).run_sync(calls)
    finally:
        RUN_ID.reset(token)


def one(tool, run_id=None, **arguments):
    """One call through the Executor: (ok, failure, what the model reads as a dict)."""
    [result] = run(tool, arguments, run_id=run_id)
    return result.ok, result.failure, json.loads(result.content)


def email(to="li@example.com", subject="Your order", body="It has shipped."):
    return {"to": to, "subject": subject, "body": body}


class Recorder:
    """A backend that keeps what it was given, slowly enough for calls to overlap."""

    receipt_name = "receipt"

    def __init__(self, delay=0.05):
        self.ledger = Ledger()
        self.delay = delay
        self.sent = []
        self.lock = threading.Lock()

    def send(self, message):
        time.sleep(self.delay)
        with self.lock:
            self.sent.append(message)
            return f"kept as #{len(self.sent)}"


# ----------------------------------------------------------------------------- what the model sees

def test_the_model_sees_three_plain_strings_and_a_description_that_says_it_really_sends():
    send_email = make_send_email(allowed_recipients=["*@example.com"], max_subject_chars=80)
    function = send_email.to_openai_tool()["function"]
    assert function["name"] == "send_email"
    assert function["parameters"]["required"] == ["to", "subject", "body"]
    assert all(p["type"] == "string" and set(p) == {"type", "description"}
               for p in function["parameters"]["properties"].values())
    description = function["description"]
    for words in ("really sent", "one recipient", "call it once for each", "80 characters", "*@example.com"):
        assert words in description
    assert send_email.to_openai_tool(strict=True)["function"]["strict"] is True


def test_it_is_gated_by_default_and_takes_a_predicate_or_false(outbox):
    assert make_send_email(outbox).requires_approval is True
    outside = make_send_email(outbox, requires_approval=lambda args: not args.to.endswith("@example.com"))
    inside = outside.validate(email())
    assert (outside.needs_approval(inside), outside.needs_approval(outside.validate(email(to="li@corp.example")))) \
        == (False, True)
    assert make_send_email(outbox, requires_approval=False, name="notify").name == "notify"


# ----------------------------------------------------------------------------- arguments refused before approval

MALFORMED = [
    ("a@b", "has no dot"),
    ("@x.com", "not an e-mail address"),
    ("a b@x.com", "no spaces"),
    ("A <a@x.com>", "without a name or <>"),
    ("a@x.com, b@y.com", "one recipient per call"),
    ("a@x.com; b@y.com", "one recipient per call"),
    ("a@x.com\r\nBcc: c@evil.example", "line break or control character (U+000D)"),
    ("a@x.com\nBcc: c@evil.example", "line break or control character (U+000A)"),
    ("a@x.com\u2028Bcc: c@evil.example", "line break or control character (U+2028)"),
    ("a@x.com\x00", "control character (U+0000)"),
    ("", "no address given"),
    ("li", "not an e-mail address"),
    ("li@@example.com", "not an e-mail address"),
    ("a..b@x.com", "not an e-mail address"),
    ('"a b"@x.com', "no spaces"),
    ('"ab"@x.com', "not an e-mail address"),
    ("a@[127.0.0.1]", "not a domain name"),
    ("a@-x.com", "not a domain name"),
    ("a@x.com.", "not an e-mail address"),
    ("a@1.2.3.4", "not a domain name"),
    ("张三@example.com", "only plain ASCII addresses"),
    ("li@例子.中国", "only plain ASCII addresses"),
    ("x" * 65 + "@example.com", "the local part 'xxxxx"),
]


@pytest.mark.parametrize("address, says", MALFORMED)
def test_a_malformed_address_is_an_invalid_arguments_error_and_nothing_is_written(outbox, address, says):
    send_email = make_send_email(outbox)
    ok, failure, answer = one(send_email, **email(to=address))
    assert (ok, failure) == (False, "invalid_arguments")
    assert says in answer["error"] and "Fix these arguments and call send_email again" in answer["error"]
    assert not outbox.folder.exists()


@pytest.mark.parametrize("address, kept", [
    ("li@example.com", "li@example.com"),
    ("Li.Wei+orders@Mail.Example.COM", "Li.Wei+orders@mail.example.com"),
    ("  li@example.com ", "li@example.com"),
    ("o'brien@xn--fsqu00a.xn--fiqs8s", "o'brien@xn--fsqu00a.xn--fiqs8s"),
])
def test_good_addresses_pass_with_the_domain_in_lower_case(address, kept):
    assert check_address(address) == kept


@pytest.mark.parametrize("subject, says", [
    ("Order 42\r\nBcc: c@evil.example", "U+000D"),
    ("Order 42\nBcc: c@evil.example", "U+000A"),
    ("Order 42\tshipped", "U+0009"),
    ("Order 42\u2029", "U+2029"),
    ("   ", "the subject is empty"),
])
def test_header_injection_in_the_subject_is_refused_not_cleaned(outbox, subject, says):
    ok, failure, answer = one(make_send_email(outbox), **email(subject=subject))
    assert (ok, failure) == (False, "invalid_arguments")
    assert says in answer["error"]
    if "U+" in says:
        assert "refused, nothing was removed" in answer["error"]
    assert outbox.messages() == []


def test_line_breaks_are_fine_in_the_body_but_other_control_characters_are_not(outbox):
    send_email = make_send_email(outbox)
    assert one(send_email, **email(body="Line one\r\nLine two\n\tindented"))[2]["status"] == "sent"
    ok, _, answer = one(send_email, **email(body="bell\x07"))
    assert not ok and "control character (U+0007)" in answer["error"]
    ok, _, answer = one(send_email, **email(body=" \n "))
    assert not ok and "the body is empty" in answer["error"]


def test_oversized_subject_and_body_are_refused_naming_the_limit(outbox):
    send_email = make_send_email(outbox, max_subject_chars=20, max_body_chars=1000)
    [subject, body] = run(send_email, email(subject="x" * 21), email(body="长" * 1001), retry_budget=5)
    assert "the subject is 21 characters, over the limit of 20" in subject.content
    assert "the body is 1,001 characters, over the limit of 1,000" in body.content
    assert len(body.content) < 600  # the value shown back is cut short
    assert outbox.messages() == []


def test_the_allow_list_takes_patterns_and_exact_addresses_with_any_case_of_domain(outbox):
    send_email = make_send_email(outbox, allowed_recipients=["*@Example.com", "boss@corp.example"])
    results = run(send_email, email(to="li@EXAMPLE.com"), email(to="boss@Corp.Example"), email(to="li@corp.example"),
                  email(to="boss@sub.example.com"), retry_budget=5)
    assert [r.ok for r in results] == [True, True, False, False]
    refusal = results[2].content
    assert "li@corp.example is not among the recipients this tool may send to (*@example.com, boss@corp.example)" \
        in refusal and "don't call send_email again with other values to get round it: tell the user" in refusal
    assert "Fix these arguments" not in refusal  # a refusal on principle is not a mistake to fix
    assert len(outbox.messages()) == 2


@pytest.mark.parametrize("allowed, error", [
    (["example.com"], ValueError), (["*@example"], ValueError), (["*example.com"], ValueError), ([], ValueError),
    ("*@example.com", TypeError), ([None], ValueError)])
def test_a_bad_allow_list_is_refused_when_the_tool_is_made(allowed, error):
    with pytest.raises(error):
        make_send_email(Recorder(), allowed_recipients=allowed)


@pytest.mark.parametrize("options", [
    {"max_per_run": 0}, {"max_body_chars": -1}, {"max_subject_chars": True}, {"resend_after": -1},
    {"sender": "Shop <shop@example.com>"}, {"sender": "shop@localhost"}])
def test_bad_options_are_refused_when_the_tool_is_made(options):
    with pytest.raises(ValueError):
        make_send_email(Recorder(), **options)


def test_a_local_part_over_64_characters_is_named_as_such_not_as_the_domain():
    with pytest.raises(ValueError) as caught:
        check_address("x" * 65 + "@example.com")
    assert str(caught.value).startswith(f"the local part {'x' * 65!r} (before the @) is 65 characters, over the "
                                        "limit of 64")
    assert "domain" not in str(caught.value)
    assert check_address("x" * 64 + "@example.com") == "x" * 64 + "@example.com"


# ----------------------------------------------------------------------------- routed and disguised recipients

# Local parts that some mail servers route on to another host, or deliver to a file or a program: the
# percent hack (user%host@relay), UUCP bang paths (host!user@relay), "/file" and "|program" local parts.
ROUTED = [
    ("boss%attacker.example@corp.example", "'%'"),
    ("attacker.example!boss@corp.example", "'!'"),
    ("boss%attacker.example%corp.example@corp.example", "'%'"),
    ("a!b!boss@corp.example", "'!'"),
    ("/var/mail/boss@corp.example", "'/'"),
    ("|mail.attacker.example@corp.example", "'|'"),
]


@pytest.mark.parametrize("address, char", ROUTED)
def test_a_local_part_that_routes_elsewhere_is_refused_even_inside_the_allow_list(outbox, address, char):
    with pytest.raises(ValueError, match="route"):
        check_address(address)
    send_email = make_send_email(outbox, allowed_recipients=["*@corp.example"])
    ok, failure, answer = one(send_email, **email(to=address))
    assert (ok, failure) == (False, "invalid_arguments")
    assert f"contains {char}" in answer["error"] and "another mail server" in answer["error"]
    assert not outbox.folder.exists()


@pytest.mark.parametrize("address, says", [
    ('"a@b"@corp.example', "not an e-mail address"),  # a quoted local part
    ('"boss%attacker.example"@corp.example', "not an e-mail address"),
    ('"boss"@corp.example', "not an e-mail address"),
    ("@a.example,@b.example:x@corp.example", "source route"),  # route syntax (RFC 5321 4.1.2)
    ("@attacker.example:boss@corp.example", "source route"),
    ("=?utf-8?q?boss=40attacker.example?=@corp.example", "not an e-mail address"),  # an encoded word
    ("boss@attacker.example@corp.example", "not an e-mail address"),
    ("boss\\@attacker.example@corp.example", "not an e-mail address"),
    ("boss(attacker.example)@corp.example", "not an e-mail address"),
    ("boss@corp.example.", "not an e-mail address"),  # a trailing dot: refused, not treated as the same domain
    ("boss@corp.example..", "not an e-mail address"),
    ("boss@сorp.example", "only plain ASCII"),  # Cyrillic с
    ("boss@corp.exаmple", "only plain ASCII"),  # Cyrillic а
    ("boss＠corp.example", "only plain ASCII"),  # a fullwidth @
    ("boss@ｃorp.example", "only plain ASCII"),  # a fullwidth c
    ("boss@corp.example\u200b", "only plain ASCII"),  # a zero-width space
    ("boss\u00a0@corp.example", "only plain ASCII"),  # a no-break space
])
def test_quoted_routed_and_look_alike_addresses_are_refused(outbox, address, says):
    send_email = make_send_email(outbox, allowed_recipients=["*@corp.example"])
    ok, failure, answer = one(send_email, **email(to=address))
    assert (ok, failure) == (False, "invalid_arguments") and says in answer["error"]
    assert not is_internal(address, ["corp.example"])
    assert not outbox.folder.exists()


@pytest.mark.parametrize("address, allowed", [
    ("boss@corp.example", True),
    ("Boss@CORP.Example", True),  # the domain in any case
    ("boss@x.corp.example", False),  # a subdomain is another domain: list it too if it is meant
    ("boss@evilcorp.example", False),
    ("boss@corp.example.attacker.example", False),
    ("boss@corp-example.attacker.example", False),
    ("boss@xn--orp-8cd.example", False),  # сorp.example, Cyrillic с, in its xn-- form: another domain
    ("boss+orders@corp.example", True),  # "+tag" stays in the same mailbox
])
def test_the_allow_list_and_is_internal_match_the_domain_exactly(outbox, address, allowed):
    send_email = make_send_email(outbox, allowed_recipients=["*@Corp.Example"])
    ok, failure, _ = one(send_email, **email(to=address))
    assert ok is allowed and failure == (None if allowed else "invalid_arguments")
    assert is_internal(address, ["corp.example"]) is allowed
    assert is_internal(address, "CORP.example") is allowed  # one domain, as a string


def test_an_idn_domain_is_allowed_in_its_xn_form_in_any_case(outbox):
    send_email = make_send_email(outbox, allowed_recipients=["*@XN--fsqu00a.xn--fiqs8s"])
    assert one(send_email, **email(to="li@xn--fsqu00a.XN--FIQS8S"))[0]
    assert is_internal("li@XN--FSQU00A.xn--fiqs8s", ["xn--fsqu00a.xn--fiqs8s"])
    with pytest.raises(ValueError, match="neither an address nor a pattern"):
        make_send_email(outbox, allowed_recipients=["*@例子.中国"])


@pytest.mark.parametrize("allowed", [["*@corp.example."], ["boss%x@corp.example"], ["*@corp.example,evil.example"]])
def test_an_allow_list_entry_that_is_not_strictly_an_address_or_domain_is_refused(allowed):
    with pytest.raises(ValueError, match="neither an address nor a pattern"):
        make_send_email(Recorder(), allowed_recipients=allowed)


@pytest.mark.parametrize("domains", [["@corp.example"], ["*@corp.example"], ["corp"], [""], [], ["corp.example."]])
def test_is_internal_refuses_domains_that_are_not_domain_names(domains):
    with pytest.raises(ValueError):
        is_internal("boss@corp.example", domains)


def test_is_internal_is_false_for_anything_that_is_not_one_strict_address():
    for value in ["", "corp.example", "boss@corp.example, x@evil.example", "Boss <boss@corp.example>",
                  "boss@corp.example\r\nBcc: x@evil.example", None, 42]:
        assert is_internal(value, ["corp.example"]) is False  # type: ignore[arg-type]


def test_the_documented_predicate_asks_for_routed_recipients_where_endswith_did_not():
    """The predicate in the package docstring, on a hand-written tool that does not check `to` itself (as in
    lesson 12): the endswith version lets a routed address through without asking; is_internal does not."""
    internal = ["corp.example"]

    @tool(name="send_email", requires_approval=lambda args: not is_internal(args.to, internal))
    def send(to: str, subject: str, body: str) -> str:
        return f"sent to {to}"

    @tool(name="send_email", requires_approval=lambda args: not args.to.endswith("@corp.example"))
    def naive(to: str, subject: str, body: str) -> str:
        return f"sent to {to}"

    routed = email(to="boss%attacker.example@corp.example")
    assert naive.needs_approval(naive.validate(routed)) is False  # the hole in endswith
    assert send.needs_approval(send.validate(routed)) is True
    for address in ("attacker.example!boss@corp.example", '"x@attacker.example"@corp.example',
                    "@attacker.example:boss@corp.example", "boss@evilcorp.example", "boss@corp.example."):
        assert send.needs_approval(send.validate(email(to=address))) is True
    assert send.needs_approval(send.validate(email(to="Boss@Corp.Example"))) is False


# ----------------------------------------------------------------------------- the outbox

def test_the_outbox_saves_a_real_eml_file_that_keeps_chinese_whole(outbox, here):
    send_email = make_send_email(outbox, sender="shop@example.com")
    ok, _, answer = one(send_email, **email(subject=CHINESE_SUBJECT, body=CHINESE_BODY))
    assert ok and answer["status"] == "sent" and answer["to"] == "li@example.com"
    saved = answer["saved_as"]
    assert re.fullmatch(r"outbox/\d{8}-\d{6}-[0-9a-f]{8}\.eml", saved)
    assert str(here) not in json.dumps(answer)
    path = here / saved
    assert stat.S_IMODE(os.stat(outbox.folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in outbox.folder.iterdir()) == [path.name, "sent.jsonl"]  # no temporary file left
    raw = path.read_bytes()
    assert raw.isascii() and b"\r\n" in raw  # headers encoded, body base64: any mail client reads it
    for read in (outbox.messages()[0], message_from_bytes(raw, policy=policy.default)):
        assert (read["From"], read["To"], read["Subject"]) == ("shop@example.com", "li@example.com", CHINESE_SUBJECT)
        assert read["Message-ID"] == answer["message_id"] and read["Message-ID"].endswith("@example.com>")
        assert read["Date"].datetime.tzinfo is not None
        assert read.get_content_type() == "text/plain" and read.get_content_charset() == "utf-8"
        assert read.get_content() == CHINESE_BODY + "\n"


def test_outbox_messages_come_oldest_first(outbox):
    send_email = make_send_email(outbox)
    for n in range(3):
        assert one(send_email, **email(subject=f"Order {n}"))[0]
    assert [m["Subject"] for m in outbox.messages()] == ["Order 0", "Order 1", "Order 2"]
    assert Outbox(outbox.folder / "nowhere").messages() == []


def test_an_outbox_path_that_is_a_file_is_a_clear_error_and_nothing_is_lost(here):
    (here / "outbox").write_text("not a folder")
    send_email = make_send_email(Outbox("outbox"))
    ok, failure, answer = one(send_email, **email())
    assert (ok, failure) == (False, "exception")
    assert "the outbox folder 'outbox' cannot be used: a file stands where its folder should be" in answer["error"]
    assert "Nothing was sent" in answer["error"] and str(here) not in answer["error"]
    (here / "outbox").unlink()  # the user fixes it; the same call now goes out
    assert one(send_email, **email())[2]["status"] == "sent"


def test_an_outbox_under_a_file_is_a_clear_error(here):
    (here / "file").write_text("x")
    ok, _, answer = one(make_send_email(Outbox(here / "file" / "outbox")), **email())
    assert not ok and "a file stands where its folder should be" in answer["error"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root may write anywhere")
def test_an_outbox_folder_that_is_not_writable_is_a_clear_error(here):
    locked = here / "locked"
    locked.mkdir(mode=0o500)
    ok, _, answer = one(make_send_email(Outbox(locked / "outbox")), **email())
    assert not ok and "is not writable: nothing was sent" in answer["error"]


def test_a_file_that_cannot_be_written_is_not_sent_and_may_be_tried_again(outbox, monkeypatch):
    send_email = make_send_email(outbox, max_per_run=1)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(outbox.folder))

    monkeypatch.setattr("mini_framework.builtin.mail.backends.tempfile.mkstemp", refuse)
    ok, _, answer = one(send_email, **email())
    assert not ok and answer["error"] == ("the e-mail could not be saved in the outbox folder 'outbox' (Permission "
                                          "denied): nothing was sent; tell the user.")
    with outbox.ledger.locked():
        assert outbox.ledger.last(message_key("assistant@example.com", "li@example.com", "Your order",
                                              "It has shipped.")).state == "failed"
    monkeypatch.undo()
    assert one(send_email, **email())[2]["status"] == "sent"  # not a duplicate, and the failure was not counted


# ----------------------------------------------------------------------------- once per message

def test_the_same_email_twice_is_sent_once_and_the_model_is_told_when(outbox):
    send_email = make_send_email(outbox)
    first = one(send_email, **email())[2]
    ok, _, second = one(send_email, **email(to="LI@example.com"))
    assert ok and second["status"] == "already_sent"
    assert (second["message_id"], second["saved_as"]) == (first["message_id"], first["saved_as"])
    assert second["sent_at"] in second["note"] and "it was not sent again" in second["note"]
    assert one(send_email, **email(body="It has shipped!"))[2]["status"] == "sent"  # another message
    assert len(outbox.messages()) == 2


def test_a_rerun_notebook_or_a_new_process_finds_the_ledger_in_the_outbox(outbox):
    assert one(make_send_email(outbox), **email())[2]["status"] == "sent"
    again = make_send_email(Outbox(outbox.folder))  # a cell run again: new objects, same folder
    assert one(again, **email())[2]["status"] == "already_sent"
    assert len(outbox.messages()) == 1


def test_clearing_the_ledger_or_resend_after_lets_it_go_again(outbox):
    send_email = make_send_email(outbox)
    one(send_email, **email())
    outbox.ledger.clear()
    assert one(send_email, **email())[2]["status"] == "sent"
    (outbox.folder / "sent.jsonl").unlink()  # deleting the file works too
    assert one(make_send_email(outbox), **email())[2]["status"] == "sent"
    assert one(make_send_email(outbox, resend_after=3600), **email())[2]["status"] == "already_sent"
    assert one(make_send_email(outbox, resend_after=0), **email())[2]["status"] == "sent"
    assert len(outbox.messages()) == 4


def test_concurrent_identical_calls_in_threads_send_exactly_one(outbox):
    backend = Recorder(delay=0.2)
    send_email = make_send_email(backend)
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(send_email(**email()))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(backend.sent) == 1
    assert sorted(a["status"] for a in answers) == ["already_sent"] * 7 + ["sent"]
    assert len({a["message_id"] for a in answers}) == 1


def test_identical_calls_in_one_reply_send_exactly_one(outbox):
    send_email = make_send_email(outbox)
    results = run(send_email, *[email()] * 5)
    assert [r.ok for r in results] == [True] * 5
    assert sorted(json.loads(r.content)["status"] for r in results) == ["already_sent"] * 4 + ["sent"]
    assert len(outbox.messages()) == 1


def test_a_crash_between_sending_and_sent_is_not_resent(outbox):
    script = ("import os, sys\n"
              "from mini_framework.builtin.mail import Outbox, make_send_email\n"
              "class Dying(Outbox):\n"
              "    def send(self, message):\n"
              "        os._exit(3)  # the process dies with the message handed over, or not\n"
              "make_send_email(Dying(sys.argv[1]))(to='li@example.com', subject='Your order', body='It has shipped.')\n")
    done = subprocess.run([sys.executable, "-c", script, str(outbox.folder)], cwd=ROOT, timeout=60)
    assert done.returncode == 3
    [line] = (outbox.folder / "sent.jsonl").read_text().splitlines()
    assert json.loads(line)["state"] == "sending"
    ok, _, answer = one(make_send_email(outbox), **email())
    assert ok and answer["status"] == "possibly_sent"
    assert "may have gone out" in answer["note"] and "ask the user to check" in answer["note"]
    assert outbox.messages() == []


def test_when_the_first_of_identical_calls_fails_cleanly_a_waiting_one_sends_it():
    class FailsOnce(Recorder):
        def send(self, message):
            if not getattr(self, "failed", False):
                time.sleep(0.2)
                self.failed = True
                raise NotSent("the server is busy: nothing was sent")
            return super().send(message)

    backend = FailsOnce(delay=0.1)
    send_email = make_send_email(backend)
    outcomes = []

    def call():
        try:
            outcomes.append(send_email(**email())["status"])
        except NotSent as error:
            outcomes.append(str(error))

    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
        time.sleep(0.02)  # the first one is sending when the others arrive
    for t in threads:
        t.join(10)
    assert sorted(outcomes) == ["already_sent", "sent", "the server is busy: nothing was sent"]
    assert len(backend.sent) == 1


def test_a_backend_that_fails_midway_may_have_sent_it_so_it_is_not_resent():
    class Flaky(Recorder):
        def send(self, message):
            raise ConnectionResetError(f"reset while writing {SECRET}")

    send_email = make_send_email(Flaky())
    ok, failure, answer = one(send_email, **email())
    assert (ok, failure) == (False, "exception")
    assert "may have been sent" in answer["error"] and SECRET not in answer["error"]
    assert one(send_email, **email())[2]["status"] == "possibly_sent"


def test_half_a_line_left_by_a_crash_is_skipped_and_the_next_entry_starts_on_its_own_line(outbox):
    outbox.folder.mkdir()
    (outbox.folder / "sent.jsonl").write_text('{"key": "abc", "state": "sen')
    assert one(make_send_email(outbox), **email())[2]["status"] == "sent"
    lines = (outbox.folder / "sent.jsonl").read_text().splitlines()
    assert lines[0] == '{"key": "abc", "state": "sen'
    assert [json.loads(line)["state"] for line in lines[1:]] == ["sending", "sent"]
    assert one(make_send_email(Outbox(outbox.folder)), **email())[2]["status"] == "already_sent"


def test_a_ledger_entry_round_trips():
    ledger = Ledger()
    with ledger.locked():
        ledger.record(Entry("k", "sent", "2026-01-05T09:30:00+08:00", "<1@example.com>", "kept"))
        assert ledger.last("k").receipt == "kept"


# ----------------------------------------------------------------------------- per run

def test_the_limit_per_run_holds_for_concurrent_calls_and_each_run_has_its_own():
    backend = Recorder(delay=0.1)
    send_email = make_send_email(backend, max_per_run=3)
    results = run(send_email, *[email(subject=f"Order {n}") for n in range(6)], run_id="run-a")
    sent = [r for r in results if r.ok]
    refused = [r for r in results if not r.ok]
    assert (len(sent), len(refused), len(backend.sent)) == (3, 3, 3)
    assert all(json.loads(r.content)["error"].startswith("limit of 3 e-mails per run reached; nothing sent")
               for r in refused)
    assert all(r.ok for r in run(send_email, *[email(subject=f"Invoice {n}") for n in range(3)], run_id="run-b"))
    assert len(backend.sent) == 6


def test_a_duplicate_does_not_count_and_calls_outside_a_run_share_one_bucket():
    backend = Recorder(delay=0)
    send_email = make_send_email(backend, max_per_run=2)
    assert one(send_email, **email(subject="A"))[2]["status"] == "sent"
    for _ in range(3):
        assert one(send_email, **email(subject="A"))[2]["status"] == "already_sent"
    assert one(send_email, **email(subject="B"))[2]["status"] == "sent"
    ok, _, answer = one(send_email, **email(subject="C"))
    assert not ok and "limit of 2 e-mails per run reached; nothing sent" in answer["error"]
    assert one(send_email, run_id="run-x", **email(subject="C"))[2]["status"] == "sent"


# ----------------------------------------------------------------------------- a real SMTP server

class Handler:
    """Keeps what arrives; refuses recipients at refuse.example; stalls in DATA for stall.example."""

    def __init__(self):
        self.received = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.endswith("@refuse.example"):
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown (token={SECRET})"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if any(a.endswith("@stall.example") for a in envelope.rcpt_tos):
            await asyncio.sleep(5)
        self.received.append(envelope)
        return "250 2.0.0 Ok: queued as 4Bq1x2"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtp_server():
    handler = Handler()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield handler, controller.port
    controller.stop()


def test_smtp_delivers_headers_and_a_chinese_body_to_a_real_server(smtp_server):
    handler, port = smtp_server
    send_email = make_send_email(SMTPSender("127.0.0.1", port), sender="shop@example.com")
    ok, _, answer = one(send_email, **email(subject=CHINESE_SUBJECT, body=CHINESE_BODY))
    assert ok and answer["status"] == "sent"
    assert answer["server_reply"] == "250 2.0.0 Ok: queued as 4Bq1x2"
    [envelope] = handler.received
    assert (envelope.mail_from, envelope.rcpt_tos) == ("shop@example.com", ["li@example.com"])
    arrived = message_from_bytes(envelope.original_content, policy=policy.default)
    assert (arrived["From"], arrived["To"], arrived["Subject"]) == ("shop@example.com", "li@example.com",
                                                                    CHINESE_SUBJECT)
    assert arrived["Message-ID"] == answer["message_id"] and arrived["Date"] is not None
    assert arrived.get_content() == CHINESE_BODY + "\n"  # the line starting with "." survived too
    assert one(send_email, **email(subject=CHINESE_SUBJECT, body=CHINESE_BODY))[2]["status"] == "already_sent"
    assert len(handler.received) == 1


def test_smtp_server_down_is_a_quick_clear_error_and_may_be_tried_again():
    port = free_port()  # nothing listens there now
    send_email = make_send_email(SMTPSender("127.0.0.1", port, timeout=5))
    started = time.monotonic()
    ok, failure, answer = one(send_email, **email())
    assert time.monotonic() - started < 3
    assert (ok, failure) == (False, "exception")
    assert answer["error"] == ("could not reach the mail server (connection refused): nothing was sent. Try again "
                               "later, or tell the user.")
    ok, _, answer = one(send_email, **email())
    assert not ok and "connection refused" in answer["error"]  # tried again, not "already sent"


def listening(greeting):
    """A one-connection server on 127.0.0.1 that sends `greeting` (or nothing) and waits: its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve():
        with server:
            conn, _ = server.accept()
            with conn:
                conn.sendall(greeting)
                conn.settimeout(5)
                try:
                    conn.recv(100)
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()
    return server.getsockname()[1]


def test_a_server_that_refuses_the_connection_outright_says_so():
    port = listening(b"554 5.3.2 no service here\r\n")
    ok, _, answer = one(make_send_email(SMTPSender("127.0.0.1", port, timeout=2)), **email())
    assert not ok and answer["error"].startswith("the mail server would not take the connection (554 5.3.2 no "
                                                 "service here): nothing was sent")


def test_a_server_that_never_answers_is_given_up_on_in_time():
    port = listening(b"")
    started = time.monotonic()
    ok, _, answer = one(make_send_email(SMTPSender("127.0.0.1", port, timeout=0.3)), **email())
    assert time.monotonic() - started < 3
    assert not ok and answer["error"] == ("could not reach the mail server (no answer within 0.3 s): nothing was "
                                          "sent. Try again later, or tell the user.")


def test_smtp_refusing_the_recipient_says_why_redacted_and_nothing_is_sent(smtp_server):
    handler, port = smtp_server
    send_email = make_send_email(SMTPSender("127.0.0.1", port))
    ok, _, answer = one(send_email, **email(to="nobody@refuse.example"))
    assert not ok
    assert answer["error"].startswith("the mail server refused the recipient nobody@refuse.example (550 5.1.1 "
                                      "<nobody@refuse.example>: Recipient address rejected: User unknown")
    assert "nothing was sent" in answer["error"] and SECRET not in answer["error"]
    assert handler.received == []


def test_smtp_breaking_off_while_the_message_is_handed_over_may_have_sent_it(smtp_server):
    handler, port = smtp_server
    send_email = make_send_email(SMTPSender("127.0.0.1", port, timeout=0.5))
    started = time.monotonic()
    ok, _, answer = one(send_email, **email(to="li@stall.example"))
    assert time.monotonic() - started < 3
    assert not ok and "no answer within 0.5 s" in answer["error"] and "it may have been sent" in answer["error"]
    assert one(send_email, **email(to="li@stall.example"))[2]["status"] == "possibly_sent"


def test_smtp_login_reads_the_password_from_the_environment_only(monkeypatch):
    seen = []

    def authenticator(server, session, envelope, mechanism, auth_data):
        seen.append((auth_data.login, auth_data.password))
        return AuthResult(success=auth_data.password == b"right-horse-battery", handled=False)  # False: answer 535

    handler = Handler()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port(), authenticator=authenticator,
                            auth_require_tls=False)
    controller.start()
    try:
        backend = SMTPSender("127.0.0.1", controller.port, username="shop", password_env="SHOP_SMTP_PASSWORD")
        send_email = make_send_email(backend)
        monkeypatch.delenv("SHOP_SMTP_PASSWORD", raising=False)
        ok, _, answer = one(send_email, **email(subject="no password"))
        assert not ok and "not configured (the mail server's password is missing)" in answer["error"]
        monkeypatch.setenv("SHOP_SMTP_PASSWORD", "wrong-password-value")
        ok, _, answer = one(send_email, **email(subject="wrong password"))
        assert not ok and "refused the login" in answer["error"] and "wrong-password" not in answer["error"]
        monkeypatch.setenv("SHOP_SMTP_PASSWORD", "right-horse-battery")
        assert one(send_email, **email(subject="right password"))[2]["status"] == "sent"
        assert seen[-1] == (b"shop", b"right-horse-battery") and len(handler.received) == 1
        assert "right-horse" not in repr(backend) + repr(vars(backend))
    finally:
        controller.stop()


def test_starttls_that_the_server_does_not_offer_is_a_setup_error(smtp_server):
    _, port = smtp_server
    ok, _, answer = one(make_send_email(SMTPSender("127.0.0.1", port, starttls=True)), **email())
    assert not ok and "does not offer STARTTLS or login" in answer["error"] and "nothing was sent" in answer["error"]


def test_an_smtp_ledger_file_remembers_across_senders(smtp_server, tmp_path):
    handler, port = smtp_server
    for _ in range(2):
        one(make_send_email(SMTPSender("127.0.0.1", port, ledger=tmp_path / "smtp-sent.jsonl")), **email())
    assert len(handler.received) == 1
    assert stat.S_IMODE(os.stat(tmp_path / "smtp-sent.jsonl").st_mode) == 0o600


@pytest.mark.parametrize("options", [
    {"host": "smtp.example.com", "username": "shop", "password_env": "PW"},  # a password in clear text
    {"host": "127.0.0.1", "username": "shop"},
    {"host": "127.0.0.1", "password_env": "PW"},
    {"host": "127.0.0.1", "timeout": 0},
    {"host": "127.0.0.1", "timeout": 3600},
    {"host": "127.0.0.1", "port": 70000},
])
def test_smtp_sender_refuses_unsafe_or_impossible_settings(options):
    with pytest.raises(ValueError):
        SMTPSender(**options)


def test_mail_errors_are_tool_errors_and_not_sent_is_a_mail_error():
    from mini_framework import ToolError
    assert issubclass(NotSent, MailError) and issubclass(MailError, ToolError)


def test_a_direct_call_skips_validation_but_not_the_checks(outbox):
    send_email = make_send_email(outbox, allowed_recipients=["*@example.com"])
    with pytest.raises(ValueError, match="not among the recipients"):
        send_email(to="li@other.example", subject="Hi", body="Hello")
    with pytest.raises(ValueError, match="U\\+000A"):
        send_email(to="li@example.com", subject="Hi\nBcc: x@evil.example", body="Hello")
    assert send_email(to="li@Example.com", subject="Hi", body="Hello")["to"] == "li@example.com"
