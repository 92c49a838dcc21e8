"""ReportConnection's optional expected_version: a fact the dealer judged against an older log
is refused (ABORTED, STALE_VERSION) and changes nothing; a retry of an applied request id
answers its first result."""

from __future__ import annotations

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.shell.client import rich_error
from tests.services.table.helpers import DEALER, Running, create, join, rid


def report(request_id: str, *, expected: int | None) -> pb.ReportConnectionRequest:
    request = pb.ReportConnectionRequest(
        request_id=request_id, table="tables/t1", player_id="ann", connected=False
    )
    if expected is not None:
        request.expected_version = expected
    return request


async def test_a_stale_fact_is_refused_and_a_current_one_applies_once(svc: Running) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    await svc.stub.SitOut(pb.SitOutRequest(request_id=rid(), table="tables/t1", player_id="bob"))
    now = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.version
    with pytest.raises(grpc.RpcError) as caught:
        await svc.stub.ReportConnection(report(rid(), expected=now - 1), metadata=DEALER)
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
    unchanged = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    assert unchanged.version == now
    assert not next(s for s in unchanged.seats if s.player_id == "ann").disconnected
    same = rid()
    done = await svc.stub.ReportConnection(report(same, expected=now), metadata=DEALER)
    assert done.table.version == now + 1
    assert next(s for s in done.table.seats if s.player_id == "ann").disconnected
    # The same request again (a retry after a lost reply), even with the old version: its result.
    again = await svc.stub.ReportConnection(report(same, expected=now), metadata=DEALER)
    assert again.table.version == now + 1
    # Without an expected version the fact is judged on whatever the log is (older clients).
    back = pb.ReportConnectionRequest(request_id=rid(), table="tables/t1", player_id="ann", connected=True)
    assert (await svc.stub.ReportConnection(back, metadata=DEALER)).table.version == now + 2
