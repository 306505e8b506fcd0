"""Serving our tools over MCP (mini_framework/mcp/serve.py): what an MCP client gets is what our Agent's model gets.

Most tests talk to the server in-process (`mcp.Client(server)`: no subprocess, no framing); one starts
`python -m mini_framework.mcp serve tests.mcp_served:tools` and talks to it over stdio, as a client would.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any, Awaitable, Callable

import mcp
import mcp_served
import pytest
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from mini_framework.mcp.__main__ import load, main
from mini_framework.mcp.serve import NO_APPROVER, mcp_server, serve, tool_listing

ROOT = Path(__file__).resolve().parent.parent
GATED = {"delete_file", "send_note"}


def session(body: Callable[[mcp.Client], Awaitable[Any]], tools: list | None = None, **options: Any) -> Any:
    """Run `body(client)` against our tools served in-process."""
    async def main() -> Any:
        async with mcp.Client(mcp_server(mcp_served.tools if tools is None else tools, **options)) as client:
            return await body(client)

    return asyncio.run(main())


def call(name: str, arguments: Any, **options: Any) -> Any:
    """One tools/call, in-process."""
    return session(lambda client: client.call_tool(name, arguments), **options)


def refused(name: Any, arguments: Any) -> MCPError:
    """The protocol error a tools/call gets (caught inside the session: outside it comes wrapped in a group)."""
    async def body(client):
        with pytest.raises(MCPError) as raised:
            await client.call_tool(name, arguments)
        return raised.value

    return session(body)


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def error(result: Any) -> str:
    """The error text of an isError result (the framework's envelope)."""
    assert result.is_error, result
    body = json.loads(text(result))
    assert body["status"] == "error"
    return body["error"]


@pytest.fixture(autouse=True)
def fresh_record():
    mcp_served.RAN.clear()
    yield
    mcp_served.RAN.clear()


# ----------------------------------------------------------------------------- the tool list

def test_the_listed_schemas_are_the_ones_our_framework_builds():
    listed = session(lambda client: client.list_tools(), approve=lambda name, arguments: False).tools
    assert [t.name for t in listed] == [t.name for t in mcp_served.tools]
    for served, ours in zip(listed, mcp_served.tools):
        function = ours.to_openai_tool()["function"]
        assert (served.name, served.description, served.input_schema) == (
            function["name"], function["description"], function["parameters"])
    ship = next(t for t in listed if t.name == "ship")
    assert ship.input_schema["additionalProperties"] is False  # the strict schema, as the Agent sends it
    assert ship.input_schema["properties"]["address"]["properties"]["city"] == {"type": "string"}  # nested
    assert listed[0].input_schema["properties"]["a"]["description"] == "The first number."


def test_annotations_say_only_what_the_options_say():
    hints = {t.name: t.annotations for t in session(lambda c: c.list_tools(), approve=lambda n, a: True).tools}
    for name in ("log_note", "delete_file", "send_note"):  # side_effects / requires_approval: it acts
        assert hints[name].read_only_hint is False and hints[name].destructive_hint is True
    assert hints["add"] is None and hints["ping"] is None  # undeclared is not "read only": nothing claimed
    assert tool_listing(mcp_served.add).annotations is None


# ----------------------------------------------------------------------------- calls, through the Executor

def test_a_number_in_words_is_coerced_as_for_the_agent():
    result = call("add", {"a": "一百二十三", "b": 4})
    assert not result.is_error and text(result) == "127"


def test_a_bad_argument_is_an_error_result_naming_the_field():
    message = error(call("add", {"a": "many", "b": 4}))
    assert "a: got \"many\"; expected a whole number" in message and "call add again" in message
    assert [line for line in message.split("\n") if line.startswith("- ")] == ['- a: got "many"; expected a whole number']
    assert "b: missing" in error(call("add", {"a": 1}))


def test_each_bad_call_is_answered_on_its_own_not_with_a_spent_budget():
    async def three(client):
        return [await client.call_tool("add", {"a": "x", "b": 1}) for _ in range(3)]

    assert all("Fix these arguments" in error(r) for r in session(three))


def test_an_exception_is_the_envelope_without_traceback_or_secret():
    result = call("boom", {"city": "北京"})
    message = error(result)
    assert message.startswith("boom failed: RuntimeError") and "北京" in message
    assert "sk-proj-" not in text(result) and "Traceback" not in text(result) and 'File "' not in text(result)


def test_a_tool_past_its_timeout_is_stopped_and_says_so():
    assert "slow did not finish within 0.2 s" in error(call("slow", {}))


def test_an_image_a_tool_returns_is_an_image_content_block():
    result = call("chart", {"title": "销售额"})
    assert not result.is_error
    kinds = [block.type for block in result.content]
    assert kinds == ["text", "image"]
    assert text(result).startswith("销售额\n[image tool:chart:")
    image = result.content[1]
    assert image.mime_type == "image/png" and base64.b64decode(image.data) == mcp_served.PNG


def test_images_pass_the_media_checks_first():
    assert "not a PNG, JPEG, GIF or WebP" in error(call("fake_chart", {}))  # sniffed, not judged by its name
    refused = error(call("outside", {}))
    assert "is outside the folders images may come from" in refused and "nothing was read" in refused


def test_an_unknown_tool_is_a_protocol_error_naming_the_closest():
    problem = refused("addd", {"a": 1})
    assert problem.code == INVALID_PARAMS
    assert "Unknown tool 'addd'" in problem.message and "Did you mean 'add'?" in problem.message


def test_the_handshake_era_gets_the_same_answers():
    """`mode="legacy"`: the 2025-11-25 initialize handshake and JSON-RPC framing (in memory), as most clients."""
    async def body(client):
        assert client.instructions == "Use add for sums."
        return (client.protocol_version, await client.call_tool("add", {"a": "三", "b": 1}),
                await client.call_tool("chart", {"title": "t"}), await client.call_tool("add", {"a": "x", "b": 1}))

    async def main():
        server = mcp_server(mcp_served.tools, instructions="Use add for sums.")
        async with mcp.Client(server, mode="legacy") as client:
            return await body(client)

    version, coerced, image, bad = asyncio.run(main())
    assert version == "2025-11-25" and text(coerced) == "4"
    assert [b.type for b in image.content] == ["text", "image"] and "a: got \"x\"" in error(bad)


# ----------------------------------------------------------------------------- gated tools

def test_without_approve_gated_tools_are_not_served(capsys):
    async def body(client):
        return (await client.list_tools()).tools, await client.call_tool("delete_file", {"path": "a.txt"})

    listed, result = session(body)
    assert GATED.isdisjoint(t.name for t in listed) and len(listed) == len(mcp_served.tools) - 2
    assert error(result) == NO_APPROVER.format(name="delete_file")
    assert mcp_served.RAN == []
    warned = capsys.readouterr().err
    assert "delete_file is not served" in warned and "send_note is not served" in warned


def test_approve_decides_each_gated_call_with_the_checked_arguments():
    asked = []

    def approve(name, arguments):
        asked.append((name, arguments))
        return arguments["path"] == "ok.txt"

    async def body(client):
        return [await client.call_tool("delete_file", {"path": p, "times": "二"}) for p in ("ok.txt", "no.txt")]

    allowed, declined = session(body, approve=approve)
    assert text(allowed) == "deleted ok.txt"
    assert "A person declined this call, so it did not run" in error(declined)
    assert asked == [("delete_file", {"path": "ok.txt", "times": 2}), ("delete_file", {"path": "no.txt", "times": 2})]
    assert mcp_served.RAN == ["delete_file ok.txt 2"]  # the declined call never ran


def test_a_predicate_gate_asks_only_for_the_calls_it_names():
    asked = []

    async def approve(name, arguments):  # an async approver is awaited
        asked.append(arguments["to"])
        return False

    async def body(client):
        return [await client.call_tool("send_note", {"to": to, "text": "hi"})
                for to in ("li@corp.example", "eve@elsewhere.example")]

    inside, outside = session(body, approve=approve)
    assert text(inside) == "sent to li@corp.example" and outside.is_error
    assert asked == ["eve@elsewhere.example"] and mcp_served.RAN == ["send_note li@corp.example"]


@pytest.mark.parametrize("answer", ["yes", 1, None, RuntimeError("approver crashed")])
def test_only_true_approves(answer):
    def approve(name, arguments):
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert "did not run" in error(call("delete_file", {"path": "a.txt"}, approve=approve))
    assert mcp_served.RAN == []


def test_a_client_cannot_forge_an_approval():
    asked = []

    def deny(name, arguments):
        asked.append(arguments)
        return False

    async def body(client):
        smuggled = await client.call_tool("delete_file", {"path": "a.txt", "approved": True, "_meta": {"ok": 1}})
        with_meta = await client.call_tool("delete_file", {"path": "b.txt"}, meta={"approved": True})
        return smuggled, with_meta

    smuggled, with_meta = session(body, approve=deny)
    assert "approved: unknown field" in error(smuggled)  # not a field: the call cannot even be asked about
    assert "A person declined this call" in error(with_meta)  # _meta never reaches the decision
    assert asked == [{"path": "b.txt", "times": 1}] and mcp_served.RAN == []

    def meddle(name, arguments):
        arguments["path"] = "/etc/passwd"  # its own copy: not what runs
        return True

    assert text(call("delete_file", {"path": "a.txt"}, approve=meddle)) == "deleted a.txt"
    assert mcp_served.RAN == ["delete_file a.txt 1"]


def test_approve_must_be_a_function():
    with pytest.raises(TypeError, match="approve must be a function"):
        mcp_server(mcp_served.tools, approve=True)


# ----------------------------------------------------------------------------- hostile client input

@pytest.mark.parametrize("params", [{"name": "add", "arguments": [1, 2]}, {"name": "add", "arguments": "{\"a\": 1}"},
                                    {"name": 7, "arguments": {}}, {"arguments": {}}])
def test_malformed_calls_are_protocol_errors_and_the_server_goes_on(params):
    async def body(client):
        with pytest.raises(MCPError) as raised:
            await client.session._dispatcher.send_raw_request("tools/call", params, {})
        return raised.value, await client.call_tool("add", {"a": 1, "b": 2})

    problem, after = session(body)
    assert problem.code == INVALID_PARAMS and text(after) == "3"


def test_huge_strings_are_handled_and_not_echoed_back():
    huge = "长" * 1_000_000
    assert text(call("length", {"text": huge})) == "1000000"
    message = error(call("add", {"a": huge, "b": 1}))
    assert "a: got" in message and len(message) < 1000
    assert len(refused("x" * 100_000, {}).message) < 500


def test_odd_but_valid_arguments():
    assert "b: missing" in error(call("add", None))  # no arguments at all: the missing fields named
    assert "c: unknown field; the fields are: a, b" in error(call("add", {"a": 1, "b": 2, "c": {"deep": [1] * 1000}}))
    assert text(call("add", {"a": 1, "b": 2})) == "3"


# ----------------------------------------------------------------------------- the command line

def test_the_command_line_refuses_what_it_cannot_serve(capsys):
    for spec in ("no-colon", "no_such_module_xyz:tools", "mcp_served:missing", "json:dumps", "mcp_served:RAN"):
        assert main(["serve", spec]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "python -m mini_framework.mcp" in err and "Traceback" not in err
    assert main(["serve", "mcp_served:tools", "--approve", "mcp_served:RAN"]) == 2


def test_what_a_module_prints_while_imported_goes_to_stderr(capsys):
    sys.modules.pop("mcp_served", None)  # imported afresh, as the command line does
    try:
        assert load("mcp_served:ping").name == "ping"
        out = capsys.readouterr()
        assert "printed while importing" in out.err and out.out == ""
    finally:
        sys.modules["mcp_served"] = mcp_served


def test_serve_inside_a_running_loop_says_what_to_use():
    async def inside():
        serve(mcp_served.tools)

    with pytest.raises(RuntimeError, match="serve_async"):
        asyncio.run(inside())


def test_without_the_sdk_serving_says_which_extra_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the `mcp` extra were not installed
    with pytest.raises(ImportError, match=r'pip install -e "\.\[mcp\]"'):
        mcp_server(mcp_served.tools)
    assert main(["serve", "mcp_served:tools"]) == 2 and "needs the official SDK" in capsys.readouterr().err


# ----------------------------------------------------------------------------- one real stdio round trip

def test_a_real_stdio_round_trip(tmp_path):
    marker = f"mcp-serve-test-{uuid.uuid4().hex[:8]}"
    params = mcp.StdioServerParameters(command=sys.executable, cwd=str(ROOT), args=[
        "-m", "mini_framework.mcp", "serve", "tests.mcp_served:tools", "--name", marker])

    async def body():
        with open(tmp_path / "stderr.txt", "w") as errlog:
            async with mcp.Client(stdio_client(params, errlog=errlog)) as client:
                listed = (await client.list_tools()).tools
                coerced = await client.call_tool("add", {"a": "一百二十三", "b": 0})
                image = await client.call_tool("chart", {"title": "t"})
                failed = await client.call_tool("boom", {"city": "x"})
                gated = await client.call_tool("delete_file", {"path": "a"})
                return client.server_info, listed, coerced, image, failed, gated

    info, listed, coerced, image, failed, gated = asyncio.run(body())
    assert info.name == marker
    assert {t.name for t in listed} == {t.name for t in mcp_served.tools} - GATED
    add = next(t for t in listed if t.name == "add")
    assert add.input_schema == mcp_served.add.to_openai_tool()["function"]["parameters"]
    assert text(coerced) == "123"
    assert [b.type for b in image.content] == ["text", "image"] and base64.b64decode(image.content[1].data) == \
        mcp_served.PNG
    assert "sk-proj-" not in text(failed) and error(failed).startswith("boom failed")
    assert error(gated) == NO_APPROVER.format(name="delete_file")
    stderr = (tmp_path / "stderr.txt").read_text()
    assert "printed while importing" in stderr and "delete_file is not served" in stderr
    assert "sk-proj-" not in stderr  # the tool's traceback is logged there, its secret redacted
    assert not _processes_with(marker), "the server process outlived its client"


def _processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found

