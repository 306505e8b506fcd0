"""A builtin `send_email` tool: one plain-text e-mail to one recipient, checked, gated, and sent once.

    send_email = make_send_email()                    # .eml files in ./outbox; a person approves each
    send_email = make_send_email(SMTPSender("127.0.0.1", 8025), allowed_recipients=["*@example.com"],
                                 max_per_run=3, sender="shop@example.com")

The model sees `send_email(to, subject, body)`. Between its call and a sent e-mail, in this order:

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

The ledger (JSON lines: `sent.jsonl` in the outbox folder; for SMTPSender a file you name, or memory)
records "sending" before the backend is called and "sent" after. An entry left at "sending" (the process
died mid-send, or the connection broke while the message was handed over) means *possibly sent*: it is
not sent again, and the model is told to ask the user to check. The window is forever, for that ledger:
`ledger.clear()` (or deleting the file) lets the same e-mail be sent again on purpose, and
`make_send_email(..., resend_after=seconds)` lets it go again once that much time has passed.

Concessions: plain text only; no attachments, Cc or Bcc; ASCII addresses only (write an internationalised
domain in its xn-- form), and the sender is a bare address. Per-run counts live in memory: a run resumed
in a new process counts from zero. Processes sharing a ledger file take turns through flock on POSIX; on
Windows only the threads of one process do. SMTP is plain or STARTTLS (no implicit TLS on port 465), and a
login needs STARTTLS unless the server is on this machine.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import ipaddress
import json
import logging
import os
import re
import secrets
import smtplib
import socket
import ssl
import sys
import tempfile
import threading
import time
import unicodedata
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from email import policy
from email.errors import HeaderParseError
from email.headerregistry import Address
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime, getaddresses, make_msgid
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Literal, Protocol, Sequence

from pydantic import AfterValidator, Field

from ...arguments import NotAllowed
from ...executor import ToolError
from ...redaction import redact
from ...tools import RUN_ID, Tool, tool

if sys.platform != "win32":
    import fcntl

__all__ = ["Backend", "Entry", "Ledger", "MailError", "NotSent", "Outbox", "SMTPSender", "check_address", "compose",
           "make_send_email", "message_key"]

log = logging.getLogger("mini_framework")

POLICY = policy.default.clone(cte_type="7bit")  # a non-ASCII body goes base64 or quoted-printable, never raw 8-bit
WIRE = policy.SMTP.clone(cte_type="7bit")  # the same, written with CRLF line ends: .eml files and SMTP
WAIT_FOR_TWIN = 60.0  # seconds a call waits for an identical call of this process that is still sending
MAX_RUNS_COUNTED = 10_000  # runs whose sends are counted; the oldest are forgotten past this
MAX_SMTP_TIMEOUT = 120.0
_ATOMS = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")  # an unquoted local part
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")  # one part of a domain name


class MailError(ToolError):
    """A failure the model reads as is: nothing was sent, or (it says so) it may have been."""


class NotSent(MailError):
    """A failure before the message left: nothing was sent, so trying again later is safe."""


# ----------------------------------------------------------------------------- checking the arguments

def check_address(value: str) -> str:
    """One bare e-mail address, its domain in lower case; else ValueError saying what to fix.

    >>> check_address("Li.Wei@Example.COM")
    'Li.Wei@example.com'
    >>> check_address("Li Wei <li@example.com>")
    Traceback (most recent call last):
    ...
    ValueError: give the bare address, like li@example.com, without a name or <>
    """
    if bad := _control(value):
        raise ValueError(f"the address contains a line break or control character ({bad}), which could add "
                         "hidden e-mail headers: refused, nothing was removed. Send one plain address")
    value = value.strip(" ")
    if not value:
        raise ValueError("no address given: send one address, like li@example.com")
    if "," in value or ";" in value:
        raise ValueError("one recipient per call: call the tool once for each address")
    if "<" in value or ">" in value:
        raise ValueError("give the bare address, like li@example.com, without a name or <>")
    if not value.isascii():
        raise ValueError("only plain ASCII addresses are supported (write a domain like 例子.中国 in its xn-- form)")
    if " " in value:
        raise ValueError("an address has no spaces: send one address, like li@example.com")
    try:
        parsed = Address(addr_spec=value)
    except (ValueError, HeaderParseError, IndexError):
        parsed = None
    if parsed is None or parsed.addr_spec != value or not _ATOMS.fullmatch(parsed.username) or len(value) > 254:
        raise ValueError("not an e-mail address: send one address, like li@example.com")
    domain = parsed.domain
    labels = domain.split(".")
    if len(labels) < 2:
        raise ValueError(f"the domain {domain!r} has no dot: send a full address, like li@example.com")
    if not all(_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit() or len(parsed.username) > 64:
        raise ValueError(f"{domain!r} is not a domain name: send an address like li@example.com")
    return f"{parsed.username}@{domain.lower()}"


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


def _control(text: str, allowed: str = "") -> str | None:
    """The first control or line/paragraph-separator character in `text` (not in `allowed`), as U+XXXX.

    >>> _control("ok"), _control("a\\u2028b")
    (None, 'U+2028')
    """
    for char in text:
        if char not in allowed and unicodedata.category(char) in ("Cc", "Zl", "Zp"):
            return f"U+{ord(char):04X}"
    return None


def _patterns(allowed: Sequence[str] | None) -> list[str] | None:
    """The allow-list checked and normalised: "*@domain" (domain in lower case) or exact addresses."""
    if allowed is None:
        return None
    if isinstance(allowed, str):
        raise TypeError(f"allowed_recipients takes a list, e.g. [{allowed!r}], not a single string")
    found = []
    for item in allowed:
        try:
            if item.startswith("*@"):
                found.append("*@" + check_address("x@" + item[2:]).rpartition("@")[2])
            else:
                found.append(check_address(item))
        except (ValueError, TypeError, AttributeError):
            raise ValueError(f"allowed_recipients: {item!r} is neither an address nor a pattern like "
                             "'*@example.com'") from None
    if not found:
        raise ValueError("allowed_recipients is empty, so no e-mail could be sent; pass None to allow anyone")
    return found


def _allows(patterns: list[str], address: str) -> bool:
    """Whether `address` (from check_address) is on the allow-list: its domain, or the exact address.

    >>> _allows(["*@example.com", "li@corp.cn"], "wang@example.com"), _allows(["li@corp.cn"], "Li@corp.cn")
    (True, False)
    """
    domain = address.rpartition("@")[2]
    return any(p == address or p == f"*@{domain}" for p in patterns)


def _listed(items: list[str], most: int = 5) -> str:
    """A few items in words: 'a, b and 3 more'."""
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


# ----------------------------------------------------------------------------- the message and its key

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


# ----------------------------------------------------------------------------- the ledger

@dataclass(frozen=True)
class Entry:
    """One line of the ledger: what happened to one message."""

    key: str  # message_key(...)
    state: Literal["sending", "sent", "failed"]  # "failed": nothing left, it may be tried again
    at: str  # when, ISO 8601 local time with its offset, to the second
    message_id: str  # the Message-ID header
    receipt: str = ""  # what the backend answered: where the .eml was saved, or the SMTP server's reply


@dataclass
class _Shared:
    """What every Ledger of one file in this process shares: a lock, and the keys being sent right now."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    in_flight: dict[str, threading.Event] = field(default_factory=dict)


