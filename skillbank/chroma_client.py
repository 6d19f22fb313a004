"""The Chroma client a bank uses: embedded on its root, or a `chroma run` server whose every
request, and the client's open, is bounded by `chroma_timeout`.

chromadb's HttpClient builds its httpx session with `timeout=None` hard-coded and asks the
server several times while it is built and placed, so a server that accepts connections and
never answers (a stopped process, a frozen machine: the kernel still accepts) hung the bank's
open and then every agent call (docs/team.md, "A Chroma server that stops answering").
"""

from __future__ import annotations

import base64
import math
from typing import Any
from urllib.parse import urlparse, urlunparse

#: Seconds to wait for a Chroma server to accept a connection (within `timeout`).
CONNECT_TIMEOUT = 10.0
#: A longer timeout is no timeout in practice, and past ~1e10 s httpx's clock overflows.
MAX_TIMEOUT = 1e6


def make_client(path: str | None = None, url: str | None = None,
                timeout: float | None = None) -> Any:
    """An embedded `PersistentClient` at `path`, or an `HttpClient` for a `chroma run` server.

    `timeout`: seconds each request to the server may wait (None: forever, chromadb's own
    default). chromadb's HttpClient builds its httpx session with `timeout=None` hard-coded, so
    a server that accepts connections and never answers (a stopped process, a frozen machine:
    the kernel still accepts) hung every call. The client's session gets `timeout` (`bounded`);
    the requests its constructor makes are bounded by the bank, which opens the client within
    `timeout` (`index_outage.Opening`). A timed-out request is an httpx `TransportError`
    like a refused one: `index_outage` makes it a clear error, and a search answers by keyword."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=True)
    if url:
        parsed = checked_url(url)
        return bounded(chromadb.HttpClient(host=server_url(url), port=parsed.port or 8000,
                                           ssl=parsed.scheme == "https",
                                           headers=basic_auth(url), settings=chroma_settings),
                       timeout)
    if path is None:
        return chromadb.EphemeralClient(settings=chroma_settings)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


def server_url(url: str) -> str:
    """`url` (``chroma_url``) as the whole base URL chromadb's HttpClient takes for `host`.

    Why whole: handed a bare host name and a port, chromadb writes ``http://{host}:{port}``,
    so an IPv6 address lost its brackets (``http://::1:8000``, which nothing can reach), and a
    path (a server behind a proxy, ``https://example.org/chroma``) and a user and password
    were dropped. Given a URL, chromadb keeps its host, port and path as written. The user
    and password are left out (`basic_auth` sends them as a header: in the URL, httpx wrote
    them into every request's log line). No scheme means http; no port, chromadb's 8000 for
    http (443 for https)."""
    parsed = checked_url(url)
    scheme = parsed.scheme.lower()
    netloc = parsed.netloc.rsplit("@", 1)[-1] or "127.0.0.1"
    if parsed.port is None:
        netloc = f"{netloc}:{443 if scheme == 'https' else 8000}"
    return urlunparse((scheme, netloc, parsed.path.rstrip("/"), "", "", ""))


def checked_url(url: str) -> Any:
    """`url` (``chroma_url``) parsed; a scheme other than http or https, or a port that cannot
    be, is one clear error naming the setting (exit 2 in the CLI).

    Why: a misspelt scheme (``htps://``, ``ftp://``) was taken as plain http, so a
    ``htps://user:password@host`` URL sent the password in clear text (hunt-chroma #6), and
    an impossible port (``:99999``, ``:80a``) was urllib's bare ValueError naming neither the
    URL nor the setting (hunt-chroma #7, session 29)."""
    from skillbank.errors import InvalidInputError
    from skillbank.index_outage import without_credentials

    parsed = urlparse(url if "://" in url else f"http://{url}")
    fix = "fix --chroma-url, SKILLBANK_CHROMA_URL or chroma_url in <root>/skillbank.toml"
    if parsed.scheme.lower() not in {"http", "https"}:
        raise InvalidInputError(f"chroma_url must start with http:// or https://, not "
                                f"{parsed.scheme}:// ({without_credentials(url)}); {fix}")
    try:
        parsed.port
    except ValueError as exc:
        raise InvalidInputError(f"chroma_url has an impossible port ({exc}: "
                                f"{without_credentials(url)}); {fix}") from None
    return parsed


def basic_auth(url: str) -> dict[str, str] | None:
    """The ``Authorization`` header for the user and password in `url` (None without them),
    as a Chroma server behind basic auth expects."""
    parsed = urlparse(url if "://" in url else f"http://{url}")
    if parsed.username is None and parsed.password is None:
        return None
    from urllib.parse import unquote

    pair = f"{unquote(parsed.username or '')}:{unquote(parsed.password or '')}".encode()
    return {"Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}


def bounded(client: Any, seconds: float | None) -> Any:
    """`client` (a chromadb client of a server), each of its requests waiting at most `seconds`.

    Every client needs it: a client for another tenant or database (``index_ownership.place``)
    has an httpx session of its own, again without a timeout. A client without one (embedded)
    is returned as it is."""
    limit = timeout_of(seconds)
    session = getattr(getattr(client, "_server", None), "_session", None)
    if limit is not None and session is not None:  # chromadb internals: best effort
        session.timeout = httpx_timeout(limit)
    return client


def timeout_of(seconds: Any) -> float | None:
    """`seconds` as a timeout: None (wait forever) for None, 0, a negative or an infinite
    value; at most MAX_TIMEOUT. A value that is not a number is a clear error."""
    if seconds is None:
        return None
    try:
        if isinstance(seconds, bool):  # `chroma_timeout = true` in a TOML file: not seconds
            raise TypeError(seconds)
        value = float(seconds)
    except (TypeError, ValueError):
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"chroma_timeout must be a number of seconds, not {seconds!r}") \
            from None
    if math.isnan(value):
        from skillbank.errors import InvalidInputError

        raise InvalidInputError("chroma_timeout must be a number of seconds, not NaN")
    if value <= 0 or math.isinf(value):
        return None
    return min(value, MAX_TIMEOUT)


def httpx_timeout(seconds: float) -> Any:
    """httpx's timeout for `seconds`, connecting within CONNECT_TIMEOUT of them."""
    import httpx

    return httpx.Timeout(seconds, connect=min(seconds, CONNECT_TIMEOUT))


class ServerOpener:
    """Opens a bank's client on the Chroma server at `chroma_url`, and its placement (the
    deployment's database), within `chroma_timeout`; one open at a time, however many callers
    (`index_outage.Opening`)."""

    def __init__(self, settings: Any, own_client: bool, store: Any = None) -> None:
        self.settings = settings
        self.own_client = own_client
        self.store = store  # team mode: the PostgreSQL database the index belongs to
        self._opening: Any = None

    def open(self, client: Any = None) -> tuple[Any, Any]:
        """(client, placement): `client` (one the caller made) or a new one, placed, each of
        its requests bounded; a server that does not answer is one clear error naming it."""
        from skillbank.index_outage import Opening, server_client
        from skillbank.index_ownership import place

        url, timeout = self.settings.chroma_url, timeout_of(self.settings.chroma_timeout)
        assert url

        def open_(url: str) -> tuple[Any, Any]:
            made = client or make_client(url=url, timeout=timeout)
            # A Chroma others reach: this deployment's own database (issue 24).
            placement = place(self.settings, made, own_client=self.own_client,
                              store=self.store)
            bounded(placement.client, timeout)
            return made, placement

        opening = self._opening
        if opening is None or opening.failed:  # one open at a time, however many callers
            opening = self._opening = Opening(lambda: server_client(url, open_))
        opened = opening.result(url, timeout)
        self._opening = None
        return opened
