"""Backing evidence streams up from NATS and restoring them (the shell of ``pokerctl backup`` and
``pokerctl restore``; the format is ``backup_format``).

Backup reads each stream message by message with ``STREAM.MSG.GET`` (subject, headers, stored
time and data come with each), from its first to its last sequence as the stream stood when the
backup began; a sequence that holds nothing (a KV key rewritten) is a gap, not an error.

Restore checks the whole backup first (``verify_backup``), then that each stream is missing or
empty on the server (else ``RestoreRefused`` and nothing is written), creates a missing stream
with its recorded configuration and publishes the messages in order with their subjects and
headers. ``Nats-Expected-*`` headers are left out: they were the writer's concurrency checks
against the sequences of the time, and were checked then. Versions, hashes and ``Nats-Msg-Id``
are in the data and headers, so they come back as they were; stream sequences come back equal
when the stream started at 1 without gaps, and the summary says per stream whether they did
(the rng's ``log_position`` hints and the snapshot stream's sequence tags refer to
``TABLE_EVENTS`` sequences).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from nats.aio.client import Client
from nats.js import JetStreamContext, api
from nats.js.errors import NotFoundError

from openpoker.errors import ErrorKind, OpenPokerError
from openpoker.eventstore.streams import TABLE_EVENTS, WALLET_EVENTS
from openpoker.pokerctl.backup_format import (
    MANIFEST,
    Backup,
    BackupMessage,
    StreamEntry,
    encode_message,
    manifest,
    stream_file,
)

RNG_AUDIT_STREAM = "RNG_AUDIT"  # services.dealer.audit.RNG_AUDIT (pokerctl may not import services)
RNG_SHUFFLES_STREAM = "KV_RNG_SHUFFLES"  # the rng's sealed seeds: KV bucket RNG_SHUFFLES
DEALER_STREAM = "KV_poker-dealer"  # tables an operator paused
# Evidence, and what is needed to reveal seeds and resume: snapshots, the hand index and leases
# are caches or short-lived and rebuild themselves (operations.md).
EVIDENCE_STREAMS: tuple[str, ...] = (
    TABLE_EVENTS.name,
    WALLET_EVENTS.name,
    RNG_AUDIT_STREAM,
    RNG_SHUFFLES_STREAM,
    DEALER_STREAM,
)
_DROPPED_HEADERS = "nats-expected-"


class BackupRefused(OpenPokerError):
    reason: ClassVar[str] = "BACKUP_TARGET_NOT_EMPTY"
    kind: ClassVar[ErrorKind] = "precondition"


class RestoreRefused(OpenPokerError):
    reason: ClassVar[str] = "RESTORE_TARGET_NOT_EMPTY"
    kind: ClassVar[ErrorKind] = "precondition"


class RestoreFailed(OpenPokerError):
    reason: ClassVar[str] = "RESTORE_FAILED"
    kind: ClassVar[ErrorKind] = "internal"


def _rfc3339(value: object) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return str(value or "")


async def _read_stream(js: JetStreamContext, name: str, first: int, last: int) -> list[BackupMessage]:
    out: list[BackupMessage] = []
    for seq in range(first, last + 1) if first else ():
        try:
            raw = await js.get_msg(name, seq=seq)
        except NotFoundError:
            continue  # a gap: a KV key rewritten or deleted
        out.append(
            BackupMessage(
                seq=int(raw.seq or seq),
                subject=str(raw.subject or ""),
                headers={str(k): str(v) for k, v in (raw.headers or {}).items()},
                data=raw.data or b"",
                time=_rfc3339(getattr(raw, "time", None)),
            )
        )
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadStream:
    name: str
    config: api.StreamConfig
    messages: tuple[BackupMessage, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadStreams:
    streams: tuple[ReadStream, ...]
    missing: tuple[str, ...]
    server_version: str


def check_empty(out: Path) -> None:
    """A backup is written only into a missing or empty folder, never over files."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise BackupRefused(
            f"{out} is not an empty folder: a backup is never written over files", out=str(out)
        )


