"""Exercise checker of lesson 12c: the solution passes, the stub waits, each realistic wrong answer gets ❌."""
from __future__ import annotations

import hashlib
import json
import threading
import time

from checker_cases import boom, checker_tests, stub

from course import checking, lesson12c

# -- exercise 1: send_once ---------------------------------------------------------------------------


def send_once(message, ledger, send, *, key_on="content", lock=True, record_first=True, rollback=False,
              sending_is_sent=False, hold_lock=False, new_lock=False, swallow=False, wait_for_unfinished=False):
    if key_on == "call_id":
        key = message["call_id"]
    elif key_on == "everything":
        key = hashlib.sha256(json.dumps(message, sort_keys=True).encode()).hexdigest()
    elif key_on == "with_time":
        key = json.dumps([message["to"], message["subject"], message["body"], time.time_ns()])
    else:
        key = hashlib.sha256(json.dumps([message["to"], message["subject"], message["body"]]).encode()).hexdigest()
    guard = threading.Lock() if new_lock else (ledger.lock if lock else _NoLock())
    if hold_lock:
        with guard:
            state = ledger.entries.get(key)
            if state is not None:
                return "already_sent" if state == "sent" else "possibly_sent"
            ledger.entries[key] = "sending"
            send(message)
            ledger.entries[key] = "sent"
            return "sent"
    if wait_for_unfinished:  # an attempt marked 'sending' is waited for, and one that timed out never finishes
        deadline = time.monotonic() + 20
        while ledger.entries.get(key) == "sending" and time.monotonic() < deadline:
            time.sleep(0.05)
    with guard:
        state = ledger.entries.get(key)
        if state == "sent" or (state == "sending" and sending_is_sent):
            return "already_sent"
        if state == "sending":
            return "possibly_sent"
        if record_first:
            ledger.entries[key] = "sending"
    try:
        send(message)
    except Exception:
        if swallow:  # the failure hidden from the caller
            return "possibly_sent"
        if rollback:
            with guard:
                ledger.entries.pop(key, None)
        raise
    with guard:
        ledger.entries[key] = "sent"
    return "sent"


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def sends(**options):
    def send_once_(message, ledger, send):
        return send_once(message, ledger, send, **options)
    return send_once_


def always_sends(message, ledger, send):
    send(message)
    return "sent"


CASES = {
    "send_once": (lesson12c.send_once, [send_once], [stub], [
        [sends(key_on="call_id")],  # a retry has a new call id
        [sends(key_on="everything")],  # the whole message, composed_at included
        [sends(key_on="with_time")],  # a timestamp in the key
        [sends(record_first=False)],  # recorded only after sending: a crash in between resends; the race
        [sends(rollback=True)],  # the entry removed when send fails: the retry resends
        [sends(sending_is_sent=True)],  # an unfinished attempt reported as already sent
        [sends(lock=False)],  # no lock: racing calls both send
        [sends(new_lock=True)],  # a new Lock() per call locks nothing
        [sends(hold_lock=True)],  # the lock held while sending: one slow send blocks every other e-mail
        [sends(swallow=True)],  # send's exception caught and answered 'possibly_sent'
        [always_sends],
        [boom],
    ]),
}

test_checker_passes_the_solution, test_checker_says_not_solved_to_the_stub, \
    test_checker_catches_a_wrong_answer_without_raising = checker_tests(CASES)


def test_a_send_once_that_waits_for_an_unfinished_attempt_is_stopped_by_the_time_limit(monkeypatch):
    monkeypatch.setattr(checking, "TIME_LIMIT", 2.0)
    started = time.monotonic()
    result = lesson12c.send_once(sends(wait_for_unfinished=True))
    assert result.status == "wrong" and result.message.startswith("⌛") and "wait forever" in result.message
    assert time.monotonic() - started < 10
