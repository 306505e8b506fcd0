"""Two real MCP servers from the package index, which nobody on this course wrote, started over stdio here.

mcp-server-time and mcp-server-git are the Model Context Protocol project's reference servers (the `dev`
extra installs them); both run offline. Each is started once per module (the SDK they are built on takes
about half a second to import).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mini_framework import Agent, Executor, ToolCall
from mini_framework.mcp import stdio_tools
from tests.test_agent import ScriptedClient
from tests.test_approvals import calls, tool_messages

TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "Asia/Shanghai"]


@pytest.fixture(scope="module")
def time_tools():
    with stdio_tools(*TIME, name="time", approve=True, approvals=None) as tools:
        yield tools


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """A git repository with one commit, its dates and author fixed (so its log is the same every run)."""
    root = tmp_path_factory.mktemp("repo")
    env = {"GIT_AUTHOR_DATE": "2026-01-01T08:00:00+08:00", "GIT_COMMITTER_DATE": "2026-01-01T08:00:00+08:00",
           "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com", "GIT_COMMITTER_NAME": "Ada",
           "GIT_COMMITTER_EMAIL": "ada@example.com", "PATH": "/usr/bin:/bin", "HOME": str(root)}
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "notes.md"],
                    ["git", "commit", "-q", "-m", "第一版笔记"]):
        if command[1] == "add":
            (root / "notes.md").write_text("北京 22°C\n", encoding="utf-8")
        subprocess.run(command, cwd=root, env=env, check=True)
    return root


@pytest.fixture(scope="module")
def git_tools(repository):
    with stdio_tools(sys.executable, "-m", "mcp_server_git", "--repository", str(repository), name="git",
                     approve=True, approvals=None) as tools:
        yield tools


def test_the_time_servers_list_is_fingerprinted_the_same_each_start(time_tools):
    names = [t.name for t in time_tools]
    assert names == ["get_current_time", "convert_time"]
    assert "Asia/Shanghai" in time_tools.listing.text  # the pinned zone, in its descriptions
    with stdio_tools(*TIME, name="time", approve=True, approvals=None) as again:
        assert again.listing.fingerprint == time_tools.listing.fingerprint


def test_convert_time_runs_through_the_executor_and_a_bad_zone_is_an_envelope(time_tools):
    good, bad = Executor(list(time_tools)).run_sync([
        ToolCall("a", "convert_time", "{'source_timezone': 'Asia/Shanghai', 'time': '16:30', "
                                      "'target_timezone': 'Asia/Tokyo',}"),  # broken JSON, repaired
        ToolCall("b", "convert_time", json.dumps({"source_timezone": "Mars/Olympus", "time": "16:30",
                                                  "target_timezone": "Asia/Tokyo"}))])
    converted = json.loads(good.content)
    assert good.ok and good.repairs and converted["target"]["datetime"][11:16] == "17:30"
    assert converted["time_difference"] == "+1.0h"
    assert not bad.ok and "Invalid timezone" in bad.content and "Traceback" not in bad.content


def test_a_missing_argument_is_caught_here_before_the_server_sees_it(time_tools):
    [result] = Executor(list(time_tools)).run_sync([ToolCall("a", "convert_time", '{"time": "16:30"}')])
    assert result.failure == "invalid_arguments" and "source_timezone" in result.content


def test_the_git_servers_destructive_tool_is_gated_by_its_own_hint(git_tools):
    gated = sorted(t.name for t in git_tools if t.options.get("requires_approval"))
    assert gated == ["git_reset"]  # destructiveHint: true; git_commit says false, and is not
    assert {"git_status", "git_log", "git_commit"} <= {t.name for t in git_tools}


def test_an_agent_reads_the_log_and_a_reset_waits_for_a_person(git_tools, repository):
    script = [calls(("c1", "git_log", {"repo_path": str(repository), "max_count": 1})),
              calls(("c2", "git_reset", {"repo_path": str(repository)}))]
    agent = Agent(ScriptedClient(script), "m", list(git_tools))
    paused = agent.run("看看最近一次提交，然后重置暂存区")
    assert "第一版笔记" in tool_messages(paused)["c1"] and "Ada" in tool_messages(paused)["c1"]
    assert paused.paused and [p.name for p in paused.pending] == ["git_reset"]
    paused.pending[0].deny("不要重置")
    done = agent.resume(paused)
    assert "不要重置" in tool_messages(done)["c2"]


def test_a_path_outside_the_repository_is_the_servers_error_not_a_crash(git_tools):
    [result] = Executor(list(git_tools)).run_sync([ToolCall("a", "git_status", '{"repo_path": "/etc"}')])
    assert not result.ok and "Traceback" not in result.content
