"""The wallet service's settings, read once from the environment.

Besides the shell's ``POKER_*`` settings:

* ``POKER_WALLET_CURRENCY`` (default ``CHIPS``): the one currency of this ledger (minor units).
  The first start records it in the log; a later start with another currency refuses to run.
* ``POKER_WALLET_SNAPSHOT_EVERY`` (default 1000): commands between snapshots (0 = never), or
  the number of commands the ledger already holds if that is more (``WalletApp._snapshot_due``).
* ``POKER_WALLET_STREAM`` (default ``WALLET_EVENTS``): the JetStream stream of the ledger.
* ``POKER_WALLET_MAX_DEPOSIT`` (default 1,000,000), ``POKER_WALLET_DAILY_DEPOSIT`` (default
  10,000,000) and ``POKER_WALLET_MAX_BALANCE`` (default 1,000,000,000): the most one deposit may
  bring, the most one cash account may receive by deposit per UTC day, and the most a deposit may
  lift a cash account to (``openpoker.ledger.limits``; each at least 1, at most 2**53).
* ``POKER_WALLET_MAX_WITHDRAWAL`` (default 1,000,000) and ``POKER_WALLET_DAILY_WITHDRAWAL``
  (default 10,000,000): the most one withdrawal may take, and the most one cash account may pay
  out by withdrawal per UTC day (same bounds).
* ``POKER_SIGNING_KEY``: the wallet writer's Ed25519 key file (``eventstore.keyfiles``) every
  envelope is signed with. Required over TLS; a plaintext rig without it writes unsigned ones.
* ``POKER_SIGNING_KEYS``: the published keyring (``DATA/pki/signing-keys.json``) every envelope
  it loads is verified against: one not signed by a wallet key quarantines the log. Required over
  TLS; a plaintext rig without it reads unsigned ones.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from openpoker.eventstore.keyfiles import KeyringFile, keyring_setting, signer_setting
from openpoker.eventstore.signing import Signer
from openpoker.ledger.limits import DepositLimits, WithdrawalLimits
from openpoker.shell.config import ConfigError, ShellConfig, env_int, env_parsed, env_str

SERVICE = "wallet"
_CURRENCY = re.compile(r"^[A-Z][A-Z0-9_]{1,15}$")
MAX_DEPOSIT = 1_000_000
DAILY_DEPOSIT = 10_000_000
MAX_BALANCE = 1_000_000_000
MAX_WITHDRAWAL = 1_000_000
DAILY_WITHDRAWAL = 10_000_000
_LIMIT_CAP = 2**53  # far below int64: sums of a few limits can never overflow a total


DEFAULT_DEPOSIT_LIMITS = DepositLimits(
    max_deposit=MAX_DEPOSIT, daily_deposit=DAILY_DEPOSIT, max_balance=MAX_BALANCE
)
DEFAULT_WITHDRAWAL_LIMITS = WithdrawalLimits(max_withdrawal=MAX_WITHDRAWAL, daily_withdrawal=DAILY_WITHDRAWAL)


def _limit(env: Mapping[str, str], name: str, default: int) -> int:
    value = env_int(env, name, default)
    if not 1 <= value <= _LIMIT_CAP:
        raise ConfigError(variable=name, value=str(value), problem=f"1..{_LIMIT_CAP}")
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class WalletConfig:
    shell: ShellConfig
    currency: str
    snapshot_every: int
    stream: str
    deposit_limits: DepositLimits = DEFAULT_DEPOSIT_LIMITS
    withdrawal_limits: WithdrawalLimits = DEFAULT_WITHDRAWAL_LIMITS
    signer: Signer | None = field(default=None, repr=False)
    keyring: KeyringFile | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WalletConfig:
        env = os.environ if environ is None else environ
        currency = env_str(env, "POKER_WALLET_CURRENCY", "CHIPS")
        if not _CURRENCY.fullmatch(currency):
            raise ConfigError(variable="POKER_WALLET_CURRENCY", value=currency, problem="2-16 of A-Z 0-9 _")
        snapshot_every = env_int(env, "POKER_WALLET_SNAPSHOT_EVERY", 1000)
        shell = ShellConfig.from_env(SERVICE, env)
        return cls(
            shell=shell,
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
            currency=currency,
            snapshot_every=snapshot_every if snapshot_every > 0 else 2**62,
            stream=env_str(env, "POKER_WALLET_STREAM", "WALLET_EVENTS"),
            deposit_limits=DepositLimits(
                max_deposit=_limit(env, "POKER_WALLET_MAX_DEPOSIT", MAX_DEPOSIT),
                daily_deposit=_limit(env, "POKER_WALLET_DAILY_DEPOSIT", DAILY_DEPOSIT),
                max_balance=_limit(env, "POKER_WALLET_MAX_BALANCE", MAX_BALANCE),
            ),
            withdrawal_limits=WithdrawalLimits(
                max_withdrawal=_limit(env, "POKER_WALLET_MAX_WITHDRAWAL", MAX_WITHDRAWAL),
                daily_withdrawal=_limit(env, "POKER_WALLET_DAILY_WITHDRAWAL", DAILY_WITHDRAWAL),
            ),
        )
