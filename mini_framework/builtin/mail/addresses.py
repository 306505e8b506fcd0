"""Recipient addresses: one bare address checked strictly (`check_address`), the allow-list of exact
addresses and "*@domain" patterns it is held against, and `is_internal` for approval predicates.

Strictly means: one unquoted dot-atom local part of at most 64 characters, an ASCII domain name of two or
more labels (an internationalised one in its xn-- form) with no trailing dot, compared in lower case. Refused,
because some mail servers deliver them somewhere else than the domain after the last @ says: quoted local
parts ("a@b"@corp.example), source routes (@relay:boss@corp.example), and local parts containing a character
of ROUTING: % (boss%attacker.example@corp.example, the percent hack), ! (attacker.example!boss@..., a UUCP
bang path), / and | (a file or a program, for servers that deliver such local parts there; Exim refuses all
four by default). "+" (a tag within the same mailbox) is kept. A domain matches only itself: neither a
subdomain (x.corp.example) nor a longer name (evilcorp.example) matches corp.example.

    >>> check_address("Li.Wei@Example.COM")
    'Li.Wei@example.com'
    >>> is_internal("boss%attacker.example@corp.example", ["corp.example"])
    False
"""
from __future__ import annotations

import re
import unicodedata
from email.errors import HeaderParseError
from email.headerregistry import Address
from typing import Sequence

__all__ = ["ROUTING", "check_address", "is_internal"]

_ATOMS = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")  # an unquoted local part
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")  # one part of a domain name
ROUTING = "%!/|"  # characters of a local part that some mail servers route, or deliver, elsewhere: refused


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
    if value.startswith("@") and ":" in value:
        raise ValueError("a source route (@relay:user@domain) names other mail servers to pass the e-mail "
                         "through: refused. Send the recipient's own address, like li@example.com")
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
    if not all(_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
        raise ValueError(f"{domain!r} is not a domain name: send an address like li@example.com")
    local = parsed.username
    if len(local) > 64:
        raise ValueError(f"the local part {local!r} (before the @) is {len(local)} characters, over the limit of "
                         "64: check the address")
    if routed := next((char for char in local if char in ROUTING), None):
        raise ValueError(f"the local part {local!r} (before the @) contains {routed!r}, which some mail servers "
                         "read as a route to another mail server or a file (user%host, host!user): refused. Send "
                         "the recipient's own address, like li@example.com")
    return f"{local}@{domain.lower()}"


def is_internal(address: str, domains: str | Sequence[str]) -> bool:
    """Whether `address` is one strict address (as check_address takes it) in one of `domains`, exactly;
    False for anything else, so an approval predicate `not is_internal(...)` asks a person about it.

    `domains`: one domain name or a list of them, in any case (subdomains are not included: list them too).
    A domain that is not a domain name ("@corp.example", "*@corp.example") is a ValueError.

    >>> internal = ["corp.example"]
    >>> [is_internal(to, internal) for to in ("Boss@Corp.Example", "boss%attacker.example@corp.example",
    ...                                       "boss@evilcorp.example", "boss@x.corp.example")]
    [True, False, False, False]
    """
    wanted = _domains(domains)
    if not isinstance(address, str):
        return False
    try:
        checked = check_address(address)
    except ValueError:
        return False
    return checked.rpartition("@")[2] in wanted


def _domains(domains: str | Sequence[str]) -> set[str]:
    """Domain names checked (as check_address checks an address's) and in lower case; else ValueError."""
    items = [domains] if isinstance(domains, str) else list(domains)
    found = set()
    for item in items:
        try:
            if not isinstance(item, str) or "@" in item:
                raise ValueError
            found.add(check_address("x@" + item).rpartition("@")[2])
        except ValueError:
            raise ValueError(f"{item!r} is not a domain name: give domains like 'corp.example' (no @)") from None
    if not found:
        raise ValueError("no domains given: give at least one, like 'corp.example'")
    return found


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
