"""Page sizes and page tokens shared by every list RPC."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openpoker.shell import paging
from openpoker.shell.paging import InvalidPageSize, InvalidPageToken


def test_page_sizes() -> None:
    assert paging.page_size(0) == paging.DEFAULT_PAGE_SIZE == 50
    assert paging.page_size(10_000) == paging.MAX_PAGE_SIZE == 500
    assert paging.page_size(7) == 7
    with pytest.raises(InvalidPageSize) as refused:
        paging.page_size(-1)
    assert refused.value.fields == {"page_size": -1}


@given(st.text(min_size=1, max_size=40), st.integers(0, 10**9))
def test_tokens_round_trip_and_stay_with_their_request(account: str, offset: int) -> None:
    token = paging.page_token(offset, a=account)
    assert "=" not in token
    assert paging.page_offset(token, a=account) == offset
    with pytest.raises(InvalidPageToken):
        paging.page_offset(token, a=account + "x")


def test_a_bound_value_must_keep_its_type() -> None:
    token = paging.page_token(4, g=1)
    assert paging.page_offset(token, g=1) == 4
    with pytest.raises(InvalidPageToken):
        paging.page_offset(token, g="1")


def test_no_token_is_the_first_page() -> None:
    assert paging.page_offset("", g=3) == 0


@pytest.mark.parametrize(
    "token",
    [
        "bogus",
        "o50",  # not base64 JSON
        "!!!!",
        base64.urlsafe_b64encode(b"[1, 2]").decode(),
        base64.urlsafe_b64encode(json.dumps({"o": -1, "g": 0}).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps({"o": True, "g": 0}).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps({"o": 1}).encode()).decode(),  # not bound to g
    ],
)
def test_foreign_tokens_are_refused(token: str) -> None:
    with pytest.raises(InvalidPageToken):
        paging.page_offset(token, g=0)


def test_tokens_issued_before_the_shared_helper_still_decode() -> None:
    # The table service padded its tokens and spaced its JSON; the wallet put the account first.
    table = base64.urlsafe_b64encode(json.dumps({"o": 2, "g": 0}).encode()).decode()
    assert paging.page_offset(table, g=0) == 2
    wallet = base64.urlsafe_b64encode(b'{"a":"cash/alice","o":3}').decode().rstrip("=")
    assert paging.page_offset(wallet, a="cash/alice") == 3


def test_next_page_token_is_empty_after_the_last_page() -> None:
    assert paging.next_page_token(10, 10, t="") == ""
    assert paging.page_offset(paging.next_page_token(4, 10, t=""), t="") == 4
