"""The table service's settings, read once from the environment.

Besides the shell's ``POKER_*`` settings (``shell.config``):

* ``POKER_TABLE_STREAM`` (default ``TABLE_EVENTS``): the table event log stream;
* ``POKER_TABLE_PARTITIONS`` (default 256): partitions of table subjects (fixed forever);
* ``POKER_TABLE_REPLICAS`` (default 1; 3 in a cluster): replicas of the streams and buckets it
  creates;
* ``POKER_TABLE_LEASE_TTL`` (default 10 s): partition lease TTL;
* ``POKER_TABLE_WALLET`` (default ``127.0.0.1:50052``): the wallet service's address;
* ``POKER_TABLE_INSTANCE`` (default ``table-<host>-<pid>``): this instance's name in leases and
  ``OwnerChanged`` events (shown to clients in NOT_OWNER errors);
* ``POKER_TABLE_SNAPSHOT_EVERY`` (default 10): snapshot a table every N hands;
* ``POKER_TABLE_PRESENCE_HEARTBEAT`` (default 2 s): how often this instance repeats who is
  connected to it (``openpoker.presence``); keep it well under the dealer's
  ``POKER_DEALER_PRESENCE_TTL``;
* ``POKER_TABLE_RECONCILE_EVERY`` (default 60 s): how often the escrow of every table this
  instance holds is reconciled with its log (``services.table.reconcile``; also on taking a
  table over);
* ``POKER_TABLE_RECONCILE_GRACE`` (default 30 s): how long an escrow no log accounts for must
  stay unchanged before its chips go back to cash;
* ``POKER_TABLE_RECONCILE_CLAIM`` (default on): at start and every ``RECONCILE_EVERY``, look at
  the tables of every partition nobody holds (one wallet call each) and take the lease of those
  partitions where a table has escrow its log does not account for, so that a table nobody
  uses (after a restart, or once its owner died) still gets its orphan returned; partitions
  with nothing to return stay free for the instances their traffic reaches. Off: an instance
  reconciles only the partitions traffic gave it.
* ``POKER_TABLE_QUOTA_CREATES_PER_MINUTE`` (default 30), ``POKER_TABLE_QUOTA_WATCHES_PER_IDENTITY``
  (default 16) and ``POKER_TABLE_QUOTA_WATCHES_PER_TABLE`` (default 500): CreateTable calls per
  identity per minute (all at once at most), open WatchTable streams per identity and per table;
  over one, RESOURCE_EXHAUSTED ``QUOTA_EXCEEDED`` naming it (``shell.quotas``: certificate
  holders exempt, a plaintext rig enforces nothing);
* ``POKER_DECK_KEYS``: the deck key file shared with rng (``shuffle.deck_seal``): a deck that
  does not open for its table, hand and commitment is refused. Required over TLS; a plaintext
  rig without it takes decks as card codes.
* ``POKER_SIGNING_KEY``: the table writer's Ed25519 key file (``eventstore.keyfiles``) every
  envelope is signed with. Required over TLS; a plaintext rig without it writes unsigned ones.
* ``POKER_SIGNING_KEYS``: the published keyring (``DATA/pki/signing-keys.json``) every envelope
  it loads is verified against: one not signed by a table key quarantines the log. Required over
  TLS; a plaintext rig without it reads unsigned ones.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field

from openpoker.eventstore.keyfiles import KeyringFile, keyring_setting, signer_setting
from openpoker.eventstore.signing import Signer
from openpoker.eventstore.subjects import PARTITIONS
from openpoker.shell.config import (
    DEFAULT_PORTS,
    ConfigError,
    ShellConfig,
    env_bool,
    env_float,
    env_int,
    env_parsed,
    env_str,
)
from openpoker.shuffle.deck_seal import DeckKeys, deck_keys_setting

SERVICE = "table"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableConfig:
    shell: ShellConfig
    stream: str
    partitions: int
    replicas: int
    lease_ttl: float
    wallet: str
    instance: str
    snapshot_every: int
    presence_heartbeat: float
    reconcile_every: float
    reconcile_grace: float
    reconcile_claim: bool
    creates_per_minute: int = 30
    watches_per_identity: int = 16
    watches_per_table: int = 500
    deck_keys: DeckKeys | None = field(default=None, repr=False)
    signer: Signer | None = field(default=None, repr=False)
    keyring: KeyringFile | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> TableConfig:
        env = os.environ if environ is None else environ
        shell = ShellConfig.from_env(SERVICE, env)
        deck_path = env_str(env, "POKER_DECK_KEYS", "")
        try:
            deck_keys = deck_keys_setting(deck_path, required=not shell.security.insecure)
        except ValueError as exc:
            raise ConfigError(variable="POKER_DECK_KEYS", value=deck_path, problem=str(exc)) from None
        return cls(
            shell=shell,
            deck_keys=deck_keys,
            signer=env_parsed(
                env,
                "POKER_SIGNING_KEY",
                lambda path: signer_setting(path, SERVICE, required=not shell.security.insecure),
            ),
            keyring=env_parsed(
                env,
                "POKER_SIGNING_KEYS",
                lambda path: keyring_setting(path, required=not shell.security.insecure),
            ),
            stream=env_str(env, "POKER_TABLE_STREAM", "TABLE_EVENTS"),
            partitions=env_int(env, "POKER_TABLE_PARTITIONS", PARTITIONS, minimum=1),
            replicas=env_int(env, "POKER_TABLE_REPLICAS", 1, minimum=1),
            lease_ttl=env_float(env, "POKER_TABLE_LEASE_TTL", 10.0, minimum=1.0),
            wallet=env_str(env, "POKER_TABLE_WALLET", f"127.0.0.1:{DEFAULT_PORTS['wallet']}"),
            instance=env_str(env, "POKER_TABLE_INSTANCE", f"table-{socket.gethostname()}-{os.getpid()}"),
            snapshot_every=env_int(env, "POKER_TABLE_SNAPSHOT_EVERY", 10, minimum=1),
            presence_heartbeat=env_float(env, "POKER_TABLE_PRESENCE_HEARTBEAT", 2.0, minimum=0.01),
            reconcile_every=env_float(env, "POKER_TABLE_RECONCILE_EVERY", 60.0, minimum=0.1),
            reconcile_grace=env_float(env, "POKER_TABLE_RECONCILE_GRACE", 30.0, minimum=0.1),
            reconcile_claim=env_bool(env, "POKER_TABLE_RECONCILE_CLAIM", True),
            creates_per_minute=env_int(env, "POKER_TABLE_QUOTA_CREATES_PER_MINUTE", 30, minimum=1),
            watches_per_identity=env_int(env, "POKER_TABLE_QUOTA_WATCHES_PER_IDENTITY", 16, minimum=1),
            watches_per_table=env_int(env, "POKER_TABLE_QUOTA_WATCHES_PER_TABLE", 500, minimum=1),
        )
