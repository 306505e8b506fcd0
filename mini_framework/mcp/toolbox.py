"""`stdio_tools`: an MCP server started over stdio, its tools offered to an Agent like any others.

    with stdio_tools(sys.executable, "-m", "mcp_server_time", "--local-timezone", "Asia/Shanghai",
                     approve=True) as time_tools:             # `async with` works too, and so does Jupyter
        agent = Agent(client, model, tools=[*time_tools, get_weather])
        print(agent.run("北京时间下午4点半是东京几点？").answer)

Each server tool becomes a `Tool.from_schema` tool, so it gets what a @tool function gets: argument repair
and validation against the server's schema, the retry budget, the timeout, the error envelope, the approval
gate, images with a media_id, and spill for long results. What is MCP's own:

- Trust. The list is approved before any of it reaches a model (trust.py): `approve=` a function that is
  shown the list (`ask` asks at the keyboard) or True (scripts, tests); else an approval stored in
  `approvals` for the same fingerprint; else NotApproved, saying how. A person's yes is stored.
- A changed list. Before and after each call the list is read again (a round trip each); if it differs
  from the approved one in anything, every tool of the server refuses calls from then on, saying why
  (the answer of the call it changed during, or after, is withheld too), whether or not the server
  announced it (`notifications/tools/list_changed`); the next start asks again.
- Gates. `requires_approval` is yours: True/False for every tool of the server, or {tool: True/False/
  predicate}. Where you said nothing, a tool whose annotations say `destructiveHint: true` is gated. The
  server's hints only add gates: `readOnlyHint` removes none, and nothing it says is believed otherwise.
- Names. `prefix` goes before every name the model sees (`time_convert_time`); a name that breaks the
  API's rule, a name listed twice, or a name the Agent already has (its error says to pass a prefix) is
  refused. `only=[...]` keeps some tools (the others are never shown to the model).
- The process. It gets a minimal environment (`env` adds to it; the parent's API keys never), stops when
  the `with` block ends, however it ends, and a server that dies mid-call is a tool error, not a hang.
"""
from __future__ import annotations

import inspect
import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..concurrency import in_thread
from ..executor import ToolError
from ..schema import ToolDefinitionError
from ..text import visible
from ..tools import NAME_PATTERN, Tool, declared
from .errors import MCPServerError, NotApproved
from .results import tool_value
from .session import Session
from .trust import Approvals, ToolListing, fingerprint

__all__ = ["MCPTool", "MCPTools", "StdioTools", "stdio_tools"]

MAX_TOOLS = 128  # tools one request may carry (OpenAI's limit); use `only=` for a bigger server
MAX_DESCRIPTION = 16_000  # characters; a description is sent with every request (real ones stay under 2,000)
Approve = Callable[[ToolListing], Any]


class MCPTool(Tool):
    """A tool an MCP server offers: a `Tool.from_schema` tool that knows its server (repr names it)."""

    server: str = ""  # the server's name
    remote_name: str = ""  # the tool's name on the server (without the prefix)

    def __repr__(self) -> str:
        return f"<tool {self.name!r} of MCP server {self.server!r}: stdio_tools(..., prefix=...) renames them>"


class MCPTools(list):  # list[MCPTool]: `Agent(tools=[*time_tools, ...])`
    """The tools of one running server, with its listing; `changed` says why calls are refused, if they are."""

    def __init__(self, tools: Iterable[MCPTool], listing: ToolListing) -> None:
        super().__init__(tools)
        self.listing = listing
        self.name = listing.server
        self.changed: str | None = None  # set when the server's list changed after it was approved


