"""Checks for lesson 12c (side effects done right).

The exercise retries, crashes and races a send: the same e-mail must go once, an attempt that never
finished must not be repeated, and two different e-mails must still go side by side. Nothing is sent
anywhere: the "send" functions here only count.
"""
from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any, Callable

from .checking import CheckResult, Hints, run_check, solved

# ----------------------------------------------------------------------------- exercise 1

class SlowEntries(dict):  # type: ignore[type-arg]
    """A dict that takes a moment to read: it widens the gap between checking and recording, as a busy disk or
    a database round trip would, so that two calls racing each other show what happens."""

    def __contains__(self, key: object) -> bool:
        found = super().__contains__(key)
        time.sleep(0.05)  # the answer travels back while others may be writing
        return found

    def get(self, key: Any, default: Any = None) -> Any:
        found = super().get(key, default)
        time.sleep(0.05)
        return found

    def __getitem__(self, key: Any) -> Any:
        found = super().__getitem__(key)
        time.sleep(0.05)
        return found


def _ledger(slow: bool = False) -> SimpleNamespace:
    return SimpleNamespace(lock=threading.Lock(), entries=SlowEntries() if slow else {})


def _message(call_id: str, **changes: str) -> dict[str, str]:
    message = {"to": "li.si@example.com", "subject": "订单已发货", "body": "您好，您的订单已发货。", "call_id": call_id,
               "composed_at": f"2024-05-23T10:00:{int(call_id.rsplit('_', 1)[-1]) % 60:02d}+08:00"}
    message.update(changes)
    return message


class Mailer:
    """A send function that counts what it sent; it can be slow, or time out after the message left."""

    def __init__(self, seconds: float = 0.0, fail_after_sending: bool = False) -> None:
        self.sent: list[dict[str, str]] = []
        self.seconds = seconds
        self.fail_after_sending = fail_after_sending
        self.lock = threading.Lock()

    def __call__(self, message: dict[str, str]) -> str:
        time.sleep(self.seconds)
        with self.lock:
            self.sent.append(dict(message))
        if self.fail_after_sending:
            self.fail_after_sending = False
            raise TimeoutError("the mail server did not answer within 10 s (the e-mail had already been handed over)")
        return "250 OK"


def _status(value: Any, what: str) -> str:
    solved(value)
    if value not in ("sent", "already_sent", "possibly_sent"):
        raise AssertionError(f"send_once should return 'sent', 'already_sent' or 'possibly_sent', not {value!r:.60} "
                             f"({what})")
    return str(value)


def _race(send_once: Callable[..., Any], ledger: SimpleNamespace, messages: list[dict[str, str]],
          send: Callable[[dict[str, str]], str]) -> list[Any]:
    """Call send_once for each message in its own thread, all at once; their answers (or exceptions)."""
    start = threading.Barrier(len(messages))
    answers: list[Any] = [None] * len(messages)

    def one(i: int) -> None:
        start.wait()
        try:
            answers[i] = send_once(messages[i], ledger, send)
        except Exception as error:  # reported below
            answers[i] = error

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(messages))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    for answer in answers:
        if isinstance(answer, Exception):
            raise answer
    return answers


