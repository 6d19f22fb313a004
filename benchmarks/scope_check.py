"""What the per-call scope check costs (issue 22: < 1 ms p50 per call).

Every read and write of the memories asks `skillbank.scope` who is calling, which namespaces
that caller reads or writes, and (for ids) whether the item is inside that scope. This measures
the price of that, in one run, on one bank:

* baseline — the same calls with the scope machinery short-circuited (the caller's scope is a
  constant and every namespace check answers at once), i.e. what a call cost before scopes;
* scoped   — the calls through `bank.scoped(scope)`, a contributor reading its own namespace
  (the same filter as the baseline): a view, `scope.using` on every call, the real checks;
* client   — the same scoped calls through a client of the bank's owner (the scope travels in
  the call's envelope and is decoded and checked by the owner), beside its own baseline.

Per call kind: the median CPU time of this process and wall time of each arm, and the median of
the paired differences (the two arms alternate call by call). CPU time is the honest figure on a
loaded machine (what the call costs, not how long it waited for a core); wall time is printed
beside it. Hash embedding (no model), so the figures are the memory's own work, not the
model's. The machine load is printed.

    nice -n 10 .venv/bin/python benchmarks/scope_check.py [--records 2000] [--rounds 200]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillbank import Skillbank, scope as scopes  # noqa: E402
from skillbank.embeddings import HashEmbedding  # noqa: E402
from skillbank.scope import Scope  # noqa: E402

WORDS = ("invoice migration backup release rollback cache deploy audit ledger queue schema "
         "index replica shard token webhook cron report billing refund").split()


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


@contextlib.contextmanager
def without_scope_checks() -> Iterator[None]:
    """The baseline: the caller is a constant admin scope and namespace checks answer at once.

    Patches the functions the memories call; what is left is the call as it was before scopes.
    """
    constant = scopes.default_scope("alice")  # the bank's namespace, as before scopes
    saved = (scopes.caller, Scope.can_read, Scope.can_review, Scope.read_namespaces,
             Scope.write_namespace)
    scopes.caller = lambda default_namespace="default", trusted=True: constant  # type: ignore
    Scope.can_read = lambda self, namespace: True  # type: ignore[method-assign]
    Scope.can_review = lambda self, namespace: True  # type: ignore[method-assign]
    Scope.read_namespaces = lambda self, namespace=None: (  # type: ignore[method-assign]
        (scopes.ALL,) if namespace == scopes.ALL else (namespace or self.namespace,))
    Scope.write_namespace = lambda self, namespace=None: namespace or "alice"  # type: ignore
    # `scopes.covers` stays: it is the namespace filter every list applied before scopes too.
    try:
        yield
    finally:
        (scopes.caller, Scope.can_read, Scope.can_review, Scope.read_namespaces,
         Scope.write_namespace) = saved


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """One call: (wall ms, CPU ms of this process). CPU time is what the call itself costs
    here, whatever else the machine runs; the wall time is what a caller waits."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def calls(view: Any, ids: list[str], gids: list[str]) -> dict[str, Callable[[], Any]]:
    counter = iter(range(10**9))

    def pick(items: list[str]) -> str:
        return items[next(counter) % len(items)]

    return {
        "experiences.get (id)": lambda: view.experiences.get(pick(ids)),
        "guidelines.get (id)": lambda: view.guidelines.get(pick(gids)),
        "experiences.recall": lambda: view.experiences.recall("rollback the billing schema",
                                                              count_use=False),
        "guidelines.search": lambda: view.guidelines.search("rollback the billing schema"),
        "experiences.list": lambda: view.experiences.list(limit=20),
        "context_for": lambda: view.context_for("rollback the billing schema"),
    }


