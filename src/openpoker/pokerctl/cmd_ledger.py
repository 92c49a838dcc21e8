"""``pokerctl ledger audit [--json] [--nats URL] [--data-dir DIR | --backup DIR] [--nats-nkey FILE
--nats-ca FILE] [--signing-keys FILE]``: check the wallet's ledger.

Reads the whole ``WALLET_EVENTS`` log (subject ``poker.wallet.ledger``) and checks:

* the envelopes' hash chain (gapless versions, prev_hash links, hashes recompute);
* with a signing keyring (``--signing-keys FILE``; by default ``$POKER_SIGNING_KEYS`` or, with
  ``--data-dir``, the folder's ``pki/signing-keys.json``): every envelope signed by a wallet key
  (``eventstore.signing``); the first that is not is named: ``bad signature at version N``, an
  unknown key id, another writer's key, or an unsigned envelope;
* conservation: total debits equal total credits, posted and pending;
* closed system: everything outside the world account equals deposits minus withdrawals;
* no negative balance outside the world account (pending debits included);
* every transfer id recorded once, every pending transfer resolved at most once;
* every hand opened once, settled or voided at most once, its pot back at zero when closed;
* every settlement's rake equals ``engine.rake.compute_rake`` under the hand's recorded rules;
* the house's rake account equals the sum of the per-hand rakes;
* table stakes: no buy-in or cash-out on a seat while its stack was reserved for a hand;
* every seat's stack against its escrow: each table's log (``TABLE_EVENTS``) is folded and each
  seated player's stack compared with ``escrow/<table>/<player>`` (``openpoker.dispute.escrow``);
  a drift names the table, the player and both amounts. A table whose last hand the wallet has
  not settled yet is not compared (``settling``).

Live (default): ``--nats URL`` (default the local system, ``nats://127.0.0.1:4222``), as the
``pokerctl`` identity: ``--nats URL --data-dir DATA`` takes the system's
``DATA/nats/auth/pokerctl.nk`` and ``DATA/pki/ca.crt``, or give ``--nats-nkey``/``--nats-ca``
(``POKER_NATS_NKEY``/``POKER_NATS_CA``). Offline: ``--data-dir DIR`` without ``--nats`` (a
``pokerctl up`` data folder, or a nats-server data folder holding ``jetstream/``): the folder is
copied, a private nats-server is started on the copy on a free loopback port, read, and stopped;
the original is never opened by a server. ``--backup DIR``: a ``pokerctl backup`` folder,
verified against its manifest and read directly, no server.

Exit codes: 0 sound, 1 a breach (each is named), 2 the ledger could not be read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from nats.js.errors import NotFoundError

from openpoker.dispute.escrow import EscrowCheck, check_tables, fold_log_checked
from openpoker.dispute.source import EvidenceUnreadable, connect, offline_server, read_table_log, table_ids
from openpoker.eventstore import Envelope, verify_chain
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.signing import WALLET_WRITER, Keyring, first_bad_signature
from openpoker.eventstore.streams import WALLET_EVENTS
from openpoker.ledger.audit import AuditReport, audit
from openpoker.ledger.logcheck import read_ledger
from openpoker.ledger.store import from_recorded
from openpoker.pokerctl import backup_ledger, natsopts, signatures
from openpoker.shell.natsconn import NatsTarget


class LedgerUnreadable(RuntimeError):
    pass


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    ledger = sub.add_parser("ledger", help="wallet ledger tools", description="Wallet ledger tools.")
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True, metavar="ACTION")
    check = ledger_sub.add_parser(
        "audit",
        help="check the ledger's invariants; exit 1 on a breach",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("--json", action="store_true", help="one JSON report")
    natsopts.add_source_arguments(check)
    check.add_argument("--stream", default=WALLET_EVENTS.name, help="the ledger's stream")
    signatures.add_keyring_argument(check)
    check.set_defaults(func=run_audit)


@dataclass(slots=True, kw_only=True)
class LedgerAudit:
    report: AuditReport
    envelopes: int
    chain_ok: bool
    chain_problem: str
    escrow: EscrowCheck
    signature_problem: str = ""  # the first envelope not signed by a wallet key ("" none)
    table_problems: tuple[str, ...] = ()  # each table log's first foreign or corrupt message

    @property
    def ok(self) -> bool:
        return (
            self.chain_ok
            and not self.signature_problem
            and not self.table_problems
            and self.report.ok
            and self.escrow.ok
        )

    @property
    def breaches(self) -> list[str]:
        chain = [] if self.chain_ok else [f"hash chain: {self.chain_problem}"]
        if self.signature_problem:
            chain.append(f"signature: {self.signature_problem}")
        tables = [f"table log: {p}" for p in self.table_problems]
        return [*chain, *tables, *self.report.breaches, *(d.describe() for d in self.escrow.drifts)]

    def as_dict(self) -> dict[str, object]:
        out = self.report.as_dict()
        out["ok"] = self.ok
        out["messages"] = self.envelopes
        out["chain"] = {"ok": self.chain_ok, "problem": self.chain_problem}
        out["signature_problem"] = self.signature_problem
        out["table_problems"] = list(self.table_problems)
        out["breaches"] = self.breaches
        out["escrow"] = self.escrow.as_dict()
        return out


async def audit_live(
    target: NatsTarget | str,
    *,
    stream: str = WALLET_EVENTS.name,
    wait: float = 5.0,
    keyring: Keyring | None = None,
) -> LedgerAudit:
    """The audit of the ledger on ``target`` (a bare URL: an open server)."""
    target = NatsTarget.of(target)
    url = target.url
    try:
        nc = await connect(target, wait=wait)
    except EvidenceUnreadable as exc:
        raise LedgerUnreadable(str(exc)) from exc
    try:
        js = nc.jetstream()
        try:
            await js.stream_info(stream)
        except NotFoundError:
            raise LedgerUnreadable(f"no stream {stream} at {url}: no ledger was ever written there") from None
        store = JetStreamEventStore(js, stream=stream, read_timeout=wait)
        # Up to the first foreign or corrupt message, which is reported as a finding.
        checked = await read_ledger(store)
        envelopes: list[Envelope] = list(checked.envelopes)
        chain = verify_chain(envelopes)
        unsigned = None if keyring is None else first_bad_signature(envelopes, keyring, writer=WALLET_WRITER)
        report, state = audit(from_recorded(r) for env in envelopes for r in env.events)
        # The tables' logs after the ledger: a hand ended since is one the ledger has not settled.
        try:
            tables = await table_ids(js)
        except EvidenceUnreadable:
            tables = []  # no table was ever created
        folded = [fold_log_checked(t, await read_table_log(js, t)) for t in tables]
        escrow = check_tables([model for model, _ in folded], state)
    except EvidenceUnreadable as exc:
        raise LedgerUnreadable(str(exc)) from exc
    finally:
        await nc.close()
    return LedgerAudit(
        report=report,
        envelopes=len(envelopes),
        chain_ok=chain.ok and checked.finding is None,
        chain_problem=chain.problem if checked.finding is None else checked.finding.describe(),
        escrow=escrow,
        signature_problem=unsigned.describe() if unsigned else "",
        table_problems=tuple(f.describe() for _, f in folded if f is not None),
    )


def audit_offline(
    data_dir: Path, *, stream: str = WALLET_EVENTS.name, keyring: Keyring | None = None
) -> LedgerAudit:
    """The audit of a copy of ``data_dir``'s store, read by a private server."""
    try:
        with offline_server(data_dir, name="ledger-audit") as private:
            return asyncio.run(audit_live(private, stream=stream, keyring=keyring))
    except EvidenceUnreadable as exc:
        raise LedgerUnreadable(str(exc)) from exc


