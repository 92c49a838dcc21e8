"""The operator's example cluster (``deploy/nats-cluster/``): its users file is the code's
permission table, and the three configs, with the placeholders filled in, form a secured
cluster that refuses anonymous clients and lets ``admin`` create replicated streams."""

from __future__ import annotations

import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from openpoker.pokerctl import natssetup
from openpoker.shell import childproc, natsauth, natsconn, pki
from openpoker.shell.natsconn import NatsCredentials
from openpoker.shell.natsproc import find_binary, free_port
from tests.security.test_nats_auth import _refused_connection

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "nats-cluster"
NODES = ("n1", "n2", "n3")
PLACEHOLDER = "PUBLIC_NKEY_OF_{}"


def test_the_example_users_file_is_the_permission_table() -> None:
    text = (DEPLOY / "users.conf").read_text()
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    users = [(name, PLACEHOLDER.format(name)) for name in natsauth.IDENTITIES]
    assert body == natsauth.render_authorization(users) + "\n"


def test_every_example_node_is_secured() -> None:
    for node in NODES:
        text = (DEPLOY / f"{node}.conf").read_text()
        assert re.search(r"^http: 127\.0\.0\.1:\d+$", text, re.MULTILINE), node
        assert 'include "users.conf"' in text
        cluster = text.split("cluster {", 1)[1]
        assert "verify: true" in cluster
        assert text.count("ca_file") == 2


def filled_in(data: Path, out: Path) -> list[tuple[Path, int, int]]:
    """The example configs with real files, free ports and stores under ``data``: for each node
    its config, client port and monitoring port."""
    local_pki = pki.ensure_local_pki(data)
    auth = natsauth.ensure_nats_auth(data, local_pki)
    users = (DEPLOY / "users.conf").read_text()
    for name in natsauth.IDENTITIES:
        users = users.replace(f'"{PLACEHOLDER.format(name)}"', f'"{natsauth.public_key(auth.seed(name))}"')
    out.mkdir()
    (out / "users.conf").write_text(users)
    texts = [(DEPLOY / f"{node}.conf").read_text() for node in NODES]
    ports = sorted({int(p) for text in texts for p in re.findall(r"127\.0\.0\.1:(\d+)", text)})
    fresh = {port: free_port() for port in ports}
    nodes = []
    for node, example in zip(NODES, texts, strict=True):
        # Each node's certificate from the CA, valid for its name (what cluster_node_config makes).
        natsauth.cluster_node_config(auth, local_pki, node=node, cluster="poker")
        cert = natsauth.node_cert_name(node)
        files = {
            f"/etc/openpoker/nats/{node}.crt": local_pki.cert(cert),
            f"/etc/openpoker/nats/{node}.key": local_pki.key(cert),
            "/etc/openpoker/pki/ca.crt": local_pki.ca_cert,
            f"./data/{node}": data / "stores" / node,
        }
        text = example
        for placeholder, path in files.items():
            text = text.replace(f'"{placeholder}"', f'"{path}"')
        assert '"/etc/openpoker' not in text
        text = re.sub(r"127\.0\.0\.1:(\d+)", lambda m: f"127.0.0.1:{fresh[int(m.group(1))]}", text)
        config = out / f"{node}.conf"
        config.write_text(text)
        client = int(re.search(r"^listen: 127\.0\.0\.1:(\d+)$", text, re.MULTILINE).group(1))  # type: ignore[union-attr]
        http = int(re.search(r"^http: 127\.0\.0\.1:(\d+)$", text, re.MULTILINE).group(1))  # type: ignore[union-attr]
        nodes.append((config, client, http))
    return nodes


def healthy(http: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{http}/healthz", timeout=1) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture
def example(tmp_path: Path) -> Iterator[tuple[Path, list[int]]]:
    nodes = filled_in(tmp_path / "data", tmp_path / "conf")
    processes = []
    try:
        for config, _, _ in nodes:
            log = tmp_path / f"{config.stem}.log"
            processes.append(
                childproc.popen(
                    [find_binary(), "--config", str(config), "--log", str(log)],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        deadline = time.monotonic() + 30
        while not all(healthy(http) for _, _, http in nodes):
            exited = [p.args for p in processes if p.poll() is not None]
            assert not exited, f"nats-server exited: {exited}; logs in {tmp_path}"
            assert time.monotonic() < deadline, f"the example cluster is not healthy; logs in {tmp_path}"
            time.sleep(0.05)
        yield tmp_path / "data", [client for _, client, _ in nodes]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def test_the_filled_in_example_is_a_secured_cluster(example: tuple[Path, list[int]]) -> None:
    data, ports = example
    urls = [f"nats://127.0.0.1:{port}" for port in ports]
    ca = data / "pki" / "ca.crt"
    for url in urls:
        exc = await _refused_connection(url, NatsCredentials(name="nobody", ca=ca))
        assert "authorization" in str(exc).lower()
    # The meta group may still be gathering its peers: the set-up retries until placement works.
    await natssetup.set_up(urls[0], NatsCredentials.local(natsauth.ADMIN, data), replicas=3)
    admin = await natsconn.connect(urls[1], NatsCredentials.local(natsauth.ADMIN, data))
    try:
        info = await admin.jetstream().stream_info("TABLE_EVENTS")
        assert info.config.num_replicas == 3
        ack = await admin.jetstream().publish("poker.table.1.example", b"replicated")
        assert ack.seq == 1
    finally:
        await admin.close()
