"""The table service: owner of the table event streams (``poker.table.v1.TableService``).

Wiring so far (foundation): configuration, the NATS connection, the JetStream streams and lease
bucket the service writes, and a gRPC server with health and reflection. The handlers (commands
decided by the engine, appended with optimistic concurrency, redacted views and watch streams)
come with issue 7; until then every RPC answers UNIMPLEMENTED.
"""
