"""``POKER_SIGNING_KEYS``: the wallet, the table service and the dealer verify every envelope
they load against the published keyring, required over TLS, optional on a plaintext rig."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openpoker.eventstore.keyfiles import ensure_signing_key, keyring_path
from openpoker.services.dealer.config import DealerConfig
from openpoker.services.table.config import TableConfig
from openpoker.services.wallet.config import WalletConfig
from openpoker.shell.config import ConfigError
from openpoker.shuffle.deck_seal import ensure_deck_keys
from tests.helpers.natscreds import nats_env


@pytest.mark.parametrize("config", [WalletConfig, TableConfig, DealerConfig])
def test_the_keyring_is_required_over_tls_and_read_when_named(config: Any, tmp_path: Path) -> None:
    deck_keys = tmp_path / "deck-keys.json"
    ensure_deck_keys(deck_keys)
    writer = "wallet" if config is WalletConfig else "table"
    env = {
        "POKER_TLS_DIR": "/nonexistent/pki",
        "POKER_DECK_KEYS": str(deck_keys),
        "POKER_SIGNING_KEY": str(ensure_signing_key(tmp_path, writer)),
        **nats_env(tmp_path / "nats"),
    }
    with pytest.raises(ConfigError) as caught:
        config.from_env(env)
    assert caught.value.variable == "POKER_SIGNING_KEYS"
    with pytest.raises(ConfigError) as caught:
        config.from_env({**env, "POKER_SIGNING_KEYS": str(tmp_path / "none.json")})
    assert caught.value.variable == "POKER_SIGNING_KEYS"
    loaded = config.from_env({**env, "POKER_SIGNING_KEYS": str(keyring_path(tmp_path))})
    assert loaded.keyring is not None
    assert config.from_env({"POKER_INSECURE": "true"}).keyring is None
