"""Where a message goes: `Outbox` (a folder of .eml files, the default) or `SMTPSender` (a real mail server),
and the `Backend` protocol any other one follows.

    >>> Outbox("outbox").receipt_name, SMTPSender("127.0.0.1", 8025).receipt_name
    ('saved_as', 'server_reply')
"""
from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import logging
import os
import secrets
import smtplib
import socket
import ssl
import tempfile
import threading
import time
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses
from pathlib import Path
from typing import Protocol

from ...redaction import redact
from .compose import WIRE
from .errors import MailError, NotSent
from .ledger import Ledger

__all__ = ["MAX_SMTP_TIMEOUT", "Backend", "Outbox", "SMTPSender"]

log = logging.getLogger("mini_framework")

MAX_SMTP_TIMEOUT = 120.0


class Backend(Protocol):
    """Where messages go. `send` returns a short receipt (where it was saved, what the server answered),
    raises NotSent when nothing left, and anything else when it may have. A backend may have a `ledger`
    (else the tool keeps one in memory) and a `receipt_name` (the result's key for the receipt)."""

    def send(self, message: EmailMessage) -> str: ...


class Outbox:
    """A folder of .eml files instead of sending (the default backend): each one opens in any mail client.

    >>> outbox = Outbox("outbox")
    >>> outbox.ledger.path.name, outbox.receipt_name
    ('sent.jsonl', 'saved_as')
    """

    receipt_name = "saved_as"

    def __init__(self, folder: str | os.PathLike[str] = "outbox") -> None:
        self.folder = Path(folder).absolute()
        self.label = f"the outbox folder {self.folder.name!r}"
        self.ledger = Ledger(self.folder / "sent.jsonl", label=self.label)

    def __repr__(self) -> str:
        return f"Outbox({_shown(self.folder)!r})"

    def send(self, message: EmailMessage) -> str:
        """Save the message as `{YYYYmmdd-HHMMSS}-{8 hex}.eml`, whole or not at all (a temporary file, then a
        rename); the saved file's path, relative to the working directory."""
        name = f"{dt.datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(4)}.eml"
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".sending-", suffix=".tmp")  # mode 0600
        except (FileExistsError, NotADirectoryError):
            raise NotSent(f"{self.label} cannot be used: a file stands where the folder should be. Nothing was "
                          "sent; tell the user.") from None
        except OSError as error:
            raise NotSent(f"the e-mail could not be saved in {self.label} ({error.strerror or 'not writable'}): "
                          "nothing was sent; tell the user.") from None
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(message.as_bytes(policy=WIRE))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temp, self.folder / name)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise NotSent(f"the e-mail could not be saved in {self.label} ({error.strerror or 'write failed'}): "
                          "nothing was sent; tell the user.") from None
        return _shown(self.folder / name)

    def messages(self) -> list[EmailMessage]:
        """The saved e-mails, parsed, oldest first."""
        if not self.folder.is_dir():
            return []
        files = sorted(self.folder.glob("*.eml"), key=lambda p: (p.name[:15], p.stat().st_mtime_ns, p.name))
        parser = BytesParser(EmailMessage, policy=policy.default)
        return [parser.parsebytes(p.read_bytes()) for p in files]


def _shown(path: Path) -> str:
    """A path as a model may see it: relative to the working directory, else just the folder's and file's name."""
    with contextlib.suppress(OSError, ValueError):
        return str(path.relative_to(Path.cwd()))
    return str(Path(path.parent.name, path.name))


