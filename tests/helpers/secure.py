"""Talking to a secure whole system (``local_system(..., secure=True)``) as each kind of caller:
people with the CA alone and a token on the client ports, ``pokerctl`` with its staff certificate
on the service ports."""

from __future__ import annotations

import datetime as dt
from typing import Any

from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as dgrpc
from openpoker.api.rng.v1 import rng_service_pb2_grpc as rgrpc
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wgrpc
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell import pki
from openpoker.shell.client import bearer_metadata, channel
from openpoker.shell.tls import TlsFiles
from openpoker.shell.tokens import Role, TokenIssuer

Meta = tuple[tuple[str, str], ...]


def ca_only(system: LocalSystem) -> TlsFiles:
    assert system.pki is not None
    return TlsFiles.from_pki(system.pki, None)


def token(
    system: LocalSystem, subject: str, role: Role = Role.PLAYER, *, now: dt.datetime | None = None
) -> Meta:
    """``authorization`` metadata with a token the system's own key signed."""
    assert system.pki is not None
    kid, key = pki.load_token_key(system.pki)
    return bearer_metadata(TokenIssuer(key=key, kid=kid).issue(subject, role, now=now))


class Calls:
    """Stubs of every service: ``table``, ``wallet``, ``dealer``, ``rng`` on the client ports (pass
    a token), ``staff_*`` on the service ports with pokerctl's certificate."""

    def __init__(self, system: LocalSystem) -> None:
        ca = ca_only(system)
        t, c = system.targets, system.client_targets
        self.chans = [
            channel(c["wallet"], ca),
            channel(t["wallet"], system.tls),
            channel(c["table"], ca),
            channel(t["table"], system.tls),
            channel(c["dealer"], ca),
            channel(t["dealer"], system.tls),
            channel(c["rng"], ca),
        ]
        self.wallet: Any = wgrpc.WalletServiceStub(self.chans[0])
        self.staff_wallet: Any = wgrpc.WalletServiceStub(self.chans[1])
        self.table: Any = tgrpc.TableServiceStub(self.chans[2])
        self.staff_table: Any = tgrpc.TableServiceStub(self.chans[3])
        self.dealer: Any = dgrpc.DealerServiceStub(self.chans[4])
        self.staff_dealer: Any = dgrpc.DealerServiceStub(self.chans[5])
        self.rng: Any = rgrpc.RngServiceStub(self.chans[6])

    async def close(self) -> None:
        for chan in self.chans:
            await chan.close()
