"""Dispute replay: rebuild, verify and export any hand from the logs (``openpoker.dispute``).

* ``evidence``: what the replay reads: the table's envelopes as stored (with their
  ``Nats-Msg-Id``), the revealed seeds of the audit record (``RNG_AUDIT``) and each hand's
  settlement in the wallet's ledger (``WALLET_EVENTS``), reduced to plain values.
* ``check``: ``replay_table`` runs every check over one table's log (pure) and names the first
  one that fails, with the table, version and hand.
* ``history``: the readable hand history and the JSON report of a replay.
* ``export``: hands as PHH (``engine.phh``), with the reason when a hand has no faithful PHH form.
* ``source``: the imperative shell: reading the evidence from NATS, live or from a copy of a
  data folder.
"""
