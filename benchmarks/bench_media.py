"""Images from tools, measured: `python benchmarks/bench_media.py`.

    register   read a 1 MB PNG from disk, sniff it, hash it, register it (MediaStore.load)
    encode     its base64 data URL: the first time, and again (cached per media_id)
    a run      one Agent run whose tool returns 5 images (a scripted client: no model time), for a model that
               sees and for a text-only one: time, the messages built and the bytes of the next request

The PNG is random bytes behind a valid header (it does not compress, like a photo). Medians of N runs.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from openai.types.chat import ChatCompletion
from timing import median_us

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mini_framework import Agent, ImgPath, MediaStore, tool  # noqa: E402
from mini_framework.media.store import Found  # noqa: E402


class Scripted:
    """Replies: first one call of `charts`, then an answer; keeps the last request's size."""

    def __init__(self) -> None:
        self.chat = self
        self.completions = self
        self.turn = 0
        self.last_bytes = 0

    def create(self, **params):
        self.turn += 1
        self.last_bytes = len(json.dumps(params["messages"]))
        first = self.turn % 2 == 1
        message = {"role": "assistant", "content": None if first else "ok", "tool_calls": [
            {"id": f"c{self.turn}", "type": "function", "function": {"name": "charts", "arguments": "{}"}}]
            if first else None}
        return ChatCompletion.model_validate({
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if first else "stop", "message": message}]})


def png_of(size: int, seed: int) -> bytes:
    header = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000400000003000806000000")
    return header + os.urandom(size - len(header) - 8) + seed.to_bytes(8, "big")


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    os.chdir(folder)
    big = folder / "big.png"
    big.write_bytes(png_of(1_000_000, 0))
    for i in range(5):
        (folder / f"chart{i}.png").write_bytes(png_of(200_000, i + 1))

    fresh = median_us(lambda: MediaStore().load(Found(ImgPath("big.png")), "draw"), 50)
    store = MediaStore()
    media = store.load(Found(ImgPath("big.png")), "draw")
    first = median_us(lambda: (store.urls.clear(), store.data_url(media)), 50)
    again = median_us(lambda: store.data_url(media), 2000)
    print(f"1 MB PNG: register {fresh / 1000:.2f} ms; data URL first {first / 1000:.2f} ms, "
          f"cached {again:.2f} µs ({first / again:.0f}× faster)")

    @tool
    def charts() -> list:
        """Five charts."""
        return ["five charts", *(ImgPath(f"chart{i}.png") for i in range(5))]

    for model in ("gpt-4.1-mini", "deepseek-chat"):
        client = Scripted()
        agent = Agent(client, model, [charts])
        seconds = median_us(lambda agent=agent: agent.run("draw"), 30) / 1e6
        result = agent.run("draw")
        print(f"{model:13} run with 5 × 200 KB images: {seconds * 1000:.2f} ms median; {len(result.messages)} "
              f"messages; the request after the tools: {client.last_bytes / 1024:,.0f} KB")


if __name__ == "__main__":
    main()
