"""The README is part of the product: its commands are what CI runs, its code runs."""
from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_ci_runs_exactly_the_readme_install_and_test_commands():
    lines = [line.split("#")[0].strip() for block in blocks("bash") for line in block.splitlines()]
    test_command = next(line for line in lines if line.endswith("pytest"))
    second = next(line for line in lines if line.endswith("pytest -m provider_pass"))
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in ci and second in ci and ci.index(second) > ci.index(test_command)


def test_quickstart_installs_the_same_way_and_names_both_test_commands():
    quickstart = README.split("## Quickstart", 1)[1].split("## ", 1)[0]
    commands = [line for block in re.findall(r"```bash\n(.*?)```", quickstart, re.S) for line in block.splitlines()]
    assert len(commands) == 3 and commands[0].split("&&")[:2] == commands[1].split("&&")[:2]
    assert "jupyter lab" in commands[0] and commands[1].endswith("pytest")
    assert commands[2].startswith(".venv/bin/pytest -m provider_pass")


def test_python_examples_run(capsys):
    for code in blocks("python"):
        exec(compile(code, "README.md", "exec"), {})
    assert "22" in capsys.readouterr().out


def test_every_lesson_in_the_curriculum_table_exists():
    for link in re.findall(r"\]\((lessons/[^)]+\.ipynb)\)", README):
        assert (ROOT / link).exists() and (ROOT / link.replace("lessons/", "solutions/")).exists(), link


def test_the_readme_and_the_notebooks_name_no_unpublished_source():
    texts = {"README.md": README}
    for path in sorted((ROOT / "solutions").glob("*.ipynb")) + sorted((ROOT / "lessons").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[str(path.relative_to(ROOT))] = "\n".join("".join(c["source"]) for c in cells)
    for folder in ("mini_framework", "practice_model", "course"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    pattern = re.compile(r"(?i)\bthe (?:seed )?article\b|\bseed(?:s| article| document)\b|\(seed:\s*\d|§\s*\d")
    found = {name: pattern.findall(text) for name, text in texts.items() if pattern.search(text)}
    assert not found, f"say it in the course's own words, or cite a public source: {found}"
