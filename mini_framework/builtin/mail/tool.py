"""`make_send_email`: the `send_email(to, subject, body)` tool, and what happens between a model's call and a
sent e-mail, in this order:

    validation     `to` is one bare address (no name, no list), on the allow-list if there is one; CR, LF
                   and other control characters in `to` or `subject` (header injection) are refused,
                   never removed; subject and body within their limits. A bad call is answered "invalid
                   arguments" before anyone is asked to approve it.
    approval       requires_approval=True by default: the Agent pauses the run for a person (agent.py).
    idempotency    the same sender, recipient, subject and body go out once per ledger: an SDK retry, a
                   resumed run, a model repeating itself after a timeout, a re-run notebook cell are
                   answered "already_sent", with when and the Message-ID.
    per-run limit  at most `max_per_run` e-mails per agent run (tools.RUN_ID); a duplicate does not count.
    the backend    `Outbox` (a folder of .eml files, the default) or `SMTPSender` (a real mail server).

An entry the ledger left at "sending" is not sent again, and the model is told to ask the user to check. The
window is forever, for that ledger: `ledger.clear()` (or deleting the file) lets the same e-mail be sent again
on purpose, and `make_send_email(..., resend_after=seconds)` lets it go again once that much time has passed.

    >>> make_send_email().name
    'send_email'
"""
from __future__ import annotations

import datetime as dt
import logging
import threading
from collections import OrderedDict
from typing import Annotated, Any, Callable, Sequence

from pydantic import AfterValidator, Field

from ...arguments import NotAllowed
from ...redaction import redact
from ...tools import RUN_ID, Tool, tool
from .addresses import _allows, _listed, _patterns, check_address
from .backends import Backend, Outbox
from .compose import check_body, check_subject, compose, message_key
from .errors import MailError, NotSent
from .ledger import Entry, Ledger

__all__ = ["WAIT_FOR_TWIN", "MAX_RUNS_COUNTED", "make_send_email"]

log = logging.getLogger("mini_framework")

WAIT_FOR_TWIN = 60.0  # seconds a call waits for an identical call of this process that is still sending
MAX_RUNS_COUNTED = 10_000  # runs whose sends are counted; the oldest are forgotten past this


