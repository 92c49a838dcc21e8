"""The whole system on one machine: nats-server plus every service that exists, as processes.

Used by ``pokerctl up`` (and meant for ``pokerctl demo`` and end-to-end tests)::

    system = LocalSystem(data_dir=Path("data"))
    await system.start()          # nats first, then rng, wallet, table, dealer; waits for SERVING
    system.targets["table"]       # "127.0.0.1:50053"
    await system.stop()           # services in reverse order (SIGTERM, grace), nats last

Each service runs as ``python -m openpoker.services.<name>`` in its own session (a terminal's Ctrl-C goes
to the supervisor alone, which then stops everything in order), with ``POKER_NATS_URL`` and
``POKER_<NAME>_PORT`` set, logging to ``<data>/logs/<name>.log``. A service "exists" when its
``openpoker/services/<name>/__main__.py`` does. The rng seed key for development is kept in
``<data>/secrets/rng-seed-key`` (mode 0600), so seeds stay revealable across restarts; a
``POKER_RNG_SEED_KEY`` in the environment wins. On a secure system the deck key file that rng
seals decks with and the table opens them with is ``<data>/secrets/deck-keys.json`` (0600),
given to those two services only. Each envelope writer (table, wallet) signs with its own key,
``<data>/secrets/signing/<writer>.key`` (0600, given to that service only), whose public key is
published in ``<data>/pki/signing-keys.json`` (``eventstore.keyfiles``), which the dispute tools
and every service that loads envelopes (wallet, table, dealer: ``POKER_SIGNING_KEYS``) verify with.

``secure=True`` (``pokerctl up`` without ``--insecure``) makes the local PKI under ``<data>/pki``
once (``shell.pki``: CA, one certificate per service, ``pokerctl``'s staff certificate, the token
key) and runs every service on TLS: mutual TLS on its port, TLS for token holders on its client
port (``client_targets``). Otherwise the services run plaintext (``POKER_INSECURE``).

A secure system also secures NATS (``nats_auth``, on by default with ``secure``): an nkey seed per
identity under ``<data>/nats/auth`` (``shell.natsauth``), TLS with a server certificate from the
local CA, and per-identity permissions; the admin identity creates every stream and bucket
(``pokerctl.natssetup``) before the services start, each given its own seed (``POKER_NATS_NKEY``)
and the CA (``POKER_NATS_CA``). ``nats_credentials(name)`` gives a test or tool any identity.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
from nats.aio.client import Client

from openpoker.eventstore import keyfiles
from openpoker.pokerctl import natssetup
from openpoker.shell import childproc, natsauth, natsconn, pki
from openpoker.shell.client import health_status
from openpoker.shell.config import CLIENT_PORT_OFFSET, DEFAULT_PORTS
from openpoker.shell.natsconn import NatsCredentials
from openpoker.shell.natsproc import NatsServer
from openpoker.shell.tls import TlsFiles
from openpoker.shuffle.deck_seal import ensure_deck_keys

SERVICE_ORDER: tuple[str, ...] = ("rng", "wallet", "table", "dealer")
# The services that fold envelopes and verify their signatures (``POKER_SIGNING_KEYS``).
ENVELOPE_READERS: tuple[str, ...] = ("wallet", "table", "dealer")
READY_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


class StartError(RuntimeError):
    """A service did not become healthy (its log tail is in the message)."""


def existing_services() -> tuple[str, ...]:
    found = []
    for name in SERVICE_ORDER:
        with contextlib.suppress(ModuleNotFoundError):
            if importlib.util.find_spec(f"openpoker.services.{name}.__main__") is not None:
                found.append(name)
    return tuple(found)


PORT_ATTEMPTS = 3  # free ports only: a service whose port was taken before it bound it


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(slots=True)
class ServiceProcess:
    name: str
    address: str
    log_path: Path
    process: subprocess.Popen[bytes]
    client_address: str = ""  # the TLS client listener ("" on a plaintext system)


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class LocalSystem:
    def __init__(
        self,
        *,
        data_dir: Path,
        free_ports: bool = False,
        nats_port: int = 0,
        services: tuple[str, ...] | None = None,
        secure: bool = False,
        nats_auth: bool | None = None,
    ) -> None:
        self.data_dir = data_dir.resolve()
        self.free_ports = free_ports
        self.secure = secure
        self.nats_auth = secure if nats_auth is None else nats_auth
        self.pki: pki.LocalPki | None = None
        self.nats = NatsServer(data_dir=self.data_dir / "nats", port=nats_port)
        self.services = existing_services() if services is None else services
        self.processes: dict[str, ServiceProcess] = {}

    @property
    def targets(self) -> dict[str, str]:
        """Each service's own port (mutual TLS on a secure system)."""
        return {name: proc.address for name, proc in self.processes.items()}

    @property
    def client_targets(self) -> dict[str, str]:
        """Each service's client listener (TLS, bearer tokens); empty on a plaintext system."""
        return {name: proc.client_address for name, proc in self.processes.items() if proc.client_address}

    @property
    def tls(self) -> TlsFiles | None:
        """``pokerctl``'s staff certificate for the service ports (None on a plaintext system)."""
        return None if self.pki is None else TlsFiles.from_pki(self.pki, pki.CLIENT)

    def nats_credentials(self, name: str) -> NatsCredentials | None:
        """How ``name`` (a service, ``admin`` or ``pokerctl``) connects; None: NATS is open."""
        return NatsCredentials.local(name, self.data_dir) if self.nats_auth else None

    async def connect_nats(self, name: str = natsauth.POKERCTL) -> Client:
        """A NATS connection as ``name`` (default: the operator's read-only ``pokerctl``)."""
        return await natsconn.connect(self.nats.url, self.nats_credentials(name))

    def _deck_keys(self) -> Path:
        path = self.data_dir / "secrets" / "deck-keys.json"
        ensure_deck_keys(path)
        return path

    def _keyring(self) -> Path:
        """The public keyring, listing every writer's key before any reader starts."""
        for writer in keyfiles.WRITERS:
            keyfiles.ensure_signing_key(self.data_dir, writer)
        return keyfiles.keyring_path(self.data_dir)

    def _rng_key(self) -> str:
        path = self.data_dir / "secrets" / "rng-seed-key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write(os.urandom(32).hex())
        return path.read_text().strip()

    def _env(self, name: str, port: int, client_port: int) -> dict[str, str]:
        env = dict(os.environ)
        env["POKER_NATS_URL"] = self.nats.url
        credentials = self.nats_credentials(name)
        if credentials is not None:
            env.update(credentials.env())
        env[f"POKER_{name.upper()}_PORT"] = str(port)
        if self.pki is not None:
            env["POKER_TLS_DIR"] = str(self.pki.root)
            if name in ("rng", "table"):  # the two ends of a sealed deck; never the dealer
                env["POKER_DECK_KEYS"] = str(self._deck_keys())
            if name in keyfiles.WRITERS:  # each writer signs its envelopes with its own key
                env["POKER_SIGNING_KEY"] = str(keyfiles.ensure_signing_key(self.data_dir, name))
            if name in ENVELOPE_READERS:  # and every envelope loaded is verified against the keyring
                env["POKER_SIGNING_KEYS"] = str(self._keyring())
            env[f"POKER_{name.upper()}_CLIENT_PORT"] = str(client_port)
            env.pop("POKER_INSECURE", None)
        else:
            env["POKER_INSECURE"] = "true"
        env.setdefault("POKER_ENV", "development")
        env.setdefault("POKER_LOG_FORMAT", "json")  # files, not a terminal
        if name == "rng" and not env.get("POKER_RNG_SEED_KEY"):
            env["POKER_RNG_SEED_KEY"] = self._rng_key()
        # Every service finds the other services where this system started them.
        for other, proc in self.processes.items():
            env[f"POKER_{other.upper()}_TARGET"] = proc.address
        if "wallet" in self.processes:  # the table service's own name for the wallet's address
            env["POKER_TABLE_WALLET"] = self.processes["wallet"].address
        return env

    async def start(self) -> None:
        """Start nats and every service; raise ``StartError`` (after stopping all) on failure."""
        try:
            if self.secure:
                self.pki = await asyncio.to_thread(pki.ensure_local_pki, self.data_dir)
            if self.nats_auth:
                await asyncio.to_thread(self._secure_nats)
            await asyncio.to_thread(self.nats.start)
            if self.nats_auth:
                await natssetup.set_up(self.nats.url, self.nats_credentials(natsauth.ADMIN))
            for name in self.services:
                await self._start_service(name)
        except BaseException:
            await self.stop()
            raise

    def _secure_nats(self) -> None:
        local_pki = self.pki or pki.ensure_local_pki(self.data_dir)
        auth = natsauth.ensure_nats_auth(self.data_dir, local_pki)
        self.nats.config_file = natsauth.server_config(auth)

    async def _start_service(self, name: str) -> None:
        for attempt in range(1, PORT_ATTEMPTS + 1):
            self._spawn(name)
            try:
                await self._wait_healthy(self.processes[name])
                return
            except StartError as exc:
                # With free ports, ``free_port`` only found the port free a moment before the
                # service binds it: another process (a parallel test worker) can take it in
                # between. The service then exits with "cannot listen"; start it on another.
                if not self.free_ports or "cannot listen" not in str(exc) or attempt == PORT_ATTEMPTS:
                    raise
                del self.processes[name]  # it has exited (that is how the error was seen)

    def _spawn(self, name: str, *, port: int | None = None, client_port: int | None = None) -> None:
        prefix = f"POKER_{name.upper()}_"
        if port is not None:
            pass  # a restart keeps the address the other services were given
        elif self.free_ports:
            port = free_port()
        else:
            port = int(os.environ.get(prefix + "PORT", DEFAULT_PORTS[name]))
        if client_port is None:
            default_client = port + CLIENT_PORT_OFFSET
            client_port = (
                free_port()
                if self.free_ports
                else int(os.environ.get(prefix + "CLIENT_PORT", default_client))
            )
        host = os.environ.get(f"POKER_{name.upper()}_HOST", "127.0.0.1")
        log_path = self.data_dir / "logs" / f"{name}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            # childproc: killed with this process if it dies without stopping them (SIGKILL).
            process = childproc.popen(
                [sys.executable, "-m", f"openpoker.services.{name}"],
                env=self._env(name, port, client_port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes[name] = ServiceProcess(
            name=name,
            address=f"{host}:{port}",
            log_path=log_path,
            process=process,
            client_address=f"{host}:{client_port}" if self.pki is not None else "",
        )

    async def _wait_healthy(self, proc: ServiceProcess) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if proc.process.poll() is not None:
                raise StartError(
                    f"{proc.name} exited with {proc.process.returncode}; {proc.log_path}:\n"
                    + _log_tail(proc.log_path)
                )
            with contextlib.suppress(grpc.RpcError):
                if await health_status(proc.address, deadline=1.0, tls=self.tls) == "SERVING":
                    return
            await asyncio.sleep(0.1)
        raise StartError(
            f"{proc.name} not healthy after {READY_TIMEOUT}s; {proc.log_path}:\n" + _log_tail(proc.log_path)
        )

    async def restart(self, name: str, *, kill: bool = True) -> None:
        """Stop one service (SIGKILL: a crash; else SIGTERM) and start it again on the same
        address; returns once it is healthy (end-to-end restart tests)."""
        proc = self.processes.pop(name)
        if kill:
            proc.process.kill()
            await asyncio.to_thread(proc.process.wait)
        else:
            await asyncio.to_thread(self._stop_one, proc.process)
        client_port = int(proc.client_address.rsplit(":", 1)[1]) if proc.client_address else None
        self._spawn(name, port=int(proc.address.rsplit(":", 1)[1]), client_port=client_port)
        await self._wait_healthy(self.processes[name])

    def exited(self) -> list[str]:
        """Services whose process has ended (while they should be running)."""
        return [name for name, proc in self.processes.items() if proc.process.poll() is not None]

    async def stop(self) -> dict[str, int | None]:
        """Stop services in reverse start order, then nats; returns every exit code."""
        codes: dict[str, int | None] = {}
        for name in reversed(list(self.processes)):
            codes[name] = await asyncio.to_thread(self._stop_one, self.processes[name].process)
        self.processes.clear()
        codes["nats"] = await asyncio.to_thread(self.nats.stop)
        return codes

    @staticmethod
    def _stop_one(process: subprocess.Popen[bytes]) -> int | None:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return process.returncode
