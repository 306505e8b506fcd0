"""benchmarks/line_counts.py: code lines (no blanks, comments or docstrings) per module and per layer.

    python benchmarks/line_counts.py            each module, then each layer
    python benchmarks/line_counts.py --layers   each layer
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "line_counts.py"


@pytest.fixture(scope="module")
def counts() -> ModuleType:
    spec = importlib.util.spec_from_file_location("line_counts", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows(counts: ModuleType) -> list[tuple[str, str, int, int]]:
    """Every module counted once for the module (tokenizing them all takes about a second)."""
    return counts.count()


SAMPLE = '''"""The module's docstring,
on two lines."""
from __future__ import annotations

# a comment on its own line
X = {"a": 1,   # a comment after code
     "b": 2}


class C:
    """A class's docstring."""

    def f(self) -> str:
        "A function's docstring, in plain quotes."
        return """not a docstring:
a string on two lines"""


async def g() -> None:
    """An async function's docstring."""
    "the second string is not a docstring"
'''


def test_code_lines_leave_out_blanks_comments_and_docstrings(counts: ModuleType) -> None:
    # from __future__, X = {, "b": 2}, class C, def f, return (2 lines), async def g, the second string
    assert counts.code_lines(SAMPLE) == 9
    assert counts.code_lines("") == 0
    assert counts.code_lines('"""Only a docstring."""\n') == 0


def test_each_layer_is_its_modules_summed(counts: ModuleType, rows: list[tuple[str, str, int, int]]) -> None:
    assert {layer for layer, *_ in rows} == set(counts.LAYERS)
    report = counts.report(rows)
    for layer in counts.LAYERS:
        total = sum(code for mine, _, code, _ in rows if mine == layer)
        assert re.search(rf"^{layer} +\d+ +{total:,} ", report, re.M), layer
    assert all(code <= physical for _, _, code, physical in rows)


CORE_ROW = re.compile(r"^core +(\d+) +([\d,]+) +([\d,]+)$", re.M)


def test_the_script_prints_the_core_count(counts: ModuleType, rows: list[tuple[str, str, int, int]],
                                          capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    full = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=60, check=True).stdout
    assert "mini_framework/agent.py" in full and "practice_model/server.py" in full
    core = CORE_ROW.search(full)  # the layer table follows the modules'
    assert core is not None, full
    modules, code, physical = int(core[1]), int(core[2].replace(",", "")), int(core[3].replace(",", ""))
    assert modules >= 10 and 0 < code < physical
    # --layers: the same table without the modules (the counts the script made above, not made again)
    monkeypatch.setattr(counts, "count", lambda: rows)
    counts.main(["--layers"])
    layers = capsys.readouterr().out
    assert "mini_framework/agent.py" not in layers
    assert (found := CORE_ROW.search(layers)) is not None and found[0] == core[0], layers
