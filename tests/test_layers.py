"""The framework's layers, held: core <- features <- built-in tools <- your code; nothing imports up.

    core       mini_framework/*.py          imports only core modules (and the standard library, pydantic)
    feature    mini_framework/<feature>/    imports the core and its own folder
    built-in   mini_framework/builtin/      imports the core, the features and its own folder
    adapter    mini_framework/mcp/          tools from other programs: imports the core, the features, its own folder
    app        mini_framework/demo/         imports the core, the features, the built-in tools, its own folder

Every import statement of every module is read with `ast` (imports inside functions and under
TYPE_CHECKING too), relative ones resolved. The core reaches a feature only by name, through
`hooks.feature()` (a shorthand such as `Agent(stream=True)` or a tool option such as `cache=`), and
`openai` is imported only inside the connection's functions, when a client is made.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import mini_framework

PACKAGE = Path(mini_framework.__file__).resolve().parent
FEATURES = ("approvals", "media", "budget", "streaming", "schemas", "strict", "display", "numerals", "functions",
            "chat", "delegation", "gauntlet")
BUILTIN = "builtin"
ADAPTERS = ("mcp",)  # tools from other programs (MCP servers): like built-in tools, plus an optional SDK
APPS = ("demo",)  # applications inside the package: they may import the core, the features and the built-in tools
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
THIRD_PARTY = {"pydantic", "typing_extensions", "pydantic_core"}  # what any layer may import at module level
LAZY = {"openai": {"mini_framework.connection"}, "dotenv": {"mini_framework.connection"},
        "tiktoken": {"mini_framework.budget.tokens"},
        "mcp": {"mini_framework.mcp.session", "mini_framework.mcp.serve"}}  # imported inside functions only, and only there


def module_name(path: Path) -> str:
    """'mini_framework.approvals.gate' for .../mini_framework/approvals/gate.py."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> tuple[str, str]:
    """(layer, folder) of a framework module: ("core", ""), ("feature", "media"), ("builtin", "builtin")."""
    parts = module.split(".")
    if len(parts) == 1:
        return "front door", ""
    if parts[1] in FEATURES and (len(parts) > 2 or (PACKAGE / parts[1]).is_dir()):
        return "feature", parts[1]
    if parts[1] == BUILTIN:
        return "builtin", BUILTIN
    if parts[1] in APPS:
        return "app", parts[1]
    if parts[1] in ADAPTERS:
        return "adapter", parts[1]
    return "core", ""


