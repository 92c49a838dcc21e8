"""Where token signing keys come from: a JWKS file, or the operator's identity provider's URL.

* ``StaticKeys``: a JWKS given once (tests, tools).
* ``FileKeys``: a JWKS file, re-read whenever its modification time (or size, or inode) changes,
  so an operator rotates keys without a restart: publish the new key beside the old one, issue
  with it, then drop the old one.
* ``UrlKeys``: an ``https://`` JWKS URL, fetched in a worker thread (never on the event loop)
  with the server verified against a CA bundle (``POKER_JWKS_CA``) or the system trust store.
  The keys are cached; a token naming an unknown ``kid`` makes the caller wait for one refetch,
  and keys older than their lifespan are refetched in the background while the cached ones keep
  answering. Fetch *attempts* are at most one per ``min_interval`` seconds per process, whatever
  the reason, so a flood of junk ``kid`` values cannot make a service hammer the identity
  provider. A failed fetch keeps the keys held (an outage of the identity provider logs nobody
  out); until a first fetch succeeds no token is accepted.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import ssl
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

import jwt
import structlog

MIN_REFETCH_SECONDS: Final = 30.0
LIFESPAN_SECONDS: Final = 300.0
FETCH_TIMEOUT_SECONDS: Final = 5.0
MAX_JWKS_BYTES: Final = 1024 * 1024

Keys = Mapping[str, jwt.PyJWK]  # kid -> key
Fetch = Callable[[], dict[str, jwt.PyJWK]]

# structlog directly, not shell.logs: that module imports shell.config, which imports this one.
_log: Any = structlog.get_logger()


class JwksError(ValueError):
    """A JWKS that cannot be read, fetched or parsed; names where it came from."""

    def __init__(self, *, source: str, problem: str) -> None:
        super().__init__(f"JWKS {source}: {problem}")
        self.source = source
        self.problem = problem


class KeySource(Protocol):
    """Signing keys by ``kid``. ``key`` never touches the network; ``ensure`` may (off the loop)."""

    @property
    def fetches(self) -> bool:
        """Whether ``ensure`` can fetch: if not, callers need not await it."""
        ...

    def key(self, kid: str) -> jwt.PyJWK | None: ...

    async def ensure(self, kid: str) -> None: ...


def parse_jwks(data: object, *, source: str) -> dict[str, jwt.PyJWK]:
    """The usable signing keys of a JWKS document by ``kid``; keys without a ``kid``, marked for
    another use than ``sig`` (an identity provider may publish encryption keys beside them) or of a
    kind PyJWT cannot load are skipped (a token must name its key)."""
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise JwksError(source=source, problem='not a JWKS (an object with a "keys" list)')
    try:
        keys = jwt.PyJWKSet.from_dict(data).keys
    except jwt.PyJWTError as exc:
        raise JwksError(source=source, problem=str(exc) or type(exc).__name__) from None
    found = {jwk.key_id: jwk for jwk in keys if jwk.key_id and jwk.public_key_use in (None, "sig")}
    if not found:
        raise JwksError(source=source, problem="no usable key with a kid")
    return found


class StaticKeys:
    """A JWKS given once."""

    def __init__(self, jwks: Mapping[str, Any], *, source: str = "(given)") -> None:
        self._keys = parse_jwks(dict(jwks), source=source)

    @property
    def fetches(self) -> bool:
        return False

    def key(self, kid: str) -> jwt.PyJWK | None:
        return self._keys.get(kid)

    async def ensure(self, kid: str) -> None:
        return None


class FileKeys:
    """A JWKS file, re-read when it changes. A file that cannot be read or parsed at start raises
    ``JwksError``; later, the keys held stay until the file parses again (a half-written file
    must not log everyone out)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stamp = self._stat()
        self._keys = self._read()

    @property
    def fetches(self) -> bool:
        return False

    def key(self, kid: str) -> jwt.PyJWK | None:
        # One stat per token: cheap beside the signature check, and rotation takes effect at once.
        stamp = self._stat()
        if stamp != self._stamp:
            self._stamp = stamp
            try:
                self._keys = self._read()
                _log.info("jwks.reloaded", path=str(self._path), kids=sorted(self._keys))
            except JwksError as exc:
                _log.warning("jwks.reload_failed", path=str(self._path), problem=exc.problem)
        return self._keys.get(kid)

    async def ensure(self, kid: str) -> None:
        return None

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self._path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def _read(self) -> dict[str, jwt.PyJWK]:
        try:
            data = json.loads(self._path.read_bytes())
        except OSError as exc:
            raise JwksError(source=str(self._path), problem=exc.strerror or "cannot read") from None
        except ValueError:
            raise JwksError(source=str(self._path), problem="not JSON") from None
        return parse_jwks(data, source=str(self._path))


