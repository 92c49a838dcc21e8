"""openpoker: an event-sourced online poker backend.

Layers, outermost first (enforced by import-linter in ``make lint``): ``services`` (the gRPC
applications), ``pokerctl`` (the command line), the libraries (``dispute``, ``shell``,
``eventstore``, ``shuffle``), and ``engine``, the pure rules engine every table is folded
through. ``api`` is the code generated from ``proto/`` (``make proto``), never edited.
"""