class StdioTools:
    """The context manager `stdio_tools` returns: `with` or `async with` it (or `open()` and `close()`)."""

    def __init__(self, argv: list[str], *, name: str | None, env: Mapping[str, str] | None,
                 cwd: str | os.PathLike[str] | None, prefix: str, only: Iterable[str] | None,
                 approve: bool | Approve | None, approvals: Approvals, requires_approval: Any,
                 timeout: float | None, startup_timeout: float, max_result_chars: int) -> None:
        if not argv or not all(isinstance(a, str) for a in argv):
            raise TypeError(f"stdio_tools needs a command and string arguments, not {argv!r:.80}")
        if approve is not None and approve is not True and not callable(approve):
            raise TypeError("approve= takes True (trust the list as listed) or a function shown the list")
        self.name = name or shlex.join([os.path.basename(argv[0]), *argv[1:]])[:200]
        self.prefix, self.approve, self.approvals = prefix, approve, approvals
        self.only = None if only is None else list(only)
        self.requires_approval, self.timeout, self.max_result_chars = requires_approval, timeout, max_result_chars
        self.session = Session(argv, name=self.name, env=env, cwd=cwd, startup_timeout=startup_timeout)
        self.tools: MCPTools | None = None

    # ------------------------------------------------------------------ opening and closing

    def open(self) -> MCPTools:
        """Start the server, have its list approved, and return its tools (blocking)."""
        if self.session.started:  # a second server would replace the first, which nothing would then stop
            raise RuntimeError(f"MCP server {self.name!r} is already {'running' if self.tools else 'used'}: "
                               "each stdio_tools(...) starts its server once; call stdio_tools(...) again "
                               "for another")
        try:
            listed = self.session.open()
            listing = ToolListing(self.name, listed, self.session.server_info)
            self._trust(listing)
            self.tools = MCPTools(self._make(listing), listing)
            return self.tools
        except BaseException:
            self.session.close()
            raise

    def close(self) -> None:
        """Stop the server; its tools refuse calls from then on."""
        self.session.close()

    def __enter__(self) -> MCPTools:
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> MCPTools:
        return await in_thread(self.open)

    async def __aexit__(self, *exc: Any) -> None:
        await in_thread(self.close)

    # ------------------------------------------------------------------ trust

    def _trust(self, listing: ToolListing) -> None:
        """Approve the list (a person, True, or a stored approval of this fingerprint), or raise NotApproved."""
        if self.approve is True or self.approvals.approved(listing):
            return
        listing.previous = self.approvals.previous(self.name)
        if self.approve is None:
            what = ("has a tool list that CHANGED since it was approved (" + "; ".join(listing.changes) + ")"
                    if listing.previous is not None else "offers tools no one has approved yet")
            raise NotApproved(self.name, f"{what}: {', '.join(listing.names)[:300]}. Read the list and "
                              "decide: pass approve=ask to be shown it and asked (a yes is kept in "
                              f"{self.approvals.path or 'memory'}), or approve=True to trust it as listed")
        answer = self.approve(listing)
        if inspect.isawaitable(answer):
            raise TypeError("approve= must answer at once (True or False), not return an awaitable")
        if answer is not True:
            raise NotApproved(self.name, "was not approved: its tools were not offered to the model")
        self.approvals.record(listing)

    async def _check_list(self) -> None:
        """Before and after each call: the server's list now, compared with the approved one (a changed list
        stops every tool of the server; each check is one tools/list round trip, well under a millisecond)."""
        if self.tools is None or self.tools.changed:
            return
        now = await self.session.relist()
        if fingerprint(now) != self.tools.listing.fingerprint:
            changed = ToolListing(self.name, now, previous=self.tools.listing.tools)
            self.tools.changed = "; ".join(changed.changes)

    def _refuse_if_changed(self, more: str = "") -> None:
        if self.tools is not None and self.tools.changed:
            raise ToolError(f"This tool is not available: its server changed its tool list after a person "
                            f"approved it ({self.tools.changed[:300]}){more}. Tell the user a person must review "
                            "the server again.")

    # ------------------------------------------------------------------ tools

    def _make(self, listing: ToolListing) -> list[MCPTool]:
        """Each listed tool (or each of `only`) as a framework tool, with its gate and options."""
        by_name: dict[str, dict[str, Any]] = {}
        for item in listing.tools:
            remote = item.get("name")
            if not isinstance(remote, str):
                raise MCPServerError(self.name, f"lists a tool without a name: {visible(str(item)[:80])}")
            if remote in by_name:
                raise MCPServerError(self.name, f"lists two tools named {remote!r}")
            by_name[remote] = item
        self._known("only", self.only or [], by_name)
        if isinstance(self.requires_approval, Mapping):
            self._known("requires_approval", self.requires_approval, by_name)
        chosen = [by_name[n] for n in self.only] if self.only is not None else list(by_name.values())
        if len(chosen) > MAX_TOOLS:
            raise MCPServerError(self.name, f"offers {len(chosen):,} tools, more than the {MAX_TOOLS} a request "
                                 "may carry: pass only=[...] with the ones you need")
        return [self._tool(item) for item in chosen]

    def _known(self, option: str, names: Iterable[str], by_name: Mapping[str, Any]) -> None:
        missing = [n for n in names if n not in by_name]
        if missing:
            offered = ", ".join(visible(n)[:80] for n in sorted(by_name))
            raise MCPServerError(self.name, f"has no tool {missing[0]!r} (named in {option}=); "
                                 f"it offers: {offered[:300]}")

    def _tool(self, item: dict[str, Any]) -> MCPTool:
        remote = item["name"]
        name = self.prefix + remote
        if not NAME_PATTERN.fullmatch(name):
            raise MCPServerError(self.name, f"offers a tool named {name[:80]!r}, which the API refuses (letters, "
                                 "digits, _ and -, at most 64): leave it out with only=[...]")
        description = item.get("description") or ""
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
            raise MCPServerError(self.name, f"gives tool {remote!r} a description that is not text or longer "
                                 f"than {MAX_DESCRIPTION:,} characters (sent with every request): leave it out "
                                 "with only=[...]")
        schema = item.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise MCPServerError(self.name, f"gives tool {remote!r} an inputSchema that is not a JSON object "
                                 "schema: leave it out with only=[...]")
        options: dict[str, Any] = {"side_effects": True, "timeout": self.timeout}
        if declared("too_long_to_file") is not None:  # the budget feature is in this copy: spill long results
            options["too_long_to_file"] = True
        if self._gated(remote, item.get("annotations")):
            options["requires_approval"] = self._gate(remote)
        try:
            made = MCPTool.from_schema(name, description, schema, self._handler(remote), **options)
            assert isinstance(made, MCPTool)
        except ToolDefinitionError as exc:
            raise MCPServerError(self.name, f"gives tool {remote!r} a schema this framework cannot check: {exc}. "
                                 "Leave it out with only=[...]") from None
        made.server, made.remote_name = self.name, remote
        return made

    def _gated(self, remote: str, annotations: Any) -> bool:
        """Your configuration decides; where it is silent, a server's `destructiveHint: true` adds a gate."""
        config = self.requires_approval
        if isinstance(config, Mapping) and remote in config:
            return config[remote] is not False
        if isinstance(config, bool):
            return config
        return isinstance(annotations, dict) and annotations.get("destructiveHint") is True

    def _gate(self, remote: str) -> bool | Callable[[Any], bool]:
        config = self.requires_approval
        chosen = config.get(remote) if isinstance(config, Mapping) else None
        return chosen if callable(chosen) else True

    def _handler(self, remote: str) -> Callable[..., Any]:
        async def call(**arguments: Any) -> Any:
            try:  # the reason only: the server's stderr (tracebacks, paths) is for you, not the model
                await self._check_list()
                self._refuse_if_changed()
                result = await self.session.call(remote, arguments)
                await self._check_list()  # and after: an answer made under a list no one approved is not passed on
            except MCPServerError as exc:
                raise ToolError(f"The tool's server failed: {exc.reason}. Tell the user it did not work.") from None
            self._refuse_if_changed("; this call's answer is withheld")
            return tool_value(result.model_dump(mode="json", by_alias=True, exclude_none=True),
                              self.max_result_chars)

        call.__name__ = remote if remote.isidentifier() else "mcp_tool"
        return call


