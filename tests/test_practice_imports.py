"""The practice package's one rule about the core: it imports `mini_framework.numerals.parse_number`
and nothing else from the framework (see the package docstring).

Every import statement of every practice module is read with `ast` (imports inside functions
too), relative ones resolved, so a new `from ..tools import check_name` fails here.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import practice_model as practice

PACKAGE = Path(practice.__file__).resolve().parent
ALLOWED = {("mini_framework.numerals", "parse_number")}
MODULES = sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    """'practice_model.server' for .../practice_model/server.py."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[str, str | None, int]]:
    """(absolute module, imported name or None, line) for every import in a file."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out += [(module, alias.name, node.lineno) for alias in node.names]
    return out


def breaks_the_rule(module: str, name: str | None) -> bool:
    """Whether this import reaches into the framework outside the practice package and the allowed name."""
    if module == "practice_model" or module.startswith("practice_model."):
        return False
    if module != "mini_framework" and not module.startswith("mini_framework."):
        return False                                   # the standard library
    return (module, name) not in ALLOWED


def test_every_practice_module_is_checked():
    names = {p.stem for p in MODULES}
    assert {"server", "checks", "numbers", "pitfalls", "personas", "wire"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_practice_imports_only_parse_number_from_the_core(path):
    bad = [f"line {line}: {module}.{name or ''}" for module, name, line in imports(path) if breaks_the_rule(module, name)]
    assert bad == [], f"{path.name} imports from the core: {bad}"


def test_the_checker_catches_what_it_should(tmp_path):
    assert breaks_the_rule("mini_framework.tools", "check_name")
    assert breaks_the_rule("mini_framework.numerals", "find_numbers")
    assert breaks_the_rule("mini_framework", None)
    assert not breaks_the_rule("mini_framework.numerals", "parse_number")
    assert not breaks_the_rule("practice_model.errors", "ApiError")
    assert not breaks_the_rule("json", None)
    source = PACKAGE / "server.py"
    resolved = {(m, n) for m, n, _ in imports(source)}
    assert ("practice_model", "checks") in resolved          # `from . import checks`
    assert ("practice_model.errors", "ApiError") in resolved  # `from .errors import ApiError`


def test_the_rule_is_written_down():
    assert "imports from the core only `mini_framework.numerals.parse_number`" in " ".join(practice.__doc__.split())


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_no_practice_module_imports_another_ones_private_names(path):
    private = [f"line {line}: {module}.{name}" for module, name, line in imports(path)
               if module.startswith("practice_model") and name and name.startswith("_") and name != "__future__"]
    assert private == [], f"{path.name} reaches into another module's private names: {private}"
