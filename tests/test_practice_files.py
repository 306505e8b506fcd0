"""The practice model picks a file tool for a request that names a file, in any language, and gives a sub-agent
its whole task (lessons 13, 13b)."""
from __future__ import annotations

import json

from mini_framework import Agent, FileToolset, connect


def calls(tmp_path, request, names=("read_file", "grep")):
    (tmp_path / "policy.md").write_text("# Policy\n1. A refund needs a person's approval.\n", encoding="utf-8")
    client, model = connect()
    tools = [t for t in FileToolset(tmp_path).tools if t.name in names]
    result = Agent(client, model, tools).run(request)
    first = next(m for m in result.messages if m.get("tool_calls"))
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in first["tool_calls"]]


def test_a_request_that_names_a_file_in_chinese_is_about_files(tmp_path):
    assert calls(tmp_path, "退款要谁批准？查一下 policy.md", names=("read_file",)) == [("read_file", {"path": "policy.md"})]


def test_a_file_in_a_folder_keeps_its_folder(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "faq.md").write_text("FAQ\n", encoding="utf-8")
    assert calls(tmp_path, "Read docs/faq.md please", names=("read_file",)) == [("read_file", {"path": "docs/faq.md"})]


def test_a_sub_agents_task_carries_the_whole_request_addresses_included():
    from mini_framework import as_tool
    client, model = connect()
    helper = as_tool(Agent(client, model), name="ask_refund_specialist", description="退款专员：核对订单，发退款确认邮件")
    result = Agent(client, model, [helper]).run("订单202405230031退款，然后给zhang.san@example.com发邮件，说退款已经办理")
    first = next(m for m in result.messages if m.get("tool_calls"))
    task = json.loads(first["tool_calls"][0]["function"]["arguments"])["task"]
    assert "zhang.san@example.com" in task and "202405230031" in task
