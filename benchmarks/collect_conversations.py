"""Collect the course's own conversations for `bench_tokens.py`: `python benchmarks/collect_conversations.py`.

Runs every notebook in solutions/ (in memory: nothing is saved) against a practice server whose
request log goes to a file, then keeps each distinct successful chat request once: its messages,
its tools, and the `prompt_tokens` the practice server billed for it. The result is
`benchmarks/data/course_requests.jsonl.gz`, one JSON object per line:

    {"lesson": "06_agent_loop", "messages": [...], "tools": [...] | null, "practice_prompt_tokens": 812}

Run it again after a lesson changes. Requests that a notebook sends to a server it starts itself
(not the shared practice model) are not seen, nor are requests the practice model refused.
"""
from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "data" / "course_requests.jsonl.gz"

# Runs first in each kernel: the shared practice server, logging every exchange to LOG.
SETUP = """
import practice_model.server as _server
_server._shared = _server.PracticeServer(log_path={log!r}, max_logged=0).start()
"""


def run(notebook: Path, log: Path) -> None:
    """Execute `notebook` in its folder, the shared practice server logging to `log`."""
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_code_cell(SETUP.format(log=str(log))))
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(notebook.parent)}}).execute()


def distinct_requests(log: Path, lesson: str) -> list[dict]:
    """Successful, non-streamed and streamed chat requests in `log`, each (messages, tools) once."""
    seen: set[str] = set()
    kept = []
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        request, response = entry.get("request"), entry.get("response")
        if entry.get("status") != 200 or not isinstance(request, dict) or "messages" not in request:
            continue
        usage = response.get("usage") if isinstance(response, dict) else _stream_usage(response)
        if not usage:
            continue
        key = json.dumps([request["messages"], request.get("tools")], sort_keys=True, ensure_ascii=False)
        if key in seen:
            continue
        seen.add(key)
        kept.append({"lesson": lesson, "messages": request["messages"], "tools": request.get("tools"),
                     "practice_prompt_tokens": usage["prompt_tokens"]})
    return kept


def _stream_usage(text: object) -> dict | None:
    """The usage chunk of a logged stream (None without one)."""
    for line in str(text).splitlines():
        if line.startswith("data: {") and '"usage":{' in line:
            usage = json.loads(line[len("data: "):]).get("usage")
            if usage:
                return usage
    return None


def main() -> int:
    os.environ["LLM_BASE_URL"] = "practice"     # never a developer's real provider
    os.environ.pop("PRACTICE_PORT", None)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for notebook in sorted((ROOT / "solutions").glob("*.ipynb")):
            log = Path(folder) / f"{notebook.stem}.jsonl"
            start = time.perf_counter()
            run(notebook, log)
            found = distinct_requests(log, notebook.stem) if log.exists() else []
            rows += found
            print(f"{notebook.stem}: {len(found)} requests ({time.perf_counter() - start:.1f} s)", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(OUT, "wt", encoding="utf-8", compresslevel=9) as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(rows)} requests -> {OUT.relative_to(ROOT)} ({OUT.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
