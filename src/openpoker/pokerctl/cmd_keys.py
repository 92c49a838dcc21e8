"""``pokerctl keys rotate-signing --data-dir DATA --writer table|wallet``: a new envelope-signing
key for one writer.

Writes the writer's new Ed25519 key to DATA/secrets/signing/<writer>.key (0600) and adds its
public key to the keyring DATA/pki/signing-keys.json, which keeps every old key: envelopes signed
before the rotation still verify (``pokerctl replay``, ``pokerctl ledger audit``, every service
that loads them). The writer's service signs with the new key from its next start, so restart
it (``pokerctl up``: stop and start it again); the services that read envelopes (wallet, table,
dealer) re-read the keyring when they meet the new key id and need no restart. A dispute desk
that keeps its own copy of the keyring must take the new key into it. Prints one JSON line:
the writer, the new key id, the keys the keyring now holds for it and what to restart.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from openpoker.eventstore import keyfiles


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keys = sub.add_parser("keys", help="envelope-signing keys", description="Envelope-signing keys.")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    rotate = keys_sub.add_parser(
        "rotate-signing",
        help="a new signing key for a writer; old public keys stay in the keyring",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rotate.add_argument(
        "--data-dir", type=Path, required=True, metavar="DATA", help="a pokerctl up data folder"
    )
    rotate.add_argument("--writer", required=True, choices=keyfiles.WRITERS, help="whose key")
    rotate.set_defaults(func=run_rotate)


def run_rotate(args: argparse.Namespace) -> int:
    data: Path = args.data_dir
    path = keyfiles.keyring_path(data)
    if not path.exists():
        print(
            f"pokerctl keys rotate-signing: no keyring at {path}: not a secure data folder", file=sys.stderr
        )
        return 2
    try:
        signer = keyfiles.rotate_signing_key(data, args.writer)
        keyring = keyfiles.load_keyring(path)
    except (OSError, ValueError) as exc:
        print(f"pokerctl keys rotate-signing: {exc}", file=sys.stderr)
        return 2
    held = sorted(
        (k for k in keyring.keys.values() if k.writer == args.writer), key=lambda k: (k.created, k.key_id)
    )
    print(
        json.dumps(
            {
                "writer": args.writer,
                "key_id": signer.key_id,
                "keys": [k.key_id for k in held],
                "key_file": str(keyfiles.signing_key_path(data, args.writer)),
                "keyring": str(path),
                "restart": args.writer,
            },
            sort_keys=True,
        )
    )
    print(
        f"restart the {args.writer} service to sign with {signer.key_id}; "
        f"envelopes signed by {', '.join(k.key_id for k in held[:-1]) or 'no earlier key'} still verify",
        file=sys.stderr,
    )
    return 0
