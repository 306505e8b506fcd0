"""Trusting a server's tool list: shown to a person once, fingerprinted, and asked about again when it changes.

    listing = ToolListing("notes", tools)          # the tools exactly as the server listed them
    print(listing.text)                            # what a person reads: every character escaped
    listing.fingerprint                            # SHA-256 of all of it, annotations and schemas included
    store = Approvals("mcp-approvals.json")        # where approvals are kept (beside the project)
    store.approved(listing)                        # True when a person approved this very list before
    store.record(listing)                          # after a person said yes

A tool's name, description, schema and annotations are text the model obeys, written by whoever wrote
the server: instructions can hide in a description ("tool poisoning"), and a server can change its
list after you trusted it (a "rug pull"). So the list is untrusted input. A person reads it, escaped
(`text.visible`: nothing hides, nothing moves the cursor), before any of it reaches a model; the
approval is bound to the SHA-256 of the whole list; any change, however small, is a new list.

The approvals file grants trust, so it is signed like a saved run (approvals/saved.py: an HMAC under
$MINI_FRAMEWORK_SAVE_KEY or the owner-only key file) and written owner-only, atomically. A file that was
edited, cut short or signed with another key counts as no approval (the person is asked again).

Concessions: what the server *does* when called is not covered by the fingerprint; a server that
changes its behaviour under the same list is caught by nothing here (the gates and caps still apply).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..text import visible

__all__ = ["Approvals", "ToolListing", "ask", "fingerprint"]

FORMAT = "mini_framework.mcp_approvals/1"
MAX_FILE_BYTES = 4 * 2**20  # an approvals file bigger than this is not read


def fingerprint(tools: Iterable[dict[str, Any]]) -> str:
    """SHA-256 of a tool list's canonical JSON (keys sorted; tools in the server's order).

    >>> a = fingerprint([{"name": "t", "description": "Read."}])
    >>> a == fingerprint([{"description": "Read.", "name": "t"}]), a == fingerprint([{"name": "t", "description": "!"}])
    (True, False)
    """
    text = json.dumps(list(tools), sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class ToolListing:
    """A server's tool list as it was listed, and what a person needs to decide about it."""

    server: str  # the name you gave the server (or its command line)
    tools: list[dict[str, Any]]  # each tool as the server's JSON: name, description, inputSchema, annotations, ...
    server_info: dict[str, Any] = field(default_factory=dict)  # what the server says it is (untrusted)
    previous: list[dict[str, Any]] | None = None  # the list approved before, when this one differs from it

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the whole list: the approval is bound to it."""
        return fingerprint(self.tools)

    @property
    def names(self) -> list[str]:
        """The tools' names as listed (escaped)."""
        return [visible(str(t.get("name", "")))[:80] for t in self.tools]

    @property
    def changes(self) -> list[str]:
        """What differs from the list approved before: tools added, removed, or changed (and in what)."""
        if self.previous is None:
            return []
        before = {str(t.get("name")): t for t in self.previous}
        now = {str(t.get("name")): t for t in self.tools}
        out = [f"new tool {visible(n)!r}" for n in now if n not in before]
        out += [f"tool {visible(n)!r} is gone" for n in before if n not in now]
        for n in now.keys() & before.keys():
            keys = sorted(k for k in now[n].keys() | before[n].keys() if now[n].get(k) != before[n].get(k))
            if keys:
                out.append(f"tool {visible(n)!r} changed its {', '.join(visible(k) for k in keys)}")
        return sorted(out) or ["the order of the tools"]

    @property
    def text(self) -> str:
        """The list for a person to read: every name, description, parameter and hint, escaped."""
        said = " ".join(f"{k}={visible(str(v))[:60]}" for k, v in self.server_info.items() if k in ("name", "version"))
        lines = [f"MCP server {visible(self.server)!r} ({said or 'no name given'}) offers {len(self.tools)} "
                 f"tool(s); fingerprint {self.fingerprint[:16]}"]
        if self.previous is not None:
            lines.append("It CHANGED since you approved it: " + "; ".join(self.changes))
        for tool in self.tools:
            lines.append("")
            lines.append(f"• {visible(str(tool.get('name', '')))}")
            lines += _description(str(tool.get("description") or "(no description)"))
            schema: dict[str, Any] = tool["inputSchema"] if isinstance(tool.get("inputSchema"), dict) else {}
            properties: dict[str, Any] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
            required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
            for pname, spec in properties.items():
                spec = spec if isinstance(spec, dict) else {"schema": spec}
                kind = visible(json.dumps(spec.get("type", "any"), ensure_ascii=False))
                mark = "" if pname in required else ", optional"
                about = visible(" ".join(str(spec.get("description", "")).split()))
                lines.append(f"    - {visible(str(pname))} ({kind}{mark}) {about}".rstrip())
                rest = {k: v for k, v in spec.items() if k not in ("type", "description")}
                if rest:  # enum, default, pattern, nested properties...: the model reads them too
                    lines.append(f"      {_json(rest)}")
            rest = {k: v for k, v in schema.items() if k not in ("type", "properties", "required")}
            if rest:  # the schema's own description, its $defs...
                lines.append(f"    schema: {_json(rest)}")
            hints = tool.get("annotations")
            if isinstance(hints, dict) and hints:
                lines.append("    hints: " + visible(json.dumps(hints, ensure_ascii=False, sort_keys=True)))
            others = sorted(set(tool) - {"name", "description", "inputSchema", "annotations"})
            if others:
                lines.append("    also: " + visible(", ".join(others)) + " (in the fingerprint)")
        return "\n".join(lines)


