"""Who may do what on NATS: one nkey per identity, TLS, and per-identity subject permissions.

``permissions(name)`` is the table (pure): what each identity publishes and subscribes to,
written into the server's config by ``server_config``; docs/security.md explains each row.
JetStream is reached through subjects too, so a read is a grant of the ``$JS.API`` calls on one
stream (info, message and direct gets, ephemeral or durable consumers and their next-message
requests, but not deleting a consumer: the ordered consumers every reader uses are ephemeral and
the server removes them once their subscriber is gone, and nats-py deletes none on unsubscribe),
and a write is a publish to the stream's subjects (a KV put is a publish to
``$KV.<bucket>.<key>``). No service identity may create, update, delete or purge a stream or
delete a message from one: ``admin`` creates the streams and buckets at set-up, before the
services start, and holds every permission. Each identity's inbox is its own
(``_INBOX_<name>``), so no service reads the replies and deliveries of another.

``ensure_nats_auth(data_dir, ca)`` makes, on first start, and reuses after: a seed per identity
in ``DATA/nats/auth/<name>.nk`` (0600, folder 0700), usable as nats-py's ``nkeys_seed=``, and
the server certificate and key from the local CA (``shell.pki``). ``server_config`` renders the
``nats-server`` config file: the nkey users with their permissions, TLS with that certificate,
and monitoring on loopback only. ``cluster_node_config`` renders a cluster node's: the same
users, permissions and client TLS with a certificate of its own (valid for its name too), plus
routes over TLS where each end must present a certificate of the same CA (``verify``).
``private_server_auth`` is the config of a server one process starts for itself on a copy of a
store (the offline ``pokerctl`` readers): one user, a fresh seed that never leaves the copy's
folder, loopback only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import nkeys

from openpoker.shell import pki

SERVICES: tuple[str, ...] = ("rng", "wallet", "table", "dealer")
ADMIN = "admin"
POKERCTL = "pokerctl"
IDENTITIES: tuple[str, ...] = (*SERVICES, ADMIN, POKERCTL)
SEED_SUFFIX = ".nk"

# Streams and buckets by the names eventstore.streams and the services give them.
TABLE_EVENTS = "TABLE_EVENTS"
TABLE_SNAPSHOTS = "TABLE_SNAPSHOTS"
WALLET_EVENTS = "WALLET_EVENTS"
WALLET_SNAPSHOTS = "WALLET_SNAPSHOTS"
RNG_AUDIT = "RNG_AUDIT"
LEASES_BUCKET = "poker-leases"
HANDS_BUCKET = "poker-table-hands"
DEALER_BUCKET = "poker-dealer"
RNG_BUCKET = "RNG_SHUFFLES"
ALLOWANCES_BUCKET = "poker-allowances"
PRESENCE = "poker.presence.>"

# What no identity but admin may call: these change or destroy what a stream holds or is.
DENIED_API: tuple[str, ...] = (
    "$JS.API.STREAM.CREATE.>",
    "$JS.API.STREAM.UPDATE.>",
    "$JS.API.STREAM.DELETE.>",
    "$JS.API.STREAM.PURGE.>",
    "$JS.API.STREAM.MSG.DELETE.>",
    "$JS.API.STREAM.RESTORE.>",
    "$JS.API.STREAM.PEER.REMOVE.>",
    "$JS.API.STREAM.LEADER.STEPDOWN.>",
    "$JS.API.ACCOUNT.PURGE.>",
    "$JS.API.META.>",
    "$JS.API.SERVER.>",
)


def inbox_prefix(name: str) -> str:
    """The identity's own reply and delivery subjects (nats-py's ``inbox_prefix=``)."""
    return f"_INBOX_{name}"


def kv_stream(bucket: str) -> str:
    return f"KV_{bucket}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Grant:
    """One identity's writes (subjects it publishes), reads (streams) and live subscriptions."""

    writes: tuple[str, ...] = ()
    buckets: tuple[str, ...] = ()  # KV buckets it writes (and reads)
    reads: tuple[str, ...] = ()  # streams it reads
    listens: tuple[str, ...] = ()  # core subjects it subscribes to


