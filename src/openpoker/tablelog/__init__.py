"""A table's event log: what the table service writes and the dispute tools read.

``events`` (the log's own event beside the engine's: ``OwnerChanged``), ``model`` (the fold of
one table log through ``openpoker.engine.table``), ``store`` (envelopes on JetStream or in
memory, decoding recorded events, snapshots), ``snapshot`` (snapshot codec), ``payload`` (event
payload JSON), ``ids`` (how the dealer names hands).
"""