def measure(bank: Any, scope: Scope, ids: list[str], gids: list[str], rounds: int,
            label: str) -> float:
    """Both arms call by call (so load changes hit both alike); returns the largest median
    paired CPU difference in ms."""
    scoped = bank.scoped(scope)
    print(f"\n{label}: ms per call, {rounds} paired rounds each ({load()})")
    print(f"{'call':<22}{'CPU base p50':>13}{'CPU scoped':>11}{'Δ CPU p50':>10}"
          f"{'wall base p50':>14}{'wall scoped':>12}{'Δ wall p50':>11}")
    worst = 0.0
    for name, call in calls(scoped, ids, gids).items():
        call()  # warm caches
        base: list[tuple[float, float]] = []
        real: list[tuple[float, float]] = []
        for _ in range(rounds):
            with without_scope_checks():
                base.append(timed(call))
            real.append(timed(call))
        cpu_delta = statistics.median(r[1] - b[1] for b, r in zip(base, real))
        wall_delta = statistics.median(r[0] - b[0] for b, r in zip(base, real))
        worst = max(worst, cpu_delta)
        print(f"{name:<22}{statistics.median(b[1] for b in base):>13.3f}"
              f"{statistics.median(r[1] for r in real):>11.3f}{cpu_delta:>+10.3f}"
              f"{statistics.median(b[0] for b in base):>14.3f}"
              f"{statistics.median(r[0] for r in real):>12.3f}{wall_delta:>+11.3f}")
    print(f"largest median paired CPU difference: {worst:+.3f} ms "
          f"({'under' if worst < 1 else 'OVER'} 1 ms)")
    return worst


def micro(rounds: int = 20000) -> None:
    """The checks alone, no memory work: what each call adds at least."""
    scope = Scope(principal="alice", namespace="alice", reads=("team",), role="contributor")
    with scopes.using(scope):
        steps = {
            "scope.caller()": lambda: scopes.caller("default"),
            "read_namespaces(None)": lambda: scope.read_namespaces(None),
            "write_namespace(None)": lambda: scope.write_namespace(None),
            "can_read(ns)": lambda: scope.can_read("team"),
            "Scope.from_wire(...)": lambda: Scope.from_wire(scope.to_wire()),
        }
        print(f"\nthe checks alone: µs per call, {rounds} rounds ({load()})")
        for name, step in steps.items():
            started = time.perf_counter()
            for _ in range(rounds):
                step()
            print(f"  {name:<24}{(time.perf_counter() - started) / rounds * 1e6:>8.2f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    print(f"scope check benchmark: {args.records} experiences, {args.records // 10} guidelines "
          f"over 3 namespaces; {load()}")
    micro()
    with tempfile.TemporaryDirectory() as tmp:
        bank = Skillbank.open(Path(tmp) / "root", embedding_function=HashEmbedding(),
                              include_bundled=False)
        try:
            ids: list[str] = []
            gids: list[str] = []
            for n, ns in enumerate(("alice", "team", "bob")):
                records = [{"task": " ".join(WORDS[(i * 7 + j * 3 + n) % len(WORDS)]
                                             for j in range(6)) + f" #{i}",
                            "outcome": "success", "namespace": ns}
                           for i in range(args.records // 3)]
                got = bank.experiences.record_many(records)
                if ns == "alice":
                    ids = got
                for i in range(args.records // 30):
                    entry = bank.guidelines.add(
                        f"Always {WORDS[i % len(WORDS)]} the {WORDS[(i * 3 + n) % len(WORDS)]} "
                        f"before the {WORDS[(i * 5 + 1) % len(WORDS)]} number {i}.",
                        namespace=ns)
                    if ns == "alice" and entry.guideline_id:
                        gids.append(entry.guideline_id)
            # The same filter in both arms (alice's namespace, as the bank's namespace was
            # before scopes): the difference is the checks, not what is read.
            scope = Scope(principal="alice", namespace="alice", role="contributor",
                          face="benchmark")
            measure(bank, scope, ids, gids, args.rounds, "in process (bank.scoped)")
            client = Skillbank.open(Path(tmp) / "root", embedding_function=HashEmbedding(),
                                    include_bundled=False)
            try:
                # The owner serves from this process too, so the baseline switches the checks
                # off on both sides; the scoped arm adds the envelope and the owner's checks.
                measure(client, scope, ids, gids, args.rounds,
                        "client of the owner (scope in the envelope; checks run in the owner)")
            finally:
                client.close()
        finally:
            bank.close()


if __name__ == "__main__":
    main()
