"""Execute notebooks in place against the practice model, so they are committed with outputs.

Usage: python -m course.execute [--overwrite] [PATH ...]
       (folders or .ipynb files; default: solutions lessons)

A lesson whose cells differ from what its solution generates holds a learner's code: it is left
alone (and listed) unless --overwrite is given, so its outputs are not replaced. A lesson with the
shipped cells is re-run whatever its outputs: they are reproducible.

`LLM_BASE_URL` is forced to "practice" for the kernels, so a developer's `.env` never leaks a
real provider's answers (or anything else) into committed outputs, and the practice model
listens on port 8765 (unless busy) so that re-running a notebook doesn't change its URL lines.
"""
from __future__ import annotations

from . import quick_nbformat  # noqa: F401  (before nbformat: see its docstring)

# isort: split
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from .build_lessons import ROOT


def notebooks(paths: list[str]) -> list[Path]:
    """The notebooks named by `paths` (folders expand to their *.ipynb), sorted."""
    found: list[Path] = []
    for name in paths or ["solutions", "lessons"]:
        path = Path(name) if Path(name).is_absolute() else ROOT / name
        found += sorted(path.glob("*.ipynb")) if path.is_dir() else [path]
    return found


def execute(path: Path, timeout: int = 300) -> float:
    """Run one notebook top to bottom in its own folder and save it; return the seconds taken."""
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in nb.cells:  # timings in metadata would make every run a diff
        cell.get("metadata", {}).pop("execution", None)
        if "outputs" in cell:
            cell.outputs = coalesced(cell.outputs)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def coalesced(outputs: list) -> list:
    """Outputs with consecutive writes to one stream joined: a streamed print flushes in pieces that
    depend on timing, and the committed notebook should not change with the machine's speed.

    >>> out = nbformat.v4.new_output
    >>> [o.text for o in coalesced([out("stream", name="stdout", text="a|"), out("stream", name="stdout", text="b")])]
    ['a|b']
    """
    joined: list = []
    for output in outputs:
        last = joined[-1] if joined else None
        if (output.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream"
                and last.get("name") == output.get("name")):
            last["text"] = last["text"] + output["text"]
        else:
            joined.append(output)
    return joined


def holds_learner_code(path: Path) -> bool:
    """Whether `path` is a lesson whose cells a learner changed (an answer written, a cell added)."""
    from .workspace import differs_from_generated

    return path.resolve().parent == (ROOT / "lessons").resolve() and differs_from_generated(path, ROOT)


def main(argv: list[str] | None = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    if {"-h", "--help"} & set(args):
        print(__doc__.split("\n\n")[1])
        return 0
    overwrite = "--overwrite" in args
    os.environ["LLM_BASE_URL"] = "practice"
    os.environ.setdefault("PRACTICE_PORT", "8765")  # the same URL in every committed output (tests sanitise it anyway)
    kept = []
    for path in notebooks([a for a in args if a != "--overwrite"]):
        if not overwrite and holds_learner_code(path):
            kept.append(path.relative_to(ROOT).as_posix())
            continue
        whole = path.resolve()
        shown = whole.relative_to(ROOT.resolve()) if whole.is_relative_to(ROOT.resolve()) else path  # a scratch copy
        print(f"{shown}: {execute(path):.1f} s", flush=True)
    if kept:
        print(f"Not run, because they hold your code: {', '.join(kept)}. Pass --overwrite to run them anyway "
              "(their outputs are replaced; their code is kept).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
