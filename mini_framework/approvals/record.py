"""Where approvals live outside one process: the signing key of saved runs, and the record of spent approvals.

A saved run can be copied, so a signature alone cannot stop two processes from loading it and running its
approved call twice. Every approval of a run that was ever saved is therefore recorded as spent before the
call runs: one empty file per approval in an owner-only folder, created with O_EXCL (atomic on every
platform, no locks), so of two processes exactly one gets to run it.

    home()                 $MINI_FRAMEWORK_HOME, else ~/.mini_framework (created 0700)
    signing_key(key)       the key given, else $MINI_FRAMEWORK_SAVE_KEY, else home()/save.key (made on first use)
    spend(folder, run, b)  True the first time approval `b` of run `run` is spent, False ever after

Concessions: the record grows by one empty file per approval used in a saved run; delete files older than
your longest pause if that matters. Whoever can write the key file can sign runs: keep it owner-only (it is
created so), or give the key explicitly from your secret store.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import stat
from pathlib import Path

__all__ = ["HOME_VARIABLE", "KEY_VARIABLE", "home", "signing_key", "spend", "spent_folder"]

HOME_VARIABLE = "MINI_FRAMEWORK_HOME"
KEY_VARIABLE = "MINI_FRAMEWORK_SAVE_KEY"


def home() -> Path:
    """The folder for the framework's own files (owner-only), made if missing; refused if it is someone else's,
    a symlink, writable by others, or given as a relative path (it would move with the working folder)."""
    folder = Path(os.environ.get(HOME_VARIABLE) or Path.home() / ".mini_framework").expanduser()
    if not folder.is_absolute():
        raise ValueError(f"{HOME_VARIABLE} must be an absolute path, not {str(folder)!r:.80}: a relative one "
                         "moves with the working folder, and so would the record of spent approvals")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    _owned(folder)
    return folder


def signing_key(key: bytes | str | None = None) -> bytes:
    """The secret saved runs are signed with (see the module docstring).

    >>> signing_key("correct horse battery staple") == signing_key(b"correct horse battery staple")
    True
    """
    if key is None:
        key = os.environ.get(KEY_VARIABLE) or None
    if key is not None:
        data = key.encode() if isinstance(key, str) else bytes(key)
        if len(data) < 16:
            raise ValueError("a signing key for saved runs must be at least 16 bytes long")
        return data
    path = home() / "save.key"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return _read_key(path)
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_bytes(32))
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    """The key in an existing key file: a plain file of this user's that no one else can read or write."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:  # a symlink (ELOOP), a FIFO with no writer, no permission
        raise PermissionError(f"{path} is not a plain file of yours: refusing to use it as a key "
                              f"({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        _owned(path, regular=True, info=os.fstat(f.fileno()))
        data = f.read(4096)
    if len(data) < 16:
        raise ValueError(f"{path} holds no usable key (under 16 bytes): delete it to make a new one")
    return data


def spent_folder() -> str:
    """The folder that records spent approvals (home()/spent, owner-only)."""
    folder = home() / "spent"
    folder.mkdir(mode=0o700, exist_ok=True)
    _owned(folder)
    return str(folder)


def spend(folder: str, run_id: str, bound_to: str) -> bool:
    """Mark approval `bound_to` of run `run_id` as used: True if this is its first use anywhere, else False.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> spend(folder, "run1", "ab12"), spend(folder, "run1", "ab12"), spend(folder, "run2", "ab12")
    (True, False, True)
    """
    name = hashlib.sha256(f"{run_id}\x00{bound_to}".encode()).hexdigest()
    try:
        fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL
                     | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def _owned(path: Path, regular: bool = False, info: os.stat_result | None = None) -> None:
    """Refuse a path that is a symlink, someone else's, open to others (a folder others can write to: they could
    delete the record of spent approvals; a key others can read: they could sign runs), or not a plain file
    or folder."""
    info = info if info is not None else path.lstat()
    plain = stat.S_ISREG(info.st_mode) if regular else stat.S_ISDIR(info.st_mode)
    if stat.S_ISLNK(info.st_mode) or not plain:
        raise PermissionError(f"{path} is not a plain {'file' if regular else 'folder'}: refusing to use it")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise PermissionError(f"{path} belongs to another user: refusing to use it")
    if os.name == "posix" and info.st_mode & (0o077 if regular else 0o022):
        raise PermissionError(f"{path} is open to other users (mode {stat.S_IMODE(info.st_mode):o}): refusing to use "
                              f"it; chmod {'600' if regular else '700'} it if it is yours")