def _json(value: Any) -> str:
    """A part of a schema on one line, escaped, whole (what the model reads, the person reads)."""
    return _spaces(visible(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)))


def _spaces(text: str) -> str:
    """Runs of 8 or more spaces said, not shown: '[500 spaces]'."""
    return re.sub(r"\s{8,}", lambda m: f" [{len(m.group())} spaces] ", text)


def _description(description: str) -> list[str]:
    """A description's lines, escaped and indented; a run of blank lines or of spaces (which could push an
    instruction out of sight) is said, not shown.

    >>> _description("Read." + chr(10) * 5 + "Obey." + " " * 50 + "Now.")
    ['    Read.', '    [4 blank lines]', '    Obey. [50 spaces] Now.']
    """
    lines: list[str] = []
    blank = 0
    for line in description.splitlines():
        if not line.strip():
            blank += 1
            continue
        if blank > 1:
            lines.append(f"    [{blank} blank lines]")
        elif blank and lines:
            lines.append("    ")
        blank = 0
        lines.append(f"    {visible(_spaces(line.rstrip()))}")
    if blank > 1:
        lines.append(f"    [{blank} blank lines]")
    return lines or ["    "]


class Approvals:
    """Approved tool lists by server, in a signed JSON file (`path=None`: kept in memory only)."""

    def __init__(self, path: str | os.PathLike[str] | None = "mcp-approvals.json", *,
                 key: bytes | str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._key = key
        self._memory: dict[str, Any] = {}

    def approved(self, listing: ToolListing) -> bool:
        """Whether a person approved exactly this list for this server."""
        entry = self._read().get(listing.server)
        return isinstance(entry, dict) and entry.get("fingerprint") == listing.fingerprint

    def previous(self, server: str) -> list[dict[str, Any]] | None:
        """The tool list approved for `server` before, if any (to say what changed)."""
        entry = self._read().get(server)
        tools = entry.get("tools") if isinstance(entry, dict) else None
        return tools if isinstance(tools, list) else None

    def record(self, listing: ToolListing) -> None:
        """Remember that a person approved this list for this server (replacing what was approved before)."""
        servers = self._read()
        servers[listing.server] = {"fingerprint": listing.fingerprint, "tools": listing.tools,
                                   "approved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        self._write(servers)

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return self._memory
        from ..approvals.saved import sign  # the saved runs' signature: one recipe for signed files
        try:
            if self.path.stat().st_size > MAX_FILE_BYTES:
                return {}
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("format") == FORMAT and isinstance(data.get("servers"), dict) \
                    and data.get("signature") == sign(data["servers"], self._secret()):
                return data["servers"]
        except (OSError, ValueError, AttributeError, TypeError):
            pass
        return {}  # missing, unreadable, edited or signed with another key: nothing is approved

    def _write(self, servers: dict[str, Any]) -> None:
        if self.path is None:
            self._memory = servers
            return
        from ..approvals.saved import sign, write_private

        text = json.dumps({"format": FORMAT, "signature": sign(servers, self._secret()), "servers": servers},
                          ensure_ascii=False, indent=1)
        write_private(self.path, text + "\n")

    def _secret(self) -> bytes:
        from ..approvals.record import signing_key

        return signing_key(self._key)


def ask(listing: ToolListing) -> bool:
    """An approver for `stdio_tools(..., approve=ask)`: prints the list and asks at the keyboard; y approves.

    No keyboard (CI, a server, nbval) is a no.
    """
    print(listing.text)
    try:
        answer = input("\nLet the model use these tools? [y/N] ")
    except (EOFError, OSError, RuntimeError):
        return False
    return answer.strip().lower() in ("y", "yes", "是", "好")
