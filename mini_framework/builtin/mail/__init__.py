"""A builtin `send_email` tool: one plain-text e-mail to one recipient, checked, gated, and sent once.

    send_email = make_send_email()                    # .eml files in ./outbox; a person approves each
    send_email = make_send_email(SMTPSender("127.0.0.1", 8025), allowed_recipients=["*@example.com"],
                                 max_per_run=3, sender="shop@example.com")

Mail inside the company without asking, anything else waits for a person:

    >>> internal = ["corp.example"]
    >>> send_email = make_send_email(requires_approval=lambda args: not is_internal(args.to, internal))
    >>> [send_email.needs_approval(send_email.validate({"to": to, "subject": "Hi", "body": "Hello"}))
    ...  for to in ("Boss@Corp.Example", "li@example.com")]
    [False, True]

`is_internal` takes the address as strictly as `check_address` does, and is False for what it refuses:
`args.to.endswith("@corp.example")` would also let boss%attacker.example@corp.example (which some servers
pass on to attacker.example) and "x@attacker.example"@corp.example go without asking. Use it in the predicate
of any hand-written e-mail tool too, whose `to` nothing else checks.

    tool.py        make_send_email: validation, approval, once per message, a limit per run, the backend
    addresses.py   check_address (one bare address, strictly), the allow-list, is_internal
    compose.py     check_subject, check_body, message_key, compose (the EmailMessage), POLICY and WIRE
    ledger.py      Ledger and Entry: which messages were sent ("sending", "sent", "failed"), in a JSON-lines file
    backends.py    Backend, Outbox (a folder of .eml files, the default), SMTPSender
    errors.py      MailError (may have been sent: the model is told so) and NotSent (nothing left)

Everything is imported from here: `from mini_framework.builtin.mail import make_send_email, Outbox`.

Concessions: plain text only; no attachments, Cc or Bcc; ASCII addresses only (write an internationalised
domain in its xn-- form), and the sender is a bare address. Per-run counts live in memory: a run resumed
in a new process counts from zero. Processes sharing a ledger file take turns through flock on POSIX; on
Windows only the threads of one process do. SMTP is plain or STARTTLS (no implicit TLS on port 465), and a
login needs STARTTLS unless the server is on this machine.

Needs: the core (arguments, executor, redaction, tools).
"""
from __future__ import annotations

# The names in __all__, and (as before the split) the module constants and the subject and body checks. Setting a
# constant here changes nothing: set it on its own module (e.g. mail.tool.WAIT_FOR_TWIN).
from .addresses import check_address, is_internal
from .backends import MAX_SMTP_TIMEOUT as MAX_SMTP_TIMEOUT
from .backends import Backend, Outbox, SMTPSender
from .compose import POLICY as POLICY
from .compose import WIRE as WIRE
from .compose import check_body as check_body
from .compose import check_subject as check_subject
from .compose import compose, message_key
from .errors import MailError, NotSent
from .ledger import Entry, Ledger
from .tool import MAX_RUNS_COUNTED as MAX_RUNS_COUNTED
from .tool import WAIT_FOR_TWIN as WAIT_FOR_TWIN
from .tool import make_send_email

__all__ = ["Backend", "Entry", "Ledger", "MailError", "NotSent", "Outbox", "SMTPSender", "check_address", "compose",
           "is_internal", "make_send_email", "message_key"]
