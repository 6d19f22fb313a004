"""`skillbank migrate` brings the outsiders' nets along with the counters they stand behind.

An outsider (a principal who may not change what he rates) counts once per item: his net, whose
sign alone is in the item's counters (`skillbank.outside_votes`). migrate copied the counters
and not the nets, so after a move an outsider who had sunk a record on the root voted on the
team from zero and counted a second time (session 19's note). Now each run imports what every
net moved since the last run (kept beside the counts in `sb_imports`, so a rerun adds nothing),
adds it to the team's net for that principal, and corrects the item's trusted counters: the
counts import already added the root's sign change, and the merged net must count once.
"""

from __future__ import annotations

from typing import Any, Iterable

from skillbank.outside_votes import MAX_OUTSIDE_NET, MAX_OUTSIDE_VOTERS, counted

_VOTES = ("FROM sb_usage_votes WHERE deployment = %s AND memory = %s AND item_id = %s")


def root_nets(logs: Iterable[tuple[str, Any]], forgot: set[str]) -> dict[str, int]:
    """`memory\\titem\\tprincipal` -> net, for every outsider of the root's usage logs."""
    nets: dict[str, int] = {}
    for memory, log in logs:
        for item_id, votes in log._outside.items():
            if item_id in forgot:
                continue  # what the deployment forgot: its votes are not brought back
            for principal, net in votes.items():
                nets[f"{memory}\t{item_id}\t{principal}"] = int(net)
    return nets


def sign_moves(now: dict[str, int], then: dict[str, int]) -> dict[tuple[str, str], tuple[int, int]]:
    """(memory, item) -> how the outsiders' sign changes since `then` moved its (helpful,
    harmful) counters on the root: what a shrinking count owes to them, not to a reset."""
    moves: dict[tuple[str, str], tuple[int, int]] = {}
    for key in set(now) | set(then):
        up, down = counted(int(then.get(key, 0)), int(now.get(key, 0)))
        if up or down:
            memory, item_id, _ = key.split("\t", 2)
            was = moves.get((memory, item_id), (0, 0))
            moves[(memory, item_id)] = (was[0] + up, was[1] + down)
    return moves


def import_nets(conn: Any, deployment: str, now: dict[str, int], then: dict[str, int]) -> int:
    """Merge what each net moved since `then` into the team's nets and counters, in the
    caller's transaction; returns how many nets changed."""
    changed = 0
    for key in sorted(set(now) | set(then)):
        root_then, root_now = int(then.get(key, 0)), int(now.get(key, 0))
        moved = root_now - root_then
        if not moved:
            continue
        memory, item_id, principal = key.split("\t", 2)
        team = {row[0]: int(row[1]) for row in
                conn.execute(f"SELECT principal, net {_VOTES}", (deployment, memory, item_id))}
        had_up, had_down = counted(root_then, root_now)  # what the counts import added
        if principal not in team and len(team) >= MAX_OUTSIDE_VOTERS:
            # Past the team's cap his vote is not counted: take back what the counts added.
            _correct(conn, deployment, memory, item_id, -had_up, -had_down)
            continue
        before = team.get(principal, 0)
        after = max(-MAX_OUTSIDE_NET, min(MAX_OUTSIDE_NET, before + moved))
        if after:
            conn.execute(
                "INSERT INTO sb_usage_votes (deployment, memory, item_id, principal, net) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (deployment, memory, item_id, "
                "principal) DO UPDATE SET net = excluded.net",
                (deployment, memory, item_id, principal, after))
        else:
            conn.execute(f"DELETE {_VOTES} AND principal = %s",
                         (deployment, memory, item_id, principal))
        # The counters must hold sign(after) once: the team's held sign(before), and the
        # counts import added the root's own sign change (root_then -> root_now).
        want_up, want_down = counted(before, after)
        _correct(conn, deployment, memory, item_id, want_up - had_up, want_down - had_down)
        changed += 1
    return changed


def _correct(conn: Any, deployment: str, memory: str, item_id: str, up: int, down: int) -> None:
    """Move an item's trusted (helpful, harmful) counters by (up, down), never below zero."""
    if up or down:
        conn.execute(
            "UPDATE sb_usage SET successes = greatest(0, successes + %s), "
            "failures = greatest(0, failures + %s) WHERE deployment = %s AND memory = %s "
            "AND item_id = %s AND trusted", (up, down, deployment, memory, item_id))
