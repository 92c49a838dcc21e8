"""``pokerctl phh export (--table TABLE | --all) [--hand N] [--out PATH] [--nats URL] [--data-dir DIR
| --backup DIR] [--nats-nkey FILE --nats-ca FILE]``: where the evidence comes from as for
``pokerctl replay``.

Writes a table's hands as PHH (``dispute.export``): players, seats, seat count, table, hand
number, finishing stacks and winnings, the rake and the evidence pointers (hand id, commitment,
seed, log versions) in ``_``-prefixed user fields. The log is verified first exactly as
``pokerctl replay`` does; a log that fails a check is not exported (exit 1).

``--table``: all of its hands as one ``.phhs`` text (``--hand N``: that hand as one ``.phh``
text) to ``--out PATH``, or to standard output. ``--all``: one ``<table>.phhs`` per table in the
folder ``--out PATH`` (required). A hand PHH cannot express faithfully (voided, Six Plus under
the seeds ranking, an all-in protection, a dead blind, ...) is skipped and named on standard
error with the reason.

Exit codes: 0 exported (some hands may be skipped), 1 the log failed a check, 2 the logs could
not be read, no such table or hand, or nothing to write.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from openpoker.dispute.export import Skip, export_hand
from openpoker.dispute.source import EvidenceUnreadable
from openpoker.engine.phh import HandHistory, dump_phh, dump_phhs
from openpoker.pokerctl.cmd_replay import load_evidence, replay_all
from openpoker.pokerctl.natsopts import add_source_arguments


def register_export(phh_sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = phh_sub.add_parser(
        "export",
        help="write a table's verified hands as PHH",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--table", metavar="TABLE", help="the table id")
    which.add_argument("--all", action="store_true", help="every table, one file each in --out")
    export.add_argument("--hand", type=int, default=None, metavar="N", help="only hand N (1 = first)")
    export.add_argument("--out", type=Path, default=None, metavar="PATH", help="file (folder with --all)")
    add_source_arguments(export)
    export.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    if args.all and args.out is None:
        print("pokerctl phh export: --all needs --out FOLDER", file=sys.stderr)
        return 2
    try:
        evidence = load_evidence(args, None if args.all else [args.table])
    except EvidenceUnreadable as exc:
        print(f"pokerctl phh export: {exc}", file=sys.stderr)
        return 2
    results = replay_all(evidence, hand=args.hand)
    for r in results:
        if r.failure is not None:
            print(f"pokerctl phh export: not exported: {r.failure.describe()}", file=sys.stderr)
            return 1
    written = skipped = 0
    for r in results:
        hands: list[HandHistory] = []
        for h in r.hands:
            if args.hand is not None and h.number != args.hand:
                continue
            out = export_hand(h)
            if isinstance(out, Skip):
                skipped += 1
                print(
                    f"skipped {r.table_id} hand {out.hand_number} ({out.hand_id}): {out.reason}",
                    file=sys.stderr,
                )
            else:
                hands.append(out)
        if args.hand is not None and not any(h.number == args.hand for h in r.hands):
            print(f"pokerctl phh export: table {r.table_id} has no hand {args.hand}", file=sys.stderr)
            return 2
        written += len(hands)
        if args.all:
            args.out.mkdir(parents=True, exist_ok=True)
            if hands:
                (args.out / f"{r.table_id}.phhs").write_text(dump_phhs(hands), encoding="utf-8")
            continue
        if not hands:
            break
        text = dump_phh(hands[0]) if args.hand is not None else dump_phhs(hands)
        if args.out is None:
            sys.stdout.write(text)
        else:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(text, encoding="utf-8")
    print(f"exported {written} hand(s) from {len(results)} table(s), skipped {skipped}", file=sys.stderr)
    return 0 if written else 2
