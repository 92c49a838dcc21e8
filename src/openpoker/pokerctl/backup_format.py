"""The backup folder ``pokerctl backup`` writes and ``restore``/``--backup DIR`` read.

A folder holds ``manifest.json`` and one JSON-lines file per stream, ``<stream>.jsonl``: one
object per stored message, in stream order::

    {"data": "<base64>", "headers": {"Nats-Msg-Id": "..."}, "seq": 7, "subject": "...", "time": "..."}

``seq`` is the message's sequence in the stream it was read from and ``time`` the time the server
stored it (RFC 3339); ``headers`` are as stored (``{}`` when none), ``data`` the raw payload. The
manifest records the format and its version, when the backup was made, the nats-server's version
and, per stream: its name, file, subjects, configuration (as the JetStream API returns it),
message count, first and last sequence, size and the SHA-256 of its file. ``digest`` is the
SHA-256 of the manifest's canonical JSON (keys sorted, no spaces) without ``digest`` itself: a
third party checks every file against the manifest and the manifest against the digest it was
given (printed by ``pokerctl backup``), with nothing but ``sha256sum`` and a JSON parser.

``verify_backup`` checks all of that before anything is read from the files; a mismatch is
``BackupTampered``, naming the file and what differs.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from openpoker.errors import ErrorKind, OpenPokerError

FORMAT = "openpoker-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class BackupUnreadable(OpenPokerError):
    """The folder is not a backup this version can read (no manifest, another format)."""

    reason: ClassVar[str] = "BACKUP_UNREADABLE"
    kind: ClassVar[ErrorKind] = "invalid"


class BackupTampered(OpenPokerError):
    """The files do not match the manifest, or the manifest does not match its digest."""

    reason: ClassVar[str] = "BACKUP_TAMPERED"
    kind: ClassVar[ErrorKind] = "data_loss"


@dataclass(frozen=True, slots=True, kw_only=True)
class BackupMessage:
    seq: int
    subject: str
    headers: dict[str, str]
    data: bytes
    time: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamEntry:
    """A stream's line in the manifest."""

    name: str
    file: str
    subjects: tuple[str, ...]
    config: dict[str, object]
    messages: int
    first_seq: int
    last_seq: int
    bytes: int
    sha256: str

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "file": self.file,
            "subjects": list(self.subjects),
            "config": self.config,
            "messages": self.messages,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "bytes": self.bytes,
            "sha256": self.sha256,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Backup:
    manifest: dict[str, object]
    streams: tuple[StreamEntry, ...]
    messages: dict[str, tuple[BackupMessage, ...]]  # by stream name, in stream order

    def stream(self, name: str) -> tuple[BackupMessage, ...]:
        return self.messages.get(name, ())

    def has(self, name: str) -> bool:
        return name in self.messages


def encode_message(message: BackupMessage) -> bytes:
    doc = {
        "seq": message.seq,
        "subject": message.subject,
        "time": message.time,
        "headers": message.headers,
        "data": base64.b64encode(message.data).decode("ascii"),
    }
    return (json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n").encode()


def decode_message(line: bytes) -> BackupMessage:
    doc = json.loads(line)
    headers = doc.get("headers") or {}
    if not isinstance(headers, dict):
        raise ValueError("headers is not an object")
    return BackupMessage(
        seq=int(doc["seq"]),
        subject=str(doc["subject"]),
        headers={str(k): str(v) for k, v in headers.items()},
        data=base64.b64decode(doc["data"], validate=True),
        time=str(doc.get("time") or ""),
    )


def stream_file(name: str) -> str:
    return f"{name}.jsonl"


def canonical(doc: object) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def manifest(streams: list[StreamEntry], *, created_at: str, server_version: str) -> dict[str, object]:
    """The manifest, its ``digest`` included."""
    body: dict[str, object] = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "created_at": created_at,
        "server_version": server_version,
        "streams": [s.as_dict() for s in streams],
    }
    return {**body, "digest": hashlib.sha256(canonical(body)).hexdigest()}


