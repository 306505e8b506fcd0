"""The message: a subject and a body checked, the idempotency key of a message, and the EmailMessage itself
(plain text, UTF-8, 7-bit on the wire).

    >>> compose("shop@example.com", "li@example.com", "Hi", "Hello")["To"]
    'li@example.com'
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from .addresses import _control

__all__ = ["POLICY", "WIRE", "check_body", "check_subject", "compose", "message_key"]

POLICY = policy.default.clone(cte_type="7bit")  # a non-ASCII body goes base64 or quoted-printable, never raw 8-bit
WIRE = policy.SMTP.clone(cte_type="7bit")  # the same, written with CRLF line ends: .eml files and SMTP


def check_subject(value: str, limit: int) -> str:
    """A subject line: not blank, one line, at most `limit` characters.

    >>> check_subject("Order 42\\r\\nBcc: x@evil.example", 200)
    Traceback (most recent call last):
    ...
    ValueError: the subject contains a line break or control character (U+000D), which could add hidden
    e-mail headers: refused, nothing was removed. Write the subject on one line
    """
    if bad := _control(value):
        raise ValueError(f"the subject contains a line break or control character ({bad}), which could add hidden "
                         "e-mail headers: refused, nothing was removed. Write the subject on one line")
    if not value.strip():
        raise ValueError("the subject is empty: write a short subject")
    if len(value) > limit:
        raise ValueError(f"the subject is {len(value):,} characters, over the limit of {limit:,}: shorten it")
    return value


def check_body(value: str, limit: int) -> str:
    """A plain-text body: not blank, at most `limit` characters, no control characters but tab and line breaks.

    >>> check_body("x" * 30, 20)
    Traceback (most recent call last):
    ...
    ValueError: the body is 30 characters, over the limit of 20: shorten it
    """
    if not value.strip():
        raise ValueError("the body is empty: write the message")
    if len(value) > limit:
        raise ValueError(f"the body is {len(value):,} characters, over the limit of {limit:,}: shorten it")
    if bad := _control(value, allowed="\t\n\r"):
        raise ValueError(f"the body contains a control character ({bad}): leave it out")
    return value


def message_key(sender: str, to: str, subject: str, body: str) -> str:
    """The idempotency key: sha256 of (sender, recipient in lower case, subject, body).

    >>> message_key("a@example.com", "Li@Example.com", "Hi", "Hello") == message_key(
    ...     "a@example.com", "li@example.com", "Hi", "Hello")
    True
    """
    canonical = json.dumps([sender, to.lower(), subject, body], ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def compose(sender: str, to: str, subject: str, body: str, when: dt.datetime | None = None) -> EmailMessage:
    """The e-mail: From, To, Subject, Date, Message-ID, and a UTF-8 plain-text body.

    >>> message = compose("shop@example.com", "li@example.com", "订单已发货", "您好！")
    >>> message["Subject"], message.get_content(), message["Message-ID"].endswith("@example.com>")
    ('订单已发货', '您好！\\n', True)
    """
    message = EmailMessage(policy=POLICY)
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(when or dt.datetime.now().astimezone())
    message["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2])  # no host name lookup, none leaked
    message.set_content(body)
    return message
