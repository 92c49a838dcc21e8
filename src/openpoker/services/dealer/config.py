"""The dealer service's settings, read once from the environment.

Besides the shell's ``POKER_*`` settings (``shell.config``):

* ``POKER_TABLE_STREAM`` (default ``TABLE_EVENTS``): the table event log the dealer follows;
* ``POKER_RNG_TARGET``, ``POKER_TABLE_TARGET``, ``POKER_WALLET_TARGET`` (default
  ``127.0.0.1:<default port>``): where the other services listen (``pokerctl up`` sets them);
* ``POKER_DEALER_CALL_TIMEOUT`` (default 2 s): the deadline of every outgoing call;
* ``POKER_DEALER_CALL_ATTEMPTS`` (default 3): tries per call on UNAVAILABLE/DEADLINE_EXCEEDED
  (same request id each time) before the step is retried later;
* ``POKER_DEALER_HAND_DELAY_MS`` (default 0): pause between the end of a hand and the next one
  (``make run`` sets a little, so the live view can be followed);
* ``POKER_DEALER_PRESENCE_TTL`` (default 6 s): a table-service instance not heard from for this
  long has no connected players (``services.dealer.presence``); keep it a few of the table
  service's ``POKER_TABLE_PRESENCE_HEARTBEAT``;
* ``POKER_DEALER_OPEN_RETRY`` (default 1 s), ``POKER_DEALER_OPEN_RETRY_MAX`` (30 s),
  ``POKER_DEALER_OPEN_FAILURES`` (5; 0 = never pause): a hand that cannot open (a refused
  reservation, start or shuffle) delays the next by the first, doubling up to the second, and
  after that many in a row the dealer pauses the table itself (``services.dealer.pausing``).
* ``POKER_DEALER_CHECKPOINT_EVERY`` (default 100): table versions between two checkpoints of a
  table (``services.dealer.checkpoints``; taken between hands): a restart folds about this many
  envelopes per table.

* ``POKER_SIGNING_KEYS``: the published keyring (``DATA/pki/signing-keys.json``): every table
  envelope the dealer folds must follow its table's chain and be signed by a table key, else that
  table is quarantined (not driven; ``log.corrupt``). Required over TLS; a plaintext rig without
  it folds what it reads.

Decision clocks are not here: they are each table's rules (``TableConfig.time``), so a test
table with 200 ms clocks and a production table with 10 s + 20 s run side by side.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from openpoker.eventstore.keyfiles import KeyringFile, keyring_setting
from openpoker.services.dealer import checkpoint
from openpoker.services.dealer.pausing import OpenRetry
from openpoker.shell.config import (
    DEFAULT_PORTS,
    ShellConfig,
    env_float,
    env_int,
    env_parsed,
    env_str,
)

SERVICE = "dealer"


def _target(env: Mapping[str, str], service: str) -> str:
    return env_str(env, f"POKER_{service.upper()}_TARGET", f"127.0.0.1:{DEFAULT_PORTS[service]}")


@dataclass(frozen=True, slots=True, kw_only=True)
class DealerConfig:
    shell: ShellConfig
    table_stream: str
    rng_target: str
    table_target: str
    wallet_target: str
    call_timeout: float
    call_attempts: int
    hand_delay_ms: int
    presence_ttl: float
    open_retry: OpenRetry = field(default_factory=OpenRetry)
    checkpoint_every: int = checkpoint.EVERY
    keyring: KeyringFile | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DealerConfig:
        env = os.environ if environ is None else environ
        shell = ShellConfig.from_env(SERVICE, env)
        return cls(
            shell=shell,
            keyring=env_parsed(
                env,
                "POKER_SIGNING_KEYS",
                lambda path: keyring_setting(path, required=not shell.security.insecure),
            ),
            table_stream=env_str(env, "POKER_TABLE_STREAM", "TABLE_EVENTS"),
            rng_target=_target(env, "rng"),
            table_target=_target(env, "table"),
            wallet_target=_target(env, "wallet"),
            call_timeout=env_float(env, "POKER_DEALER_CALL_TIMEOUT", 2.0, minimum=0.01),
            call_attempts=env_int(env, "POKER_DEALER_CALL_ATTEMPTS", 3, minimum=1),
            hand_delay_ms=env_int(env, "POKER_DEALER_HAND_DELAY_MS", 0),
            presence_ttl=env_float(env, "POKER_DEALER_PRESENCE_TTL", 6.0, minimum=0.05),
            checkpoint_every=env_int(env, "POKER_DEALER_CHECKPOINT_EVERY", checkpoint.EVERY, minimum=1),
            open_retry=OpenRetry(
                retry=env_float(env, "POKER_DEALER_OPEN_RETRY", 1.0, minimum=0.01),
                retry_max=env_float(env, "POKER_DEALER_OPEN_RETRY_MAX", 30.0, minimum=0.01),
                limit=env_int(env, "POKER_DEALER_OPEN_FAILURES", 5),
            ),
        )