GRANTS: Mapping[str, Grant] = {
    # The table service is the only writer of the table logs, their snapshots, presence facts,
    # partition leases, the hand index and the players' all-in allowances across tables; it
    # reads the rng audit to answer auditors.
    "table": Grant(
        writes=("poker.table.>", "poker.snap.>", PRESENCE),
        buckets=(LEASES_BUCKET, HANDS_BUCKET, ALLOWANCES_BUCKET),
        reads=(TABLE_EVENTS, TABLE_SNAPSHOTS, RNG_AUDIT),
    ),
    "wallet": Grant(
        writes=("poker.wallet.>", "poker.walletsnap.>"),
        reads=(WALLET_EVENTS, WALLET_SNAPSHOTS),
    ),
    # rng writes its sealed seeds and reads the table logs only to see a hand ended.
    "rng": Grant(buckets=(RNG_BUCKET,), reads=(TABLE_EVENTS,)),
    # The dealer follows the table logs, records the rng audit, keeps its pauses and hears
    # presence; it writes no table, wallet or rng state (that goes through the services' RPCs).
    "dealer": Grant(
        writes=("poker.audit.rng.>",),
        buckets=(DEALER_BUCKET,),
        reads=(TABLE_EVENTS, RNG_AUDIT),
        listens=(PRESENCE,),
    ),
    # The operator's tool audits, replays and backs up: it reads every log and writes nothing.
    POKERCTL: Grant(
        reads=(
            TABLE_EVENTS,
            TABLE_SNAPSHOTS,
            WALLET_EVENTS,
            WALLET_SNAPSHOTS,
            RNG_AUDIT,
            kv_stream(HANDS_BUCKET),
            kv_stream(RNG_BUCKET),
            kv_stream(DEALER_BUCKET),
            kv_stream(ALLOWANCES_BUCKET),
        ),
    ),
}


def _read_api(stream: str) -> list[str]:
    return [
        f"$JS.API.STREAM.INFO.{stream}",
        f"$JS.API.STREAM.MSG.GET.{stream}",
        f"$JS.API.DIRECT.GET.{stream}",
        f"$JS.API.DIRECT.GET.{stream}.>",
        f"$JS.API.CONSUMER.CREATE.{stream}",
        f"$JS.API.CONSUMER.CREATE.{stream}.>",
        f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.>",
        f"$JS.API.CONSUMER.INFO.{stream}.>",
        f"$JS.API.CONSUMER.MSG.NEXT.{stream}.>",
        f"$JS.ACK.{stream}.>",
    ]


