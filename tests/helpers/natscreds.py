"""NATS credential files for a secure service's settings in a test that never reaches NATS (a
shell server alone, a config read): ``POKER_NATS_NKEY`` and ``POKER_NATS_CA``, which a service
without ``POKER_INSECURE`` requires, naming real files."""

from __future__ import annotations

import os
from pathlib import Path

import nkeys


def nats_env(folder: Path, name: str = "table") -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    seed = folder / f"{name}.nk"
    if not seed.exists():
        seed.write_bytes(bytes(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)) + b"\n")
    ca = folder / "nats-ca.crt"
    if not ca.exists():
        ca.write_text("not read: the service never connects to NATS in this test\n")
    return {"POKER_NATS_NKEY": str(seed), "POKER_NATS_CA": str(ca)}
