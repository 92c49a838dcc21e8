"""The wallet's double-entry ledger: a pure decider and its event log.

``commands`` and ``events`` (frozen records), ``decider`` (``decide``/``evolve``/``fold`` over
``LedgerState``), ``accounts`` (account names and balances), ``transfers`` (two-phase transfers),
``hands`` (per-hand reservations and settlement), ``errors`` (typed ledger errors), ``codec`` (JSON
of events and state), ``store`` (the ledger's stream and snapshots), ``audit`` (the checks behind
``pokerctl ledger audit``). The wallet service (``openpoker.services.wallet``) serves it over gRPC;
the dispute tools and ``pokerctl`` read it directly.
"""
