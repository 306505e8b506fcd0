"""`python -m mini_framework.demo [--no-chart]`: the support shop, start to end, in one run you can read.

Offline it talks to the practice model; with LLM_BASE_URL, LLM_API_KEY and LLM_MODEL set (or a .env file) the
same run goes to your provider. Without either it says what it needs and exits with status 2.
"""
from __future__ import annotations

import argparse
import sys
import tempfile

from ..chat import Chat
from ..connection import NoProviderError, connect
from ..delegation import as_tool
from ..events import Event, TextDelta, ToolFinished
from .support import SupportDesk, refunds_under

TURNS = [
    "张三最近买了什么？",                                   # orders from SQLite: user -> orders -> details
    "Draw a chart of 张三's orders",                        # a PNG written without Pillow
    "Check the payments log for errors",                    # a long log, spilled to a file
    "订单 202405230031 的耳机坏了，请退款",                  # a refund: the approver decides (399 < 500)
    "The keyboard of order 202405220012 is broken, refund it please.",   # 627: declined
    "Ask the policy specialist: how long do returns take?",  # a sub-agent that reads policy.md
]


def show(event: Event) -> None:
    """Print what happens: the answer as it streams, each tool call as it is answered."""
    if isinstance(event, TextDelta):
        print(event.text, end="", flush=True)
    elif isinstance(event, ToolFinished):
        print(f"  [tool] {event.result.call.name}({event.result.call.arguments}) -> {event.result.content[:90]!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mini_framework.demo", description=__doc__)
    parser.add_argument("--no-chart", action="store_true", help="leave the chart turn out")
    args = parser.parse_args(argv)
    try:
        client, model = connect()
    except NoProviderError as missing:
        print(f"The demo needs a configured provider: set LLM_BASE_URL, LLM_API_KEY and LLM_MODEL (or a .env "
              f"file), or run it where the practice model is installed.\n({missing})", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="shop_demo_") as folder:  # the workspace, removed at the end
        desk = SupportDesk(folder)
        specialist = desk.assistant(client, model)  # the same desk, its own loop: only its answer comes back
        specialist.tools = [t for t in specialist.tools if t.name in ("read_file", "grep")]
        specialist.specs = [t.to_openai_tool() for t in specialist.tools]
        ask = as_tool(specialist, name="ask_policy_specialist",
                      description="Ask the policy specialist a question about the shop's refund and return policy")
        agent = desk.assistant(client, model, stream=True, on_event=show, approver=refunds_under(500, desk, print),
                               vision=(client, "practice-vision") if model.startswith("practice") else None)
        agent.tools.append(ask)
        agent.specs.append(ask.to_openai_tool())
        chat = Chat(agent)
        print(f"Support shop demo against {model}; workspace {folder}\n")
        for text in TURNS:
            if args.no_chart and "chart" in text:
                continue
            print(f"\nuser> {text}\nassistant> ", end="")
            result = chat.send(text)
            print(f"\n  ({result.usage.requests} requests, {result.usage.total_tokens} tokens)")
        print(f"\nRefunds: {desk.refunds}; e-mails in the outbox: {len(list(desk.outbox.glob('*.eml')))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
