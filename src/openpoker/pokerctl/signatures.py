"""``--signing-keys FILE``: the published envelope-signing keys the dispute tools verify with.

Which keyring (``eventstore.keyfiles``): ``--signing-keys FILE``, else ``POKER_SIGNING_KEYS``,
else with ``--data-dir DIR`` the folder's own ``DIR/pki/signing-keys.json`` when it has one.
Without any, signatures are not checked (a system run without keys: ``--insecure``), and the
tools say so on stderr. A keyring named but unreadable is an error (exit 2), never a pass.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from openpoker.eventstore.keyfiles import keyring_path, load_keyring
from openpoker.eventstore.signing import Keyring

ENV = "POKER_SIGNING_KEYS"
NOT_CHECKED = "signatures not checked: no signing keyring (--signing-keys FILE)"


class KeyringUnreadable(RuntimeError):
    pass


def add_keyring_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--signing-keys",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"the published signing keys (default ${ENV}, or DIR/pki/signing-keys.json with --data-dir)",
    )


def resolve_keyring(args: argparse.Namespace) -> Keyring | None:
    path: Path | None = getattr(args, "signing_keys", None)
    if path is None and os.environ.get(ENV):
        path = Path(os.environ[ENV])
    data_dir: Path | None = getattr(args, "data_dir", None)
    if path is None and data_dir is not None and keyring_path(data_dir).exists():
        path = keyring_path(data_dir)
        # Whoever could rewrite that folder's logs could rewrite its keyring too: say so.
        print(
            f"signatures checked against {path}, the audited folder's own keyring; "
            "give the published one with --signing-keys to rule out a rewritten folder",
            file=sys.stderr,
        )
    if path is None:
        return None
    try:
        return load_keyring(path)
    except ValueError as exc:
        raise KeyringUnreadable(str(exc)) from None