def imports(path: Path) -> list[tuple[str, str | None, int, bool]]:
    """(absolute module, imported name or None, line, at module level) for every import in a file."""
    here = module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    out: list[tuple[str, str | None, int, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, None, node.lineno, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            out += [(module, alias.name, node.lineno, id(node) in top) for alias in node.names]
    return out


def target(module: str, name: str | None) -> str:
    """The framework module an import reaches: `from . import saved` reaches mini_framework.approvals.saved."""
    if name and (PACKAGE.parent / Path(*f"{module}.{name}".split("."))).with_suffix(".py").exists():
        return f"{module}.{name}"
    if name and (PACKAGE.parent / Path(*f"{module}.{name}".split("."))).is_dir():
        return f"{module}.{name}"
    return module


def breaks(importer: str, module: str, name: str | None, top_level: bool) -> str | None:
    """Why this import breaks the layer rule, or None."""
    root = module.split(".")[0]
    if root in LAZY:
        if importer not in LAZY[root]:
            return f"{root} may be imported only by {sorted(LAZY[root])}"
        return f"{root} must be imported inside a function, when it is needed" if top_level else None
    if root != "mini_framework":
        if root in sys.stdlib_module_names or root in THIRD_PARTY:
            return None
        return f"{root} is not a dependency of the framework"
    kind, folder = layer(importer)
    reached = target(module, name)
    if reached == "mini_framework":
        return None if kind == "front door" else "the package's front door is for your code, not the framework's"
    to_kind, to_folder = layer(reached)
    if kind == "core" and to_kind != "core":
        return f"the core imports {reached} (a {to_kind}): reach it by name through hooks.feature()"
    if kind == "feature" and not (to_kind == "core" or to_folder == folder):
        return f"the {folder} feature imports {reached}: a feature imports the core and its own folder only"
    if kind == "builtin" and to_kind not in ("core", "feature", "builtin"):
        return f"a built-in tool imports {reached}"
    if kind == "adapter" and not (to_kind in ("core", "feature") or to_folder == folder):
        return f"the {folder} adapter imports {reached}"
    if kind == "app" and not (to_kind in ("core", "feature", "builtin") or to_folder == folder):
        return f"the {folder} app imports {reached}"
    return None


def test_every_layer_is_there():
    kinds = {layer(module_name(p))[0] for p in MODULES}
    assert kinds == {"front door", "core", "feature", "builtin", "app", "adapter"}
    assert {layer(module_name(p))[1] for p in MODULES if layer(module_name(p))[0] == "feature"} == set(FEATURES)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_nothing_imports_up(path):
    importer = module_name(path)
    bad = [f"line {line}: {why}" for module, name, line, top in imports(path)
           if (why := breaks(importer, module, name, top)) and layer(importer)[0] != "front door"]
    assert bad == [], f"{importer}: {bad}"


def test_the_checker_catches_what_it_should():
    assert breaks("mini_framework.agent", "mini_framework.approvals", "Pending", True)
    assert breaks("mini_framework.agent", "mini_framework.approvals.gate", "Approvals", False)  # in a function too
    assert breaks("mini_framework.budget.trimming", "mini_framework.media.vision", "TOOL_OUTPUT_LABEL", True)
    assert breaks("mini_framework.tools", "openai", None, False)
    assert breaks("mini_framework.connection", "openai", None, True)  # at module level: not lazy
    assert breaks("mini_framework.executor", "mini_framework", "Agent", True)
    assert breaks("mini_framework.media.store", "numpy", None, True)
    assert not breaks("mini_framework.connection", "openai", "OpenAI", False)
    assert not breaks("mini_framework.budget.spill", "mini_framework.budget.tokens", "estimate_tokens", True)
    assert not breaks("mini_framework.builtin.mail.tool", "mini_framework.approvals", "Pending", True)
    assert not breaks("mini_framework.demo.support", "mini_framework.builtin.mail", "Outbox", True)
    assert breaks("mini_framework.builtin.mail.tool", "mini_framework.demo.shop", "Shop", True)
    assert not breaks("mini_framework.builtin.files.toolset", "mini_framework.tools", "tool", True)
    assert breaks("mini_framework.builtin.files.search", "re2", None, True)  # google-re2 is no dependency
    assert breaks("mini_framework.builtin.files.paths", "mini_framework", "FileToolset", True)
    assert not breaks("mini_framework.approvals.gate", "mini_framework.hooks", "Hook", True)
    assert not breaks("mini_framework.mcp.toolbox", "mini_framework.media.types", "ImgUrl", True)
    assert breaks("mini_framework.mcp.toolbox", "mini_framework.builtin.files", "FileToolset", True)
    assert breaks("mini_framework.mcp.toolbox", "mcp", "Client", False)  # the SDK: only where a server starts
    assert breaks("mini_framework.mcp.session", "mcp", "Client", True)  # ...and inside a function
    gate = imports(PACKAGE / "approvals" / "gate.py")
    assert ("mini_framework.hooks", "Hook", ) in {(m, n) for m, n, _, _ in gate}  # `from ..hooks import Hook`


def test_the_core_reaches_features_only_through_hooks_feature():
    """No `importlib.import_module` in the core but the one in hooks.feature()."""
    for path in MODULES:
        importer = module_name(path)
        if layer(importer)[0] != "core" or importer == "mini_framework.hooks":
            continue
        if importer == "mini_framework.connection":  # the practice model's package, outside the framework
            assert "importlib.import_module(OFFLINE_PACKAGE)" in path.read_text(encoding="utf-8")
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        dynamic = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "import_module"]
        dynamic += [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "__import__"]
        assert dynamic == [], f"{importer} imports by name at lines {dynamic}: use hooks.feature()"


def test_importing_the_tools_loads_neither_openai_nor_a_feature():
    code = ("import sys, mini_framework.tools, mini_framework.agent; "
            "print(sorted(m for m in sys.modules if m == 'openai' or m.split('.')[:2] in "
            "[['mini_framework', f] for f in ('approvals', 'media', 'budget', 'streaming', 'builtin')]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_front_door_names_every_public_name_lazily():
    code = ("import sys, mini_framework as m; before = set(sys.modules); names = m.__all__; "
            "[getattr(m, n) for n in names]; print(len(names), 'openai' in before)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    count, openai_early = out.stdout.split()
    assert int(count) >= 55 and openai_early == "False"
