"""Subject naming: one subject per table, grouped into a fixed number of partitions.

``poker.table.<partition>.<table_id>`` with ``partition = crc32(table_id) mod PARTITIONS``. The
partition count is fixed forever (changing it moves every table); leases are per partition.
"""

from __future__ import annotations

import zlib

PARTITIONS = 256


def partition_of(table_id: str, partitions: int = PARTITIONS) -> int:
    return zlib.crc32(table_id.encode()) % partitions


def table_subject(table_id: str, partitions: int = PARTITIONS) -> str:
    if not table_id or any(c in table_id for c in ".*> \t"):
        raise ValueError(f"table id {table_id!r} cannot be a subject token")
    return f"poker.table.{partition_of(table_id, partitions)}.{table_id}"


def partition_lease_key(partition: int) -> str:
    return f"part.{partition}"