class _PerRun:
    """E-mails sent per run, thread-safe; past MAX_RUNS_COUNTED runs the oldest are forgotten."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lock = threading.Lock()
        self.counts: OrderedDict[str, int] = OrderedDict()

    def take(self, run: str) -> bool:
        """Count one more send for `run`; False (and nothing counted) if its limit is reached."""
        with self.lock:
            used = self.counts.get(run, 0)
            if used >= self.limit:
                return False
            self.counts[run] = used + 1
            self.counts.move_to_end(run)
            while len(self.counts) > MAX_RUNS_COUNTED:
                self.counts.popitem(last=False)
            return True

    def give_back(self, run: str) -> None:
        """Uncount a send that did not happen."""
        with self.lock:
            if self.counts.get(run):
                self.counts[run] -= 1


def make_send_email(
    backend: Backend | None = None,
    *,
    sender: str = "assistant@example.com",
    allowed_recipients: Sequence[str] | None = None,
    max_per_run: int = 5,
    max_body_chars: int = 20_000,
    max_subject_chars: int = 200,
    requires_approval: bool | Callable[[Any], bool] = True,
    resend_after: float | None = None,
    name: str = "send_email",
) -> Tool:
    """The `send_email(to, subject, body)` tool, sending through `backend` (default: `Outbox()`, ./outbox).

    allowed_recipients: exact addresses or "*@domain" patterns (domains in any case; a pattern matches that
    domain only, not its subdomains); None allows anyone.
    requires_approval: True, False, or a predicate of the validated arguments, e.g.
    `lambda args: not is_internal(args.to, ["corp.example"])` (see addresses.is_internal).
    resend_after: seconds after which the same e-mail may go again; None (default): never, for this ledger.

    >>> send_email = make_send_email(allowed_recipients=["*@example.com"])
    >>> send_email.requires_approval, list(send_email.json_schema["properties"])
    (True, ['to', 'subject', 'body'])
    >>> send_email.validate({"to": "li@other.example", "subject": "Hi", "body": "Hello"})
    Traceback (most recent call last):
    ...
    pydantic_core._pydantic_core.ValidationError: 1 validation error for send_email
    to
      Value error, li@other.example is not among the recipients this tool may send to (*@example.com) ...
    """
    for option, value in (("max_per_run", max_per_run), ("max_body_chars", max_body_chars),
                          ("max_subject_chars", max_subject_chars)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{option} must be a whole number of at least 1, not {value!r}")
    if resend_after is not None and (not isinstance(resend_after, (int, float)) or resend_after < 0):
        raise ValueError(f"resend_after must be None or a number of seconds >= 0, not {resend_after!r}")
    sender = check_address(sender)
    patterns = _patterns(allowed_recipients)
    backend = backend if backend is not None else Outbox()
    ledger: Ledger = getattr(backend, "ledger", None) or Ledger()
    receipt_name: str = getattr(backend, "receipt_name", "receipt")
    per_run = _PerRun(max_per_run)

    def recipient(value: str) -> str:
        address = check_address(value)
        if patterns is not None and not _allows(patterns, address):
            raise NotAllowed(f"{address} is not among the recipients this tool may send to ({_listed(patterns)})")
        return address

    To = Annotated[str, Field(description="one e-mail address, like li@example.com (no name, no list)"),
                   AfterValidator(recipient)]
    Subject = Annotated[str, Field(description=f"the subject: one line, at most {max_subject_chars:,} characters"),
                        AfterValidator(lambda v: check_subject(v, max_subject_chars))]
    Body = Annotated[str, Field(description=f"the message in plain text, at most {max_body_chars:,} characters"),
                     AfterValidator(lambda v: check_body(v, max_body_chars))]

    def send_email(to: str, subject: str, body: str) -> dict[str, str]:
        """Send one e-mail; the tool's description says the rest."""
        to = recipient(to)  # the checks again, for a direct call (send_email(...)), which skips validation
        subject, body = check_subject(subject, max_subject_chars), check_body(body, max_body_chars)
        key = message_key(sender, to, subject, body)
        run = RUN_ID.get() or "direct"
        while True:
            with ledger.locked():
                entry = ledger.last(key)
                if entry is None or entry.state == "failed" or _expired(entry, resend_after):
                    if not per_run.take(run):
                        raise MailError(f"limit of {max_per_run} e-mails per run reached; nothing sent. Tell the "
                                        "user which e-mails were not sent.")
                    message = compose(sender, to, subject, body)
                    started = Entry(key, "sending", _now(), str(message["Message-ID"]))
                    try:
                        ledger.record(started)
                    except OSError as error:
                        per_run.give_back(run)
                        raise NotSent(f"{ledger.label} cannot be written ({error.strerror or 'write failed'}): "
                                      "nothing was sent; tell the user.") from None
                    done = ledger.shared.in_flight[key] = threading.Event()
                    break
                if entry.state == "sent":
                    return _already_sent(entry, to, subject, receipt_name)
                twin = ledger.shared.in_flight.get(key)
                if twin is None:  # "sending", and no call of this process is sending it: it never finished
                    return _possibly_sent(entry, to, subject, "did not finish (the program may have stopped)")
            if not twin.wait(WAIT_FOR_TWIN):  # an identical call is sending it right now: its outcome is ours
                return _possibly_sent(entry, to, subject, "is still being sent by another call")
        outcome: Entry | None = None  # None: unknown, so the entry stays at "sending" (possibly sent)
        try:
            receipt = redact(str(backend.send(message)))
            outcome = Entry(key, "sent", _now(), started.message_id, receipt)
        except NotSent:
            per_run.give_back(run)
            outcome = Entry(key, "failed", _now(), started.message_id)
            raise
        except MailError:
            raise  # the backend's own words: it may have been sent
        except Exception as error:
            log.warning("send_email: the backend failed while sending", exc_info=True)
            raise MailError(f"sending failed midway ({type(error).__name__}), so the e-mail may have been sent. It "
                            "will not be sent again automatically: ask the user to check whether it arrived.") from None
        finally:
            _finish(ledger, key, done, outcome)
        return {"status": "sent", "to": to, "subject": subject, "message_id": started.message_id,
                receipt_name: receipt}

    send_email.__annotations__ = {"to": To, "subject": Subject, "body": Body, "return": dict[str, str]}  # objects,
    # not the strings `from __future__ import annotations` makes: these types exist only inside this function
    description = ("Send an e-mail (plain text) to one recipient. It is really sent and cannot be taken back; a "
                   "person may have to approve it first. One address per call: to write to several people, call "
                   f"it once for each. Subject: one line, at most {max_subject_chars:,} characters; body: at most "
                   f"{max_body_chars:,} characters.")
    if patterns is not None:
        description += f" Only these recipients are allowed: {_listed(patterns)}."
    advice = ("Send an e-mail only when the user asked for it, to an address they gave. If the result says "
              "already_sent or possibly_sent, do not send it again: tell the user what the result says.")
    return tool(send_email, name=name, description=description, best_practices=advice,
                requires_approval=requires_approval, side_effects=True)