def _print(result: LedgerAudit, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result.as_dict(), sort_keys=True))
        return
    r = result.report
    print(f"ledger {r.currency or '?'}: {result.envelopes} messages, {r.transfers} transfers")
    print(f"  deposits {r.deposits} - withdrawals {r.withdrawals} = held {r.held_outside_world}")
    print(f"  {r.accounts} accounts; house rake {r.house_rake}")
    print(f"  hands: {r.hands_open} open, {r.hands_settled} settled, {r.hands_voided} voided")
    e = result.escrow
    settling = f" ({len(e.settling)} settling a hand, not compared)" if e.settling else ""
    print(f"  escrows: {e.seats} seats at {e.tables} tables against their stacks{settling}")
    if result.ok:
        print("OK: every invariant holds")
        return
    for breach in result.breaches:
        print(f"BREACH: {breach}")


def run_audit(args: argparse.Namespace) -> int:
    try:
        keyring = signatures.resolve_keyring(args)
    except signatures.KeyringUnreadable as exc:
        print(f"pokerctl ledger audit: {exc}", file=sys.stderr)
        return 2
    if keyring is None:
        print(f"pokerctl ledger audit: {signatures.NOT_CHECKED}", file=sys.stderr)
    try:
        if args.backup is not None:
            if args.data_dir is not None:
                raise LedgerUnreadable("--backup reads a backup folder: give it without --data-dir")
            audited = backup_ledger.audit_backup(args.backup, stream=args.stream, keyring=keyring)
            result = LedgerAudit(**audited._asdict())
        elif args.data_dir is not None and args.nats is None:
            result = audit_offline(args.data_dir, stream=args.stream, keyring=keyring)
        else:
            target = natsopts.live_target(args, data_dir=args.data_dir)
            result = asyncio.run(audit_live(target, stream=args.stream, keyring=keyring))
    except (LedgerUnreadable, EvidenceUnreadable) as exc:
        print(f"pokerctl ledger audit: {exc}", file=sys.stderr)
        return 2
    _print(result, as_json=args.json)
    return 0 if result.ok else 1
