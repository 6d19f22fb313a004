"""A Chroma server that does not answer: a clear error, not a transport exception.

On a server (`chroma_url`) every index call is a network call; when the server is down,
chromadb's HttpClient raises httpx's `ConnectError` and a face could only say "Error executing
tool". Index methods that must reach the server are wrapped with `clear_outage`, which turns a
transport failure into `ChromaUnavailableError` (a `SkillbankError`, so every face shows its
message). Searches do better still: they answer by keyword (`dense_unless_down`).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from typing import Any, Callable, TypeVar

from skillbank.errors import SkillbankError

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")
log = logging.getLogger("skillbank.index")
#: How `dense_error` begins while a Chroma server does not answer.
CHROMA_DOWN = "the Chroma server does not answer"
#: How `dense_error` begins after the server lost an index's collection (`index_gone`): the
#: server answers, so not CHROMA_DOWN; the search that met it answered by keyword.
INDEX_GONE = "the Chroma collection "
#: How often a memory whose shared index missed writes tries to catch up (guidelines and
#: experiences alike).
INDEX_RETRY_SECONDS = 2.0


class ChromaUnavailableError(SkillbankError):
    """The Chroma server does not answer; the message says what was not done and what to check."""


class IndexUnreached(ChromaUnavailableError):
    """A Chroma request of an index that has not reached its server (`index_mirror`): an
    outage like a transport error, which `clear_outage` words the same way."""


def keyword_only(note: str | None) -> bool:
    """Whether an index's `dense_error` says it answers by keyword because of its Chroma server
    (down, or its collection gone), not because of the embedding model."""
    return (note or "").startswith((CHROMA_DOWN, INDEX_GONE))


def outage_reason(exc: BaseException) -> str:
    """The first line of why `exc` did not reach the server: the transport error under a
    `ChromaUnavailableError` already worded, not that wording again. Experience outage notes
    said "the Chroma server does not answer (at ...: the Chroma server does not answer (...),
    so ...), so ..." (hunt-chromahttp #3, session 34)."""
    shown = exc
    while isinstance(shown, ChromaUnavailableError):
        under = shown.__cause__ or shown.__context__
        if under is None or not (is_outage(under) or isinstance(under, ChromaUnavailableError)):
            break
        shown = under
    return (str(shown).strip().splitlines() or [type(shown).__name__])[0]


def is_outage(exc: BaseException) -> bool:
    """Whether `exc` is a failure to reach a Chroma server (not a bad request)."""
    try:
        import httpx
    except ImportError:  # pragma: no cover - chromadb depends on httpx
        return False
    return isinstance(exc, httpx.TransportError)


def clear_outage(what: str) -> Callable[[F], F]:
    """Decorate an index method: on a server, an outage becomes `ChromaUnavailableError`."""

    def decorate(method: F) -> F:
        from skillbank.index_gone import reopen_when_gone

        method = reopen_when_gone(what)(method)  # a collection gone: reopened (hunt-chroma #1)

        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                if not getattr(self, "shared", False) or not (
                        is_outage(exc) or isinstance(exc, IndexUnreached)):
                    raise
                first = outage_reason(exc)
                raise ChromaUnavailableError(
                    f"the Chroma server does not answer ({first}), so {what} "
                    f"({getattr(self, 'name', 'index')}); try again when it is back, and check "
                    "that it is running and that chroma_url (SKILLBANK_CHROMA_URL) is right"
                ) from None
        return wrapper  # type: ignore[return-value]

    return decorate


def rebuilt(reports: dict[str, Any]) -> dict[str, Any]:
    """A reindex's sync `reports`, or ChromaUnavailableError when an index was not written.

    Why: a server that died after the skills were rebuilt turned the guideline and experience
    syncs' failures into warnings, and `skillbank reindex` exited 0 saying "86 added" of
    memories it had not written (hunt-chroma #4, session 29); one that died during the skills
    already failed (exit 1). Nothing is lost: the files are untouched."""
    for name, report in reports.items():
        for finding in getattr(report, "findings", None) or []:
            if finding.code in ("index-unavailable", "index-behind"):
                raise ChromaUnavailableError(
                    f"reindex did not rebuild the {name} index: {finding.message}; the files "
                    "are untouched: run `skillbank reindex` again " + (
                        "once the server answers" if finding.code == "index-unavailable"
                        else "when no other process is writing"))
    return reports


