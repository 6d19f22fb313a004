"""A Chroma server that does not answer: a clear error, not a transport exception.

On a server (`chroma_url`) every index call is a network call; when the server is down,
chromadb's HttpClient raises httpx's `ConnectError` and a face could only say "Error executing
tool". Index methods that must reach the server are wrapped with `clear_outage`, which turns a
transport failure into `ChromaUnavailableError` (a `SkillbankError`, so every face shows its
message). Searches do better still: they answer by keyword (`HybridIndex._dense_or_none`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from skillbank.errors import SkillbankError

F = TypeVar("F", bound=Callable[..., Any])


class ChromaUnavailableError(SkillbankError):
    """The Chroma server does not answer; the message says what was not done and what to check."""


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
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except Exception as exc:
                if not getattr(self, "shared", False) or not is_outage(exc):
                    raise
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise ChromaUnavailableError(
                    f"the Chroma server does not answer ({first}), so {what} "
                    f"({getattr(self, 'name', 'index')}); try again when it is back, and check "
                    "that it is running and that chroma_url (SKILLBANK_CHROMA_URL) is right"
                ) from None
        return wrapper  # type: ignore[return-value]

    return decorate
