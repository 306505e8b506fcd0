"""Build `lessons/` from `solutions/`: the solved notebooks are the source of truth.

In a solution notebook, an exercise's answer sits between markers; the lesson gets the stub:

    def tool_message(call_id, result):
        ### BEGIN SOLUTION
        return {"role": "tool", "tool_call_id": call_id, "content": result}
        ### STUB
        # return None  # ← your code here
        ### END SOLUTION

The `### STUB` part is optional: its lines lose one leading "# " in the lesson. Without it the
lesson gets `...` at the marker's indentation. Markdown cells may use
`<!-- BEGIN SOLUTION -->` / `<!-- END SOLUTION -->` the same way (the lesson shows a prompt).
Cells tagged `solution-only` are left out of lessons. Lessons are written without outputs; run
`python -m course.execute lessons` afterwards.

A learner's work is never overwritten silently: a lesson with uncommitted changes (or, outside git,
any lesson that would change) is kept and reported, unless you pass --overwrite.

Usage: python -m course.build_lessons [--check] [--overwrite] [NAME.ipynb ...]
       (--check: exit 1 if lessons/ is out of date; --overwrite: replace lessons even if edited;
        names: only these lessons, e.g. 03_tools_from_functions.ipynb)
"""
from __future__ import annotations

from . import quick_nbformat  # noqa: F401  (before nbformat: see its docstring)

# isort: split
import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BEGIN, STUB, END = "### BEGIN SOLUTION", "### STUB", "### END SOLUTION"
MD_REGION = re.compile(r"<!-- BEGIN SOLUTION -->.*?<!-- END SOLUTION -->", re.S)
MD_PROMPT = "*Write your answer here.*"


class MarkerError(ValueError):
    """A solution region that is not properly opened and closed."""


def stub_code(source: str) -> str:
    """Replace every solution region in a code cell with its stub.

    >>> solved = ("def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n"
    ...           "    ### STUB\\n    # return None\\n    ### END SOLUTION")
    >>> print(stub_code(solved))
    def f():
        return None
    """
    out: list[str] = []
    state, indent, stub = "code", "", []  # state: code | solution | stub
    for line in source.split("\n"):
        marker = line.strip()
        if marker == BEGIN and state == "code":
            state, indent, stub = "solution", line[: len(line) - len(line.lstrip())], []
        elif marker == STUB and state == "solution":
            state = "stub"
        elif marker == END and state in ("solution", "stub"):
            out.extend(stub if stub else [indent + "..."])
            state = "code"
        elif marker in (BEGIN, STUB, END):
            raise MarkerError(f"unexpected {marker!r} (inside {state})")
        elif state == "code":
            out.append(line)
        elif state == "stub":
            stub.append(re.sub(r"^(\s*)# ?", r"\1", line, count=1))
    if state != "code":
        raise MarkerError(f"{BEGIN!r} without {END!r}")
    return "\n".join(out)


def lesson_from_solution(solution: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The learner's notebook: stubs instead of answers, no solution-only cells, no outputs."""
    lesson = nbformat.v4.new_notebook(metadata=solution.metadata)
    for cell in solution.cells:
        if "solution-only" in cell.get("metadata", {}).get("tags", []):
            continue
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(stub_code(cell.source), metadata=cell.metadata)
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(MD_REGION.sub(MD_PROMPT, cell.source), metadata=cell.metadata)
        else:
            new = nbformat.v4.new_raw_cell(cell.source, metadata=cell.metadata)
        new.pop("id", None)
        if "id" in cell:
            new["id"] = cell["id"]
        lesson.cells.append(new)
    return lesson


def cell_sources(nb: nbformat.NotebookNode) -> list[tuple[str, str, tuple[str, ...]]]:
    """What must agree between a generated lesson and the committed one (outputs may differ)."""
    return [(c.cell_type, c.source, tuple(c.get("metadata", {}).get("tags", []))) for c in nb.cells]


def _edited(target: Path, root: Path) -> bool:
    """Whether overwriting `target` could lose someone's work: uncommitted changes, or no git to ask."""
    from .workspace import git_changed  # a sibling module that imports this one

    changed = git_changed(target, root)
    return changed is None or changed


def build(root: Path = ROOT, check: bool = False, overwrite: bool = False,
          names: list[str] | None = None) -> list[str]:
    """Write (or with `check`, compare) every lesson, or those in `names`; return the names that were
    out of date. Lessons that were edited are kept unless `overwrite`; they are listed as "NAME (kept: edited)"."""
    stale = []
    for path in sorted((root / "solutions").glob("*.ipynb")):
        if names and path.name not in names:
            continue
        try:
            lesson = lesson_from_solution(nbformat.read(path, as_version=4))
        except MarkerError as error:
            raise MarkerError(f"{path.name}: {error}") from None
        target = root / "lessons" / path.name
        current = nbformat.read(target, as_version=4) if target.exists() else None
        if current is not None and cell_sources(current) == cell_sources(lesson):
            continue
        if not check and current is not None and not overwrite and _edited(target, root):
            stale.append(f"{path.name} (kept: edited)")
            continue
        stale.append(path.name)
        if not check:
            target.parent.mkdir(exist_ok=True)
            nbformat.write(lesson, target)
    solved = {p.name for p in (root / "solutions").glob("*.ipynb")}
    extra = {p.name for p in (root / "lessons").glob("*.ipynb")} - solved if not names else set()
    return stale + sorted(f"{name} (no solution)" for name in extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report lessons that are out of date")
    parser.add_argument("--overwrite", action="store_true", help="replace lessons even if they were edited")
    parser.add_argument("names", nargs="*", help="only these lessons (file names, e.g. 03_tools_from_functions.ipynb)")
    args = parser.parse_args(argv)
    names = [Path(name).name for name in args.names]
    unknown = [name for name in names if not (ROOT / "solutions" / name).exists()]
    if unknown:
        parser.error(f"no such solution notebook: {', '.join(unknown)}")
    stale = build(check=args.check, overwrite=args.overwrite, names=names or None)
    kept = [name for name in stale if name.endswith("(kept: edited)")]
    verb = "out of date" if args.check else "written"
    written = [name for name in stale if name not in kept]
    print(f"{len(written)} lesson(s) {verb}" + (": " + ", ".join(written) if written else ""))
    if kept:
        print(f"{len(kept)} lesson(s) kept because they have your edits: {', '.join(kept)}. "
              "Copy your work elsewhere first, then run again with --overwrite to replace them.")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
