"""Mappings between protobuf and ledger values round-trip; bad input is refused by name."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.engine.rules import RakeRules
from openpoker.services.wallet import mapping
from openpoker.services.wallet.errors import InvalidRakeRules

rake_rules = st.builds(
    lambda bp, caps, nfnd, unit: RakeRules(
        basis_points=bp, caps=tuple(sorted(caps.items())), no_flop_no_drop=nfnd, unit=unit
    ),
    st.integers(0, 750),
    st.dictionaries(st.integers(2, 10), st.integers(0, 10**9), max_size=4),
    st.booleans(),
    st.sampled_from([1, 5, 100]),
)


@given(rake_rules)
def test_rake_rules_round_trip(rules: RakeRules) -> None:
    wire = pb.RakeRules.FromString(mapping.rake_to_proto(rules).SerializeToString())
    assert mapping.rake_from_proto(wire) == rules


def test_an_unset_rake_unit_is_the_minor_unit() -> None:
    assert mapping.rake_from_proto(pb.RakeRules(basis_points=500)).unit == 1


@pytest.mark.parametrize(
    "bad",
    [
        pb.RakeRules(basis_points=751),
        pb.RakeRules(basis_points=-1),
        pb.RakeRules(caps=[pb.RakeCap(min_players_dealt_in=1, cap=10)]),
        pb.RakeRules(caps=[pb.RakeCap(min_players_dealt_in=2, cap=-1)]),
        pb.RakeRules(unit=-100),
        pb.RakeRules(
            caps=[pb.RakeCap(min_players_dealt_in=3, cap=1), pb.RakeCap(min_players_dealt_in=3, cap=2)]
        ),
    ],
)
def test_bad_rake_rules(bad: pb.RakeRules) -> None:
    with pytest.raises(InvalidRakeRules):
        mapping.rake_from_proto(bad)


def test_cash_out_zero_means_everything() -> None:
    assert mapping.cash_out(pb.CashOutRequest(request_id="r", table_id="t", player="p")).amount is None
    assert mapping.cash_out(pb.CashOutRequest(request_id="r", table_id="t", player="p", amount=5)).amount == 5


def test_cash_out_carries_the_hand_it_waits_for() -> None:
    assert mapping.cash_out(pb.CashOutRequest(request_id="r", table_id="t", player="p")).after_hand == 0
    request = pb.CashOutRequest(request_id="r", table_id="t", player="p", amount=5, after_hand=9)
    got = mapping.cash_out(request)
    assert got.after_hand == 9