class _HttpsRedirectsOnly(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only to another ``https://`` address: never downgrade to plaintext."""

    def redirect_request(  # noqa: PLR0917 (urllib's signature)
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        if not newurl.lower().startswith("https://"):
            raise JwksError(source=req.full_url, problem=f"redirected to a non-https address {newurl!r}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def ssl_context(ca: Path | None) -> ssl.SSLContext:
    """Verify the JWKS server against ``ca`` (a PEM bundle), else the system trust store."""
    try:
        return ssl.create_default_context(cafile=str(ca) if ca is not None else None)
    except (OSError, ssl.SSLError) as exc:
        raise JwksError(source=str(ca), problem=f"cannot load the CA bundle: {exc}") from None


def fetch_jwks(
    url: str, *, context: ssl.SSLContext, timeout: float = FETCH_TIMEOUT_SECONDS
) -> dict[str, jwt.PyJWK]:
    """GET a JWKS over HTTPS (blocking: run it in a thread)."""
    if not url.lower().startswith("https://"):
        raise JwksError(source=url, problem="only https:// URLs are fetched")
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _HttpsRedirectsOnly())
    # S310: the scheme is checked just above, and redirects are held to https.
    request = urllib.request.Request(  # noqa: S310
        url, headers={"Accept": "application/json", "User-Agent": "openpoker"}
    )
    try:
        with opener.open(request, timeout=timeout) as response:
            body = response.read(MAX_JWKS_BYTES + 1)
    except JwksError:
        raise
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise JwksError(source=url, problem=str(exc) or type(exc).__name__) from None
    if len(body) > MAX_JWKS_BYTES:
        raise JwksError(source=url, problem=f"larger than {MAX_JWKS_BYTES} bytes")
    try:
        data = json.loads(body)
    except ValueError:
        raise JwksError(source=url, problem="not JSON") from None
    return parse_jwks(data, source=url)


class UrlKeys:
    """An ``https://`` JWKS URL, cached and refetched as the module docstring says."""

    def __init__(
        self,
        url: str,
        *,
        context: ssl.SSLContext,
        min_interval: float = MIN_REFETCH_SECONDS,
        lifespan: float = LIFESPAN_SECONDS,
        timeout: float = FETCH_TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not url.lower().startswith("https://"):
            raise JwksError(source=url, problem="only https:// URLs are fetched")
        self.url = url
        self._fetch: Fetch = lambda: fetch_jwks(url, context=context, timeout=timeout)
        self._min_interval = min_interval
        self._lifespan = lifespan
        self._clock = clock
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None  # last success
        self._tried_at: float | None = None  # last attempt
        self._inflight: asyncio.Task[None] | None = None

    @property
    def fetches(self) -> bool:
        return True

    @property
    def ready(self) -> bool:
        """Whether a fetch has succeeded: before that, every token is refused."""
        return self._fetched_at is not None

    def key(self, kid: str) -> jwt.PyJWK | None:
        return self._keys.get(kid)

    async def start(self) -> None:
        """The first fetch, awaited (at most ``timeout``): on failure the service starts anyway
        (certificate holders need no token) and refuses tokens until a later fetch succeeds."""
        await self._attempt()
        if not self.ready:
            _log.warning("jwks.unavailable", url=self.url, retry_after_s=self._min_interval)

    async def ensure(self, kid: str) -> None:
        """Make ``kid`` available if a fetch may: wait for one fetch when it is unknown, start one in
        the background when the keys are past their lifespan."""
        if self._inflight is not None:
            if kid not in self._keys:
                await asyncio.shield(self._inflight)
            return
        now = self._clock()
        if self._tried_at is not None and now - self._tried_at < self._min_interval:
            return
        if kid not in self._keys:
            await self._attempt()
        elif self._fetched_at is None or now - self._fetched_at >= self._lifespan:
            self._spawn()

    def _spawn(self) -> asyncio.Task[None]:
        self._tried_at = self._clock()
        self._inflight = asyncio.get_running_loop().create_task(self._run())
        return self._inflight

    async def _attempt(self) -> None:
        await asyncio.shield(self._spawn())

    async def _run(self) -> None:
        try:
            keys = await asyncio.to_thread(self._fetch)
        except JwksError as exc:
            _log.warning("jwks.fetch_failed", url=self.url, problem=exc.problem)
        else:
            self._keys = keys
            self._fetched_at = self._clock()
            _log.info("jwks.fetched", url=self.url, kids=sorted(keys))
        finally:
            self._inflight = None

    async def close(self) -> None:
        """Wait for a fetch under way (bounded by its timeout), so none outlives its server."""
        if self._inflight is not None:
            await asyncio.shield(self._inflight)
