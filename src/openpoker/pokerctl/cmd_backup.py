"""``pokerctl backup --out DIR [--nats URL] [--data-dir DIR] [--nats-nkey FILE --nats-ca FILE]
[--stream NAME ...]``: write every evidence stream to files with a manifest of hashes.

The streams: ``TABLE_EVENTS`` (table logs), ``WALLET_EVENTS`` (the ledger), ``RNG_AUDIT``
(revealed seeds), ``KV_RNG_SHUFFLES`` (sealed seeds and commitments) and ``KV_poker-dealer``
(paused tables); ``--stream`` names others (a renamed bucket is ``KV_<bucket>``). A stream the
server does not have is listed as missing. DIR must be missing or empty. Prints one JSON summary
with the manifest's ``digest``: keep it apart from the backup, it is what proves the files
unchanged. The format is in ``pokerctl.backup_format`` and docs/operations.md.

Live (default): ``--nats URL`` (default the local system, ``nats://127.0.0.1:4222``), as the
``pokerctl`` identity, which may read every evidence stream (a stream named by ``--stream`` must be
one it reads, else the backup stops): ``--nats URL --data-dir DATA`` takes the system's
``DATA/nats/auth/pokerctl.nk`` and ``DATA/pki/ca.crt``, or give ``--nats-nkey``/``--nats-ca``
(``POKER_NATS_NKEY``/``POKER_NATS_CA``). Offline: ``--data-dir DIR`` without ``--nats`` (a
``pokerctl up`` data folder): a copy is read by a private nats-server on a free loopback port.

Exit codes: 0 written, 2 nothing written (unreachable server, DIR not empty).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from openpoker.dispute.source import EvidenceUnreadable, connect, offline_server
from openpoker.errors import OpenPokerError
from openpoker.pokerctl import backup_io, natsopts
from openpoker.pokerctl.backup_format import Backup, BackupTampered, BackupUnreadable, verify_backup
from openpoker.shell import natsauth
from openpoker.shell.config import DEFAULT_NATS_URL
from openpoker.shell.natsconn import NatsTarget

RESTORE_DOC = """Bring a backup back: ``pokerctl restore --from DIR [--nats URL] [--data-dir DATA]
[--nats-nkey FILE --nats-ca FILE] [--digest HEX]``.

Checks every file against the manifest (and the manifest against ``--digest``, the digest
``pokerctl backup`` printed) before anything is written: a mismatch names the file, exits 1 and
restores nothing. Then every stream of the backup must be missing or empty on the server (exit 2
otherwise, nothing restored): restore into a nats-server with no services running (the wallet
opens an empty ledger when it starts). Missing streams are created with their recorded
configuration; messages are published in order with their subjects and headers (not the
``Nats-Expected-*`` concurrency checks), so versions, hashes and ``Nats-Msg-Id`` are as before.
Prints one JSON summary; ``sequences_preserved`` says per stream whether the stream sequences
came back equal (they do when restored into new streams).

Restore creates streams and publishes on evidence subjects, which only the ``admin`` identity may
on a secure NATS: ``--data-dir DATA`` takes the system's ``DATA/nats/auth/admin.nk`` and
``DATA/pki/ca.crt``, or give ``--nats-nkey``/``--nats-ca`` (``POKER_NATS_NKEY``/``POKER_NATS_CA``).

Exit codes: 0 restored, 1 the backup does not match its manifest, 2 nothing restored (unreadable
backup or server, a stream not empty).
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    backup = sub.add_parser(
        "backup",
        help="write every evidence stream to files with a manifest of hashes",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    backup.add_argument("--out", type=Path, required=True, metavar="DIR", help="an empty or new folder")
    natsopts.add_source_arguments(backup, backup=False)
    backup.add_argument(
        "--stream", action="append", default=None, metavar="NAME", help="back up this stream too (repeatable)"
    )
    backup.set_defaults(func=run_backup)

    restore = sub.add_parser(
        "restore",
        help="restore a backup into empty streams",
        description=RESTORE_DOC.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    restore.add_argument(
        "--from", dest="source", type=Path, required=True, metavar="DIR", help="a backup folder"
    )
    restore.add_argument(
        "--nats", default=None, metavar="URL", help=f"the server (default {DEFAULT_NATS_URL})"
    )
    restore.add_argument(
        "--data-dir", type=Path, default=None, metavar="DATA", help="the system's folder (its admin seed)"
    )
    restore.add_argument(
        "--digest", default=None, metavar="HEX", help="the manifest digest the backup came with"
    )
    natsopts.add_arguments(restore, identity=natsauth.ADMIN)
    restore.set_defaults(func=run_restore)


async def _read(target: NatsTarget, streams: tuple[str, ...]) -> backup_io.ReadStreams:
    nc = await connect(target)
    try:
        return await backup_io.read_streams(nc, streams)
    finally:
        await nc.close()


def run_backup(args: argparse.Namespace) -> int:
    streams = tuple(dict.fromkeys([*backup_io.EVIDENCE_STREAMS, *(args.stream or [])]))
    try:
        backup_io.check_empty(args.out)  # before reading anything
        if args.data_dir is not None and args.nats is None:
            with offline_server(args.data_dir, name="backup") as private:
                read = asyncio.run(_read(private, streams))
        else:
            read = asyncio.run(_read(natsopts.live_target(args, data_dir=args.data_dir), streams))
        summary = backup_io.write_backup(args.out, read)
    except (EvidenceUnreadable, OpenPokerError) as exc:
        print(f"pokerctl backup: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, sort_keys=True))
    return 0


async def _restore(target: NatsTarget, backup: Backup, source: Path) -> dict[str, object]:
    nc = await connect(target)
    try:
        return await backup_io.restore(nc, backup, folder=source)
    finally:
        await nc.close()


def run_restore(args: argparse.Namespace) -> int:
    try:
        backup = verify_backup(args.source, expected_digest=args.digest)  # before any connection
        target = natsopts.live_target(args, identity=natsauth.ADMIN, data_dir=args.data_dir)
        summary = asyncio.run(_restore(target, backup, args.source))
    except backup_io.RestoreFailed as exc:
        print(f"pokerctl restore: {exc.reason}: {exc}", file=sys.stderr)
        return 2
    except BackupTampered as exc:
        print(f"pokerctl restore: {exc.reason}: {exc}; nothing restored", file=sys.stderr)
        return 1
    except (EvidenceUnreadable, BackupUnreadable, OpenPokerError) as exc:
        reason = getattr(exc, "reason", "UNREADABLE")
        print(f"pokerctl restore: {reason}: {exc}; nothing restored", file=sys.stderr)
        return 2
    print(json.dumps(summary, sort_keys=True))
    return 0