def is_timeout(exc: BaseException) -> bool:
    """Whether `exc` is a request to a Chroma server that timed out (a stopped or frozen
    server: it accepted the connection), not one refused at once."""
    try:
        import httpx
    except ImportError:  # pragma: no cover - chromadb depends on httpx
        return False
    return isinstance(exc, httpx.TimeoutException)


def dense_unless_down(dense: Callable[[], T], shared: bool, error: str | None,
                      on_outage: Callable[[BaseException], Any] | None = None
                      ) -> tuple[T | None, str | None]:
    """`dense()`, or None while a Chroma server does not answer (issue 24); with what the
    index's `dense_error` (now `error`) should say after it.

    The keyword side lives in this process (the mirror and BM25), so a search can still
    answer by keyword, saying so through `dense_error` and `Hits.dense_complete`, instead
    of failing every read while the server is down."""
    try:
        found = dense()
    except Exception as exc:
        if not shared or not (is_outage(exc) or isinstance(exc, ChromaUnavailableError)):
            raise
        if on_outage is not None:
            on_outage(exc)
        first = outage_reason(exc)
        if first.startswith(INDEX_GONE):  # the server answers: its own words, not "down"
            return None, first  # (hunt-chromahttp #2, session 34; index_gone logged it)
        if not (error or "").startswith(CHROMA_DOWN):
            log.warning("skillbank: the Chroma server does not answer (%s); searching by "
                        "keyword only until it does", first)
        return None, f"{CHROMA_DOWN} ({first}); searching by keyword only"
    return found, None if keyword_only(error) else error  # back


def server_client(url: str, make: Callable[[str], T]) -> T:
    """`make(url)` (chromadb's HttpClient, which asks the server at once), or one clear error
    naming the URL and what to fix when nobody answers there.

    chromadb turns a refused connection into a bare ValueError ("Could not connect to a Chroma
    server"), and a connect timeout into "Could not connect to tenant ... Are you sure it
    exists?": neither names the URL or the setting, so the CLI showed only that. A server
    that answers but is not Chroma is named too (`_not_chroma`)."""
    try:
        return make(url)
    except Exception as exc:
        seen: BaseException | None = exc
        while seen is not None and not is_outage(seen):
            seen = seen.__cause__ or seen.__context__
        if seen is None:
            wrong = _not_chroma(url, exc)
            if wrong is None:
                raise
            raise wrong from None
        first = (str(seen).strip().splitlines() or [type(seen).__name__])[0]
        raise _no_answer(url, first) from None


def _not_chroma(url: str, exc: BaseException) -> SkillbankError | None:
    """The clear error for a `chroma_url` that reached an HTTP server which did not answer as
    Chroma does, or None when `exc` is something else.

    A wrong port that is another web service, or Chroma under a wrong path
    (``http://host:8000/chroma``), made chromadb raise a bare ValueError holding the answer's
    body: the CLI and every MCP tool showed a whole HTML 404 page, or only "(trace ID:
    000...)" (hunt-chroma #2, session 24). chromadb keeps httpx's HTTPStatusError (or the
    JSON error of a page answered with 200) in the chain. A 502, 503 or 504 is a proxy whose
    Chroma does not answer: an outage, worded as one."""
    import json

    import httpx

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, httpx.HTTPStatusError):
            answer = (f"HTTP {seen.response.status_code} {seen.response.reason_phrase} for "
                      f"{seen.request.method} {seen.request.url.path}")
            if seen.response.status_code in (502, 503, 504):
                return _no_answer(url, answer)
            return _wrong_server(url, answer)
        if isinstance(seen, json.JSONDecodeError):
            return _wrong_server(url, "its answer is not JSON")
        seen = seen.__cause__ or seen.__context__
    return None


