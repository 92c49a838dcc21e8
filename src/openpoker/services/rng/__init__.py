"""The rng service: certified-style shuffles with commitments and sealed seeds.

Shape (STYLE.md): ``config`` (frozen settings), ``entropy`` (the OS seed source), ``sealing``
(AES-256-GCM at rest), ``store`` (shuffle records: in-memory and JetStream KV), ``handlog``
(has the hand ended? in-memory and the table's JetStream subject), ``app`` (the use cases),
``mapping`` (protobuf <-> domain), ``handlers`` (gRPC, caller checks), ``server`` (wiring).
The derivation itself lives in the pure library ``shuffle``.
"""
