"""The dealer service: the process manager that drives hands (``poker.dealer.v1.DealerService``).

Wiring so far (foundation): configuration, the NATS connection and a gRPC server with health and
reflection. The process manager itself (shuffle, reservations, clocks, settlement, seed reveal)
and the operator RPCs come with issue 7; until then every RPC answers UNIMPLEMENTED.
"""
