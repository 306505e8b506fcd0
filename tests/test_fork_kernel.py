"""course/fork_kernel.py: the suite's notebook kernels, forked from a warm process, behave as launched ones.

Each test starts kernels the way nbval does (its kernel spec manager, the current environment's kernel)
with the fork plugin installed, and checks what a notebook run relies on: a fresh process per kernel,
in the notebook's folder, with the environment it was given; an interrupted cell; a client killed with
SIGKILL takes its kernel with it; no warm process, and the kernel starts the usual way.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("nbval")
from nbval.kernel import CURRENT_ENV_KERNEL_NAME, RunningKernel  # noqa: E402

import course.fork_kernel as fork_kernel  # noqa: E402

pytestmark = pytest.mark.skipif(not fork_kernel.enabled(), reason="kernels are forked on Linux only")


class _Config:
    pass


@pytest.fixture(scope="module", autouse=True)
def installed():
    fork_kernel.pytest_configure(_Config())  # what `-p course.fork_kernel` does (idempotent in effect)


def run(kernel: RunningKernel, code: str, timeout: float = 30) -> str:
    """Run `code` in the kernel; what it printed."""
    msg_id = kernel.kc.execute(code)
    out = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kernel.kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            out.append(msg["content"]["ename"])
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return "".join(out)
    raise TimeoutError(code)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_each_kernel_is_a_fresh_fork_in_the_notebooks_folder_with_its_environment(tmp_path: Path):
    os.environ["COURSE_FORK_TEST"] = "given"
    try:
        first = RunningKernel(CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path))
        second = RunningKernel(CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path))
    finally:
        del os.environ["COURSE_FORK_TEST"]
    try:
        probe = ("import os, sys; print(os.getpid(), os.getcwd(), os.environ.get('COURSE_FORK_TEST'), "
                 "'openai' in sys.modules, 'mini_framework' in sys.modules)")
        one, two = run(first, probe).split(), run(second, probe).split()
        assert one[0] != two[0]  # two processes
        assert one[1:] == [str(tmp_path), "given", "True", "False"]  # warm: openai yes, the course's own no
        assert run(first, "x = 1; print(x)") == "1\n" and run(second, "print('x' in dir())") == "False\n"
        assert fork_kernel.SOCKET_ENV not in run(first, "import os; print(sorted(os.environ))")
    finally:
        first.stop()
        second.stop()


def test_an_interrupted_cell_stops_and_the_kernel_goes_on(tmp_path: Path):
    kernel = RunningKernel(CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path))
    try:
        msg_id = kernel.kc.execute("import time; time.sleep(60)")
        time.sleep(1.0)
        kernel.km.interrupt_kernel()  # SIGINT to the client, which forwards it
        seen = []
        while "idle" not in seen:  # get_iopub_msg raises Empty after 20 s: the test fails, it does not hang
            msg = kernel.kc.get_iopub_msg(timeout=20)
            if msg["parent_header"].get("msg_id") == msg_id:
                seen.append(msg["content"].get("ename") or msg["content"].get("execution_state", ""))
        assert "KeyboardInterrupt" in seen
        assert run(kernel, "print(2 + 2)") == "4\n"
    finally:
        kernel.stop()


def test_a_killed_client_takes_its_kernel_with_it(tmp_path: Path):
    kernel = RunningKernel(CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path))
    pid = int(run(kernel, "import os; print(os.getpid())"))
    client = kernel.km.provisioner.process
    assert client.pid != pid  # the process jupyter_client launched stands in for the kernel
    os.kill(client.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    kernel.km.cleanup_resources()


def test_without_a_warm_process_the_kernel_starts_the_usual_way(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(fork_kernel._started, "socket", str(tmp_path / "no-such-socket"))
    kernel = RunningKernel(CURRENT_ENV_KERNEL_NAME, cwd=str(tmp_path))
    try:
        out = run(kernel, "import os, sys; print(os.getppid() == int(os.environ['JPY_PARENT_PID']), sys.executable)")
        assert out.split() == ["True", sys.executable]  # launched by jupyter_client (the client exec'd into it)
    finally:
        kernel.stop()