def stdio_tools(command: str, *args: str, env: Mapping[str, str] | None = None,
                cwd: str | os.PathLike[str] | None = None, name: str | None = None, prefix: str = "",
                only: Iterable[str] | None = None, approve: bool | Approve | None = None,
                approvals: str | os.PathLike[str] | Approvals | None = "mcp-approvals.json",
                requires_approval: bool | Mapping[str, bool | Callable[[Any], bool]] | None = None,
                timeout: float | None = None, startup_timeout: float = 10.0,
                max_result_chars: int = 1_000_000) -> StdioTools:
    """Start an MCP server (`command *args`) over stdio; `with` it to get its tools (see the module docstring).

    `approvals` is the file approvals are kept in (None: in memory, for this process only); `timeout` is
    each call's (None: the executor's); `startup_timeout` bounds the start and the handshake.

    >>> stdio_tools("python3", "-m", "some_server", name="notes").name
    'notes'
    """
    store = approvals if isinstance(approvals, Approvals) else Approvals(approvals)
    return StdioTools([command, *args], name=name, env=env, cwd=cwd, prefix=prefix, only=only, approve=approve,
                      approvals=store, requires_approval=requires_approval, timeout=timeout,
                      startup_timeout=startup_timeout, max_result_chars=max_result_chars)