def _entry(doc: object) -> StreamEntry:
    if not isinstance(doc, dict):
        raise ValueError("a stream entry is not an object")
    config = doc["config"]
    if not isinstance(config, dict):
        raise ValueError(f"stream {doc.get('name')!r}: config is not an object")
    return StreamEntry(
        name=str(doc["name"]),
        file=str(doc["file"]),
        subjects=tuple(str(s) for s in doc["subjects"]),
        config=config,
        messages=int(doc["messages"]),
        first_seq=int(doc["first_seq"]),
        last_seq=int(doc["last_seq"]),
        bytes=int(doc["bytes"]),
        sha256=str(doc["sha256"]),
    )


def read_manifest(folder: Path) -> tuple[dict[str, object], tuple[StreamEntry, ...]]:
    """The manifest, checked against its own digest (not yet against the files)."""
    path = folder / MANIFEST
    try:
        doc = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise BackupUnreadable(f"no {MANIFEST} in {folder}: not a backup", folder=str(folder)) from None
    except (OSError, ValueError) as exc:
        raise BackupUnreadable(f"{path} is not JSON: {exc}", folder=str(folder)) from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise BackupUnreadable(f"{path} is not an {FORMAT} manifest", folder=str(folder))
    if doc.get("version") != FORMAT_VERSION:
        raise BackupUnreadable(
            f"{path}: format version {doc.get('version')!r}, this pokerctl reads {FORMAT_VERSION}",
            folder=str(folder),
        )
    body = {k: v for k, v in doc.items() if k != "digest"}
    if hashlib.sha256(canonical(body)).hexdigest() != doc.get("digest"):
        raise BackupTampered(f"{path}: the manifest does not match its digest", file=MANIFEST)
    try:
        streams = tuple(_entry(s) for s in doc["streams"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BackupUnreadable(f"{path}: malformed stream entry: {exc}", folder=str(folder)) from exc
    return doc, streams


def verify_backup(folder: Path, *, expected_digest: str | None = None) -> Backup:
    """Every file checked against the manifest (hash, size, count, sequences), then read.

    ``expected_digest``: the digest the backup was handed over with, if any."""
    doc, streams = read_manifest(folder)
    if expected_digest is not None and doc["digest"] != expected_digest:
        raise BackupTampered(
            f"the manifest's digest is {doc['digest']}, not {expected_digest}", file=MANIFEST
        )
    messages: dict[str, tuple[BackupMessage, ...]] = {}
    for entry in streams:
        path = folder / entry.file
        if Path(entry.file).name != entry.file:
            raise BackupUnreadable(f"stream {entry.name}: file {entry.file!r} is not in the folder")
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise BackupTampered(f"{entry.file} is missing", file=entry.file) from None
        digest = hashlib.sha256(raw).hexdigest()
        if digest != entry.sha256 or len(raw) != entry.bytes:
            raise BackupTampered(
                f"{entry.file}: SHA-256 {digest} ({len(raw)} bytes), the manifest says "
                f"{entry.sha256} ({entry.bytes} bytes)",
                file=entry.file,
            )
        try:
            decoded = tuple(decode_message(line) for line in raw.splitlines() if line)
        except (KeyError, TypeError, ValueError) as exc:
            raise BackupUnreadable(f"{entry.file}: malformed message: {exc}", file=entry.file) from exc
        _check_order(entry, decoded)
        messages[entry.name] = decoded
    return Backup(manifest=doc, streams=streams, messages=messages)


def _check_order(entry: StreamEntry, decoded: tuple[BackupMessage, ...]) -> None:
    seqs = [m.seq for m in decoded]
    first, last = (seqs[0], seqs[-1]) if seqs else (entry.first_seq, entry.last_seq)
    if len(seqs) != entry.messages or (first, last) != (entry.first_seq, entry.last_seq):
        raise BackupTampered(
            f"{entry.file}: {len(seqs)} messages, sequences {first}..{last}; the manifest says "
            f"{entry.messages}, {entry.first_seq}..{entry.last_seq}",
            file=entry.file,
        )
    if any(b <= a for a, b in itertools.pairwise(seqs)):
        raise BackupTampered(f"{entry.file}: sequences out of order", file=entry.file)