class SMTPSender:
    """Send through an SMTP server: plain, or upgraded with STARTTLS. A login's password is read from the
    environment variable `password_env` at each send, so no parameter, repr, log or model ever holds it.

    >>> SMTPSender("127.0.0.1", 8025, ledger=None)
    SMTPSender('127.0.0.1', 8025)
    """

    receipt_name = "server_reply"

    def __init__(self, host: str, port: int = 25, *, username: str | None = None, password_env: str | None = None,
                 starttls: bool = False, timeout: float = 10.0,
                 ledger: str | os.PathLike[str] | None = None) -> None:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            raise ValueError(f"port must be a number from 1 to 65535, not {port!r}")
        if not isinstance(timeout, (int, float)) or not 0 < timeout <= MAX_SMTP_TIMEOUT:
            raise ValueError(f"timeout must be seconds, more than 0 and at most {MAX_SMTP_TIMEOUT:g}, not {timeout!r}")
        if (username is None) != (password_env is None):
            raise ValueError("give both username and password_env (the NAME of the environment variable holding "
                             "the password), or neither")
        if username is not None and not starttls and not _loopback(host):
            raise ValueError("logging in without starttls=True would send the password unencrypted; "
                             "pass starttls=True (or use a server on this machine)")
        self.host, self.port, self.timeout = host, port, float(timeout)
        self.username, self.password_env, self.starttls = username, password_env, starttls
        self.ledger = Ledger(ledger, label=f"the ledger {Path(ledger).name!r}") if ledger is not None else Ledger()

    def __repr__(self) -> str:
        return f"SMTPSender({self.host!r}, {self.port})"

    def send(self, message: EmailMessage) -> str:
        """Hand the message to the server within `timeout` seconds in all; the server's reply (redacted)."""
        password = None
        if self.password_env is not None:
            password = os.environ.get(self.password_env)
            if not password:
                log.warning("SMTPSender: the environment variable %s is not set", self.password_env)
                raise NotSent("sending e-mail is not configured (the mail server's password is missing): nothing "
                              "was sent; tell the user.")
        sender = getaddresses([str(message["From"])])[0][1]
        recipients = [a for _, a in getaddresses([str(v) for v in message.get_all("To", [])])]
        deadline = time.monotonic() + self.timeout
        smtp = smtplib.SMTP(timeout=self.timeout)  # not connected yet
        watchdog = threading.Timer(self.timeout, _cut, (smtp,))  # one deadline for it all, not one per reply
        watchdog.daemon = True
        watchdog.start()
        step = "connect"
        try:
            code, reply = smtp.connect(self.host, self.port)
            if code != 220:  # the greeting says "go away" (smtplib.SMTP(host) would raise this itself)
                raise smtplib.SMTPConnectError(code, reply)
            smtp.ehlo_or_helo_if_needed()
            if self.starttls:
                smtp.starttls(context=ssl.create_default_context())
                smtp.ehlo()
            if self.username is not None and password is not None:
                step = "login"
                smtp.login(self.username, password)
            step = "envelope"
            code, reply = smtp.mail(sender)
            if code != 250:
                raise smtplib.SMTPSenderRefused(code, reply, sender)
            for recipient in recipients:
                code, reply = smtp.rcpt(recipient)
                if code not in (250, 251):
                    raise smtplib.SMTPRecipientsRefused({recipient: (code, reply)})
            step = "data"
            code, reply = smtp.data(message.as_bytes(policy=WIRE))
            if code != 250:
                raise smtplib.SMTPDataError(code, reply)
            step = "done"
        except (OSError, smtplib.SMTPException) as error:
            log.warning("SMTPSender: sending to %s:%s failed at %s", self.host, self.port, step, exc_info=True)
            raise _smtp_failure(error, step, late=time.monotonic() >= deadline, timeout=self.timeout) from None
        finally:
            watchdog.cancel()
            with contextlib.suppress(Exception):
                if step == "done":
                    smtp.quit()  # polite, within the socket timeout; the e-mail is already accepted
            smtp.close()
        return _reply(code, reply)


def _smtp_failure(error: BaseException, step: str, *, late: bool, timeout: float) -> MailError:
    """What an SMTP failure means for the model: NotSent, unless it broke while the message was handed over."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        recipient, (code, reply) = next(iter(error.recipients.items()))
        return NotSent(f"the mail server refused the recipient {recipient} ({_reply(code, reply)}): nothing was "
                       "sent. Check the address with the user.")
    if isinstance(error, smtplib.SMTPAuthenticationError):
        return NotSent("the mail server refused the login: nothing was sent; tell the user (a setup problem).")
    if isinstance(error, smtplib.SMTPSenderRefused):
        return NotSent(f"the mail server refused the sender address ({_reply(error.smtp_code, error.smtp_error)}): "
                       "nothing was sent; tell the user (a setup problem).")
    if isinstance(error, smtplib.SMTPNotSupportedError):
        return NotSent("the mail server does not offer STARTTLS or login, which this sender needs: nothing was "
                       "sent; tell the user (a setup problem).")
    if isinstance(error, smtplib.SMTPConnectError):
        return NotSent(f"the mail server would not take the connection ({_reply(error.smtp_code, error.smtp_error)}): "
                       "nothing was sent. Try again later, or tell the user.")
    if isinstance(error, smtplib.SMTPResponseException):  # the server said no, in so many words
        return NotSent(f"the mail server refused the e-mail ({_reply(error.smtp_code, error.smtp_error)}): "
                       "nothing was sent. Tell the user.")
    if late or isinstance(error, (TimeoutError, socket.timeout)):
        why = f"no answer within {timeout:g} s"
    elif isinstance(error, ConnectionRefusedError):
        why = "connection refused"
    elif isinstance(error, socket.gaierror):
        why = "its name could not be resolved"
    elif isinstance(error, ssl.SSLError):
        why = "the encrypted connection could not be set up"
    elif isinstance(error, smtplib.SMTPServerDisconnected):
        why = "it closed the connection"
    else:
        why = type(error).__name__
    if step == "data":
        return MailError(f"the connection to the mail server broke while the e-mail was being handed over ({why}), "
                         "so it may have been sent. It will not be sent again automatically: ask the user to "
                         "check whether it arrived.")
    return NotSent(f"could not reach the mail server ({why}): nothing was sent. Try again later, or tell the user.")


def _reply(code: int, reply: bytes | str) -> str:
    """An SMTP reply on one short line, secrets and this machine's paths taken out.

    >>> _reply(550, b"5.1.1 <li@example.com>: Recipient address rejected:\\n User unknown")
    '550 5.1.1 <li@example.com>: Recipient address rejected: User unknown'
    """
    text = reply.decode("utf-8", "replace") if isinstance(reply, bytes) else str(reply)
    return redact(" ".join(f"{code} {text}".split()))[:200]


def _cut(smtp: smtplib.SMTP) -> None:
    """At the deadline: shut the socket, so whatever waits on a slow server returns at once."""
    sock = getattr(smtp, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _loopback(host: str) -> bool:
    """Whether `host` is this machine: localhost, 127.0.0.0/8 or ::1."""
    try:
        return host.lower() == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
