"""The envelope-signing key files (``eventstore.signing``), made once per data folder with the
local PKI (``pokerctl.local``).

* ``DATA/secrets/signing/<writer>.key``: a writer's Ed25519 private key (PKCS#8 PEM, 0600),
  given to that writer's service only (``POKER_SIGNING_KEY``). Writers: ``table``, ``wallet``.
* ``DATA/pki/signing-keys.json``: the public keyring every reader and the dispute desk use
  (``POKER_SIGNING_KEYS``, ``--signing-keys``)::

      {"keys": [{"key_id": "table-1a2b3c4d", "writer": "table",
                 "public_key": "<base64url raw Ed25519>", "created": "2026-11-27T22:00:00+00:00"}]}

``rotate_signing_key`` makes a writer a new key and adds it to the keyring; the old public key
stays listed so the envelopes it signed still verify. A key id is checked against its writer and
public key when the keyring is read, so a hand-edited entry cannot rename a key's writer.

A service that loads envelopes (wallet, table, dealer) holds the keyring as a ``KeyringFile``
(``POKER_SIGNING_KEYS``): read at start, and read again when an envelope names a key id it does
not hold and the file has changed since, so a writer's rotation needs no restart of its readers.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import stat
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from openpoker.eventstore.envelope import Envelope, Snapshot
from openpoker.eventstore.loading import SnapshotVerifier, Verifier
from openpoker.eventstore.signing import (
    Keyring,
    PublicKey,
    SignatureReason,
    Signer,
    check_signature,
    check_snapshot,
    key_id_for,
    raw_public,
)

WRITERS: tuple[str, ...] = ("table", "wallet")


def signing_key_path(data_dir: Path, writer: str) -> Path:
    return data_dir / "secrets" / "signing" / f"{writer}.key"


def keyring_path(data_dir: Path) -> Path:
    return data_dir / "pki" / "signing-keys.json"


def _write_file(path: Path, data: bytes, mode: int) -> None:
    """Atomically, with ``mode`` from the first byte (a key is never readable by others)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, mode)
    tmp.replace(path)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def load_keyring(path: Path) -> Keyring:
    """The keyring file; ``ValueError`` names what is wrong with it."""
    try:
        doc = json.loads(path.read_text())
        keys: dict[str, PublicKey] = {}
        for entry in doc["keys"]:
            writer, public = str(entry["writer"]), _unb64(str(entry["public_key"]))
            key_id = str(entry["key_id"])
            if len(public) != 32 or key_id != key_id_for(writer, public):
                raise ValueError(f"key {key_id!r} does not match its writer and public key")
            created = dt.datetime.fromisoformat(str(entry["created"]))
            keys[key_id] = PublicKey(key_id=key_id, writer=writer, public=public, created=created)
    except (OSError, KeyError, TypeError, json.JSONDecodeError, ValueError) as exc:
        raise ValueError(f"unreadable signing keyring {path}: {exc}") from None
    return Keyring(keys=keys)


