"""Where lessons 10 and 10b spill long tool results: a new folder for every Run All, removed again.

    SPILL = fresh_folder()        # spilled/run-k2j4h5g1, next to the notebook, empty
    print(masked(text))           # spilled/run-########/tool_result_read_deploy_log_########.txt
    clean_up(SPILL)               # the lesson's last cell: the folder goes, and spilled/ when it is empty

The framework names a spilled file `tool_result_{tool}_{8 random hex digits}.txt`, so that no one
can guess the name and nothing is ever overwritten. Those digits, and this run's folder, would make
the notebook print something different on every run; `masked` shows them as ########, so that the
committed outputs stay comparable. The folder's path is relative (the notebook's folder) and always
as long, so token counts that include it don't depend on where the course is installed.

Each call of `fresh_folder()` makes a folder of its own, so two kernels running the lesson at once
never share one. It is removed by `clean_up` (the lesson's last cell) and, should the kernel stop
before that cell, when the kernel's Python exits; folders an interrupted run left behind are removed
by the next run after an hour. `spilled/.gitignore` keeps git out of whatever is there meanwhile.

Concessions: a run's folder lives next to the notebook (not in the system's temporary folder, whose
path differs between machines); the hour is a guess at how long a Run All may take.
"""
from __future__ import annotations

import atexit
import re
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path("spilled")
KEEP_SECONDS = 3600  # older run folders are removed by fresh_folder()
_RANDOM = re.compile(r"(run-)[a-z0-9_]{8}\b|(tool_result_\w+?_)[0-9a-f]{8}(\.txt)")


def fresh_folder(root: Path = ROOT) -> Path:
    """A new, empty folder for this run's spilled results: `root/run-XXXXXXXX` (by default relative to the working
    directory, as the notebook gives it to the model).

    >>> import tempfile
    >>> folder = fresh_folder(Path(tempfile.mkdtemp()) / "spilled")
    >>> folder.parent.name, folder.name.startswith("run-"), len(folder.name), list(folder.iterdir())
    ('spilled', True, 12, [])
    """
    for attempt in range(3):  # another kernel's clean_up may remove an empty root in between
        try:
            root.mkdir(exist_ok=True)
            (root / ".gitignore").write_text("# lessons 10 and 10b's spilled tool results: not part of the course\n*\n")
            made = Path(tempfile.mkdtemp(prefix="run-", dir=root))  # absolute from Python 3.12 on
            break
        except FileNotFoundError:
            if attempt == 2:
                raise
    now = time.time()
    for old in root.glob("run-*"):
        try:
            if old.is_dir() and old.name != made.name and now - old.stat().st_mtime > KEEP_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
        except OSError:  # removed by another kernel meanwhile
            pass
    folder = root / made.name
    atexit.register(clean_up, made)
    return folder


def clean_up(folder: Path) -> None:
    """Remove a run's folder, and its parent (`spilled/`) when nothing but the .gitignore is left in it.

    >>> import tempfile
    >>> folder = fresh_folder(Path(tempfile.mkdtemp()) / "spilled")
    >>> _ = (folder / "tool_result_x_1a2b3c4d.txt").write_text("x")
    >>> clean_up(folder); folder.exists(), folder.parent.exists()
    (False, False)
    """
    folder = Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    root = folder.parent
    try:
        if root.is_dir() and {p.name for p in root.iterdir()} <= {".gitignore"}:
            (root / ".gitignore").unlink(missing_ok=True)
            root.rmdir()  # fails, and leaves it, when another kernel has just made its folder there
    except OSError:
        pass


def masked(text: str) -> str:
    """`text` with the random part of run folders and spilled files' names shown as ########.

    >>> masked("spilled/run-k2j4h5g1/tool_result_read_deploy_log_1a2b3c4d.txt")
    'spilled/run-########/tool_result_read_deploy_log_########.txt'
    """
    def hide(match: re.Match[str]) -> str:
        if match.group(1):
            return match.group(1) + "########"
        return match.group(2) + "########" + match.group(3)
    return _RANDOM.sub(hide, text)
