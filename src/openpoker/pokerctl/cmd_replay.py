"""``pokerctl replay (--table TABLE | --all) [--hand N] [--json] [--nats URL] [--data-dir DIR |
--backup DIR] [--nats-nkey FILE --nats-ca FILE] [--signing-keys FILE]``.

Dispute replay: reads a table's log in order with the revealed seeds (``RNG_AUDIT``) and the
wallet's ledger (``WALLET_EVENTS``) and checks, stopping at the first that fails: versions
gapless, message ids ``<table>:<version>:<epoch>``, the hash chain, writer epochs only
increasing, every event decoding, each hand's revealed seed opening its commitment, the seed's
deck holding every card dealt, the log re-folded and each hand re-decided by the engine under
its recorded rules (plans, cards, actions, pots, rake and payouts recomputed equal), and the
wallet's settlement of each hand matching the table's payouts and rake (``dispute.check``).
With a signing keyring (``--signing-keys FILE``; by default ``$POKER_SIGNING_KEYS`` or, with
``--data-dir``, the folder's ``pki/signing-keys.json``) every table envelope must be signed by a
table key and every ledger envelope by a wallet key, else ``signature check failed at table T,
version V: bad signature at version V`` (or an unknown key id, another writer's key, unsigned).

Prints the readable hand history of the table (or of hand N, numbered from 1 per table; with
``--all`` one summary line per table) and ``OK``, or ``FAILED: <check> check failed at table T,
version V, hand N (<hand id>): <why>``. ``--json``: one JSON report.

Live (default): ``--nats URL`` (default the local system, ``nats://127.0.0.1:4222``), as the
``pokerctl`` identity: ``--nats URL --data-dir DATA`` takes the system's
``DATA/nats/auth/pokerctl.nk``, ``DATA/pki/ca.crt`` (and its signing keys), or give
``--nats-nkey``/``--nats-ca`` (``POKER_NATS_NKEY``/``POKER_NATS_CA``).
Offline: ``--data-dir DIR`` without ``--nats`` (a ``pokerctl up``/``demo`` data folder, or a
nats-server folder holding ``jetstream/``): a copy is read by a private nats-server on a free
loopback port. ``--backup DIR``: a ``pokerctl backup`` folder, verified against its manifest and
read directly.

Exit codes: 0 every check passed, 1 a check failed, 2 the logs could not be read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from openpoker.dispute.check import TableReplay, replay_table
from openpoker.dispute.history import table_dict, table_lines
from openpoker.dispute.source import Evidence, EvidenceUnreadable, offline_server, read_evidence
from openpoker.eventstore.signing import WALLET_WRITER, Keyring, first_bad_signature
from openpoker.pokerctl import backup_evidence, natsopts, signatures


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser(
        "replay",
        help="dispute replay: verify a table's log and print its hand history",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = replay.add_mutually_exclusive_group(required=True)
    which.add_argument("--table", metavar="TABLE", help="the table id")
    which.add_argument("--all", action="store_true", help="every table in the log")
    replay.add_argument("--hand", type=int, default=None, metavar="N", help="only hand N (1 = first)")
    replay.add_argument("--json", action="store_true", help="one JSON report")
    natsopts.add_source_arguments(replay)
    signatures.add_keyring_argument(replay)
    replay.set_defaults(func=run)


def load_evidence(args: argparse.Namespace, tables: list[str] | None) -> list[Evidence]:
    """The evidence of ``tables`` (``None``: all) from ``--nats``, a copy of ``--data-dir`` or
    a ``--backup`` folder."""
    if getattr(args, "backup", None) is not None:
        if args.data_dir is not None:
            raise EvidenceUnreadable("--backup reads a backup folder: give it without --data-dir")
        return backup_evidence.load_evidence(args.backup, tables)
    if args.data_dir is not None and args.nats is None:
        with offline_server(args.data_dir) as private:
            return asyncio.run(read_evidence(private, tables))
    return asyncio.run(read_evidence(natsopts.live_target(args, data_dir=args.data_dir), tables))


def replay_all(
    evidence: list[Evidence], *, hand: int | None, keyring: Keyring | None = None
) -> list[TableReplay]:
    wallet_bad = ""
    if keyring is not None and evidence:
        bad = first_bad_signature(evidence[0].wallet_log, keyring, writer=WALLET_WRITER)
        wallet_bad = bad.describe() if bad else ""
    return [
        replay_table(
            ev.table_id,
            ev.log,
            reveals=ev.reveals,
            wallet=ev.wallet,
            only_hand=hand,
            wallet_chain_problem=ev.wallet_chain_problem,
            keyring=keyring,
            wallet_signature_problem=wallet_bad,
        )
        for ev in evidence
    ]


def run(args: argparse.Namespace) -> int:
    try:
        keyring = signatures.resolve_keyring(args)
        evidence = load_evidence(args, None if args.all else [args.table])
    except (EvidenceUnreadable, signatures.KeyringUnreadable) as exc:
        print(f"pokerctl replay: {exc}", file=sys.stderr)
        return 2
    if keyring is None:
        print(f"pokerctl replay: {signatures.NOT_CHECKED}", file=sys.stderr)
    results = replay_all(evidence, hand=args.hand, keyring=keyring)
    ok = all(r.ok for r in results)
    if args.hand is not None and not args.all:
        found = any(h.number == args.hand for r in results for h in r.hands)
        if not found:
            print(f"pokerctl replay: table {args.table} has no hand {args.hand}", file=sys.stderr)
            return 2
    if args.json:
        report = {"ok": ok, "tables": [table_dict(r, hand=args.hand) for r in results]}
        failure = next((r.failure for r in results if r.failure), None)
        report["failure"] = failure.as_dict() if failure else None
        print(json.dumps(report, sort_keys=True))
        return 0 if ok else 1
    for r in results:
        if args.all and args.hand is None:
            print(table_lines(r, hand=-1)[0])
        else:
            print("\n".join(table_lines(r, hand=args.hand)))
        if r.failure is not None:
            print(f"FAILED: {r.failure.describe()}")
    if ok:
        envelopes = sum(r.envelopes for r in results)
        if args.hand is not None:
            print(f"OK: hand {args.hand} and the integrity of all {envelopes} envelopes: every check passed")
        else:
            hands = sum(len(r.hands) for r in results)
            print(f"OK: {len(results)} table(s), {envelopes} envelopes, {hands} hand(s): every check passed")
    return 0 if ok else 1
