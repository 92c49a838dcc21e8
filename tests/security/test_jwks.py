"""Token keys from a JWKS URL or file (``shell.jwks``), through a real TLS shell server.

The identity provider is a real HTTPS server on 127.0.0.1 (``http.server`` in a thread, its
certificate from a test CA of its own made by ``shell.pki``) that counts the requests it answers;
the service is ``shell.server.start_server`` with its settings read from the environment, serving
one method that answers with the caller's name; the last test runs every service as a process."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from grpc import aio

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import identity, pki
from openpoker.shell.client import bearer_metadata, channel, rich_error
from openpoker.shell.config import ConfigError, ShellConfig
from openpoker.shell.jwks import JwksError, UrlKeys, fetch_jwks, parse_jwks, ssl_context
from openpoker.shell.server import RunningServer, ServiceSpec, start_server
from openpoker.shell.tls import TlsFiles
from openpoker.shell.tokens import Role, TokenInvalid, TokenIssuer, TokenVerifier
from tests.helpers import secure
from tests.helpers.natscreds import nats_env
from tests.helpers.system import local_system

WHO = "/test.Whoami/Who"


# --- token keys ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SigningKey:
    kid: str
    key: ed25519.Ed25519PrivateKey

    @property
    def jwk(self) -> dict[str, str]:
        raw = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        x = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        return {"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": self.kid, "x": x}

    def token(self, subject: str, role: Role = Role.PLAYER) -> str:
        return TokenIssuer(key=self.key, kid=self.kid).issue(subject, role)


def signing_key(kid: str) -> SigningKey:
    return SigningKey(kid, ed25519.Ed25519PrivateKey.generate())


def jwks(*keys: SigningKey) -> dict[str, Any]:
    return {"keys": [k.jwk for k in keys]}


# --- the identity provider ----------------------------------------------------------------------


@dataclass
class Idp:
    """What the HTTPS server publishes, and how often it was asked."""

    url: str
    ca: Path
    published: dict[str, Any] = field(default_factory=dict)
    status: int = 200  # anything else: an outage
    redirect: str = ""  # a Location to send instead of the JWKS
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def idp(tmp_path: Path) -> Iterator[Idp]:
    own = pki.ensure_local_pki(tmp_path / "idp", services=("idp",))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(own.cert("idp"), own.key("idp"))
    state: Idp

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with state.lock:
                state.requests += 1
                status, redirect, body = state.status, state.redirect, json.dumps(state.published)
            if redirect:
                self.send_response(302)
                self.send_header("Location", redirect)
                self.end_headers()
                return
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    state = Idp(url=f"https://localhost:{httpd.server_address[1]}/jwks.json", ca=own.ca_cert)
    thread = threading.Thread(target=httpd.serve_forever, name="idp", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def publish(idp: Idp, *keys: SigningKey) -> None:
    with idp.lock:
        idp.published = jwks(*keys)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --- the service --------------------------------------------------------------------------------


async def _who(request: bytes, context: aio.ServicerContext[Any, Any]) -> bytes:
    principal = identity.bound()
    return (principal.name if principal is not None else "").encode()


def _register(servicer: object, server: Any) -> None:
    who: Any = grpc.unary_unary_rpc_method_handler(_who)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("test.Whoami", {"Who": who})])


@dataclass
class Service:
    running: RunningServer
    local: pki.LocalPki
    person: aio.Channel  # the client listener, CA only
    staff: aio.Channel  # the service listener, pokerctl's certificate

    async def who(self, token: str) -> str:
        call: Any = self.person.unary_unary(WHO)  # raw bytes both ways: no serializers
        reply: bytes = await call(b"", metadata=bearer_metadata(token), timeout=10)
        return reply.decode()

    async def refusal(self, token: str) -> tuple[grpc.StatusCode, str]:
        with pytest.raises(grpc.RpcError) as err:
            await self.who(token)
        rich = rich_error(err.value)
        return rich.code, rich.reason

    async def staff_who(self) -> str:
        call: Any = self.staff.unary_unary(WHO)
        reply: bytes = await call(b"", timeout=10)
        return reply.decode()


Serve = Callable[[Mapping[str, str]], Awaitable[Service]]


@pytest.fixture
async def serve(tmp_path: Path) -> AsyncIterator[Serve]:
    """Start a TLS shell server with these settings added (at most one per test)."""
    started: list[Service] = []
    local = pki.ensure_local_pki(tmp_path / "data")

    async def start(extra: Mapping[str, str]) -> Service:
        env = {
            "POKER_TLS_DIR": str(local.root),
            "POKER_TABLE_PORT": "0",
            "POKER_TABLE_CLIENT_PORT": "0",
            "POKER_QUOTA_RPS": "0",
            **nats_env(tmp_path / "nats"),
            **extra,
        }
        config = ShellConfig.from_env("table", env)
        running = await start_server(
            config, [ServiceSpec(name="test.Whoami", register=_register, servicer=None)]
        )
        service = Service(
            running=running,
            local=local,
            person=channel(f"localhost:{running.client_port}", TlsFiles.from_pki(local, None)),
            staff=channel(f"localhost:{running.port}", TlsFiles.from_pki(local, "pokerctl")),
        )
        started.append(service)
        return service

    try:
        yield start
    finally:
        for service in started:
            await service.person.close()
            await service.staff.close()
            await service.running.stop(0)


async def accepted_within(service: Service, token: str, *, within: float = 15.0) -> str:
    """The caller's name once ``token`` is accepted; refusals (UNAUTHENTICATED) until then."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while True:
        try:
            return await service.who(token)
        except grpc.RpcError as err:
            if err.code() != grpc.StatusCode.UNAUTHENTICATED or loop.time() > end:
                raise
        await asyncio.sleep(0.05)


