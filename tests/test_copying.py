"""Copy what you need, and it works: the core alone, the core and one feature, everything but one feature.

Each copy runs in an interpreter of its own that sees nothing but the copy, the standard library and
the distributions `openai` and `pydantic` need (found from their metadata, symlinked into one folder):

    python -I -S -c "import sys; sys.path[:0] = [PROJECT, SITE]; ..."

`-I` drops the user site, PYTHONPATH and the working directory; `-S` drops site-packages and the `.pth`
files in it, among them the editable install's import hook, which would otherwise find this repository's
`mini_framework` and `practice_model` wherever sys.path points. The practice server runs in the test
process, on 127.0.0.1; the copy reaches it through LLM_BASE_URL, as it would reach a real provider.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Iterator

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from practice_model import PracticeServer

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mini_framework"
FOLDERS = tuple(sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()))  # features, builtin/
README = (ROOT / "README.md").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- an interpreter that sees only the copy


def distributions(*names: str) -> set[str]:
    """The distributions `names` need to be imported, themselves included (no extras; markers evaluated).

    >>> "pydantic-core" in distributions("pydantic")
    True
    """
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        for line in importlib.metadata.distribution(name).requires or ():
            requirement = Requirement(line)
            if requirement.marker is None or Marker(str(requirement.marker)).evaluate({"extra": ""}):
                todo.append(requirement.name)
    return seen


def top_level(distribution: str) -> set[str]:
    """What a distribution installs at the top of site-packages: packages, modules, its .dist-info."""
    found: set[str] = set()
    for file in importlib.metadata.distribution(distribution).files or ():
        first = Path(file).parts[0]
        if first in ("..", "__pycache__") or first.endswith((".pth", ".data")):
            continue
        found.add(first)
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of symlinks: openai, pydantic and what they import, nothing else (no .pth files)."""
    folder = tmp_path_factory.mktemp("site")
    for distribution in sorted(distributions("openai", "pydantic")):
        origin = Path(str(importlib.metadata.distribution(distribution).locate_file("")))
        for name in top_level(distribution):
            if (origin / name).exists() and not (folder / name).exists():
                (folder / name).symlink_to(origin / name)
    return folder


@pytest.fixture(scope="module")
def server() -> Iterator[PracticeServer]:
    with PracticeServer(api_key="copy-test-key") as practice:
        yield practice


