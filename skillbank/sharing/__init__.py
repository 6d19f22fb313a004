"""One memory root, many local processes: the first to open an embedded root owns it.

The owner keeps Chroma and the embedding model in its own memory (embedded Chroma cannot be
written by two processes at once) and serves the facade to every later process over a private
Unix socket; those get a `BankClient` with the same public API. See `owner` and `client`.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any, Callable

from skillbank.sharing import endpoint

if TYPE_CHECKING:
    from skillbank.bank import Skillbank
    from skillbank.settings import Settings
    from skillbank.sharing.client import BankClient


def owner_lock(root: Any) -> Any:
    """The root's owner lock (not yet acquired)."""
    from skillbank.locks import owner_lock as lock

    return lock(root)


def open_shared(settings: "Settings", become_owner: Callable[[Any], "Skillbank"], *,
                take_over: Callable[[Any], "Skillbank"] | None = None,
                sync: bool = True, connect_timeout: float = 30.0,
                distiller: Any = None, asked: dict[str, Any] | None = None,
                ) -> "Skillbank | BankClient":
    """The root's owner bank if no process owns it yet, else a client of the process that does.

    `become_owner(lock)` opens the bank in this process given the acquired owner lock (it starts
    serving the other processes); `take_over(lock)` (default: the same) is what a client calls
    when the owner goes away. `sync` is what a client does when it takes the root over; an
    owner returned here is synced by the caller. `asked` is what this process asked the root to
    serve (`served.request`): a client is told where the owner serves something else.
    """
    from skillbank.locks import try_owner_lock
    from skillbank.sharing.client import BankClient

    root = settings.root
    from skillbank.fsutil import make_root

    make_root(root)  # a new root is private (0700), as the bank makes it

    def try_lock() -> Any:
        lock = try_owner_lock(root)
        if lock is not None:  # named while it opens, till it publishes its endpoint
            with contextlib.suppress(OSError):
                endpoint.write_holder(root, os.getpid(), "opening")
        return lock

    def let_go(lock: Any) -> None:
        """An open that failed: its note goes before the lock (a later holder is not named
        after it, review 2 of session 33)."""
        endpoint.remove_holder(root, os.getpid())
        lock.release()

    lock = try_lock()
    if lock is None:
        return BankClient(settings, become_owner=take_over or become_owner, try_lock=try_lock,
                          let_go=let_go,
                          sync=sync, connect_timeout=connect_timeout, distiller=distiller,
                          asked=asked).connect()
    try:
        return become_owner(lock)  # the caller syncs it (Skillbank.open)
    except BaseException:
        let_go(lock)
        raise
