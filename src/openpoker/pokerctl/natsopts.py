"""Where ``pokerctl``'s NATS commands connect and as whom: ``--nats URL`` and the credentials.

Every command that reads a live NATS (``replay``, ``phh export``, ``ledger audit``, ``backup``)
connects as the ``pokerctl`` identity, which reads every evidence stream and writes nothing;
``restore`` connects as ``admin`` (it creates streams and publishes on evidence subjects). Each
file is found in this order: ``--nats-nkey FILE`` / ``--nats-ca FILE``, else ``POKER_NATS_NKEY`` /
``POKER_NATS_CA``, else with ``--data-dir DATA`` the system's own ``DATA/nats/auth/<identity>.nk``
and ``DATA/pki/ca.crt``. None of them: an anonymous plaintext connection (an ``--insecure``
system). The identity is named by the seed's file (``<identity>.nk``, as ``pokerctl up`` writes
them) when it is one of the system's identities, else it is the command's own; it decides only
the connection's inbox, which the server's permissions tie to the identity.

For the readers ``--data-dir`` alone means offline (a copy of the folder read by a private
server, ``dispute.source.offline_server``); with ``--nats URL`` it names the folder of the live
system the credentials come from. ``restore`` has no offline mode: its ``--data-dir`` always
names the credentials' folder.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path

from openpoker.dispute.source import EvidenceUnreadable
from openpoker.shell import natsauth
from openpoker.shell.config import DEFAULT_NATS_URL
from openpoker.shell.natsconn import NatsCredentials, NatsTarget

NKEY_ENV = "POKER_NATS_NKEY"
CA_ENV = "POKER_NATS_CA"


def add_source_arguments(parser: argparse.ArgumentParser, *, backup: bool = True) -> None:
    """A reader's sources: ``--nats URL``, ``--data-dir DIR``, ``--backup DIR`` (with ``backup``)
    and the credentials."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--nats", default=None, metavar="URL", help=f"live system (default {DEFAULT_NATS_URL})"
    )
    if backup:
        where.add_argument(
            "--backup", type=Path, default=None, metavar="DIR", help="offline: a pokerctl backup folder"
        )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="offline: a copy of this folder; with --nats: the live system's folder (its credentials)",
    )
    add_arguments(parser)


def add_arguments(parser: argparse.ArgumentParser, *, identity: str = natsauth.POKERCTL) -> None:
    """``--nats-nkey`` and ``--nats-ca``."""
    group = parser.add_argument_group(
        "NATS credentials",
        f"Who to be on a secure NATS (the {identity} identity): --nats-nkey and --nats-ca, else "
        f"${NKEY_ENV} and ${CA_ENV}, else with --nats URL --data-dir DATA the system's "
        f"DATA/nats/auth/{identity}.nk and DATA/pki/ca.crt.",
    )
    group.add_argument(
        "--nats-nkey", type=Path, default=None, metavar="FILE", help=f"nkey seed (default ${NKEY_ENV})"
    )
    group.add_argument(
        "--nats-ca",
        type=Path,
        default=None,
        metavar="FILE",
        help=f"CA of the server's TLS certificate (default ${CA_ENV})",
    )


def credentials(
    args: argparse.Namespace,
    *,
    identity: str = natsauth.POKERCTL,
    data_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> NatsCredentials | None:
    """The credentials the options, the environment or ``data_dir`` give; None: anonymous.
    A file named but missing is ``EvidenceUnreadable`` (never a silent anonymous connection)."""
    env = os.environ if environ is None else environ
    local = NatsCredentials.local(identity, data_dir) if data_dir is not None else None
    seed = _pick(getattr(args, "nats_nkey", None), env.get(NKEY_ENV, ""), local.seed if local else None)
    ca = _pick(getattr(args, "nats_ca", None), env.get(CA_ENV, ""), local.ca if local else None)
    if seed is None and ca is None:
        return None
    for path in (seed, ca):
        if path is not None and not path.is_file():
            raise EvidenceUnreadable(f"NATS_CREDENTIAL_MISSING: {path} is not a file")
    name = identity
    if seed is not None and seed.suffix == natsauth.SEED_SUFFIX and seed.stem in natsauth.IDENTITIES:
        name = seed.stem
    return NatsCredentials(name=name, seed=seed, ca=ca)


def _pick(option: Path | None, setting: str, local: Path | None) -> Path | None:
    if option is not None:
        return option
    if setting.strip():
        return Path(setting.strip())
    return local if local is not None and local.exists() else None


def live_target(
    args: argparse.Namespace, *, identity: str = natsauth.POKERCTL, data_dir: Path | None = None
) -> NatsTarget:
    """``--nats URL`` (default the local system's) with the credentials of ``credentials``."""
    url = getattr(args, "nats", None) or DEFAULT_NATS_URL
    return NatsTarget(url, credentials(args, identity=identity, data_dir=data_dir))
