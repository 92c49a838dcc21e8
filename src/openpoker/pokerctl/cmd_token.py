"""``pokerctl token --data-dir DATA --player P [--role ROLE] [--ttl S]``: mint a bearer token.

Signs a token for P in ROLE (player, the default; cashier, auditor or operator) with the local
token key (DATA/pki/token.key, made by ``pokerctl up``), valid for S seconds (default 3600),
and prints it alone on stdout: ``export POKER_TOKEN=$(pokerctl token --data-dir data --player
ann)``. The services verify it against DATA/pki/jwks.json. A client sends it as
``authorization: Bearer <token>`` to a service's client port.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from openpoker.shell import pki
from openpoker.shell.tokens import Role, TokenIssuer

ROLES = (Role.PLAYER, Role.CASHIER, Role.AUDITOR, Role.OPERATOR)


def _ttl(text: str) -> int:
    seconds = int(text)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number of seconds")
    return seconds


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = sub.add_parser(
        "token",
        help="print a bearer token signed with the local token key",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    token.add_argument("--data-dir", type=Path, required=True, help="a pokerctl up data folder")
    token.add_argument("--player", required=True, help="the token's subject (a player or staff id)")
    token.add_argument(
        "--role", choices=[r.value for r in ROLES], default=Role.PLAYER.value, help="default player"
    )
    token.add_argument("--ttl", type=_ttl, default=3600, help="seconds the token is valid (default 3600)")
    token.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    local = pki.LocalPki(root=args.data_dir / "pki")
    try:
        kid, key = pki.load_token_key(local)
    except (OSError, ValueError) as exc:
        print(
            f"token: no usable token key under {local.root} ({exc}); run pokerctl up first", file=sys.stderr
        )
        return 2
    issued = TokenIssuer(key=key, kid=kid).issue(
        args.player, Role(args.role), ttl=dt.timedelta(seconds=args.ttl)
    )
    print(issued)
    return 0
