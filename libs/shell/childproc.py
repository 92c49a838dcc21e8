"""Child processes that die with the process that started them.

A test run killed with SIGKILL (a CI timeout, an impatient Ctrl-\\, the OOM killer) runs no
cleanup: the nats-server and service processes it started would keep running, holding ports and
CPU. ``popen`` starts a child that the kernel sends SIGKILL when its parent dies (Linux
``prctl(PR_SET_PDEATHSIG)``, set in the child between fork and exec). The normal stop paths
(SIGTERM, wait, reap) are unchanged; this only covers the parent's death.

Two details of ``PR_SET_PDEATHSIG`` shape the code:

* the "parent" is the *thread* that forked, not the process: a child forked from a worker thread
  (``asyncio.to_thread``) would be killed when that thread ends. So ``popen`` forks on the main
  thread when called there, and otherwise on one keeper thread that lives as long as the process;
* the parent can die between the fork and the ``prctl``: the child then checks that its parent
  is still the one that forked it and, if not, kills itself.

Elsewhere than Linux, ``popen`` is plain ``subprocess.Popen``.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1

_prctl: Callable[..., int] | None = None
if sys.platform.startswith("linux"):
    # Looked up once in the parent: the child must not load libraries between fork and exec.
    _prctl = ctypes.CDLL(None, use_errno=True).prctl

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


def _die_with(parent: int) -> Callable[[], None]:
    prctl = _prctl
    assert prctl is not None

    def preexec() -> None:  # runs in the child, after fork, before exec
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def popen(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(args, **kwargs)``, the child killed (SIGKILL) when this process dies."""
    if _prctl is None:
        return subprocess.Popen(args, **kwargs)  # noqa: S603 - the caller's own arguments
    if "preexec_fn" in kwargs:
        raise TypeError("popen sets preexec_fn itself")

    def start() -> subprocess.Popen[Any]:
        return subprocess.Popen(args, preexec_fn=_die_with(os.getpid()), **kwargs)  # noqa: S603, PLW1509

    if threading.current_thread() is threading.main_thread():
        return start()
    return _KEEPER.run(start)
