"""The dealer service: the process manager that drives hands (``poker.dealer.v1.DealerService``).

``app`` is the process manager (one ``driver`` per table: shuffle, reservations, clocks,
settlement, seed reveal; the driver's theory of operation is in its docstring; ``hand_calls``
holds a hand's wallet, rng and audit calls, ``wakeup`` a driver's wake-up), ``feed`` and
``tracker`` follow and fold the table logs, ``presence`` merges the table services' presence reports,
``handlers`` serve the operator RPCs (status, hands in flight, void, pause, resume).
"""