_FILES: dict[str, _Shared] = {}
_FILES_LOCK = threading.Lock()


class Ledger:
    """Which messages were sent, by key: in memory, and appended to a JSON-lines file when given a path.

    Use `last` and `record` inside `with ledger.locked():`, which also reads what others appended.

    >>> ledger = Ledger()
    >>> with ledger.locked():
    ...     ledger.record(Entry("k1", "sent", "2026-01-05T09:30:00+08:00", "<1@example.com>"))
    ...     ledger.last("k1").state, ledger.last("k2")
    ('sent', None)
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, label: str = "the ledger of sent e-mails"):
        self.path = Path(path).absolute() if path is not None else None
        self.label = label  # how error messages name it (never by its absolute path)
        self.entries: dict[str, Entry] = {}  # key -> its latest entry
        self._read_to = 0  # bytes of the file read into `entries`
        self._file_id: tuple[int, int] | None = None  # (device, inode) read from: a new file is read afresh
        self._partial = False  # the file ends in half a line (a writer died): start ours on a new line
        self._fd: int | None = None  # the open file, while locked
        if self.path is None:
            self.shared = _Shared()
        else:
            with _FILES_LOCK:
                self.shared = _FILES.setdefault(str(self.path), _Shared())

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the ledger: threads of this process take turns, and, through flock, other processes."""
        with self.shared.lock:
            if self.path is None:
                yield
                return
            fd = self._open()
            try:
                if sys.platform != "win32":
                    fcntl.flock(fd, fcntl.LOCK_EX)
                self._refresh(fd)
                self._fd = fd
                yield
            finally:
                self._fd = None
                os.close(fd)  # releases the flock

    def last(self, key: str) -> Entry | None:
        """The latest entry for `key`, or None if it was never tried."""
        return self.entries.get(key)

    def record(self, entry: Entry) -> None:
        """Add an entry (inside `locked()`); on disk, and flushed there, before this returns. OSError if not."""
        self.entries[entry.key] = entry
        if self._fd is None:
            return
        line = ("\n" if self._partial else "") + json.dumps(asdict(entry), ensure_ascii=False) + "\n"
        data = line.encode("utf-8")
        if os.write(self._fd, data) != len(data):
            raise OSError("the disk is full")
        os.fsync(self._fd)
        self._partial = False
        self._read_to = os.fstat(self._fd).st_size

    def clear(self) -> None:
        """Forget every message, so that each may be sent again (on purpose: this is what stops duplicates)."""
        with self.locked():
            self.entries.clear()
            if self._fd is not None:
                os.ftruncate(self._fd, 0)
                self._read_to, self._partial = 0, False

    def _open(self) -> int:
        """The ledger file, opened for reading and appending (folder 0700 and file 0600 when created here)."""
        assert self.path is not None
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except (FileExistsError, NotADirectoryError):
            raise NotSent(f"{self.label} cannot be used: a file stands where its folder should be. Nothing was "
                          "sent; tell the user.") from None
        except PermissionError:
            raise NotSent(f"{self.label} is not writable: nothing was sent; tell the user.") from None
        except OSError as error:
            raise NotSent(f"{self.label} cannot be written ({error.strerror or type(error).__name__}): nothing "
                          "was sent; tell the user.") from None

    def _refresh(self, fd: int) -> None:
        """Read the lines appended since last time (all of them if the file is new or was emptied)."""
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != self._file_id or info.st_size < self._read_to:
            self._file_id, self._read_to, self._partial = (info.st_dev, info.st_ino), 0, False
            self.entries.clear()
        if info.st_size <= self._read_to:
            return
        os.lseek(fd, self._read_to, os.SEEK_SET)
        chunks, wanted = [], info.st_size - self._read_to
        while wanted > 0 and (chunk := os.read(fd, min(wanted, 1 << 20))):
            chunks.append(chunk)
            wanted -= len(chunk)
        data = b"".join(chunks)
        complete = data[: data.rfind(b"\n") + 1]
        for line in complete.splitlines():
            try:
                entry = Entry(**json.loads(line))
            except (ValueError, TypeError):
                log.warning("%s: skipped a line that is not a ledger entry", self.label)
                continue
            self.entries[entry.key] = entry
        self._read_to += len(complete)
        self._partial = len(complete) < len(data)


# ----------------------------------------------------------------------------- backends

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


# ----------------------------------------------------------------------------- the tool

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

    allowed_recipients: exact addresses or "*@domain" patterns (domains in any case); None allows anyone.
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
