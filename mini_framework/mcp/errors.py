"""What goes wrong with an MCP server, as exceptions that name the server and say what to do.

    MCPServerError   the server could not be started, broke the protocol, sent what cannot be a tool, or ended
    NotApproved      its tool list has not been approved by a person (or changed since): how to approve it
"""
from __future__ import annotations

from ..text import visible

__all__ = ["MCPServerError", "NotApproved"]


class MCPServerError(RuntimeError):
    """An MCP server failed; `server` names it, `reason` says how, `stderr` holds its last words (if any).

    >>> print(MCPServerError("time", "did not answer within 10 s"))
    MCP server 'time' did not answer within 10 s
    """

    def __init__(self, server: str, reason: str, stderr: str = "") -> None:
        self.server, self.reason, self.stderr = server, reason, stderr
        shown = "\n".join(visible(line) for line in stderr.splitlines())  # what it wrote is shown as it is
        tail = f"\nIts last lines on stderr:\n{shown}" if stderr.strip() else ""
        super().__init__(f"MCP server {server!r} {visible(reason)}{tail}")  # a reason may quote the server


class NotApproved(MCPServerError):
    """The server's tool list is not approved as it is now; the message says how to approve it."""