def permissions(name: str) -> dict[str, dict[str, list[str]]]:
    """The server-side permissions of one identity (the ``permissions`` block of its user)."""
    if name == ADMIN:
        return {"publish": {"allow": [">"]}, "subscribe": {"allow": [">"]}}
    grant = GRANTS[name]
    reads = [*grant.reads, *(kv_stream(b) for b in grant.buckets)]
    publish = ["$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.FC.>", *grant.writes]
    publish += [f"$KV.{bucket}.>" for bucket in grant.buckets]
    for stream in reads:
        publish += _read_api(stream)
    return {
        "publish": {"allow": publish, "deny": list(DENIED_API)},
        "subscribe": {"allow": [f"{inbox_prefix(name)}.>", *grant.listens]},
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class NatsAuth:
    """Paths of the NATS credentials under a data folder; each exists once ensured."""

    root: Path  # DATA/nats/auth
    ca: Path
    cert: Path
    key: Path

    def seed(self, name: str) -> Path:
        return self.root / f"{name}{SEED_SUFFIX}"

    @property
    def config(self) -> Path:
        return self.root / "nats-server.conf"


NATS_CERT = "nats-server"  # its certificate and key in DATA/pki/


def ensure_nats_auth(
    data_dir: Path, local_pki: pki.LocalPki, *, identities: Iterable[str] = IDENTITIES
) -> NatsAuth:
    """Make what is missing: a seed per identity and the server's certificate from the CA."""
    root = data_dir / "nats" / "auth"
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    for name in identities:
        path = root / f"{name}{SEED_SUFFIX}"
        if not path.exists():
            seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
            pki.write_secret(path, bytes(seed) + b"\n")
    pki.ensure_server_leaf(local_pki, NATS_CERT, uri=pki.infra_id("nats"))
    return NatsAuth(
        root=root, ca=local_pki.ca_cert, cert=local_pki.cert(NATS_CERT), key=local_pki.key(NATS_CERT)
    )


def public_key(seed_file: Path) -> str:
    """The user's public nkey (``U...``), what the server config names it by."""
    pair = nkeys.from_seed(seed_file.read_bytes().strip())
    return str(pair.public_key.decode())


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterNode:
    """A cluster node's part of its config: its name, the cluster's, and its route TLS.

    Routes use TLS with ``verify``: a peer must present a certificate of ``ca`` (both ends of a
    route check each other), which is what authenticates a route. ``listen`` and ``routes`` may
    be left empty when the command line gives them (``natsproc.NatsCluster`` picks ports)."""

    name: str
    cluster: str
    cert: Path
    key: Path
    listen: str = ""
    routes: tuple[str, ...] = ()


def render_authorization(users: Sequence[tuple[str, str]]) -> str:
    """The ``authorization`` block for ``(name, public nkey)`` users (pure)."""
    entries = [{"nkey": nkey, "permissions": permissions(name)} for name, nkey in users]
    return f"authorization: {json.dumps({'users': entries}, indent=2)}"


def render_config(
    users: Sequence[tuple[str, str]],
    *,
    cert: Path,
    key: Path,
    ca: Path,
    node: ClusterNode | None = None,
) -> str:
    """The ``nats-server`` config text for ``(name, public nkey)`` users (pure); JSON values
    are valid in its syntax, so each block is written as JSON. With ``node``, a cluster node's:
    the same users, permissions and client TLS, plus its routes over verified TLS."""
    tls = {"cert_file": str(cert), "key_file": str(key), "ca_file": str(ca), "timeout": 5}
    lines = [
        "# Written by openpoker (shell.natsauth) at every start: edit the code, not this file.",
        'http: "127.0.0.1:-1"',
        f"tls: {json.dumps(tls)}",
        render_authorization(users),
    ]
    if node is not None:
        route_tls = {
            "cert_file": str(node.cert),
            "key_file": str(node.key),
            "ca_file": str(ca),
            "verify": True,
            "timeout": 5,
        }
        cluster: dict[str, object] = {"name": node.cluster, "tls": route_tls}
        if node.listen:
            cluster["listen"] = node.listen
        if node.routes:
            cluster["routes"] = list(node.routes)
        lines += [f"server_name: {json.dumps(node.name)}", f"cluster: {json.dumps(cluster, indent=2)}"]
    return "\n".join(lines) + "\n"


def server_config(auth: NatsAuth, *, identities: Iterable[str] = IDENTITIES) -> Path:
    """Write the server config for ``auth`` (0600: it names every user) and return its path."""
    users = [(name, public_key(auth.seed(name))) for name in identities]
    text = render_config(users, cert=auth.cert, key=auth.key, ca=auth.ca)
    pki.write_secret(auth.config, text.encode())
    return auth.config


def private_server_auth(folder: Path, name: str = POKERCTL) -> tuple[Path, Path]:
    """A config for a private server (one user, every permission, no TLS: loopback and this
    process only) and that user's new seed, both 0600 in ``folder``: ``(config, seed)``."""
    seed = folder / f"{name}{SEED_SUFFIX}"
    pki.write_secret(seed, bytes(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)) + b"\n")
    users = {"users": [{"nkey": public_key(seed)}]}
    text = f'http: "127.0.0.1:-1"\nauthorization: {json.dumps(users)}\n'
    config = folder / "nats-server.conf"
    pki.write_secret(config, text.encode())
    return config, seed


def node_cert_name(node: str) -> str:
    """A cluster node's certificate and key in DATA/pki/ (``nats-<node>.crt``/``.key``)."""
    return f"{NATS_CERT}-{node}" if node else NATS_CERT


def cluster_node_config(
    auth: NatsAuth,
    local_pki: pki.LocalPki,
    *,
    node: str,
    cluster: str,
    listen: str = "",
    routes: Sequence[str] = (),
    identities: Iterable[str] = IDENTITIES,
) -> Path:
    """Write the config of cluster node ``node`` and return its path (``nats-server-<node>.conf``
    next to the single server's). The node gets its own certificate from the CA, valid for
    ``localhost``, ``127.0.0.1`` and its name, for its clients and its routes alike."""
    name = node_cert_name(node)
    pki.ensure_server_leaf(local_pki, name, uri=pki.infra_id(name), hosts=(node,))
    cert, key = local_pki.cert(name), local_pki.key(name)
    users = [(ident, public_key(auth.seed(ident))) for ident in identities]
    spec = ClusterNode(name=node, cluster=cluster, cert=cert, key=key, listen=listen, routes=tuple(routes))
    text = render_config(users, cert=cert, key=key, ca=auth.ca, node=spec)
    path = auth.root / f"nats-server-{node}.conf"
    pki.write_secret(path, text.encode())
    return path