def _wrong_server(url: str, answer: str) -> SkillbankError:
    from skillbank.errors import InvalidInputError

    shown = without_credentials(url).rstrip("/")
    return InvalidInputError(
        f"the server at {shown} did not answer as a Chroma server ({answer}); fix chroma_url "
        "(--chroma-url, SKILLBANK_CHROMA_URL or chroma_url in <root>/skillbank.toml): the "
        "address `chroma run` listens on, with a path only where a proxy serves Chroma under "
        f"one (`curl {shown}/api/v2/heartbeat` answers there when it is right)")


class Opening:
    """One open of a server's client (and whatever opening asks of the server) on a thread of
    its own, which callers wait for at most a deadline each.

    chromadb's HttpClient asks the server several times while it is built (identity, tenant,
    database; `index_ownership.place` creates the deployment's database through a session of
    its own), all without a timeout, so a server that accepts connections and never answers
    hung the open for good. A caller waits `seconds` and gets ChromaUnavailableError; the
    thread goes on. Later callers do not start another thread nor wait again while it is
    still waiting (they fail at once), and take its client if it succeeds later: one thread
    at most per bank, however many callers."""

    def __init__(self, open_: Callable[[], Any]) -> None:
        self._box: dict[str, Any] = {}
        self._waited_out = False
        self._thread = threading.Thread(target=self._run, args=(open_,), daemon=True,
                                        name="skillbank-chroma-open")
        self._thread.start()

    def _run(self, open_: Callable[[], Any]) -> None:
        try:
            self._box["value"] = open_()
        except BaseException as exc:  # noqa: BLE001 - raised again in the callers' threads
            self._box["error"] = exc

    @property
    def failed(self) -> bool:
        return "error" in self._box

    def result(self, url: str, seconds: float | None) -> Any:
        """What the open returned, its error, or ChromaUnavailableError after `seconds`."""
        if not (self._waited_out and self._thread.is_alive()):
            self._thread.join(seconds)
        if self._thread.is_alive():
            self._waited_out = True
            raise _no_answer(url, f"nothing within {seconds:g} s")
        if "error" in self._box:
            raise self._box["error"]
        return self._box["value"]


def without_credentials(url: str) -> str:
    """`url` as it may be shown (in an error, on /readyz): without a user and password."""
    from urllib.parse import urlsplit

    bare = "://" not in url  # "user:pw@host:8000": http:// (chroma_client.make_client)
    parts = urlsplit(f"http://{url}" if bare else url)
    if "@" not in parts.netloc:
        return url
    shown = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
    return shown[len("http://"):] if bare else shown


#: A URL inside free text (git's stderr, an error message): a scheme, then no space or quote.
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def text_without_credentials(text: str) -> str:
    """`text` with every URL in it shown as `without_credentials` shows one. git's own
    complaints echo the remote's URL, and a skills repository given as
    `https://user:TOKEN@forge/...` put the token in errors a reader or an untrusted client saw
    (team hunt, session 19)."""
    return _URL_IN_TEXT.sub(lambda found: without_credentials(found.group(0)), text)


def holds_password(url: str) -> bool:
    """Whether `url` carries a secret: a password (`https://user:TOKEN@host/...`), or any user
    part of an http(s) URL, where forges take a token alone as the user
    (`https://TOKEN@github.com/...`: review, session 19, found it kept 0644). A file recording
    it must be readable by its owner only. An ssh user (`ssh://git@host/...`) is no secret."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        return parts.password is not None or (
            parts.scheme in ("http", "https") and bool(parts.username))
    except ValueError:
        return False


def _no_answer(url: str, why: str) -> ChromaUnavailableError:
    shown = without_credentials(url)
    return ChromaUnavailableError(
        f"the Chroma server at {shown} does not answer ({why}); start it (chroma run "
        "--path DIR --port PORT) or fix chroma_url (--chroma-url, SKILLBANK_CHROMA_URL or "
        "chroma_url in <root>/skillbank.toml)")
