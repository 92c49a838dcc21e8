"""Children die with their parent: a process killed with SIGKILL (no cleanup runs) takes the
nats-server and the other children it started with it, whether it started them on its main
thread or on a worker thread that has ended since; the normal stop paths are unchanged."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openpoker.shell import childproc

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")

# The parent: starts a nats-server (and a plain child) as the code under test does, prints their
# pids, then waits to be killed. It runs a few idle threads, like a gRPC process does.
PARENT = textwrap.dedent(
    """
    import sys, threading, time
    from openpoker.shell import childproc
    from openpoker.shell.natsproc import NatsServer

    data_dir, how = sys.argv[1], sys.argv[2]
    pids = []
    for _ in range(4):
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()

    def start():
        pids.append(NatsServer(data_dir=data_dir).start().pid)
        pids.append(childproc.popen(["sleep", "600"]).pid)

    if how == "thread":  # as asyncio.to_thread does: a worker thread that ends afterwards
        worker = threading.Thread(target=start)
        worker.start()
        worker.join()
    elif how == "asyncio":  # childproc.argv through asyncio's own subprocess API
        import asyncio

        async def spawn():
            for program in (["sleep", "600"], ["sleep", "601"]):
                proc = await asyncio.create_subprocess_exec(*childproc.argv(program))
                pids.append(proc.pid)

        asyncio.run(spawn())
    elif how == "local-system":  # the e2e harness (and pokerctl up): nats and a service
        import asyncio
        from pathlib import Path
        from openpoker.pokerctl.local import LocalSystem

        system = LocalSystem(data_dir=Path(data_dir), free_ports=True, services=("rng",))
        asyncio.run(system.start())
        pids += [system.nats.pid, system.processes["rng"].process.pid]
    else:
        start()
    print(*pids, flush=True)
    time.sleep(600)
    """
)


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for init to reap it (it no longer runs)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    state = stat.rsplit(")", 1)[1].split()[0]
    return state in {"Z", "X"}


def _wait_dead(pid: int, within: float = 20.0) -> bool:
    """Poll until ``pid`` no longer runs (a liveness guard, not a timing assertion)."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if _dead(pid):
            return True
        time.sleep(0.02)
    return _dead(pid)


@contextlib.contextmanager
def _parent(tmp_path: Path, how: str) -> Iterator[tuple[subprocess.Popen[str], list[int]]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path), how],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    children: list[int] = []
    try:
        assert proc.stdout is not None
        children = [int(pid) for pid in proc.stdout.readline().split()]
        assert len(children) == 2, "the parent did not start its children"
        yield proc, children
    finally:
        # Whatever the outcome, nothing this test started keeps running.
        for pid in [proc.pid, *children]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.parametrize("how", ["main", "thread", "asyncio", "local-system"])
def test_children_die_when_their_parent_is_killed(tmp_path: Path, how: str) -> None:
    with _parent(tmp_path, how) as (proc, children):
        # Started from a thread that has ended since: still running (the keeper thread forked it).
        assert not any(_dead(pid) for pid in children)
        proc.kill()
        proc.wait()
        assert all(_wait_dead(pid) for pid in children)


def test_a_child_outlives_the_worker_thread_that_asked_for_it() -> None:
    started: list[subprocess.Popen[bytes]] = []
    worker = threading.Thread(target=lambda: started.append(childproc.popen(["sleep", "600"])))
    worker.start()
    worker.join()
    (child,) = started
    try:
        time.sleep(0.1)  # the thread has ended; a signal tied to it would have been sent by now
        assert child.poll() is None
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL


def test_popen_keeps_the_normal_paths(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with out.open("w") as sink:
        child = childproc.popen(
            ["sh", "-c", 'echo "$$ $0 $GREETING"; pwd; exit 3'],
            stdout=sink,
            env={**os.environ, "GREETING": "hello"},
            cwd=tmp_path,
            start_new_session=True,
        )
        assert child.wait(10) == 3
    # The program runs in the very process Popen made (same pid), with its environment and
    # folder, and its own name as argv[0].
    assert out.read_text() == f"{child.pid} sh hello\n{tmp_path}\n"
    with pytest.raises(FileNotFoundError):
        childproc.popen(["/nonexistent/binary"])
    with pytest.raises(TypeError):
        childproc.popen(["true"], preexec_fn=lambda: None)
