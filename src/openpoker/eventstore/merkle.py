"""Merkle tree hashes and inclusion proofs (RFC 9162, section 2.1), for batch signatures.

A writer that signs several envelopes at once (``eventstore.batchsign``) signs the root of the
tree over their hashes; each envelope carries its index, the batch size and its inclusion proof,
so it can be checked alone: the proof and the envelope's hash give the root, and the signature
over the root proves the writer. The leaf and node prefixes (0x00, 0x01) keep a leaf from being
passed off as an inner node (second-preimage resistance), as in Certificate Transparency.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

_LEAF = b"\x00"
_NODE = b"\x01"


class InvalidProof(ValueError):
    """An index, size or proof that cannot describe a leaf of a tree."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(_LEAF + data).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(_NODE + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _root_of_leaves(leaves: Sequence[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _node(_root_of_leaves(leaves[:k]), _root_of_leaves(leaves[k:]))


def root(items: Sequence[bytes]) -> bytes:
    """The tree hash over ``items`` (at least one)."""
    if not items:
        raise InvalidProof("a tree needs at least one leaf")
    return _root_of_leaves([leaf_hash(d) for d in items])


def _tree(leaves: Sequence[bytes]) -> tuple[bytes, list[list[bytes]]]:
    """The root over ``leaves`` and each leaf's path, hashing each node once."""
    if len(leaves) == 1:
        return leaves[0], [[]]
    k = _split(len(leaves))
    left, left_paths = _tree(leaves[:k])
    right, right_paths = _tree(leaves[k:])
    for path in left_paths:
        path.append(right)
    for path in right_paths:
        path.append(left)
    return _node(left, right), left_paths + right_paths


def proofs(items: Sequence[bytes]) -> tuple[bytes, tuple[tuple[bytes, ...], ...]]:
    """The tree hash over ``items`` and each item's inclusion proof, in order."""
    if not items:
        raise InvalidProof("a tree needs at least one leaf")
    top, paths = _tree([leaf_hash(d) for d in items])
    return top, tuple(tuple(path) for path in paths)


def root_from_proof(data: bytes, *, index: int, size: int, proof: Sequence[bytes]) -> bytes:
    """The root that ``proof`` proves ``data`` to be leaf ``index`` of a tree of ``size`` under
    (RFC 9162, 2.1.3.2); raises ``InvalidProof`` when no tree of that size has such a path."""
    if not 0 <= index < size:
        raise InvalidProof(f"index {index} is not in a tree of {size}")
    fn, sn = index, size - 1
    r = leaf_hash(data)
    for p in proof:
        if len(p) != hashlib.sha256().digest_size:
            raise InvalidProof("a proof hash is not 32 bytes")
        if sn == 0:
            raise InvalidProof("the proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            r = _node(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = _node(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise InvalidProof("the proof is shorter than the tree is deep")
    return r
