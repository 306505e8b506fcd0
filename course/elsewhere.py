"""Running a learner's function in a new Python process, to see whether what it computes survives a restart.

Python's hash() of a str is salted anew in every process (PYTHONHASHSEED), so a key made with it changes after
a restart. Checks that need a key to be the same everywhere (lessons 10 and 12) run the learner's function here:

    in_another_process(approval_key, "send_email", {"to": "li@example.com"}, "call_1")  # -> repr of its result

The function travels by value (its code, the globals it uses, its closure) as a pickle whose rebuilding needs
only the standard library; modules, and functions of mini_framework, course and the standard library, by name.
"""
from __future__ import annotations

import builtins
import dis
import importlib
import io
import marshal
import os
import pickle
import subprocess
import sys
import types
from typing import Any, Callable

__all__ = ["in_another_process"]

_BY_REFERENCE = ("mini_framework", "practice_model", "course")  # importable in the other process: sent by name


def _global_names(code: types.CodeType) -> set[str]:
    """The global names a function's code reads (not its attribute names), nested code included."""
    names = {str(i.argval) for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _by_reference(function: types.FunctionType) -> bool:
    module = function.__module__ or "__main__"
    top = module.split(".")[0]
    return ("<locals>" not in function.__qualname__ and module != "__main__"
            and (top in sys.stdlib_module_names or top in _BY_REFERENCE))


class _ByValue(pickle.Pickler):
    """Pickles the learner's functions by value, modules by name."""

    def reducer_override(self, obj: Any) -> Any:
        for name in ("FunctionType", "CellType", "CodeType"):  # classes pickle cannot find by their own names
            if obj is getattr(types, name):
                return getattr, (types, name)
        if isinstance(obj, types.ModuleType):
            return importlib.import_module, (obj.__name__,)
        if isinstance(obj, types.CodeType):
            return marshal.loads, (marshal.dumps(obj),)
        if isinstance(obj, types.CellType):
            try:
                return types.CellType, (obj.cell_contents,)
            except ValueError:  # an empty cell
                return types.CellType, ()
        if isinstance(obj, types.FunctionType) and not _by_reference(obj):
            scope = {name: obj.__globals__[name] for name in sorted(_global_names(obj.__code__))
                     if name in obj.__globals__}
            scope["__builtins__"] = builtins
            return (types.FunctionType, (obj.__code__, scope, obj.__name__, obj.__defaults__, obj.__closure__),
                    (None, {"__kwdefaults__": obj.__kwdefaults__, "__qualname__": obj.__qualname__}))
        return NotImplemented


_RUN_THERE = "import pickle, sys\nfunction, args = pickle.load(sys.stdin.buffer)\nprint(repr(function(*args)))\n"


def in_another_process(function: Callable[..., Any], *args: Any) -> str | None:
    """repr(function(*args)) computed by a new Python process with another hash seed; None if it can't be run
    there (something the function uses can't be sent, or it failed there)."""
    buffer = io.BytesIO()
    try:
        _ByValue(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump((function, args))
    except Exception:
        return None
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    path = [p or os.getcwd() for p in sys.path]
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join(path)}
    try:
        done = subprocess.run([sys.executable, "-c", _RUN_THERE], input=buffer.getvalue(), capture_output=True,
                              timeout=60, env=env, check=False)
    except Exception:
        return None
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None