# --- a JWKS URL ---------------------------------------------------------------------------------


async def test_a_token_signed_by_a_key_the_idp_publishes_is_accepted(idp: Idp, serve: Serve) -> None:
    ann = signing_key("k1")
    publish(idp, ann)
    service = await serve({"POKER_JWKS": idp.url, "POKER_JWKS_CA": str(idp.ca)})
    assert idp.requests == 1  # fetched once at start
    assert await service.who(ann.token("ann")) == "ann"
    assert await service.who(ann.token("bob")) == "bob"
    assert idp.requests == 1  # cached
    assert await service.staff_who() == "pokerctl"


async def test_a_new_kid_is_accepted_once_the_idp_publishes_it_without_a_restart(
    idp: Idp, serve: Serve
) -> None:
    old, new = signing_key("k1"), signing_key("k2")
    publish(idp, old)
    service = await serve(
        {"POKER_JWKS": idp.url, "POKER_JWKS_CA": str(idp.ca), "POKER_JWKS_MIN_REFETCH_SECONDS": "0"}
    )
    assert await service.refusal(new.token("ann")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    publish(idp, old, new)  # the operator adds a key, then issues with it
    before = idp.requests
    assert await service.who(new.token("ann")) == "ann"  # the unknown kid fetched the keys again
    assert idp.requests == before + 1
    publish(idp, new)  # ... and drops the old one: gone at the next fetch
    assert await service.refusal(signing_key("k3").token("x")) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_INVALID",
    )
    assert await service.refusal(old.token("ann")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    assert await service.who(new.token("ann")) == "ann"


async def test_a_flood_of_unknown_kids_fetches_no_more_than_the_rate_allows(idp: Idp, serve: Serve) -> None:
    ann = signing_key("k1")
    publish(idp, ann)
    service = await serve({"POKER_JWKS": idp.url, "POKER_JWKS_CA": str(idp.ca)})  # 30 s apart
    junk = [signing_key(f"junk-{i}").token("mallory") for i in range(60)]
    results = await asyncio.gather(*(service.who(t) for t in junk), return_exceptions=True)
    assert all(isinstance(r, grpc.RpcError) for r in results)
    assert {rich_error(r).reason for r in results if isinstance(r, grpc.RpcError)} == {"TOKEN_INVALID"}
    assert idp.requests == 1  # the start-up fetch alone: the next may come 30 s after it
    assert await service.who(ann.token("ann")) == "ann"


async def test_fetches_are_rate_limited_shared_and_refreshed_after_their_lifespan(idp: Idp) -> None:
    now = [0.0]
    ann, bob = signing_key("k1"), signing_key("k2")
    publish(idp, ann)
    keys = UrlKeys(idp.url, context=ssl_context(idp.ca), min_interval=30, lifespan=300, clock=lambda: now[0])
    await keys.start()
    assert keys.ready
    assert idp.requests == 1
    now[0] = 31.0  # a fetch may happen again: a burst of unknown kids shares one
    await asyncio.gather(*(keys.ensure(f"junk-{i}") for i in range(50)))
    assert idp.requests == 2
    await asyncio.gather(*(keys.ensure(f"junk-{i}") for i in range(50)))
    assert idp.requests == 2  # within 30 s of the last attempt: none
    publish(idp, bob)  # ann's key dropped, bob's added
    now[0] = 31.0 + 300.0  # the keys are past their lifespan: a known kid refreshes in the background
    await keys.ensure("k1")
    assert keys.key("k1") is not None  # answered from the cache, not held up by the fetch
    await keys.close()
    assert idp.requests == 3
    assert keys.key("k1") is None
    assert keys.key("k2") is not None


async def test_an_unreachable_url_at_start_starts_the_service_and_refuses_tokens_until_keys_arrive(
    idp: Idp, serve: Serve
) -> None:
    ann = signing_key("k1")
    publish(idp, ann)
    unreachable = f"https://localhost:{closed_port()}/jwks.json"
    service = await serve({"POKER_JWKS": unreachable, "POKER_JWKS_CA": str(idp.ca)})
    assert await service.refusal(ann.token("ann")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    assert await service.staff_who() == "pokerctl"  # certificate holders need no keys


async def test_keys_that_arrive_after_an_outage_at_start_are_used_without_a_restart(
    idp: Idp, serve: Serve
) -> None:
    ann = signing_key("k1")
    publish(idp, ann)
    idp.status = 503
    service = await serve(
        {"POKER_JWKS": idp.url, "POKER_JWKS_CA": str(idp.ca), "POKER_JWKS_MIN_REFETCH_SECONDS": "0.2"}
    )
    assert await service.refusal(ann.token("ann")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    idp.status = 200
    assert await accepted_within(service, ann.token("ann")) == "ann"


async def test_an_idp_certificate_the_trust_store_does_not_know_is_refused(idp: Idp, serve: Serve) -> None:
    ann = signing_key("k1")
    publish(idp, ann)
    with pytest.raises(JwksError, match="CERTIFICATE_VERIFY_FAILED"):
        await asyncio.to_thread(fetch_jwks, idp.url, context=ssl_context(None))
    service = await serve({"POKER_JWKS": idp.url})  # the system trust store: not our test CA
    assert await service.refusal(ann.token("ann")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")


def test_plain_http_is_refused(tmp_path: Path) -> None:
    local = pki.ensure_local_pki(tmp_path)
    env = {"POKER_TLS_DIR": str(local.root), "POKER_JWKS": "http://127.0.0.1:8080/jwks.json"}
    with pytest.raises(ConfigError) as err:
        ShellConfig.from_env("table", env)
    assert err.value.variable == "POKER_JWKS"
    with pytest.raises(JwksError, match="https"):
        UrlKeys("http://127.0.0.1:8080/jwks.json", context=ssl_context(None))


async def test_a_redirect_to_plain_http_is_not_followed(idp: Idp) -> None:
    publish(idp, signing_key("k1"))
    idp.redirect = f"http://127.0.0.1:{closed_port()}/jwks.json"
    with pytest.raises(JwksError, match="non-https"):
        await asyncio.to_thread(fetch_jwks, idp.url, context=ssl_context(idp.ca))


def test_only_signing_keys_that_name_their_kid_are_taken() -> None:
    signing = signing_key("k1").jwk
    encryption = {**signing_key("e1").jwk, "use": "enc"}
    nameless = {k: v for k, v in signing_key("x").jwk.items() if k != "kid"}
    assert set(parse_jwks({"keys": [signing, encryption, nameless]}, source="test")) == {"k1"}
    with pytest.raises(JwksError, match="no usable key"):
        parse_jwks({"keys": [encryption, nameless]}, source="test")
    with pytest.raises(JwksError, match="not a JWKS"):
        parse_jwks({"key": signing}, source="test")


# --- a JWKS file --------------------------------------------------------------------------------


def write_jwks(path: Path, *keys: SigningKey) -> None:
    """Replace the file at once, as an operator's tooling should (a rename, never a torn write)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(jwks(*keys)))
    tmp.replace(path)


async def test_a_rotated_jwks_file_is_picked_up_without_a_restart(tmp_path: Path, serve: Serve) -> None:
    path = tmp_path / "jwks.json"
    old, new = signing_key("k1"), signing_key("k2")
    write_jwks(path, old)
    service = await serve({"POKER_JWKS": str(path)})
    assert await service.who(old.token("ann")) == "ann"
    assert await service.refusal(new.token("ann")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    write_jwks(path, old, new)
    assert await service.who(new.token("ann")) == "ann"
    assert await service.who(old.token("bob")) == "bob"
    write_jwks(path, new)
    assert await service.refusal(old.token("bob")) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    assert await service.who(new.token("bob")) == "bob"


def test_a_broken_rewrite_keeps_the_keys_held(tmp_path: Path) -> None:
    path = tmp_path / "jwks.json"
    ann = signing_key("k1")
    write_jwks(path, ann)
    verifier = TokenVerifier.from_file(path)
    assert verifier.verify(ann.token("ann")).subject == "ann"
    path.write_text("{not json")  # another size: seen as a change
    assert verifier.verify(ann.token("ann")).subject == "ann"
    with pytest.raises(TokenInvalid):
        verifier.verify(signing_key("k2").token("ann"))


# --- a whole secure system ----------------------------------------------------------------------


@pytest.fixture
def idp_system(idp: Idp, tmp_path: Path) -> Iterator[LocalSystem]:
    """Every service a process, taking its token keys from the IdP, which publishes the system's
    own token key (its PKI made first, and reused by the system's start)."""
    data = tmp_path / "system"
    own = pki.ensure_local_pki(data)
    with idp.lock:
        idp.published = json.loads(own.jwks.read_text())
    env = {"POKER_JWKS": idp.url, "POKER_JWKS_CA": str(idp.ca), "POKER_JWKS_MIN_REFETCH_SECONDS": "0"}
    with local_system(data, env, secure=True) as system:
        yield system


@pytest.mark.slow
@pytest.mark.integration
async def test_service_processes_take_keys_from_the_url_and_pick_up_a_new_one(
    idp: Idp, idp_system: LocalSystem
) -> None:
    assert idp.requests >= len(pki.SERVICES)  # each service fetched at its start
    calls = secure.Calls(idp_system)
    try:
        listing = tpb.ListTablesRequest()
        await calls.table.ListTables(listing, timeout=10, metadata=secure.token(idp_system, "ann"))
        newer = signing_key("rotated-1")
        with pytest.raises(grpc.RpcError) as err:
            await calls.table.ListTables(listing, timeout=10, metadata=bearer_metadata(newer.token("ann")))
        assert (err.value.code(), rich_error(err.value).reason) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "TOKEN_INVALID",
        )
        with idp.lock:
            idp.published = {"keys": [*idp.published["keys"], newer.jwk]}
        pids = {name: proc.process.pid for name, proc in idp_system.processes.items()}
        await calls.table.ListTables(listing, timeout=10, metadata=bearer_metadata(newer.token("ann")))
        assert {name: proc.process.pid for name, proc in idp_system.processes.items()} == pids
    finally:
        await calls.close()
