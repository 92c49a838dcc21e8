"""Ledger accounts: who holds the money (research/wallet.md §4).

Account ids are stable strings because they are persisted in every transfer of the log:

- ``world``: the outside world (payment providers, banks). Deposits debit it, withdrawals
  credit it; the only account whose balance may go below zero. Its balance is minus everything
  the players and the house hold.
- ``cash/<player>``: a player's money off the tables.
- ``escrow/<table>/<player>``: the player's chips at a table (table stakes).
- ``pot/<table>/<hand_no>``: one hand's pot, credited by the reservations of the players dealt
  in and back to zero once the hand is settled or voided.
- ``house/rake``: the house's income from rake.

Every balance is ``credits_posted - debits_posted`` (money owed to the account's owner), so
the sum of all balances is always zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from openpoker.ledger.errors import InvalidIdentifier

WORLD = "world"
HOUSE_RAKE = "house/rake"
# Accounts that exist from the start (every other one opens with its first credit).
SYSTEM_ACCOUNTS = frozenset({WORLD, HOUSE_RAKE})

# Player and table ids become parts of account ids and transfer ids: no separator inside.
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")

INT64_MAX = 2**63 - 1


class AccountKind(StrEnum):
    """Persisted values: never rename."""

    WORLD = "world"
    CASH = "cash"
    ESCROW = "escrow"
    POT = "pot"
    HOUSE = "house"


def check_id(field: str, value: str) -> str:
    """Return ``value`` if it can be a player or table id, else raise ``InvalidIdentifier``."""
    if not _ID.fullmatch(value):
        raise InvalidIdentifier(field=field, value=value)
    return value


def cash(player: str) -> str:
    return f"cash/{check_id('player', player)}"


def escrow(table: str, player: str) -> str:
    return f"escrow/{check_id('table_id', table)}/{check_id('player', player)}"


def pot(table: str, hand_no: int) -> str:
    return f"pot/{check_id('table_id', table)}/{hand_no}"


MAX_ACCOUNT = 300  # the longest name an account can have: escrow/<table>/<player>, with room


def check_account(account: str) -> str:
    """Return ``account`` unless it is longer than any account can be (``InvalidIdentifier``)."""
    if len(account) > MAX_ACCOUNT:
        raise InvalidIdentifier(field="account", value=account)
    return account


def kind_of(account: str) -> AccountKind:
    return AccountKind(account.split("/", 1)[0])


@dataclass(slots=True)
class Balances:
    """The four running totals of one account (TigerBeetle's account fields).

    Pending amounts are reserved by two-phase transfers not yet posted or voided: a pending
    debit cannot be spent, a pending credit cannot be spent either until it is posted.
    """

    debits_pending: int = 0
    debits_posted: int = 0
    credits_pending: int = 0
    credits_posted: int = 0

    @property
    def balance(self) -> int:
        """Posted money owed to the owner: negative only for the world account."""
        return self.credits_posted - self.debits_posted

    @property
    def available(self) -> int:
        """What a new debit may take: posted balance less pending debits."""
        return self.credits_posted - self.debits_posted - self.debits_pending

    def copy(self) -> Balances:
        return Balances(
            debits_pending=self.debits_pending,
            debits_posted=self.debits_posted,
            credits_pending=self.credits_pending,
            credits_posted=self.credits_posted,
        )
