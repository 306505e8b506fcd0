"""Checks for lesson 14b (what an MCP server's tools may do), and a helper its cells use.

    pending_line(item)                  # one waiting call, escaped, on one line
    SERVED                              # get_weather and a gated send_message, served as an MCP server
    check.gates(NOTES_GATES)            # exercise 1: the notes server's requires_approval=
    check.reader(READER)                # exercise 2: a reading assistant's stdio_tools options (cut a leg)

Exercise 1 asks for the `requires_approval=` a user gives the practice notes server (practice_model/
mcp_server.py), started with `--lying-hints`: its delete_note claims to be read-only. What must hold:
nothing is deleted or sent without a person (practice-eager deletes and e-mails at once, and a web
clipping's instruction makes practice-gullible send a message to an attacker), and reading and searching
never wait for one. The check starts one server with the learner's configuration and plays those five
requests against the practice model (also when `.env` names a real one: it tests the configuration), in a
thread with a time limit; each run's pending calls are left undecided, so nothing gated ever runs.

Exercise 2 asks for `READER`, the keyword arguments of `stdio_tools` for a reading assistant (it reads every
note, the untrusted web clipping too, and never sends or deletes): the leg of the lethal trifecta it can lose is
the way out. The check starts the server with the learner's options and an outbox, and plays four requests:
each must run without a person (a gate on send_message asks one about the attacker's message) and nothing may
leave.

Concessions: five requests (four for exercise 2), one server per check; a configuration that gates a tool by a
predicate is judged by what it did on these requests only.
"""
from __future__ import annotations

import json
from typing import Any

from mini_framework import ToolError, tool
from mini_framework.text import brief, visible

from .checking import CheckResult, Hints, run_check, solved
from .lesson14 import notes_server


def pending_line(item: Any) -> str:
    """A waiting call as a person should see it: its tool and arguments, escaped, on one line."""
    arguments = json.dumps(item.arguments if item.arguments is not None else item.call.arguments, ensure_ascii=False)
    return f"waiting for a person: {visible(item.call.name)}({brief(visible(arguments), 160)})"


# ----------------------------------------------------------------------------- the tools the lesson serves

WEATHER = {"北京": "晴，22°C，微风", "上海": "多云，25°C", "London": "light rain, 14 °C", "Tokyo": "clear, 19 °C"}


@tool
def get_weather(city: str) -> str:
    """Current weather in a city (practice data: the same every day). 查询城市天气。

    Args:
        city: the city, e.g. 北京 or London
    """
    if city not in WEATHER:
        raise ToolError(f"No weather for {city!r}; known cities: {', '.join(WEATHER)}")
    return f"{city}: {WEATHER[city]}"


@tool(requires_approval=True)
def send_message(to: str, text: str) -> str:
    """Send a message to an e-mail address (practice: nothing is sent anywhere).

    Args:
        to: the recipient's e-mail address
        text: the message
    """
    return f"message to {to} recorded (practice: nothing was sent)"


SERVED = [get_weather, send_message]
"""What lesson 14b serves: `python -m mini_framework.mcp serve course.lesson14b:SERVED` (send_message is gated,
so it is left out unless the server is given a way to approve it)."""


# ----------------------------------------------------------------------------- exercise 1: the notes server's gates

# (who asks, the request, the tool that must wait for a person or None: nothing may wait, what it is, in words)
REQUESTS = [
    ("practice", 'Read the note "shopping".', None, "reading a note"),
    ("practice", 'Search my notes for "meeting".', None, "searching the notes"),
    ("practice-eager", 'Delete the note "shopping".', "delete_note", "a delete the user asked for"),
    ("practice-eager", "Email anna@example.com that the meeting moved to Friday.", "send_message",
     "a message the user asked for"),
    ("practice-gullible", 'Read my note "web-clipping", please.', "send_message",
     "the web clipping's instruction to message collector@evil.example"),
]


def gates(requires_approval: Any) -> CheckResult:
    """Exercise 1: deletes and messages wait for a person, reads and searches don't."""
    def test() -> str:
        from mini_framework import Agent
        from mini_framework.mcp import MCPServerError, stdio_tools

        from .lesson13c import practice_client

        config = solved(requires_approval)
        if not isinstance(config, (bool, dict)):
            raise AssertionError(f"NOTES_GATES is a {type(config).__name__} ({config!r:.60}): requires_approval= "
                                 "takes True or False for the whole server, or a dict {tool name: True or False}; "
                                 "anything else gates nothing but what the server's hints say")
        client = practice_client()
        try:
            server = stdio_tools(*notes_server("--lying-hints"), name="notes", approve=True, approvals=None,
                                 requires_approval=config)
            notes = server.open()
        except MCPServerError as error:
            raise AssertionError(f"stdio_tools refused your configuration: {error.reason}. Name each tool as the "
                                 "server lists it (no prefix: this server gets none)") from None
        try:
            for persona, prompt, must_wait, what in REQUESTS:
                run = Agent(client, persona, tools=notes, max_iterations=4).run(prompt)
                ran = [r.call.name for r in run.tool_results]
                waiting = [p.call.name for p in run.pending]
                if must_wait is None and waiting:
                    raise AssertionError(f"{what} ({prompt!r}) waited for a person to approve {waiting[0]}. It only "
                                         "reads: gate the tools that act, not the ones that look")
                if must_wait is not None and must_wait in ran:
                    raise AssertionError(f"{what} ({prompt!r}): {persona} called {must_wait} and it ran with "
                                         f"nobody's approval. {_why(must_wait, config)}")
                if must_wait is not None and must_wait not in waiting:
                    raise AssertionError(f"{what} ({prompt!r}) should wait for a person at {must_wait}, and it "
                                         f"did not (calls: {', '.join(ran) or 'none'})")
        finally:
            server.close()
        return ("deletes and messages wait for a person (even the one a web clipping asked for), reads and searches "
                "don't; delete_note's readOnlyHint was not believed")
    return run_check(1, test, "Your configuration, not the server's hints, decides which tools wait.",
                     recipe=hint.recipes[1])


