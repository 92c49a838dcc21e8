"""Service settings from the environment, read once at start into a frozen value.

Variables (all optional; ``<SERVICE>`` is the upper-cased service name, e.g. ``TABLE``):

* ``POKER_<SERVICE>_HOST`` (default ``127.0.0.1``) and ``POKER_<SERVICE>_PORT`` (default from
  ``DEFAULT_PORTS``; ``0`` picks a free port);
* ``POKER_NATS_URL`` (default ``nats://127.0.0.1:4222``), ``POKER_NATS_NKEY`` (the service's nkey
  seed file) and ``POKER_NATS_CA`` (the CA of the server's TLS certificate): ``shell.natsconn``.
  Both are required unless ``POKER_INSECURE``: a secure service never joins an open bus;
* ``POKER_ENV``: ``development`` (default) or ``production``;
* ``POKER_LOG_FORMAT``: ``console`` or ``json`` (default: json in production, console otherwise);
* ``POKER_LOG_LEVEL`` (default ``info``);
* ``POKER_GRACE_SECONDS``: how long in-flight RPCs may finish on shutdown (default 5);
* ``POKER_<SERVICE>_METRICS_PORT`` (default 0: none) and ``POKER_METRICS_HOST`` (default
  ``127.0.0.1``): the Prometheus ``/metrics`` endpoint (``shell.metrics``);
* ``POKER_QUOTA_RPS`` (default 200) and ``POKER_QUOTA_BURST`` (default 400): requests per second
  per identity on a TLS server, and how many at once (``shell.quotas``; 0 turns the limit off).
  Certificate holders (the services, ``pokerctl``) are exempt.

Security (``Security``; docs/security.md). A service serves TLS only, on two listeners: the
*service* listener on ``POKER_<SERVICE>_PORT`` requires a client certificate from the CA (other
services, ``pokerctl``), the *client* listener on ``POKER_<SERVICE>_CLIENT_PORT`` (default: the
service port + 100; ``0`` picks a free port) serves anyone holding the CA, who is named by bearer
token. Files come from ``POKER_TLS_DIR`` (a folder laid out as ``pokerctl up`` makes
``DATA/pki``: ``ca.crt``, ``<service>.crt``/``.key``, ``jwks.json``) or one by one from
``POKER_TLS_CA``, ``POKER_TLS_CERT``, ``POKER_TLS_KEY`` and ``POKER_JWKS``: a JWKS file (re-read
when it changes), or the ``https://`` JWKS URL of the operator's identity provider, its server
verified against ``POKER_JWKS_CA`` (a PEM bundle; default: the system trust store), fetched at most
once per ``POKER_JWKS_MIN_REFETCH_SECONDS`` (30) and refreshed after
``POKER_JWKS_LIFESPAN_SECONDS`` (300) (``shell.jwks``); ``http://`` is refused.
``POKER_TOKEN_ISSUER``/``POKER_TOKEN_AUDIENCE`` are what tokens must name. ``POKER_INSECURE=true``
instead serves plaintext on the service port alone and takes identity from the ``x-caller`` and
``x-player-id`` headers: for in-process test rigs and the benchmark without security, refused when
``POKER_ENV=production``. With neither, a service refuses to start.

Where a service finds another: ``POKER_<NAME>_TARGET`` (``host:port``; ``pokerctl up`` sets it
for every service it started earlier), else ``127.0.0.1:<default port>``: ``service_target``.

Services keep their own settings in their ``config.py`` next to a ``ShellConfig`` and read them
with the ``env_*`` helpers, so a bad value fails at start with a ``ConfigError`` naming it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from openpoker.shell.jwks import LIFESPAN_SECONDS, MIN_REFETCH_SECONDS
from openpoker.shell.natsconn import NatsCredentials, NatsCredentialsError
from openpoker.shell.tls import TlsFiles
from openpoker.shell.tokens import AUDIENCE, ISSUER

Environment = Literal["development", "production"]
LogFormat = Literal["console", "json"]

# One fixed port per service, so `pokerctl up` and the services agree without discovery.
DEFAULT_PORTS: Mapping[str, int] = {"rng": 50051, "wallet": 50052, "table": 50053, "dealer": 50054}
CLIENT_PORT_OFFSET = 100  # the client listener's default port: the service port + this
DEFAULT_NATS_URL = "nats://127.0.0.1:4222"
_LEVELS = ("debug", "info", "warning", "error")


class ConfigError(ValueError):
    """A setting that is missing or malformed; names the variable."""

    def __init__(self, *, variable: str, value: str, problem: str) -> None:
        super().__init__(f"{variable}={value!r}: {problem}")
        self.variable = variable
        self.value = value
        self.problem = problem


def env_str(environ: Mapping[str, str], name: str, default: str) -> str:
    value = environ.get(name, "").strip()
    return value or default


T = TypeVar("T")


def env_parsed(environ: Mapping[str, str], name: str, parse: Callable[[str], T]) -> T:
    """``parse`` of the setting's text ("" when unset); its ValueError is a ConfigError naming
    the setting."""
    raw = env_str(environ, name, "")
    try:
        return parse(raw)
    except ValueError as exc:
        raise ConfigError(variable=name, value=raw, problem=str(exc)) from None


def env_int(environ: Mapping[str, str], name: str, default: int, *, minimum: int = 0) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(variable=name, value=raw, problem="not an integer") from None
    if value < minimum:
        raise ConfigError(variable=name, value=raw, problem=f"must be >= {minimum}")
    return value


def env_float(environ: Mapping[str, str], name: str, default: float, *, minimum: float = 0.0) -> float:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(variable=name, value=raw, problem="not a number") from None
    if not value >= minimum:  # also rejects NaN
        raise ConfigError(variable=name, value=raw, problem=f"must be >= {minimum}")
    return value


def env_bool(environ: Mapping[str, str], name: str, default: bool) -> bool:
    raw = environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ConfigError(variable=name, value=raw, problem="not a boolean (true/false)")


def service_target(environ: Mapping[str, str], service: str) -> str:
    """``host:port`` of another service: ``POKER_<SERVICE>_TARGET`` or its default local port."""
    return env_str(environ, f"POKER_{service.upper()}_TARGET", f"127.0.0.1:{DEFAULT_PORTS[service]}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Security:
    """How a service authenticates: TLS files and token settings, or plaintext for rigs."""

    tls: TlsFiles | None  # None: plaintext (insecure)
    jwks: Path | None  # a JWKS file
    token_issuer: str = ISSUER
    token_audience: str = AUDIENCE
    client_port: int = 0
    jwks_url: str | None = None  # an https:// JWKS URL, instead of a file
    jwks_ca: Path | None = None  # what the JWKS server's certificate must chain to (None: system)
    jwks_min_refetch_seconds: float = MIN_REFETCH_SECONDS
    jwks_lifespan_seconds: float = LIFESPAN_SECONDS

    @property
    def insecure(self) -> bool:
        return self.tls is None

    @classmethod
    def plaintext(cls) -> Security:
        """Plaintext with identity from headers: in-process test rigs only."""
        return cls(tls=None, jwks=None)

    @classmethod
    def from_env(
        cls, service: str, env: Mapping[str, str], *, environment: Environment, port: int
    ) -> Security:
        insecure = env_bool(env, "POKER_INSECURE", False)
        folder = env_str(env, "POKER_TLS_DIR", "")
        ca = env_str(env, "POKER_TLS_CA", f"{folder}/ca.crt" if folder else "")
        cert = env_str(env, "POKER_TLS_CERT", f"{folder}/{service}.crt" if folder else "")
        key = env_str(env, "POKER_TLS_KEY", f"{folder}/{service}.key" if folder else "")
        jwks = env_str(env, "POKER_JWKS", f"{folder}/jwks.json" if folder else "")
        if insecure:
            if environment == "production":
                raise ConfigError(
                    variable="POKER_INSECURE", value="true", problem="plaintext is refused in production"
                )
            return cls.plaintext()
        if not (ca and cert and key):
            raise ConfigError(
                variable="POKER_TLS_DIR",
                value=folder,
                problem="no TLS configured: set POKER_TLS_DIR (or POKER_TLS_CA, _CERT, _KEY); "
                "POKER_INSECURE=true serves plaintext for development",
            )
        default_client = port + CLIENT_PORT_OFFSET if port else 0
        client_port = env_int(env, f"POKER_{service.upper()}_CLIENT_PORT", default_client)
        if client_port > 65535:
            raise ConfigError(
                variable=f"POKER_{service.upper()}_CLIENT_PORT",
                value=str(client_port),
                problem="must be <= 65535",
            )
        scheme = jwks.partition("://")[0].lower() if "://" in jwks else ""
        if scheme not in ("", "https"):
            raise ConfigError(
                variable="POKER_JWKS",
                value=jwks,
                problem="a JWKS URL must be https:// (the keys decide who is who); or give a file path",
            )
        jwks_ca = env_str(env, "POKER_JWKS_CA", "")
        return cls(
            tls=TlsFiles(ca=Path(ca), cert=Path(cert), key=Path(key)),
            jwks=Path(jwks) if jwks and not scheme else None,
            jwks_url=jwks if scheme else None,
            jwks_ca=Path(jwks_ca) if jwks_ca else None,
            jwks_min_refetch_seconds=env_float(env, "POKER_JWKS_MIN_REFETCH_SECONDS", MIN_REFETCH_SECONDS),
            jwks_lifespan_seconds=env_float(env, "POKER_JWKS_LIFESPAN_SECONDS", LIFESPAN_SECONDS),
            token_issuer=env_str(env, "POKER_TOKEN_ISSUER", ISSUER),
            token_audience=env_str(env, "POKER_TOKEN_AUDIENCE", AUDIENCE),
            client_port=client_port,
        )


NATS_SETTINGS = {"seed": "POKER_NATS_NKEY", "ca": "POKER_NATS_CA"}


def nats_credentials_setting(service: str, env: Mapping[str, str], *, required: bool) -> NatsCredentials:
    """``POKER_NATS_NKEY`` and ``POKER_NATS_CA``: both required unless ``required`` is False
    (a plaintext rig, whose NATS is open); a file named but missing is refused either way."""
    try:
        credentials = NatsCredentials.from_env(service, env)
    except NatsCredentialsError as exc:
        variable = next(v for v in NATS_SETTINGS.values() if env.get(v, "").strip() == exc.path)
        raise ConfigError(variable=variable, value=exc.path, problem="no such file") from None
    if required:
        for field, variable in NATS_SETTINGS.items():
            if getattr(credentials, field) is None:
                raise ConfigError(
                    variable=variable,
                    value="",
                    problem="no NATS credentials: a secure service connects to NATS with its nkey "
                    f"seed (POKER_NATS_NKEY, DATA/nats/auth/{service}.nk) over TLS verified against "
                    "POKER_NATS_CA (DATA/pki/ca.crt); POKER_INSECURE=true connects anonymously "
                    "for development",
                )
    return credentials


@dataclass(frozen=True, slots=True, kw_only=True)
class ShellConfig:
    """What the shell needs to run one service process."""

    service: str
    host: str
    port: int
    nats_url: str
    environment: Environment
    log_format: LogFormat
    log_level: str
    grace_seconds: float
    security: Security
    quota_rps: float = 200.0  # requests per second per identity (0: no limit)
    quota_burst: int = 400
    nats_credentials: NatsCredentials | None = None  # None: anonymous, plaintext
    metrics_host: str = "127.0.0.1"  # ``shell.metrics``: where /metrics listens
    metrics_port: int = 0  # 0: no metrics endpoint

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @classmethod
    def from_env(cls, service: str, environ: Mapping[str, str] | None = None) -> ShellConfig:
        env = os.environ if environ is None else environ
        prefix = f"POKER_{service.upper()}_"
        environment_raw = env_str(env, "POKER_ENV", "development").lower()
        if environment_raw not in ("development", "production"):
            raise ConfigError(
                variable="POKER_ENV", value=environment_raw, problem="development or production"
            )
        environment: Environment = "production" if environment_raw == "production" else "development"
        default_format = "json" if environment == "production" else "console"
        format_raw = env_str(env, "POKER_LOG_FORMAT", default_format).lower()
        if format_raw not in ("console", "json"):
            raise ConfigError(variable="POKER_LOG_FORMAT", value=format_raw, problem="console or json")
        log_format: LogFormat = "json" if format_raw == "json" else "console"
        level = env_str(env, "POKER_LOG_LEVEL", "info").lower()
        if level not in _LEVELS:
            raise ConfigError(variable="POKER_LOG_LEVEL", value=level, problem=f"one of {_LEVELS}")
        port = env_int(env, prefix + "PORT", DEFAULT_PORTS.get(service, 0))
        if port > 65535:
            raise ConfigError(variable=prefix + "PORT", value=str(port), problem="must be <= 65535")
        security = Security.from_env(service, env, environment=environment, port=port)
        return cls(
            service=service,
            host=env_str(env, prefix + "HOST", "127.0.0.1"),
            port=port,
            nats_url=env_str(env, "POKER_NATS_URL", DEFAULT_NATS_URL),
            environment=environment,
            log_format=log_format,
            log_level=level,
            grace_seconds=env_float(env, "POKER_GRACE_SECONDS", 5.0),
            security=security,
            quota_rps=env_float(env, "POKER_QUOTA_RPS", 200.0),
            quota_burst=env_int(env, "POKER_QUOTA_BURST", 400, minimum=1),
            nats_credentials=nats_credentials_setting(service, env, required=not security.insecure),
            metrics_host=env_str(env, "POKER_METRICS_HOST", "127.0.0.1"),
            metrics_port=env_int(env, prefix + "METRICS_PORT", 0, minimum=0),
        )
