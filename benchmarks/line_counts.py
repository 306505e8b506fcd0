"""Lines of code per module and per layer: `python benchmarks/line_counts.py [--layers]`.

A line counts when part of a code token is on it: blank lines, comments and docstrings (of modules,
classes and functions, found with `ast`) do not; a statement over several lines counts each physical
line it spans (a multi-line string that is not a docstring included). Layers:

    core             mini_framework/*.py (the front door, __init__.py, included)
    approvals, ...   each feature folder, mini_framework/<folder>/
    builtin          mini_framework/builtin/
    practice_model   the offline practice model, beside the framework

    >>> code_lines("'''Doc.'''\\n\\n# a comment\\nx = (1,\\n     2)  # trailing\\n")
    2

A report, not a timed test (tests/test_copying.py runs it).
"""
from __future__ import annotations

import argparse
import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = sorted(p.name for p in (ROOT / "mini_framework").iterdir() if (p / "__init__.py").is_file())
LAYERS = ("core", *(f for f in FOLDERS if f != "builtin"), "builtin", "practice_model")  # each feature folder
NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}


def docstrings(tree: ast.Module) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where each docstring starts and ends, (line, column) each: the first statement of a module, class or
    function when it is a string (implicitly joined strings are one)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            doc = node.body[0].value if isinstance(node.body[0], ast.Expr) else None
            if isinstance(doc, ast.Constant) and isinstance(doc.value, str):
                found.append(((doc.lineno, doc.col_offset), (doc.end_lineno or doc.lineno, doc.end_col_offset or 0)))
    return found


def code_lines(source: str) -> int:
    """The lines of `source` that hold code (see the module docstring).

    >>> code_lines("def f():\\n    '''Doc,\\n    two lines.'''\\n    return '''a\\nb'''\\n")
    3
    """
    spans = docstrings(ast.parse(source))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in NOT_CODE:
            continue
        if token.type == tokenize.STRING and any(start <= token.start < end for start, end in spans):
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines)


def layer(path: Path) -> str:
    """The layer a file of this repository belongs to: "core", a feature's folder, "builtin", "practice_model"."""
    parts = path.relative_to(ROOT).parts
    if parts[0] == "practice_model":
        return "practice_model"
    return parts[1] if len(parts) > 2 else "core"


def modules() -> list[Path]:
    """Every module of the framework and the practice model, in layer order, then by path."""
    found = [p for folder in ("mini_framework", "practice_model") for p in (ROOT / folder).rglob("*.py")
             if "__pycache__" not in p.parts]
    return sorted(found, key=lambda p: (LAYERS.index(layer(p)), p.relative_to(ROOT).parts))


def count() -> list[tuple[str, str, int, int]]:
    """(layer, module path, code lines, physical lines) of every module."""
    rows = []
    for path in modules():
        text = path.read_text(encoding="utf-8")
        rows.append((layer(path), str(path.relative_to(ROOT)), code_lines(text), len(text.splitlines())))
    return rows


def report(rows: list[tuple[str, str, int, int]], per_module: bool = True) -> str:
    """The table: each module (if `per_module`), then a total per layer and for the framework."""
    out: list[str] = []
    width = max(len(name) for _, name, _, _ in rows)
    if per_module:
        out.append(f"{'module':<{width}}  {'code':>6}  {'lines':>6}")
        for _, name, code, physical in rows:
            out.append(f"{name:<{width}}  {code:>6,}  {physical:>6,}")
        out.append("")
    out.append(f"{'layer':<16}  {'modules':>7}  {'code':>6}  {'lines':>6}")
    totals: dict[str, tuple[int, int, int]] = {}
    for name in LAYERS:
        mine = [r for r in rows if r[0] == name]
        totals[name] = (len(mine), sum(r[2] for r in mine), sum(r[3] for r in mine))
        out.append(f"{name:<16}  {totals[name][0]:>7}  {totals[name][1]:>6,}  {totals[name][2]:>6,}")
    framework = [totals[name] for name in LAYERS if name != "practice_model"]
    out.append(f"{'mini_framework':<16}  {sum(t[0] for t in framework):>7}  {sum(t[1] for t in framework):>6,}  "
               f"{sum(t[2] for t in framework):>6,}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Lines of code per module and per layer.")
    parser.add_argument("--layers", action="store_true", help="the totals per layer only")
    args = parser.parse_args(argv)
    print(report(count(), per_module=not args.layers))


if __name__ == "__main__":
    main()
