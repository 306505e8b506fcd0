"""Each lesson's Mermaid diagram, also in words: for viewers that show a diagram's source, and for
screen readers. The words are generated from the diagram, so the two cannot drift apart.

    describe(source)                 a sequence diagram or a flowchart as a numbered list
    with_words(markdown)             the markdown with a "The diagram in words" block after each diagram

Usage: python -m course.diagrams [--check]   (rewrites solutions/ in place; --check: exit 1 if stale)
Run `python -m course.build_lessons` afterwards, as after any change to a solution.

Concessions: only what the lessons use is understood: `sequenceDiagram` (participants, messages,
notes, alt/else/opt/loop/par/and/end) and `flowchart` (nodes with labels, edges with or without text).
"""
from __future__ import annotations

from . import quick_nbformat  # noqa: F401  (before nbformat: see its docstring)

# isort: split
import argparse
import html
import re
import sys

import nbformat

from .build_lessons import ROOT

WORDS = "<details><summary>The diagram in words</summary>"
BLOCK = re.compile(rf"```mermaid\n(?P<source>.*?)```(?:\n*{re.escape(WORDS)}.*?</details>)?", re.S)
_PARTICIPANT = re.compile(r"^\s*(?:participant|actor)\s+(\S+)(?:\s+as\s+(.+))?$")
_MESSAGE = re.compile(r"^\s*([^\s:-]+)\s*-{1,2}>>?\s*([^\s:]+)\s*:\s*(.*)$")
_NOTE = re.compile(r"^\s*Note\s+(?:over|left of|right of)\s+([^:]+):\s*(.*)$", re.I)
_BLOCK_START = re.compile(r"^\s*(alt|opt|loop|par|critical|rect)\b\s*(.*)$")
_BLOCK_NEXT = re.compile(r"^\s*(else|and)\b\s*(.*)$")
_NODE = re.compile(r'(\w+)\s*(?:\[\("(.*?)"\)\]|\["(.*?)"\]|\[(.*?)\]|\{"(.*?)"\}|\{(.*?)\}|\("(.*?)"\)|\((.*?)\))')
# an edge, with its text in any of Mermaid's forms: A --> B, A -->|text| B, A -- text --> B, A -. text .-> B
_EDGE = re.compile(r"\s*(?:--\s*\"?([^\"|>]*?)\"?\s*-->"  # A -- text --> B
                   r"|-\.\s*\"?([^\"|>]*?)\"?\s*\.->"  # A -. text .-> B
                   r"|-\.->"  # A -.-> B
                   r"|-->\s*(?:\|\"?([^|]*?)\"?\|)?)\s*")  # A --> B, A -->|text| B


def _plain(label: str) -> str:
    """A label without markup: '<br/>' becomes a space, escapes and entities go."""
    return " ".join(html.unescape(re.sub(r"<br\s*/?>", " ", label)).replace('\\"', '"').split())


def describe(source: str) -> str:
    """A Mermaid diagram as a numbered list of steps (sequence) or connections (flowchart).

    >>> source = ("sequenceDiagram\\n participant Y as Your code\\n participant M as Model\\n"
    ...           " Y->>M: question\\n M-->>Y: answer")
    >>> print(describe(source))
    1. Your code → Model: question
    2. Model → Your code: answer
    """
    lines = [line for line in source.strip().splitlines() if line.strip() and not line.strip().startswith("%%")]
    if not lines:
        return ""
    kind = lines[0].split()[0]
    if kind == "sequenceDiagram":
        return _sequence(lines[1:])
    if kind in ("flowchart", "graph"):
        return _flowchart(lines[1:])
    return ""


def _sequence(lines: list[str]) -> str:
    names: dict[str, str] = {}
    out: list[str] = []
    depth, number = 0, 0
    for line in lines:
        indent = "   " * depth
        if m := _PARTICIPANT.match(line):
            names[m[1]] = _plain(m[2] or m[1])
        elif m := _MESSAGE.match(line):
            number += 1
            who, whom = names.get(m[1], m[1]), names.get(m[2], m[2])
            arrow = f"{who} → {whom}" if who != whom else who
            out.append(f"{indent}{number}. {arrow}: {_plain(m[3])}")
        elif m := _NOTE.match(line):
            out.append(f"{indent}   (note: {_plain(m[2])})")
        elif m := _BLOCK_START.match(line):
            if m[1] == "par":
                out.append(f"{indent}At the same time:")
            else:
                word = {"alt": "If", "opt": "Optionally, if", "loop": "Repeat"}.get(m[1], m[1])
                out.append(f"{indent}{word} {_plain(m[2])}:".replace(" :", ":"))
            depth += 1
        elif m := _BLOCK_NEXT.match(line):
            word = "Otherwise, if" if m[1] == "else" and m[2] else "Otherwise" if m[1] == "else" else "And"
            out.append(f"{'   ' * max(depth - 1, 0)}{word} {_plain(m[2])}:".replace(" :", ":"))
        elif line.strip() == "end":
            depth = max(depth - 1, 0)
    return "\n".join(out)


def _flowchart(lines: list[str]) -> str:
    labels: dict[str, str] = {}
    edges: list[tuple[str, str, str]] = []
    for line in lines:
        for m in _NODE.finditer(line):
            label = next((g for g in m.groups()[1:] if g), None)
            if label:
                labels[m[1]] = _plain(label)
        pieces = _EDGE.split(line.strip())  # node, text, text, text, node, ...
        if len(pieces) < 5:
            continue
        nodes = [_NODE.match(p) or re.match(r"(\w+)", p) for p in pieces[::4]]
        texts = [next((t for t in pieces[i + 1:i + 4] if t), "") for i in range(0, len(pieces) - 1, 4)]
        for i in range(len(nodes) - 1):
            first, second = nodes[i], nodes[i + 1]
            if first and second:
                edges.append((first[1], second[1], _plain(texts[i])))
    out = []
    for number, (a, b, text) in enumerate(edges, start=1):
        out.append(f"{number}. {labels.get(a, a)} → {labels.get(b, b)}{f' ({text})' if text else ''}")
    return "\n".join(out)


def with_words(markdown: str) -> str:
    """`markdown` with a collapsed "The diagram in words" block right after each Mermaid diagram."""
    def render(m: re.Match[str]) -> str:
        words = describe(m["source"])
        block = f"```mermaid\n{m['source']}```"
        if not words:
            return block
        return f"{block}\n\n{WORDS}\n\n{words}\n\n</details>"
    return BLOCK.sub(render, markdown)


def update(check: bool = False) -> list[str]:
    """Add or refresh the words in every solution; return the names that were (or, with `check`, are) stale."""
    stale = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        changed = False
        for cell in notebook.cells:
            if cell.cell_type == "markdown" and "```mermaid" in cell.source:
                updated = with_words(cell.source)
                if updated != cell.source:
                    changed = True
                    cell.source = updated
        if changed:
            stale.append(path.name)
            if not check:
                nbformat.write(notebook, path)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only report solutions whose words are stale")
    args = parser.parse_args(argv)
    stale = update(check=args.check)
    listed = ": " + ", ".join(stale) if stale else ""
    print(f"{len(stale)} solution(s) {'stale' if args.check else 'updated'}{listed}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
