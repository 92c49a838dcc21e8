"""The wallet's deposit and withdrawal limits from the environment: defaults, overrides, values
refused."""

from __future__ import annotations

import pytest

from openpoker.ledger.limits import DepositLimits, WithdrawalLimits
from openpoker.services.wallet.config import WalletConfig
from openpoker.shell.config import ConfigError

BASE = {"POKER_INSECURE": "true"}


def test_defaults_are_far_below_int64() -> None:
    limits = WalletConfig.from_env(BASE).deposit_limits
    assert limits == DepositLimits(max_deposit=1_000_000, daily_deposit=10_000_000, max_balance=1_000_000_000)


def test_each_limit_is_a_setting() -> None:
    env = {
        **BASE,
        "POKER_WALLET_MAX_DEPOSIT": "5",
        "POKER_WALLET_DAILY_DEPOSIT": "6",
        "POKER_WALLET_MAX_BALANCE": "7",
    }
    assert WalletConfig.from_env(env).deposit_limits == DepositLimits(
        max_deposit=5, daily_deposit=6, max_balance=7
    )


@pytest.mark.parametrize("value", ["0", "-1", str(2**53 + 1), "many"])
def test_a_limit_out_of_range_stops_the_start(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        WalletConfig.from_env({**BASE, "POKER_WALLET_MAX_BALANCE": value})
    assert err.value.variable == "POKER_WALLET_MAX_BALANCE"


def test_withdrawal_limits_default_like_the_deposit_limits_and_are_settings() -> None:
    assert WalletConfig.from_env(BASE).withdrawal_limits == WithdrawalLimits(
        max_withdrawal=1_000_000, daily_withdrawal=10_000_000
    )
    env = {**BASE, "POKER_WALLET_MAX_WITHDRAWAL": "8", "POKER_WALLET_DAILY_WITHDRAWAL": "9"}
    config = WalletConfig.from_env(env)
    assert config.withdrawal_limits == WithdrawalLimits(max_withdrawal=8, daily_withdrawal=9)
    assert config.deposit_limits == WalletConfig.from_env(BASE).deposit_limits  # apart


@pytest.mark.parametrize("variable", ["POKER_WALLET_MAX_WITHDRAWAL", "POKER_WALLET_DAILY_WITHDRAWAL"])
@pytest.mark.parametrize("value", ["0", "-1", str(2**53 + 1), "many"])
def test_a_withdrawal_limit_out_of_range_stops_the_start(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        WalletConfig.from_env({**BASE, variable: value})
    assert err.value.variable == variable
