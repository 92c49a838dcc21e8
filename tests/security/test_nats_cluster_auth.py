"""A secured 3-node NATS cluster (``natsauth.cluster_node_config``, ``natsproc.NatsCluster``):
routes over TLS verified against the CA, and on every node the nkey users, permissions and
client TLS of the single server. A node with a certificate of another CA cannot join."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from nats.aio.client import Client

from openpoker.pokerctl import natssetup
from openpoker.shell import natsauth, natsconn, pki
from openpoker.shell.natsconn import NatsCredentials
from openpoker.shell.natsproc import NatsCluster, NatsServer, free_port
from tests.security.test_nats_auth import Errors, _refused_connection

CLUSTER = "poker-secure"
NODES = ("n1", "n2", "n3")


@dataclass(frozen=True, slots=True)
class SecureCluster:
    cluster: NatsCluster
    data: Path

    def credentials(self, name: str) -> NatsCredentials:
        return NatsCredentials.local(name, self.data)


def secure_cluster(data: Path) -> NatsCluster:
    local_pki = pki.ensure_local_pki(data)
    auth = natsauth.ensure_nats_auth(data, local_pki)
    configs = [natsauth.cluster_node_config(auth, local_pki, node=n, cluster=CLUSTER) for n in NODES]
    return NatsCluster(data_dir=data / "nats", name=CLUSTER, config_files=configs)


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureCluster]:
    data = tmp_path_factory.mktemp("nats-cluster-auth")
    with secure_cluster(data) as cluster:
        yield SecureCluster(cluster=cluster, data=data)


@pytest.fixture
async def admin(secured: SecureCluster) -> AsyncIterator[Client]:
    url = secured.cluster.nodes[0].url
    await natssetup.set_up(url, secured.credentials(natsauth.ADMIN), replicas=3)
    nc = await natsconn.connect(url, secured.credentials(natsauth.ADMIN))
    yield nc
    await nc.close()


def monitor(node: NatsServer, path: str) -> dict[str, object]:
    with urllib.request.urlopen(f"http://127.0.0.1:{node.monitor_port}/{path}", timeout=2) as answer:
        body = json.loads(answer.read())
    assert isinstance(body, dict)
    return body


def route_peers(node: NatsServer) -> set[str]:
    routes = monitor(node, "routez").get("routes") or []
    assert isinstance(routes, list)
    return {str(route.get("remote_name")) for route in routes}


def wait_for(condition: str, check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {condition}")
        time.sleep(0.05)


def test_the_cluster_forms_over_verified_tls_routes(secured: SecureCluster) -> None:
    nodes = secured.cluster.nodes
    leaders = {str(meta.get("leader")) for node in nodes if (meta := node.meta_cluster())}
    assert len(leaders) == 1
    assert leaders <= set(NODES)
    for node in nodes:
        assert route_peers(node) == set(NODES) - {node.name}
    for node in nodes:
        config = node.config_file
        assert config is not None
        cluster = config.read_text().split("cluster: ", 1)[1]
        assert '"verify": true' in cluster
        assert '"ca_file"' in cluster
        # Each node has its own certificate from the CA, naming it.
        cert = x509.load_pem_x509_certificate(
            (secured.data / "pki" / f"{natsauth.node_cert_name(node.name)}.crt").read_bytes()
        )
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert {"localhost", node.name} <= set(sans.get_values_for_type(x509.DNSName))
        assert "127.0.0.1" in {str(ip) for ip in sans.get_values_for_type(x509.IPAddress)}


async def test_the_admin_creates_a_replicated_stream_every_node_serves(
    secured: SecureCluster, admin: Client
) -> None:
    js = admin.jetstream()
    info = await js.stream_info("TABLE_EVENTS")
    assert info.config.num_replicas == 3
    ack = await js.publish("poker.table.3.r3", b"replicated")
    for node in secured.cluster.nodes:
        nc = await natsconn.connect(node.url, secured.credentials(natsauth.POKERCTL), allow_reconnect=False)
        try:
            got = await nc.jetstream().get_last_msg("TABLE_EVENTS", "poker.table.3.r3")
            assert (got.seq, got.data) == (ack.seq, b"replicated")
        finally:
            await nc.close()
    info = await js.stream_info("TABLE_EVENTS")
    assert info.cluster is not None
    assert info.cluster.replicas is not None
    assert {info.cluster.leader, *(r.name for r in info.cluster.replicas)} == set(NODES)


@pytest.mark.parametrize("index", range(len(NODES)))
async def test_an_anonymous_client_is_refused_on_every_node(secured: SecureCluster, index: int) -> None:
    ca = secured.data / "pki" / "ca.crt"
    url = secured.cluster.nodes[index].url
    exc = await _refused_connection(url, NatsCredentials(name="nobody", ca=ca))
    assert "authorization" in str(exc).lower()


async def test_a_service_keeps_its_permissions_on_a_node_that_leads_nothing(
    secured: SecureCluster, admin: Client
) -> None:
    nodes = secured.cluster.nodes
    meta = nodes[0].meta_cluster()
    assert meta is not None
    stream = await admin.jetstream().stream_info("TABLE_EVENTS")
    assert stream.cluster is not None
    leaders = {meta.get("leader"), stream.cluster.leader}
    follower = next(node for node in nodes if node.name not in leaders)
    before = (await admin.jetstream().stream_info("TABLE_EVENTS")).state.messages

    errors = Errors()
    nc = await natsconn.connect(
        follower.url, secured.credentials("table"), error_cb=errors.record, allow_reconnect=False
    )
    try:
        assert nc.connected_url is not None
        assert nc.connected_url.port == follower.port
        ack = await nc.jetstream().publish("poker.table.4.own", b"own")
        assert ack.seq > 0
        kv = await nc.jetstream().key_value("poker-leases")
        assert await kv.put("k-follower", b"own") > 0
        for subject in ("poker.wallet.ledger", "$JS.API.STREAM.PURGE.TABLE_EVENTS", "$KV.RNG_SHUFFLES.x"):
            await nc.publish(subject, b"forged")
            await nc.flush()
            await errors.refused(subject)
    finally:
        await nc.close()
    assert (await admin.jetstream().stream_info("TABLE_EVENTS")).state.messages == before + 1


def stranger_config(secured: SecureCluster, home: Path, *, own_ca: bool) -> Path:
    """A fourth node's config that trusts the cluster's CA; its certificate comes from that CA
    (``own_ca``) or from another one made in ``home``."""
    issuer = pki.ensure_local_pki(secured.data if own_ca else home)
    auth = natsauth.ensure_nats_auth(home, issuer)
    auth = dataclasses.replace(auth, ca=secured.data / "pki" / "ca.crt")
    return natsauth.cluster_node_config(auth, issuer, node="n4", cluster=CLUSTER)


def start_stranger(secured: SecureCluster, home: Path, *, own_ca: bool) -> NatsServer:
    cluster = secured.cluster
    config = stranger_config(secured, home, own_ca=own_ca)
    node = NatsServer(
        data_dir=home / "n4",
        name="n4",
        cluster_name=CLUSTER,
        cluster_port=free_port(),
        routes=cluster.nodes[0].routes,
        config_file=config,
    )
    # Not waited healthy: an intruder never is. What the cluster says is checked instead.
    return node.start(wait=False)


def test_a_node_with_a_certificate_of_the_cluster_ca_joins(tmp_path: Path) -> None:
    # The control for the test below: the same fourth node joins when the CA signed it.
    with secure_cluster(tmp_path / "c") as cluster:
        secured = SecureCluster(cluster=cluster, data=tmp_path / "c")
        friend = start_stranger(secured, tmp_path / "f", own_ca=True)
        try:
            wait_for("n4 routed to every node", lambda: all("n4" in route_peers(n) for n in cluster.nodes))
        finally:
            friend.stop()


def test_a_node_with_a_certificate_of_another_ca_cannot_join(tmp_path: Path) -> None:
    with secure_cluster(tmp_path / "c") as cluster:
        secured = SecureCluster(cluster=cluster, data=tmp_path / "c")
        intruder = start_stranger(secured, tmp_path / "x", own_ca=False)
        try:
            # Each node refuses the intruder's route at the TLS handshake, and says why.
            def all_refused() -> bool:
                return all("unknown authority" in n.log_file.read_text() for n in cluster.nodes)

            wait_for("every node refused the intruder's certificate", all_refused)
            assert intruder.running
            for node in cluster.nodes:
                assert route_peers(node) == set(NODES) - {node.name}
                meta = node.meta_cluster()
                assert meta is not None
                assert meta.get("cluster_size") == len(NODES)
        finally:
            intruder.stop()


def test_a_route_port_speaks_tls_only(secured: SecureCluster) -> None:
    # A plaintext peer is never answered: the route port expects a TLS handshake first.
    port = int(secured.cluster.nodes[0].routes[0].rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b'CONNECT {"verbose":false}\r\nPING\r\n')
        answer = b""
        with contextlib.suppress(OSError):  # closed, reset or silent: never served
            while chunk := sock.recv(4096):
                answer += chunk
    assert b"PONG" not in answer
    assert b"INFO" not in answer
