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
    "李四最近买了什么？",                                   # orders from SQLite: user -> orders -> details
    "Draw a chart of 张三's orders",                        # a PNG written without Pillow
    "Check the payments log for errors",                    # a long log, spilled to a file
    "The tea cups of order 202405240044 are broken, please refund it",    # 196 yuan: approved (under 200)
    "The headphones of order 202405230031 are broken, please refund it",  # 399 yuan: declined
    "Email zhang.san@example.com that the refund of order 202405240044 is done",  # builtin mail, approved
    "Ask the policy specialist: what are the rules for returns and vouchers?",  # a sub-agent reads policy.txt
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
        specialist = desk.assistant(client, model, tools=[desk.read_policy])  # its own loop, one tool
        ask = as_tool(specialist, name="ask_policy_specialist",
                      description="Ask the policy specialist about return deadlines and voucher rules")
        agent = desk.assistant(client, model, tools=[*desk.tools, ask], stream=True, on_event=show,
                               approver=refunds_under(200, desk, print),
                               vision=(client, "practice-vision") if model.startswith("practice") else None)
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
