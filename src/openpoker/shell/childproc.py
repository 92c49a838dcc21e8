"""Child processes that die with the process that started them.

A test run killed with SIGKILL (a CI timeout, an impatient Ctrl-\\, the OOM killer) runs no
cleanup: the nats-server and service processes it started would keep running, holding ports and
CPU. ``popen`` starts a child that the kernel sends SIGKILL when its parent dies (Linux
``prctl(PR_SET_PDEATHSIG)``). The normal stop paths (SIGTERM, wait, reap) are unchanged; this
only covers the parent's death.

How:

* the ``prctl`` must run in the child, between fork and exec. Not as a ``preexec_fn``: that runs
  Python in the forked copy of a multi-threaded process (gRPC's threads), which can crash the
  child (seen: a segfault in ``threading._after_fork``). Instead the child execs a few lines of
  Python (``python -I -S -c``, about 20 ms) that make the ``prctl`` call and then ``execv`` the
  real program, which keeps the pid, environment, descriptors and session ``Popen`` set up;
* the "parent" of ``PR_SET_PDEATHSIG`` is the *thread* that forked, not the process: a child
  forked from a worker thread (``asyncio.to_thread``) would be killed when that thread ends. So
  ``popen`` forks on the main thread when called there, and otherwise on one keeper thread that
  lives as long as the process;
* the parent can die before the ``prctl``: the launcher checks that its parent is still the
  process that started it and, if not, kills itself.

Elsewhere than Linux, ``popen`` is plain ``subprocess.Popen``.
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1
LINUX = sys.platform.startswith("linux")

# argv after "-c": parent pid, program path, the caller's args (args[0] included).
_LAUNCHER = f"""\
import ctypes, os, signal, sys
ctypes.CDLL(None, use_errno=True).prctl({PR_SET_PDEATHSIG}, int(signal.SIGKILL), 0, 0, 0)
if os.getppid() != int(sys.argv[1]):
    os.kill(os.getpid(), signal.SIGKILL)
os.execv(sys.argv[2], sys.argv[3:])
"""

_Job = tuple[Callable[[], "subprocess.Popen[Any]"], "concurrent.futures.Future[subprocess.Popen[Any]]"]


class _Keeper:
    """One thread, started on first use, that forks the children asked for off the main thread."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, start: Callable[[], subprocess.Popen[Any]]) -> subprocess.Popen[Any]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                # A daemon thread is never joined: it ends with the process, and so do its children.
                self._thread = threading.Thread(target=self._serve, name="childproc-keeper", daemon=True)
                self._thread.start()
        result: concurrent.futures.Future[subprocess.Popen[Any]] = concurrent.futures.Future()
        self._jobs.put((start, result))
        return result.result()

    def _serve(self) -> None:
        while True:
            start, result = self._jobs.get()
            if not result.set_running_or_notify_cancel():
                continue
            try:
                result.set_result(start())
            except BaseException as exc:  # handed to the caller, which raises it
                result.set_exception(exc)


_KEEPER = _Keeper()


def _resolve(program: str, env: Any) -> str:
    """The program's path, as ``Popen`` would find it; ``FileNotFoundError`` (as ``Popen`` would
    raise) if there is none, since the launcher can only fail after the fork."""
    path = env.get("PATH") if env is not None else None
    found = shutil.which(program, path=path) if os.sep not in program else program
    if found is None or not os.access(found, os.X_OK) or os.path.isdir(found):
        raise FileNotFoundError(2, "No such file or directory", program)
    return found


def argv(args: list[str], *, env: Any = None) -> list[str]:
    """The command line that runs ``args`` tied to this process (``args`` itself off Linux), for
    callers that start processes another way (``asyncio.create_subprocess_exec``). Fork on the
    main thread (the event loop's, usually): the tie follows the forking thread."""
    if not LINUX:
        return list(args)
    program = _resolve(args[0], env)
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), program, *args]


def popen(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(args, **kwargs)``, the child killed (SIGKILL) when this process dies."""
    if not LINUX:
        return subprocess.Popen(args, **kwargs)  # noqa: S603 - the caller's own arguments
    for unsupported in ("preexec_fn", "executable", "shell"):
        if kwargs.get(unsupported):
            raise TypeError(f"childproc.popen does not take {unsupported}")
    launcher = argv(args, env=kwargs.get("env"))

    def start() -> subprocess.Popen[Any]:
        return subprocess.Popen(launcher, **kwargs)  # noqa: S603 - our interpreter, the caller's args

    if threading.current_thread() is threading.main_thread():
        return start()
    return _KEEPER.run(start)
