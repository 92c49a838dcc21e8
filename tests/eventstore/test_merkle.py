"""Merkle tree hashes and inclusion proofs (``eventstore.merkle``), against RFC 6962's vectors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openpoker.eventstore import merkle

# The leaves and tree hashes of the reference test vectors of RFC 6962's implementations
# (certificate-transparency), for the first 1 to 8 leaves.
LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    bytes(range(0x50, 0x58)),
    bytes(range(0x60, 0x70)),
]
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


@pytest.mark.parametrize("size", range(1, 9))
def test_tree_hashes_are_the_reference_vectors(size: int) -> None:
    assert merkle.root(LEAVES[:size]).hex() == ROOTS[size - 1]
    root, paths = merkle.proofs(LEAVES[:size])
    assert root.hex() == ROOTS[size - 1]
    for i, path in enumerate(paths):
        assert merkle.root_from_proof(LEAVES[i], index=i, size=size, proof=path) == root


items = st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=70, unique=True)


@given(items)
def test_every_leaf_proves_its_way_to_the_root(leaves: list[bytes]) -> None:
    root, paths = merkle.proofs(leaves)
    assert root == merkle.root(leaves)
    assert all(len(p) <= 7 for p in paths)
    for i, path in enumerate(paths):
        assert merkle.root_from_proof(leaves[i], index=i, size=len(leaves), proof=path) == root


def _other_root(leaf: bytes, *, index: int, size: int, proof: tuple[bytes, ...]) -> bytes | None:
    try:
        return merkle.root_from_proof(leaf, index=index, size=size, proof=proof)
    except merkle.InvalidProof:
        return None


@given(items.filter(lambda xs: len(xs) > 1), st.data())
def test_a_proof_proves_nothing_else(leaves: list[bytes], data: st.DataObject) -> None:
    root, paths = merkle.proofs(leaves)
    n = len(leaves)
    i = data.draw(st.integers(0, n - 1))
    path = paths[i]
    other = data.draw(st.integers(0, n - 1).filter(lambda j: j != i))
    # Another leaf, another index, a changed, missing or extra hash: not the root. (A proof
    # can hold for another size: the signed message binds the size, ``signing.batch_message``.)
    assert _other_root(leaves[other], index=i, size=n, proof=path) != root
    assert _other_root(leaves[i], index=other, size=n, proof=path) != root
    k = data.draw(st.integers(0, len(path) - 1))
    flipped = path[k][:-1] + bytes([path[k][-1] ^ 1])
    assert _other_root(leaves[i], index=i, size=n, proof=(*path[:k], flipped, *path[k + 1 :])) != root
    assert _other_root(leaves[i], index=i, size=n, proof=path[:-1]) != root
    assert _other_root(leaves[i], index=i, size=n, proof=(*path, root)) != root


def test_impossible_proofs_are_refused() -> None:
    with pytest.raises(merkle.InvalidProof):
        merkle.root_from_proof(b"x", index=2, size=2, proof=())
    with pytest.raises(merkle.InvalidProof):
        merkle.root_from_proof(b"x", index=0, size=2, proof=(b"short",))
    with pytest.raises(merkle.InvalidProof):
        merkle.proofs([])