def _save_keyring(path: Path, keyring: Keyring) -> None:
    entries = [
        {
            "key_id": k.key_id,
            "writer": k.writer,
            "public_key": _b64(k.public),
            "created": k.created.isoformat(),
        }
        for k in sorted(keyring.keys.values(), key=lambda k: (k.created, k.key_id))
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_file(path, (json.dumps({"keys": entries}, indent=2) + "\n").encode(), 0o644)


def load_signer(path: Path, writer: str) -> Signer:
    """``writer``'s private key file, which must be private (0600)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ValueError(f"{path} is mode {mode:o}; a signing key must be 0600")
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise ValueError(f"{path} is not an Ed25519 private key")
    return Signer.from_key(writer, key)


def signer_setting(path: str, writer: str, *, required: bool) -> Signer | None:
    """``POKER_SIGNING_KEY`` as the table and wallet services read it: the writer's key, or None
    where none is named and none is required (a plaintext test rig)."""
    if not path:
        if required:
            raise ValueError("required over TLS: the key this service signs its envelopes with")
        return None
    try:
        return load_signer(Path(path), writer)
    except (OSError, TypeError, ValueError) as exc:
        raise ValueError(f"unreadable signing key: {type(exc).__name__}: {exc}") from None


def _publish(data_dir: Path, writer: str, key: ed25519.Ed25519PrivateKey, now: dt.datetime | None) -> None:
    path = keyring_path(data_dir)
    keyring = load_keyring(path) if path.exists() else Keyring(keys={})
    public = raw_public(key.public_key())
    entry = PublicKey(
        key_id=key_id_for(writer, public),
        writer=writer,
        public=public,
        created=now or dt.datetime.now(dt.UTC),
    )
    if entry.key_id not in keyring.keys:
        _save_keyring(path, keyring.with_key(entry))


def _write_key(data_dir: Path, writer: str, key: ed25519.Ed25519PrivateKey) -> None:
    path = signing_key_path(data_dir, writer)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    _write_file(path, pem, 0o600)


def ensure_signing_key(data_dir: Path, writer: str, *, now: dt.datetime | None = None) -> Path:
    """Make ``writer``'s key the first time and publish its public key; after, make sure the
    keyring lists it. Returns the private key's path (for ``POKER_SIGNING_KEY``)."""
    path = signing_key_path(data_dir, writer)
    if path.exists():
        signer = load_signer(path, writer)
        _publish(data_dir, writer, signer.key, now)
        return path
    key = ed25519.Ed25519PrivateKey.generate()
    _publish(data_dir, writer, key, now)  # public first: nothing is ever signed by an unlisted key
    _write_key(data_dir, writer, key)
    return path


def rotate_signing_key(data_dir: Path, writer: str, *, now: dt.datetime | None = None) -> Signer:
    """A new key for ``writer`` (its service takes it on restart); old public keys stay listed."""
    key = ed25519.Ed25519PrivateKey.generate()
    _publish(data_dir, writer, key, now)
    _write_key(data_dir, writer, key)
    return Signer.from_key(writer, key)


# Signatures verified by a ``KeyringFile`` (a watcher per client folds the same envelopes; a
# verification costs tens of microseconds): only passes are remembered, oldest dropped first.
VERIFIED_KEPT = 8192


class KeyringFile:
    """The published keyring as a reading service holds it (``POKER_SIGNING_KEYS``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp = self._stat()
        self._keyring = load_keyring(path)
        self._verified: dict[tuple[str, bytes, bytes], None] = {}

    def _stat(self) -> tuple[int, int, int]:
        st = self.path.stat()
        return st.st_mtime_ns, st.st_size, st.st_ino

    @property
    def keyring(self) -> Keyring:
        return self._keyring

    def refresh(self) -> bool:
        """Read the file again if it changed; True when it did and now reads. Keys held stay
        held (a running reader never forgets a key it verified with)."""
        try:
            stamp = self._stat()
            if stamp == self._stamp:
                return False
            fresh = load_keyring(self.path)
        except (OSError, ValueError):
            return False  # a half-written or vanished file: keep what is held
        self._keyring = Keyring(keys={**self._keyring.keys, **fresh.keys})
        self._stamp = stamp
        return True

    def verifier(self, writer: str) -> Verifier:
        """The check of each loaded envelope (``eventstore.loading``): signed by a key of
        ``writer``; a key id not held makes the file be read again once, if it changed. A
        signature that verified is not verified again (a batch's envelopes share one)."""
        verified = self._verified

        def verify(envelope: Envelope) -> str | None:
            if len(verified) >= VERIFIED_KEPT:
                del verified[next(iter(verified))]
            problem = check_signature(envelope, self._keyring, writer=writer, verified=verified)
            if problem is not None and problem.reason is SignatureReason.UNKNOWN_KEY and self.refresh():
                problem = check_signature(envelope, self._keyring, writer=writer, verified=verified)
            return None if problem is None else problem.describe()

        return verify

    def snapshot_verifier(self, writer: str) -> SnapshotVerifier:
        """The check of a snapshot before it is used: signed by a key of ``writer``."""

        def verify(snapshot: Snapshot) -> str | None:
            problem = check_snapshot(snapshot, self._keyring, writer=writer)
            if problem is not None and problem.reason is SignatureReason.UNKNOWN_KEY and self.refresh():
                problem = check_snapshot(snapshot, self._keyring, writer=writer)
            return None if problem is None else problem.describe()

        return verify


def keyring_setting(path: str, *, required: bool) -> KeyringFile | None:
    """``POKER_SIGNING_KEYS`` as the wallet, table and dealer read it: the published keyring,
    or None where none is named and none is required (a plaintext test rig reads unsigned)."""
    if not path:
        if required:
            raise ValueError("required over TLS: the published keys every loaded envelope is verified with")
        return None
    try:
        return KeyringFile(Path(path))
    except (OSError, ValueError) as exc:
        raise ValueError(f"unreadable signing keyring: {exc}") from None