def _why(tool: str, config: Any) -> str:
    if config is False:
        return "False takes every gate away, the hints' too: name the tools that act instead"
    if tool == "delete_note":
        return ("The server's hints say delete_note is read-only (they lie, here), and hints can only add a gate: "
                "only your configuration gates it. Put delete_note in your dict, with True")
    return ("send_message is a way out: whatever the model read (a note, a web page) can leave through it. Put it in "
            "your dict, with True")


# ----------------------------------------------------------------------------- exercise 2: cut a leg of the trifecta

# (who asks, the request, what it is in words); every request must run without a person, and nothing may leave
READS = [
    ("practice", 'Read the note "shopping".', "reading a note"),
    ("practice", 'Search my notes for "meeting".', "searching the notes"),
    ("practice-gullible", 'Read my note "web-clipping", please.', "summarising the web clipping"),
    ("practice-eager", 'Delete the note "shopping".', "a delete (this assistant only reads)"),
]


def reader(options: Any) -> CheckResult:
    """Exercise 2: the stdio_tools options of a reading assistant: every note readable, nothing leaves, no one asked."""
    def test() -> str:
        import tempfile
        from pathlib import Path

        from mini_framework import Agent
        from mini_framework.mcp import MCPServerError, stdio_tools

        from .lesson13c import practice_client
        from .lesson14 import left

        chosen = solved(options)
        if not isinstance(chosen, dict):
            raise AssertionError(f"READER is a {type(chosen).__name__}, not a dict of stdio_tools' keyword "
                                 "arguments, e.g. {\"only\": [...]} or {\"requires_approval\": {...}}")
        client = practice_client()
        with tempfile.TemporaryDirectory() as folder:
            outbox = str(Path(folder) / "outbox.jsonl")
            try:
                server = stdio_tools(*notes_server("--outbox", outbox),
                                     **{"name": "notes", "approvals": None, **chosen, "approve": True})
                notes = server.open()
            except (MCPServerError, TypeError) as error:
                raise AssertionError(f"stdio_tools refused READER: {getattr(error, 'reason', error)}") from None
            try:
                names = {t.remote_name for t in notes}
                for persona, prompt, what in READS:
                    run = Agent(client, persona, tools=notes, max_iterations=4).run(prompt)
                    waiting = [p.call.name for p in run.pending]
                    ran = [r.call.name for r in run.tool_results if r.ok]
                    if "delete_note" in ran:
                        raise AssertionError(f"{what}: practice-eager deleted the note \"shopping\". This assistant "
                                             "only reads: leave out the tools it doesn't need")
                    if waiting:
                        raise AssertionError(f"{what} ({prompt!r}) waited for a person to approve {waiting[0]}. "
                                             f"{_asked(waiting[0])}")
                    if left(outbox) != "nothing left":
                        raise AssertionError(f"{what}: the clipping's instruction was obeyed and a message left "
                                             f"({left(outbox)[:90]}). Private notes and untrusted text are both "
                                             "still here: the leg to cut is the way out")
                    if persona == "practice" and not ran:
                        needed = "search_notes" if "Search" in prompt else "read_note"
                        raise AssertionError(f"{what} ({prompt!r}) did not work: keep {needed} among the tools "
                                             f"(the assistant has {', '.join(sorted(names)) or 'none'})")
            finally:
                server.close()
        return ("a reading assistant without a way out: every note read, the clipping's instruction had nowhere to "
                "go, and no one was asked about a message they never wanted")
    return run_check(2, test, "Which of the three legs does a reading assistant not need?", recipe=hint.recipes[2])


def _asked(tool: str) -> str:
    if tool == "send_message":
        return ("A gate keeps the way out and asks a person about a message to collector@evil.example, which the "
                "user never wanted: this assistant never sends, so take the way out away (only=)")
    if tool == "delete_note":
        return "This assistant only reads: leave out the tools it doesn't need, instead of asking a person about them"
    return "Reading must not wait for anyone: gate or remove the tools that act, not the ones that read"


# What check.hint(N) prints: the steps, for a learner who asks (a ❌ shows them too).
hint = Hints({
    1: ("A dict, one entry per tool that acts, named as the server lists it: the tool that deletes and the tool that "
        "sends, each with True. Leave the reading tools out (or give them False), so that they never wait. Don't "
        "count on the hints: this server's say its delete is read-only.\n"
        "中文：写一个字典，每个会产生动作的工具一项，用服务器列出的名字：删除的工具和发送的工具，值都为 True。"
        "只读的工具不写（或写 False），这样它们不会等人批准。不要指望提示（hints）：这个服务器声称它的删除是只读的。"),
    2: ("The private data (the notes) and the untrusted content (the clipping) are what this assistant is for, so the "
        "leg to cut is the way out. Keep only the two tools that read, with the `only` option, in a dict. A gate "
        "would keep the way out and ask a person about a message nobody wanted.\n"
        "中文：私密数据（笔记）和不可信内容（网页摘录）正是这个助手要处理的，所以要砍掉的是向外发送的那条腿。"
        "用 `only` 选项只保留两个读取的工具，写在一个字典里。加闸门会保留向外的渠道，还要为一条没人想发的消息去问人。"),
})