def copy_framework(project: Path, folders: tuple[str, ...] = ()) -> Path:
    """The core (mini_framework/*.py, its type stub and py.typed) and the given folders, copied into
    `project`/mini_framework."""
    target = project / "mini_framework"
    target.mkdir(parents=True)
    for path in [*PACKAGE.glob("*.py"), *PACKAGE.glob("*.pyi"), PACKAGE / "py.typed"]:
        shutil.copy2(path, target / path.name)
    for folder in folders:
        shutil.copytree(PACKAGE / folder, target / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return project


class Launched:
    """An interpreter running one script against one copy; `stdout()` waits for it."""

    def __init__(self, project: Path, site: Path, code: str, server: PracticeServer | None = None) -> None:
        env = {"HOME": str(project), "MINI_FRAMEWORK_HOME": str(project / ".mini_framework"), "PATH": os.defpath}
        if server is not None:  # as a real provider is configured; LLM_MODEL=practice is just a name here
            env |= {"LLM_BASE_URL": server.base_url, "LLM_API_KEY": "copy-test-key", "LLM_MODEL": "practice"}
        prelude = textwrap.dedent(f"""\
            import sys
            sys.path[:0] = [{str(project)!r}, {str(site)!r}]
            import importlib.util
            assert importlib.util.find_spec("practice_model") is None, "the practice model is importable"
            assert importlib.util.find_spec("pytest") is None, "this interpreter sees more than the copy"
            import mini_framework
            assert mini_framework.__file__.startswith({str(project)!r}), mini_framework.__file__
            """)
        self.project = project
        self.process = subprocess.Popen([sys.executable, "-I", "-S", "-c", prelude + textwrap.dedent(code)],
                                        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)

    def stdout(self, timeout: float = 60) -> str:
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
            pytest.fail(f"the copy's interpreter did not finish in {timeout} s: {err[-2000:]}")
        assert self.process.returncode == 0, err[-3000:]
        return out


WEATHER = '''
from mini_framework import Agent, connect, tool

@tool
def get_weather(city: str) -> str:
    """Current weather in a city.

    Args:
        city: the city name, e.g. 北京 or Paris
    """
    return '{"temperature": 22, "condition": "晴"}'
'''

LOADED = '''
import json
loaded = sorted({m.split(".")[1] for m in sys.modules if m.startswith("mini_framework.")})
print("LOADED", json.dumps(loaded))
'''


def loaded(stdout: str) -> set[str]:
    """The framework modules (first part after `mini_framework.`) the copy's interpreter had imported."""
    line = next(line for line in stdout.splitlines() if line.startswith("LOADED "))
    return set(json.loads(line.removeprefix("LOADED ")))


def files(project: Path) -> set[str]:
    """The files of a copy, relative to it (caches left out)."""
    return {str(p.relative_to(project)) for p in project.rglob("*") if p.is_file() and "__pycache__" not in p.parts}



# ----------------------------------------------------------------------------- the README's copy commands


def readme_commands(which: int) -> list[str]:
    """The shell lines (no pip, no comments) of bash block `which` of the README's section on copying."""
    section = README.split("\n## Copying the framework", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```bash\n(.*?)```", section, re.S)[which]
    return [line for line in block.splitlines() if line.strip() and not line.startswith(("pip ", "#"))]


def copy_as_the_readme_says(project: Path, *blocks: int) -> Path:
    """Run the README's copy commands of `blocks` from the repository's root, into `project`."""
    project.mkdir(parents=True, exist_ok=True)
    for which in blocks:
        for line in readme_commands(which):
            command = line.replace("/path/to/your/project", shlex.quote(str(project)))
            subprocess.run(["bash", "-euc", command], cwd=ROOT, check=True, timeout=30)
    return project


# ----------------------------------------------------------------------------- the copies, run at once

CORE_LOOP = WEATHER + '''
result = Agent(*connect(), [get_weather]).run("北京现在天气怎么样？")
print("ANSWER", result.text)
print("CALLS", [r.call.name for r in result.tool_results])
''' + LOADED

APPROVALS = '''
from mini_framework import Agent, connect, tool

sent = []

@tool(requires_approval=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an e-mail.

    Args:
        to: the address, e.g. zhang.san@example.com
        subject: the subject line
        body: the text of the message
    """
    sent.append(to)
    return "sent"

agent = Agent(*connect(), [send_email])
result = agent.run("Send an email to zhang.san@example.com saying the meeting moved to Friday")
print("PAUSED", result.paused, [item.name for item in result.pending], sent)
result.pending[0].approve()
result = agent.resume(result)
print("RESUMED", result.paused, sent)
''' + LOADED

REFUSALS = '''
import mini_framework
from mini_framework import Agent, Executor, FeatureMissing, connect, tool
from mini_framework.connection import NoProviderError

@tool(requires_approval=True)
def delete_order(order_id: int) -> str:
    """Delete an order.

    Args:
        order_id: the order's number
    """
    return "deleted"

@tool
def ping() -> str:
    """Answer pong."""
    return "pong"

def refused(make):
    try:
        make()
    except FeatureMissing as missing:
        return str(missing)
    return "BUILT"

print("GATED", refused(lambda: Agent(None, "m", [delete_order])))
print("EXECUTOR", refused(lambda: Executor([delete_order])))
print("STREAM", refused(lambda: Agent(None, "m", [ping], stream=True)))
print("APPROVER", refused(lambda: Agent(None, "m", [ping], approver=lambda item: True)))
print("NAME", refused(lambda: mini_framework.Pending))
print("STRICT", refused(lambda: tool(strict=True)(ping.func)))
star = {}
exec("from mini_framework import *", star)
print("STAR", "Agent" in star, "Pending" in star)
try:
    connect()
except NoProviderError as error:
    print("NOPROVIDER", error)
''' + LOADED


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory, site: Path, server: PracticeServer) -> Iterator[dict[str, Launched]]:
    """Every copy this module tests, made and started at once (an interpreter that imports openai takes seconds)."""
    made = {
        "core": (copy_as_the_readme_says(tmp_path_factory.mktemp("core"), 0), CORE_LOOP, server),
        "approvals": (copy_framework(tmp_path_factory.mktemp("approvals"), ("approvals",)), APPROVALS, server),
        "refusals": (copy_framework(tmp_path_factory.mktemp("refusals")), REFUSALS, None),
        **{f"no {name}": (copy_framework(tmp_path_factory.mktemp(f"no_{name}"), tuple(f for f in FOLDERS if f != name)),
                          CORE_LOOP, server) for name in ("media", "budget")},
    }
    launched = {name: Launched(project, site, code, practice) for name, (project, code, practice) in made.items()}
    yield launched
    for one in launched.values():
        if one.process.poll() is None:
            one.process.kill()
        one.process.communicate()


def lines(stdout: str, label: str) -> list[str]:
    """What the script printed after `label` on each of its lines."""
    return [line.removeprefix(label).strip() for line in stdout.splitlines() if line.startswith(label + " ")]


# ----------------------------------------------------------------------------- the tests


def test_the_readme_copies_the_core_alone_the_features_asked_for_or_everything(tmp_path: Path) -> None:
    core = copy_as_the_readme_says(tmp_path / "core", 0)
    assert files(core) == files(copy_framework(tmp_path / "expected_core"))
    some = copy_as_the_readme_says(tmp_path / "some", 0, 1)
    assert files(some) == files(copy_framework(tmp_path / "expected_some", ("approvals", "streaming")))
    everything = copy_as_the_readme_says(tmp_path / "everything", 2)
    assert files(everything) == files(copy_framework(tmp_path / "expected_all", FOLDERS))


def test_the_readme_says_what_each_folder_gives_and_needs() -> None:
    section = README.split("\n## Copying the framework", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)/` \|", section, re.M)
    assert sorted(rows) == sorted(FOLDERS), "a folder of mini_framework/ without its row in the README's table"


def test_the_core_alone_runs_a_tool_loop(copies: dict[str, Launched]) -> None:
    out = copies["core"].stdout()
    assert not [p for p in (copies["core"].project / "mini_framework").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert "22" in lines(out, "ANSWER")[0]
    assert lines(out, "CALLS") == ["['get_weather']"]
    assert loaded(out).isdisjoint(FOLDERS), loaded(out)


def test_the_core_and_approvals_pause_approve_and_resume(copies: dict[str, Launched]) -> None:
    out = copies["approvals"].stdout()
    assert lines(out, "PAUSED") == ["True ['send_email'] []"]
    assert lines(out, "RESUMED") == ["False ['zhang.san@example.com']"]
    assert "approvals" in loaded(out) and loaded(out).isdisjoint({"media", "budget", "streaming", "builtin"})


def test_the_core_alone_refuses_what_needs_a_missing_folder(copies: dict[str, Launched]) -> None:
    out = copies["refusals"].stdout()
    for label, folder in [("GATED", "approvals"), ("EXECUTOR", "approvals"), ("STREAM", "streaming"),
                          ("APPROVER", "approvals"), ("NAME", "approvals"), ("STRICT", "strict")]:
        [message] = lines(out, label)
        assert f"mini_framework/{folder}/" in message and "copy" in message, (label, message)
    assert lines(out, "GATED")[0].startswith("delete_order has requires_approval")
    assert lines(out, "STAR") == ["True False"]  # `import *` gives what this copy has
    [no_provider] = lines(out, "NOPROVIDER")
    assert all(name in no_provider for name in ("LLM_BASE_URL", "LLM_API_KEY", "LLM_MODEL"))
    assert loaded(out).isdisjoint(FOLDERS)


@pytest.mark.parametrize("without", ["media", "budget"])
def test_everything_but_one_folder_still_runs(copies: dict[str, Launched], without: str) -> None:
    out = copies[f"no {without}"].stdout()
    assert not (copies[f"no {without}"].project / "mini_framework" / without).exists()
    assert "22" in lines(out, "ANSWER")[0]
    assert without not in loaded(out) and "approvals" not in loaded(out)


# ----------------------------------------------------------------------------- the whole folder, the README and the demo


def readme_first_example() -> str:
    """The README's first Python block."""
    return re.findall(r"```python\n(.*?)```", README, re.S)[0]


def test_the_whole_folder_runs_the_readme_example_and_the_demo(tmp_path: Path, site: Path,
                                                                server: PracticeServer) -> None:
    project = tmp_path / "project"
    shutil.copytree(PACKAGE, project / "mini_framework", ignore=shutil.ignore_patterns("__pycache__"))
    demo = "from mini_framework.demo.__main__ import main\nprint('DEMO', main(['--no-chart']))\n"
    out = Launched(project, site, readme_first_example() + "\n" + demo, server).stdout(timeout=120)
    assert "22" in out.split("user>")[0]  # the README's weather answer, before the demo starts
    assert "Support shop demo against practice" in out and "[approver] APPROVED refund_order" in out
    assert lines(out, "DEMO") == ["0"]


def test_the_demo_without_a_provider_says_it_needs_one(tmp_path: Path, site: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PACKAGE, project / "mini_framework", ignore=shutil.ignore_patterns("__pycache__"))
    code = "from mini_framework.demo.__main__ import main\nsys.exit(main([]))\n"
    launched = Launched(project, site, code)
    out, err = launched.process.communicate(timeout=120)
    assert launched.process.returncode == 2, err[-2000:]
    assert "needs a configured provider" in err and "LLM_BASE_URL" in err and "Traceback" not in err
