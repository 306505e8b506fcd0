"""Notebook kernels for the test suite, forked from a warm process: each notebook still gets a kernel
process of its own, started with ipykernel, IPython, openai and pydantic already imported.

    pytest -p course.fork_kernel ...      (pyproject's addopts load it; COURSE_FORK_KERNELS=0 turns it off)

nbval starts one fresh kernel per notebook. Starting one costs about 0.35 s of CPU (ipykernel and IPython),
and each notebook's first cell about 0.7 s more (`import openai` builds its ~1,000 models). Here one *warm*
process per pytest process imports them once (nothing of this repository: the course's own modules are
imported by each kernel, fresh), and every kernel nbval asks for is a `fork()` of it. Measured (farm-bench,
3 paired runs of `pytest solutions`, 23 notebooks): CPU 31 s against 45 s, wall 0.80 of the usual kernels'.
On the whole suite the wall time barely moves (the unit tests set it at 4 workers).

    nbval / jupyter_client --starts--> client (this file run as a script: stdlib only, ~20 ms)
        client --unix socket: argv, cwd, environment, stdin/stdout/stderr--> warm process
        warm process --fork--> kernel (ipykernel's own `launch_new_instance`, in the client's cwd and env)

The client stands in for the kernel towards jupyter_client: it forwards SIGINT and SIGTERM (interrupting
a cell, shutting down), and exits with the kernel's exit status. A client that is killed (SIGKILL, which
cannot be forwarded) closes its socket, and the warm process kills that kernel; a warm process whose
pytest process goes away (its stdin closes) kills its kernels and exits.

Concessions: Linux only (macOS frameworks do not survive fork; Windows has none): elsewhere, or when the
warm process cannot start, kernels start the usual way (the client execs `python -m ipykernel_launcher`).
Only for tests: `jupyter lab` never uses it.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

WARM = ("IPython", "ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel.zmqshell", "openai", "pydantic",
        "jupyter_client.session", "zmq", "tornado.ioloop")  # third-party only: the course's modules stay fresh
SOCKET_ENV = "COURSE_WARM_KERNEL_SOCKET"
READY = b"warm\n"
_started: dict[str, Any] = {}
_lock = threading.Lock()


def enabled() -> bool:
    """Fork kernels here? Linux, and not turned off with COURSE_FORK_KERNELS=0."""
    return sys.platform.startswith("linux") and os.environ.get("COURSE_FORK_KERNELS", "1") != "0"


# -- in the pytest process ------------------------------------------------------------------


def pytest_configure(config: Any) -> None:
    """Make nbval's current-environment kernel start through the client (when enabled)."""
    if not enabled():
        return
    try:
        from nbval import kernel
    except ImportError:
        return
    original = kernel.NbvalKernelspecManager.get_kernel_spec

    def get_kernel_spec(self: Any, kernel_name: str) -> Any:
        spec = original(self, kernel_name)
        if kernel_name == kernel.CURRENT_ENV_KERNEL_NAME:
            path = warm_socket()
            if path is not None:
                spec.argv = [sys.executable, "-I", "-S", __file__, "{connection_file}"]
                spec.env = {**(spec.env or {}), SOCKET_ENV: path}
        return spec

    kernel.NbvalKernelspecManager.get_kernel_spec = get_kernel_spec


def warm_socket() -> str | None:
    """The socket of this process's warm process, started on first use (None: it could not start)."""
    with _lock:
        if "socket" not in _started:
            _started["socket"] = _start_warm()
        path: str | None = _started["socket"]
        return path


def _start_warm() -> str | None:
    folder = tempfile.mkdtemp(prefix="warm_kernels_")
    path = os.path.join(folder, "socket")
    process = subprocess.Popen([sys.executable, "-c", "import course.fork_kernel as f; f.serve()", path],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=Path(__file__).parent.parent)
    assert process.stdout is not None
    ready = process.stdout.readline()  # the warm process says so once it listens
    if ready != READY:
        process.kill()
        shutil.rmtree(folder, ignore_errors=True)
        return None
    _started["process"] = process  # its stdin stays open while this process lives
    atexit.register(_stop_warm, process, folder)
    return path


def _stop_warm(process: subprocess.Popen[bytes], folder: str) -> None:
    """At exit: close its stdin (it kills its kernels and exits), wait for it, remove its folder."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
    shutil.rmtree(folder, ignore_errors=True)


# -- the warm process -----------------------------------------------------------------------


def serve() -> None:
    """Import WARM, listen on the socket, and fork a kernel for each client; exit when stdin closes."""
    import importlib

    for name in WARM:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    path = sys.argv[1]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd hears of it
    kernels: dict[int, socket.socket] = {}  # kernel pid -> its client's connection
    sys.stdout.buffer.write(READY)
    sys.stdout.flush()
    stdin = sys.stdin.fileno()
    try:
        while True:
            ready, _, _ = select.select([listener, stdin, wake_r, *kernels.values()], [], [])
            if stdin in ready and not os.read(stdin, 1024):
                return  # the pytest process is gone
            if wake_r in ready:
                os.read(wake_r, 1024)
                _reap(kernels)
            for conn in [c for c in kernels.values() if c in ready]:
                if not conn.recv(1):  # the client died (killed): so does its kernel
                    pid = next(p for p, c in kernels.items() if c is conn)
                    _kill(pid)
            if listener in ready:
                conn, _ = listener.accept()
                pid = _fork_kernel(conn, [listener, wake_r, wake_w, stdin, *kernels.values()])
                if pid is not None:
                    kernels[pid] = conn
    finally:
        for pid in kernels:
            _kill(pid)
        os.unlink(path)


def _fork_kernel(conn: socket.socket, close_in_child: list[Any]) -> int | None:
    """Read the client's request and fork its kernel; the child never returns."""
    message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    if len(fds) != 3:
        conn.close()
        return None
    request = json.loads(message)
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        return pid
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for item in close_in_child:
            item.close() if hasattr(item, "close") else os.close(item)
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update({k: v for k, v in request["env"].items() if k != SOCKET_ENV})
        # as `python -m ipykernel_launcher -f FILE` has it; its parent (this process) watched, as a launched
        # kernel watches the process that launched it (ipykernel read JPY_PARENT_PID when it was imported here)
        sys.argv = ["ipykernel_launcher", *request["args"], f"--IPKernelApp.parent_handle={os.getppid()}"]
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the kernel's own stdio, as a launched one has
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        sys.path[0] = request["cwd"]  # as `python -m ipykernel_launcher` run there has it
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        os._exit(code)


def _reap(kernels: dict[int, socket.socket]) -> None:
    """Tell each finished kernel's client how it ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = kernels.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(json.dumps({"exit": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
            except OSError:
                pass
            conn.close()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# -- the client (run as a script by jupyter_client: standard library only) --------------------


def client(connection_file: str) -> int:
    """Ask the warm process for a kernel; stand in for it until it exits. Falls back to a usual kernel."""
    path = os.environ.get(SOCKET_ENV, "")
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(path)
        request = {"args": ["-f", connection_file], "cwd": os.getcwd(), "env": dict(os.environ)}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        reader = conn.makefile("rb")
        pid = json.loads(reader.readline())["pid"]
    except (OSError, ValueError, KeyError):
        os.environ.pop(SOCKET_ENV, None)
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file])

    def forward(signum: int, _frame: Any) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, forward)
    while True:
        try:
            line = reader.readline()
        except InterruptedError:
            continue
        if not line:
            return 1  # the warm process went away
        end = json.loads(line)
        if "exit" in end:
            return int(end["exit"])


if __name__ == "__main__":
    sys.exit(client(sys.argv[1]))
