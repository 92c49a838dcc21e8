"""The backup folder's format and its checks (no NATS), and the retention of the streams it holds:
evidence streams keep everything, as docs/operations.md says."""

from __future__ import annotations

import hashlib
import json
import stat
from pathlib import Path

import pytest
from nats.js import api

from openpoker.eventstore.streams import (
    ALLOWANCES,
    LEASES,
    TABLE_EVENTS,
    TABLE_SNAPSHOTS,
    WALLET_EVENTS,
    BucketSettings,
)
from openpoker.ledger.store import WALLET_SNAPSHOTS
from openpoker.pokerctl.backup_format import (
    BackupMessage,
    BackupTampered,
    BackupUnreadable,
    StreamEntry,
    decode_message,
    encode_message,
    manifest,
    verify_backup,
)
from openpoker.pokerctl.backup_io import (
    EVIDENCE_STREAMS,
    BackupRefused,
    ReadStream,
    ReadStreams,
    check_empty,
    write_backup,
)
from openpoker.services.dealer.audit import RNG_AUDIT
from openpoker.services.dealer.pauses import DEALER_BUCKET
from openpoker.services.rng.config import RngConfig

ROOT = Path(__file__).resolve().parents[2]
RNG_BUCKET = RngConfig.from_env({"POKER_INSECURE": "true"}).bucket  # the rng's default bucket
MESSAGES = (
    BackupMessage(
        seq=1, subject="poker.table.7.t1", headers={"Nats-Msg-Id": "t1:1:5"}, data=b"\x00\xff", time="x"
    ),
    BackupMessage(seq=3, subject="poker.table.7.t1", headers={}, data=b"", time=""),
)


def write(folder: Path, messages: tuple[BackupMessage, ...] = MESSAGES) -> dict[str, object]:
    folder.mkdir()
    raw = b"".join(encode_message(m) for m in messages)
    (folder / "TABLE_EVENTS.jsonl").write_bytes(raw)
    entry = StreamEntry(
        name="TABLE_EVENTS",
        file="TABLE_EVENTS.jsonl",
        subjects=("poker.table.>",),
        config={"name": "TABLE_EVENTS"},
        messages=len(messages),
        first_seq=messages[0].seq,
        last_seq=messages[-1].seq,
        bytes=len(raw),
        sha256=hashlib.sha256(raw).hexdigest(),
    )
    doc = manifest([entry], created_at="2026-01-01T00:00:00Z", server_version="2.12.0")
    (folder / "manifest.json").write_text(json.dumps(doc, indent=2))
    return doc


def test_messages_round_trip_and_a_backup_reads_back(tmp_path: Path) -> None:
    assert all(decode_message(encode_message(m)) == m for m in MESSAGES)
    doc = write(tmp_path / "b")
    backup = verify_backup(tmp_path / "b", expected_digest=str(doc["digest"]))
    assert backup.stream("TABLE_EVENTS") == MESSAGES


def test_a_changed_file_or_manifest_is_tampered(tmp_path: Path) -> None:
    write(tmp_path / "b")
    path = tmp_path / "b" / "TABLE_EVENTS.jsonl"
    path.write_bytes(path.read_bytes().replace(b"t1:1:5", b"t1:1:6"))
    with pytest.raises(BackupTampered, match=r"TABLE_EVENTS\.jsonl: SHA-256"):
        verify_backup(tmp_path / "b")

    write(tmp_path / "c")
    doc = json.loads((tmp_path / "c" / "manifest.json").read_text())
    doc["streams"][0]["messages"] = 1
    (tmp_path / "c" / "manifest.json").write_text(json.dumps(doc))
    with pytest.raises(BackupTampered, match="does not match its digest"):
        verify_backup(tmp_path / "c")

    write(tmp_path / "d")
    (tmp_path / "d" / "TABLE_EVENTS.jsonl").unlink()
    with pytest.raises(BackupTampered, match="missing"):
        verify_backup(tmp_path / "d")
    with pytest.raises(BackupTampered, match="not 00"):
        verify_backup(tmp_path / "b", expected_digest="00")


def test_messages_out_of_order_are_tampered(tmp_path: Path) -> None:
    write(tmp_path / "b", (MESSAGES[1], MESSAGES[0]))
    with pytest.raises(BackupTampered):
        verify_backup(tmp_path / "b")


def test_a_folder_without_a_manifest_is_no_backup(tmp_path: Path) -> None:
    with pytest.raises(BackupUnreadable, match="not a backup"):
        verify_backup(tmp_path)


def test_a_backup_is_written_only_into_an_empty_folder(tmp_path: Path) -> None:
    check_empty(tmp_path / "new")
    check_empty(tmp_path)
    (tmp_path / "x").write_text("")
    with pytest.raises(BackupRefused):
        check_empty(tmp_path)


def test_evidence_streams_keep_everything() -> None:
    for settings in (TABLE_EVENTS, WALLET_EVENTS, RNG_AUDIT):
        config = settings.config()
        assert config.max_age == 0, settings.name  # 0 = forever
        assert config.max_bytes is None, settings.name  # unset: the server's -1, no limit
        assert config.max_msgs is None, settings.name
        assert config.max_msgs_per_subject == -1, settings.name
        assert (config.deny_delete, config.deny_purge, settings.storage) == (True, True, "file")
    # The rng's sealed seeds and the dealer's pauses: buckets whose keys never expire.
    assert BucketSettings(bucket=RNG_BUCKET).ttl == 0
    assert DEALER_BUCKET.ttl == 0
    # Caches and leases are limited on purpose and are not in a backup.
    assert TABLE_SNAPSHOTS.max_msgs_per_subject == 3
    assert WALLET_SNAPSHOTS.max_msgs_per_subject > 0
    assert LEASES.ttl > 0
    # The players' all-in allowances count a rolling day: their keys go a little after it.
    assert 24 * 3600 < ALLOWANCES.ttl <= 27 * 3600
    assert f"KV_{ALLOWANCES.bucket}" not in EVIDENCE_STREAMS
    assert {"TABLE_EVENTS", "WALLET_EVENTS", "RNG_AUDIT", f"KV_{RNG_BUCKET}"} <= set(EVIDENCE_STREAMS)


def test_the_operations_guide_lists_every_backed_up_stream_and_its_limits() -> None:
    guide = (ROOT / "docs" / "operations.md").read_text()
    section = guide.split("## Stream limits", 1)[1].split("\n## ", 1)[0]
    for name in EVIDENCE_STREAMS:
        assert f"| `{name}` |" in section, name


def test_a_backup_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """It holds every hole card and sealed seed: folder 0700, files 0600, and it reads back."""
    stream = ReadStream(name="TABLE_EVENTS", config=api.StreamConfig(name="TABLE_EVENTS"), messages=MESSAGES)
    summary = write_backup(
        tmp_path / "b", ReadStreams(streams=(stream,), missing=(), server_version="2.12.0")
    )
    assert stat.S_IMODE((tmp_path / "b").stat().st_mode) == 0o700
    files = list((tmp_path / "b").iterdir())
    assert {f.name for f in files} == {"TABLE_EVENTS.jsonl", "manifest.json"}
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files)
    backup = verify_backup(tmp_path / "b", expected_digest=str(summary["digest"]))
    assert backup.stream("TABLE_EVENTS") == MESSAGES
