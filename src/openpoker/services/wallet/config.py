"""The wallet service's settings, read once from the environment.

Besides the shell's ``POKER_*`` settings:

* ``POKER_WALLET_CURRENCY`` (default ``CHIPS``): the one currency of this ledger (minor units).
  The first start records it in the log; a later start with another currency refuses to run.
* ``POKER_WALLET_SNAPSHOT_EVERY`` (default 1000): commands between snapshots (0 = never), or
  the number of commands the ledger already holds if that is more (``WalletApp._snapshot_due``).
* ``POKER_WALLET_STREAM`` (default ``WALLET_EVENTS``): the JetStream stream of the ledger.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from openpoker.shell.config import ConfigError, ShellConfig, env_int, env_str

SERVICE = "wallet"
_CURRENCY = re.compile(r"^[A-Z][A-Z0-9_]{1,15}$")


@dataclass(frozen=True, slots=True, kw_only=True)
class WalletConfig:
    shell: ShellConfig
    currency: str
    snapshot_every: int
    stream: str

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WalletConfig:
        env = os.environ if environ is None else environ
        currency = env_str(env, "POKER_WALLET_CURRENCY", "CHIPS")
        if not _CURRENCY.fullmatch(currency):
            raise ConfigError(variable="POKER_WALLET_CURRENCY", value=currency, problem="2-16 of A-Z 0-9 _")
        snapshot_every = env_int(env, "POKER_WALLET_SNAPSHOT_EVERY", 1000)
        return cls(
            shell=ShellConfig.from_env(SERVICE, env),
            currency=currency,
            snapshot_every=snapshot_every if snapshot_every > 0 else 2**62,
            stream=env_str(env, "POKER_WALLET_STREAM", "WALLET_EVENTS"),
        )
