"""When the wallet snapshots: at least ``snapshot_every`` commands apart, and further apart as
the ledger grows (a snapshot encodes the whole state), so its cost per command stays bounded."""

from __future__ import annotations

from openpoker.eventstore import Snapshot
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.ledger.commands import Deposit
from openpoker.ledger.store import WalletStore
from openpoker.services.wallet.app import WalletApp


class SnapshotSpy(InMemoryEventStore):
    """Remembers the stream version each saved snapshot covers."""

    def __init__(self) -> None:
        super().__init__()
        self.versions: list[int] = []

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        self.versions.append(snapshot.version)
        await super().save_snapshot(snapshot)


async def deposits(app: WalletApp, start: int, count: int) -> None:
    for i in range(start, start + count):
        await app.execute(Deposit(request_id=f"d{i}", player=f"p{i % 7}", amount=5))


async def test_snapshots_space_out_as_the_ledger_grows() -> None:
    events = SnapshotSpy()
    app = WalletApp(WalletStore(events), currency="CHIPS", snapshot_every=4)
    await app.start()  # the LedgerOpened message is version 1
    await deposits(app, 0, 200)
    # The first after 4 messages (LedgerOpened and 3 deposits); then each gap is max(4, the
    # deposits in the ledger at the previous snapshot, i.e. its version - 1).
    expected = [4]
    while expected[-1] + max(4, expected[-1] - 1) <= 201:
        expected.append(expected[-1] + max(4, expected[-1] - 1))
    assert events.versions == expected
    assert len(expected) == 6  # not the 50 a fixed interval of 4 would have taken


async def test_a_restart_loads_the_last_snapshot_and_replays_the_tail_exactly() -> None:
    events = SnapshotSpy()
    app = WalletApp(WalletStore(events), currency="CHIPS", snapshot_every=4)
    await app.start()
    await deposits(app, 0, 50)
    restarted = WalletApp(WalletStore(events), currency="CHIPS", snapshot_every=4)
    await restarted.start()
    assert restarted.state.accounts == app.state.accounts
    assert restarted.state.transfers == app.state.transfers
    # A process started on a ledger of n commands waits max(every, n) commands to snapshot.
    count = len(events.versions)
    await deposits(restarted, 50, 49)
    assert len(events.versions) == count
    await deposits(restarted, 99, 1)
    assert len(events.versions) == count + 1
