"""The code a lesson writes inline *is* the framework's code (README, "Changing a lesson").

A solution cell tagged `same-as:<module>.<function>` defines that function; it must be
character for character the framework's, so what is taught and what ships cannot drift.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def tagged_cells() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted((ROOT / "solutions").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for tag in cell.get("metadata", {}).get("tags", []):
                if tag.startswith("same-as:"):
                    found.append((path.stem, tag.removeprefix("same-as:"), "".join(cell["source"])))
    return found


def test_some_lesson_code_is_pinned_to_the_framework():
    assert tagged_cells(), "no cell is tagged same-as:..."


@pytest.mark.parametrize("notebook,target,source", tagged_cells(), ids=lambda x: x if "\n" not in str(x) else "")
def test_lesson_code_is_the_framework_code(notebook, target, source):
    module_name, _, name = target.rpartition(".")
    shipped = inspect.getsource(getattr(importlib.import_module(module_name), name))
    taught = next(ast.get_source_segment(source, node) for node in ast.parse(source).body
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name)
    assert taught == shipped.rstrip("\n"), f"{notebook} teaches a different {name} than {module_name} ships"
