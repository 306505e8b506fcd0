"""The practice package's one rule about the framework: it imports nothing from `mini_framework`
(see the package docstring). A test double that shared code with what it tests could share its bugs.

Every import statement of every practice module is read with `ast` (imports inside functions
too, `importlib.import_module("...")` calls with a literal name as well), relative ones resolved,
so a new `from mini_framework.tools import check_name` or `import mini_framework` fails here.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import practice_model as practice

PACKAGE = Path(practice.__file__).resolve().parent
MODULES = sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    """'practice_model.server' for .../practice_model/server.py."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, root: Path = PACKAGE.parent) -> list[tuple[str, str | None, int]]:
    """(absolute module, imported name or None, line) for every import in a file."""
    here = module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: list[tuple[str, str | None, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out += [(module, alias.name, node.lineno) for alias in node.names]
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))
              and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append((node.args[0].value, None, node.lineno))
    return out


def breaks_the_rule(module: str, name: str | None) -> bool:
    """Whether this import reaches into the framework.

    >>> breaks_the_rule("mini_framework.numerals", "parse_number"), breaks_the_rule("practice_model.numerals", None)
    (True, False)
    """
    return module == "mini_framework" or module.startswith("mini_framework.")


def test_every_practice_module_is_checked():
    names = {p.stem for p in MODULES}
    assert {"server", "checks", "numbers", "pitfalls", "personas", "wire"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_no_practice_module_imports_the_framework(path):
    bad = [f"line {line}: {module}.{name or ''}" for module, name, line in imports(path) if breaks_the_rule(module, name)]
    assert bad == [], f"{path.name} imports from mini_framework (copy what it needs into practice_model/): {bad}"


def test_the_checker_catches_what_it_should(tmp_path):
    assert breaks_the_rule("mini_framework.tools", "check_name")
    assert breaks_the_rule("mini_framework.numerals", "parse_number")
    assert breaks_the_rule("mini_framework", None)
    assert breaks_the_rule("mini_framework", "connect")
    assert not breaks_the_rule("practice_model.errors", "ApiError")
    assert not breaks_the_rule("mini_frameworks", None)
    assert not breaks_the_rule("json", None)
    sneaky = tmp_path / "practice_model" / "sneaky.py"
    sneaky.parent.mkdir()
    sneaky.write_text("import importlib\n\ndef f():\n    from .. import numerals\n"
                      "    import mini_framework.tools\n    return importlib.import_module('mini_framework.numerals')\n")
    found = {m for m, _, _ in imports(sneaky, tmp_path) if breaks_the_rule(m, None)}
    assert found == {"mini_framework.tools", "mini_framework.numerals"}
    source = PACKAGE / "server.py"
    resolved = {(m, n) for m, n, _ in imports(source)}
    assert ("practice_model", "checks") in resolved          # `from . import checks`
    assert ("practice_model.errors", "ApiError") in resolved  # `from .errors import ApiError`


def test_the_rule_is_written_down():
    assert "the practice package imports nothing from `mini_framework`" in " ".join(practice.__doc__.split())


def test_the_package_imports_without_the_framework(tmp_path):
    """Run in a fresh interpreter that cannot import mini_framework at all: the practice model still answers."""
    import subprocess
    import sys
    script = ("import sys, importlib.abc\n"
              "class Block(importlib.abc.MetaPathFinder):\n"
              "    def find_spec(self, name, path=None, target=None):\n"
              "        if name == 'mini_framework' or name.startswith('mini_framework.'):\n"
              "            raise ModuleNotFoundError(f'blocked: {name}')\n"
              "sys.meta_path.insert(0, Block())\n"
              "import pkgutil, importlib, practice_model\n"
              "for m in pkgutil.walk_packages(practice_model.__path__, 'practice_model.'):\n"
              "    if not m.name.endswith('__main__'):\n"
              "        importlib.import_module(m.name)\n"
              "from practice_model.personas import DEFAULT_PERSONAS\n"
              "print(sorted(DEFAULT_PERSONAS)[0])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "practice"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_no_practice_module_imports_another_ones_private_names(path):
    private = [f"line {line}: {module}.{name}" for module, name, line in imports(path)
               if module.startswith("practice_model") and name and name.startswith("_") and name != "__future__"]
    assert private == [], f"{path.name} reaches into another module's private names: {private}"