async def read_streams(nc: Client, streams: tuple[str, ...] = EVIDENCE_STREAMS) -> ReadStreams:
    """Every message of ``streams`` (those the server has), as they stand when each is read."""
    js = nc.jetstream()
    found: list[ReadStream] = []
    missing: list[str] = []
    for name in streams:
        try:
            info = await js.stream_info(name)
        except NotFoundError:
            missing.append(name)
            continue
        first, last = int(info.state.first_seq or 0), int(info.state.last_seq or 0)
        messages = await _read_stream(js, name, first, last)
        found.append(ReadStream(name=name, config=info.config, messages=tuple(messages)))
    return ReadStreams(
        streams=tuple(found), missing=tuple(missing), server_version=str(nc.connected_server_version)
    )


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def write_backup(out: Path, read: ReadStreams) -> dict[str, object]:
    """The files and the manifest in ``out`` (checked empty); the summary to print."""
    check_empty(out)
    # Every hole card and sealed seed is in here: the folder and files are its owner's alone.
    out.mkdir(parents=True, exist_ok=True, mode=0o700)
    out.chmod(0o700)
    entries: list[StreamEntry] = []
    for stream in read.streams:
        raw = b"".join(encode_message(m) for m in stream.messages)
        _write_private(out / stream_file(stream.name), raw)
        entries.append(
            StreamEntry(
                name=stream.name,
                file=stream_file(stream.name),
                subjects=tuple(stream.config.subjects or ()),
                config=stream.config.as_dict(),
                messages=len(stream.messages),
                first_seq=stream.messages[0].seq if stream.messages else 0,
                last_seq=stream.messages[-1].seq if stream.messages else 0,
                bytes=len(raw),
                sha256=hashlib.sha256(raw).hexdigest(),
            )
        )
    created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    doc = manifest(entries, created_at=created, server_version=read.server_version)
    _write_private(out / MANIFEST, _pretty(doc).encode())
    return {
        "ok": True,
        "out": str(out),
        "digest": doc["digest"],
        "streams": {e.name: {"messages": e.messages, "sha256": e.sha256} for e in entries},
        "missing": list(read.missing),
    }


def _pretty(doc: object) -> str:
    return json.dumps(doc, sort_keys=True, indent=2) + "\n"


async def restore(nc: Client, backup_: Backup, *, folder: Path) -> dict[str, object]:
    """Bring a backup (verified by ``verify_backup``) back into streams that are missing or empty."""
    js = nc.jetstream()
    existing: dict[str, bool] = {}
    for entry in backup_.streams:
        try:
            info = await js.stream_info(entry.name)
        except NotFoundError:
            existing[entry.name] = False
            continue
        if int(info.state.messages or 0) or int(info.state.last_seq or 0):
            raise RestoreRefused(
                f"stream {entry.name} already holds messages (last sequence {info.state.last_seq}): "
                "restore only into a system whose evidence streams are empty or missing",
                stream=entry.name,
            )
        existing[entry.name] = True
    summary: dict[str, object] = {}
    for entry in backup_.streams:
        if not existing[entry.name]:
            await js.add_stream(api.StreamConfig.from_response(dict(entry.config)))
        # A failure from here on leaves the streams partly restored: RestoreFailed says so.
        summary[entry.name] = await _publish_all(js, entry.name, backup_.stream(entry.name))
    return {"ok": True, "from": str(folder), "digest": backup_.manifest["digest"], "streams": summary}


async def _publish_all(
    js: JetStreamContext, stream: str, messages: tuple[BackupMessage, ...]
) -> dict[str, object]:
    same = True
    for message in messages:
        headers = {k: v for k, v in message.headers.items() if not k.lower().startswith(_DROPPED_HEADERS)}
        try:
            ack = await js.publish(
                message.subject, message.data, stream=stream, headers=headers or None, timeout=5.0
            )
        except Exception as exc:  # nats-py timeouts and API errors
            raise RestoreFailed(
                f"stream {stream}: publishing message {message.seq} failed ({exc!r}); the stream is "
                "partly restored",
                stream=stream,
                seq=message.seq,
            ) from exc
        if ack.duplicate:
            raise RestoreFailed(
                f"stream {stream}: message {message.seq} was taken for a duplicate of one just restored; "
                "the stream is partly restored",
                stream=stream,
                seq=message.seq,
            )
        same = same and ack.seq == message.seq
    return {"messages": len(messages), "sequences_preserved": same}