def send_once(send_once: Callable[..., Any]) -> CheckResult:
    """Exercise 1: the same e-mail goes once, through retries, a crash mid-send and a race."""
    def test() -> str:
        ledger, mailer = _ledger(), Mailer()
        assert _status(send_once(_message("call_1"), ledger, mailer), "the first send") == "sent", (
            "the first send of an e-mail should return 'sent'")
        assert len(mailer.sent) == 1, (
            f"the first send should call send(message) once, it called it {len(mailer.sent)} times")
        retry = _message("call_2")  # the model asks again: a new call id, composed a moment later
        answer = _status(send_once(retry, ledger, mailer), "a retry")
        assert len(mailer.sent) == 1, (
            "a retry with the same recipient, subject and body was sent again. A retry has a new call id and a new "
            "composed_at: key the ledger on what the recipient reads (to, subject, body), and nothing that changes "
            "between attempts (no call id, no clock)")
        assert answer == "already_sent", (
            f"for a retry of an e-mail that was sent, return 'already_sent', not {answer!r}")
        for field, value in [("body", "您好，您的订单今天发货。"), ("to", "wang.wu@example.com"),
                             ("subject", "订单已签收")]:
            other = _message("call_3", **{field: value})
            assert _status(send_once(other, ledger, mailer), f"another {field}") == "sent", (
                f"an e-mail with another {field} is another e-mail: it should be sent")
        sent = len(mailer.sent)
        assert sent == 4, f"four different e-mails should make four sends, not {sent}"

        ledger, mailer = _ledger(), Mailer(fail_after_sending=True)
        try:
            swallowed = send_once(_message("call_4"), ledger, mailer)
        except TimeoutError:
            pass
        else:
            raise AssertionError(
                f"send(message) raised TimeoutError, and send_once returned {swallowed!r:.40} instead of letting it "
                "through. Don't catch it: the code that called send_once (the executor) must learn that this attempt "
                "failed, to tell the model its outcome is unknown and log it as failed. 'possibly_sent' is the answer "
                "for a later call that finds this attempt unfinished")
        answer = _status(send_once(_message("call_5"), ledger, mailer), "a retry after a timeout")
        assert len(mailer.sent) == 1, (
            "send(message) raised a timeout after the e-mail had left, and the retry sent it again. Record the "
            "e-mail as 'sending' before you call send, and leave that entry when send fails: you can't know whether "
            "it went")
        assert answer == "possibly_sent", (
            f"after an attempt that never finished, return 'possibly_sent' (it may have gone: the user should check), "
            f"not {answer!r}")

        ledger, mailer = _ledger(slow=True), Mailer(seconds=0.2)
        answers = _race(send_once, ledger, [_message(f"call_{10 + i}") for i in range(3)], mailer)
        assert len(mailer.sent) == 1, (
            f"three identical calls at once (one reply's calls run in threads) sent {len(mailer.sent)} e-mails. "
            "Checking the ledger and recording 'sending' must be one step that no other call can get between: do "
            "both inside `with ledger.lock:`")
        assert answers.count("sent") == 1, (
            f"exactly one of the racing calls sent it, so exactly one says 'sent', not: {answers}")

        ledger = _ledger()
        started = {"call_20": threading.Event(), "call_21": threading.Event()}
        overlapped: dict[str, bool] = {}

        def side_by_side(message: dict[str, str]) -> str:
            started[message["call_id"]].set()
            other = "call_21" if message["call_id"] == "call_20" else "call_20"
            overlapped[message["call_id"]] = started[other].wait(2)  # does the other send start while this one runs?
            return "250 OK"

        _race(send_once, ledger, [_message("call_20"), _message("call_21", to="wang.wu@example.com")], side_by_side)
        assert len(overlapped) == 2, "two different e-mails should both be sent"
        assert all(overlapped.values()), (
            "two different e-mails could not be sent at the same time: the lock is held while send(message) runs, so "
            "one slow mail server stops every other e-mail. Hold the lock to check and record, not to send")
        return ("each e-mail sent once: retries answered 'already_sent', a send that failed midway not repeated, "
                "racing calls sent once, different e-mails sent side by side")
    return run_check(1, test, "Decide what makes two e-mails 'the same', and write down that you are about to send "
                              "before you send.", recipe=hint.recipes[1])


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("Make the key with fingerprint() from the parts the recipient reads, never the call id or a time. Holding "
        "ledger.lock, look the key up: already sent means 'already_sent'; an attempt still marked as sending means "
        "'possibly_sent' (never wait for it); otherwise note that you are sending. Release the lock, then send; if "
        "send raises, let it: the note stays. Take the lock again to note it as sent, and answer 'sent'.\n"
        "中文：键只由收件人读到的内容（to、subject、body）用 fingerprint 算出，"
        "不含调用 ID 和时间。在 ledger.lock 里查账：已是 'sent' 返回 'already_sent'，"
        "是 'sending' 返回 'possibly_sent'（不要等它），否则先记下 'sending'。"
        "在锁外调用 send(message)，它抛异常就让它抛出（记录保持 'sending'）。"
        "最后在锁里记为 'sent'，返回 'sent'。"),
})
