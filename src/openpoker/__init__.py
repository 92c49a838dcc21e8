"""openpoker: an event-sourced online poker backend.

Layers, outermost first (enforced by import-linter in ``make lint``): ``services`` (the gRPC
applications), ``pokerctl`` (the command line), the libraries (``dispute``, ``shell``,
``eventstore``, ``shuffle``), ``engine``, the pure rules engine every table is folded
through, and ``errors``, the one exception base every error tree derives from. ``api`` is the
code generated from ``proto/`` (``make proto``), never edited.
"""
