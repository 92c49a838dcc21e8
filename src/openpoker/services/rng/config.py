"""The rng service's settings, read once from the environment.

Besides the shell's ``POKER_*`` settings:

* ``POKER_RNG_SEED_KEY``: 64 hex digits, the AES-256-GCM key sealing seeds at rest. Required in
  production. In development, if unset, a random key is made for the process: its seeds cannot
  be revealed after a restart (a warning is logged).
* ``POKER_RNG_SEED_KEY_ID`` (default ``local-1``): stored with every sealed seed, for rotation.
* ``POKER_RNG_BUCKET`` (default ``RNG_SHUFFLES``): the JetStream KV bucket of shuffle records.
* ``POKER_TABLE_STREAM`` (default ``TABLE_EVENTS``): where the table event log lives, to check
  that a hand has ended before revealing its seed (subjects from ``eventstore.subjects``).
* ``POKER_DECK_KEYS``: the deck key file shared with the table service (``shuffle.deck_seal``):
  every deck leaves sealed for its table's hand. Required over TLS; a plaintext rig without it
  sends decks as card codes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from openpoker.shell.config import ConfigError, ShellConfig, env_str
from openpoker.shuffle.deck_seal import DeckKeys, deck_keys_setting

SERVICE = "rng"


@dataclass(frozen=True, slots=True, kw_only=True)
class RngConfig:
    shell: ShellConfig
    seed_key: bytes = field(repr=False)
    seed_key_id: str
    ephemeral_key: bool
    bucket: str
    table_stream: str
    deck_keys: DeckKeys | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RngConfig:
        env = os.environ if environ is None else environ
        shell = ShellConfig.from_env(SERVICE, env)
        raw_key = env.get("POKER_RNG_SEED_KEY", "").strip()
        ephemeral = not raw_key
        if ephemeral:
            if shell.environment == "production":
                raise ConfigError(variable="POKER_RNG_SEED_KEY", value="", problem="required in production")
            key = os.urandom(32)
        else:
            try:
                key = bytes.fromhex(raw_key)
            except ValueError:
                key = b""
            if len(key) != 32:
                # Never echo the key back, even a malformed one.
                raise ConfigError(variable="POKER_RNG_SEED_KEY", value="<hidden>", problem="64 hex digits")
        deck_path = env_str(env, "POKER_DECK_KEYS", "")
        try:
            deck_keys = deck_keys_setting(deck_path, required=not shell.security.insecure)
        except ValueError as exc:
            raise ConfigError(variable="POKER_DECK_KEYS", value=deck_path, problem=str(exc)) from None
        return cls(
            shell=shell,
            deck_keys=deck_keys,
            seed_key=key,
            seed_key_id=env_str(env, "POKER_RNG_SEED_KEY_ID", "local-1"),
            ephemeral_key=ephemeral,
            bucket=env_str(env, "POKER_RNG_BUCKET", "RNG_SHUFFLES"),
            table_stream=env_str(env, "POKER_TABLE_STREAM", "TABLE_EVENTS"),
        )
