"""The approval gate, measured: `python benchmarks/bench_approvals.py`.

    ungated    one Agent run whose reply asks for 24 sends of an ungated tool (a scripted client: no model time)
    gated      the same with `requires_approval=True`: run (pauses), approve all 24, resume
    +audit     the gated run with an audit log on disk (24 requested + 24 approved + 24 executed lines)
    save/load  the paused run (24 pending calls) written to JSON, then written and taken back by `agent.load`

Medians of N runs; the ratio is gated / ungated. What it shows: what the gate and the audit log add
per run, next to the milliseconds a model request takes.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from openai.types.chat import ChatCompletion
from timing import median_us

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mini_framework import Agent, tool  # noqa: E402

N = 200
CUSTOMERS = [f"customer{i:02d}@example.com" for i in range(24)]


class Scripted:
    """Replies: 24 send calls, then an answer."""

    def __init__(self, name: str) -> None:
        self.chat = self
        self.completions = self
        self.name = name
        self.turn = 0

    def create(self, **params):
        self.turn += 1
        first = self.turn % 2 == 1
        calls = [{"id": f"c{self.turn}_{i}", "type": "function", "function": {"name": self.name, "arguments":
                  json.dumps({"to": to, "subject": "抱歉", "body": "订单延迟发货，非常抱歉。"}, ensure_ascii=False)}}
                 for i, to in enumerate(CUSTOMERS)]
        message = {"role": "assistant", "content": None if first else "ok", "tool_calls": calls if first else None}
        return ChatCompletion.model_validate({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if first else "stop", "message": message}]})


def send(to: str, subject: str, body: str) -> str:
    """Send an e-mail."""
    return "sent"


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    ungated = Agent(Scripted("send"), "m", [tool(send)])
    gated = Agent(Scripted("send"), "m", [tool(send, requires_approval=True)])
    audited = Agent(Scripted("send"), "m", [tool(send, requires_approval=True)], audit_log=folder / "audit.jsonl")

    def approve_all(agent: Agent) -> None:
        paused = agent.run("给所有客户发一封道歉邮件")
        for item in paused.pending:
            item.approve()
        assert agent.resume(paused).text == "ok"

    def round_trip() -> None:  # load takes the run out of its file: save it again each time
        paused.save(path)
        agent.load(path)

    rows = [("ungated run, 24 sends", median_us(lambda: ungated.run("给所有客户发一封道歉邮件"), N)),
            ("gated: run + approve 24 + resume", median_us(lambda: approve_all(gated), N)),
            ("gated + audit log", median_us(lambda: approve_all(audited), N))]
    agent = gated
    paused = agent.run("给所有客户发一封道歉邮件")
    path = folder / "paused.json"
    rows.append(("save paused run (24 pending)", median_us(lambda: paused.save(path), N)))
    rows.append(("save + load paused run", median_us(round_trip, N)))
    base = rows[0][1]
    print(f"{'':36} {'median':>10}  ratio to ungated")
    for name, us in rows:
        print(f"{name:36} {us / 1000:8.2f} ms  {us / base:5.2f}×")
    print(f"saved file: {path.with_name(path.name + '.loaded').stat().st_size / 1024:.1f} KB")


if __name__ == "__main__":
    main()