def _now() -> str:
    """The local time, ISO 8601 with its offset, to the second."""
    return dt.datetime.now().astimezone().isoformat(timespec="seconds")


def _expired(entry: Entry, resend_after: float | None) -> bool:
    """Whether an entry is older than `resend_after` seconds (never, when None)."""
    if resend_after is None:
        return False
    try:
        age = (dt.datetime.now().astimezone() - dt.datetime.fromisoformat(entry.at)).total_seconds()
    except (ValueError, TypeError):
        return False
    return age >= resend_after


def _finish(ledger: Ledger, key: str, done: threading.Event, outcome: Entry | None) -> None:
    """After the backend call: record how it ended (a ledger failing now is logged, not raised: the e-mail
    is gone or not whatever the ledger says), then wake identical calls waiting for this one."""
    try:
        if outcome is not None:
            try:
                with ledger.locked():
                    ledger.record(outcome)
            except (OSError, MailError):
                with ledger.shared.lock:
                    ledger.entries[key] = outcome  # this process, at least, still knows
                log.error("send_email: could not record %s for message %s in %s", outcome.state,
                          outcome.message_id, ledger.label, exc_info=True)
    finally:
        with ledger.shared.lock:
            if ledger.shared.in_flight.get(key) is done:  # a later call may already be sending it again
                del ledger.shared.in_flight[key]
        done.set()


def _already_sent(entry: Entry, to: str, subject: str, receipt_name: str) -> dict[str, str]:
    """The answer to a second send of a message that went out."""
    answer = {"status": "already_sent", "to": to, "subject": subject, "message_id": entry.message_id,
              "sent_at": entry.at}
    if entry.receipt:
        answer[receipt_name] = entry.receipt
    answer["note"] = (f"This exact e-mail was already sent at {entry.at}; it was not sent again. Tell the user "
                      "it went out then.")
    return answer


def _possibly_sent(entry: Entry, to: str, subject: str, what: str) -> dict[str, str]:
    """The answer to a second send of a message whose first send's outcome is unknown."""
    return {"status": "possibly_sent", "to": to, "subject": subject, "message_id": entry.message_id,
            "attempted_at": entry.at,
            "note": (f"An earlier attempt to send this exact e-mail (at {entry.at}) {what}, so it may have gone "
                     "out. It was not sent again, to avoid a duplicate: ask the user to check whether it arrived.")}
