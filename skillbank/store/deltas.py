"""A later turn of a conversation as a delta on the version it extends: the `update` event.

Users met it (agents hunt, session 18): each turn of one LangChain thread appended the whole
merged record again as an `add` event, so a 250-turn conversation (about 150 KiB of text)
wrote 15 MiB of journal, and every turn past the 500-step cap still appended about 150 KiB.
A later turn now appends what changed, relative to the version it read:

    {"op": "update", "id": "exp-…", "base": "<location of the version it extends>",
     "steps": [[0, 12], {...a new step...}],   the record's steps now: [a, b] stands for the
                                               base's steps a..b-1, an object is a step as is
     "set": {"outcome": "success", ...}}       the other fields whose value changed, whole

Either key may be absent (nothing of that kind changed). A version is read by following `base`
back to a full `add` and folding the updates forward (`resolve`), so reads stay one seek per
link of a bounded chain. The writer (`make_update`) writes the full record instead, as an
`add` flagged `"update": true` as before, when the chain holds `MAX_DEPTH` updates already, or
when the updates since the last full `add` would outweigh it: bytes stay linear in the
conversation (each full copy is paid for by as many bytes of updates) and a read never walks
far. A version's digest chains the digests of its lines (`chain_digest`), so a base rewritten
in place (a forgotten lesson dropped from it) changes every later version's digest too, and
the index embeds the record again instead of keeping the forgotten text.

Both columns read and write this format (`skillbank.store.files.experiences`,
`skillbank.store.postgres.experiences`); the memory's replay folds it the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

#: The op of a delta event.
UPDATE = "update"
#: Updates in a row before the writer stores the whole record again (a read's longest walk).
MAX_DEPTH = 64
#: A walk longer than this is a damaged journal (a hand-made loop), not a chain.
_MAX_WALK = 4 * MAX_DEPTH

#: (event, its line's bytes, its line's digest) at a location, or None.
Reader = Callable[[str], "tuple[dict[str, Any], int, str] | None"]


@dataclass
class Version:
    """One version of a record as the journal holds it, with what the writer needs to decide
    whether the next turn may be another update."""

    record: dict[str, Any]
    loc: str
    digest: str  # the version's digest: the line's for an add, chained for an update
    depth: int = 0  # updates since the full add
    chain_bytes: int = 0  # their bytes
    root_bytes: int = 0  # the full add's bytes


def line_bytes(event: dict[str, Any]) -> int:
    """The bytes of an event's journal line (compact JSON, as both columns write it)."""
    return len(json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def chain_digest(base: str, own: str) -> str:
    """The digest of an update's version: its base version's digest and its own line's."""
    from skillbank.store.files.experiences import line_digest

    return line_digest(f"{base}+{own}")


def updated_id(event: Any) -> str | None:
    """The id an `update` event is about, else None."""
    if isinstance(event, dict) and event.get("op") == UPDATE and isinstance(event.get("id"), str):
        return event["id"]
    return None


def fold(record: dict[str, Any], event: dict[str, Any]) -> dict[str, Any] | None:
    """The record `event` makes of `record` (its base version); None when it cannot apply."""
    out = dict(record)
    changes = event.get("set")
    if changes is not None:
        if not isinstance(changes, dict) or changes.get("id", record.get("id")) != record.get("id"):
            return None
        out.update(changes)
    steps = event.get("steps")
    if steps is not None:
        base = record.get("steps") or []
        if not isinstance(steps, list) or not isinstance(base, list):
            return None
        new: list[Any] = []
        for item in steps:
            if isinstance(item, dict):
                new.append(item)
            elif _span(item, len(base)):
                new.extend(base[item[0]:item[1]])
            else:
                return None
        out["steps"] = new
    return out


def _span(item: Any, size: int) -> bool:
    return isinstance(item, list) and len(item) == 2 and \
        all(isinstance(n, int) and not isinstance(n, bool) for n in item) and \
        0 <= item[0] <= item[1] <= size


def extend(version: Version, event: dict[str, Any], loc: str, size: int, digest: str
           ) -> Version | None:
    """The version an `update` event (at `loc`, `size` bytes, line digest `digest`) makes."""
    record = fold(version.record, event)
    if record is None:
        return None
    return Version(record, loc, chain_digest(version.digest, digest), version.depth + 1,
                   version.chain_bytes + size, version.root_bytes)


def resolve(record_id: str, loc: str, read: Reader) -> Version | None:
    """The version of `record_id` at `loc`: its `add`, or its `update` folded onto the version
    its `base` names, back to a full `add`. None when a link is missing or not this record's
    (erased, a stale location)."""
    chain: list[tuple[dict[str, Any], str, int, str]] = []
    seen: set[str] = set()
    while True:
        if loc in seen or len(chain) > _MAX_WALK:
            return None
        seen.add(loc)
        found = read(loc)
        if found is None:
            return None
        event, size, digest = found
        if event.get("op") == "add":
            record = event.get("record")
            if not isinstance(record, dict) or record.get("id") != record_id:
                return None
            version: Version | None = Version(record, loc, digest, root_bytes=size)
            break
        if updated_id(event) != record_id or not isinstance(event.get("base"), str):
            return None
        chain.append((event, loc, size, digest))
        loc = event["base"]
    for event, at, size, digest in reversed(chain):
        version = extend(version, event, at, size, digest)  # type: ignore[arg-type]
        if version is None:
            return None
    return version


def make_update(old: Version, new: dict[str, Any]) -> dict[str, Any] | None:
    """The `update` event that turns `old` into the record `new` (as an `add` would store it),
    or None when the whole record should be written instead: the chain is long enough, the
    updates since the last full copy would outweigh it, or a field went away."""
    if old.depth >= MAX_DEPTH or set(old.record) - set(new):
        return None
    event: dict[str, Any] = {"op": UPDATE, "id": new.get("id"), "base": old.loc}
    steps = step_delta(old.record.get("steps") or [], new.get("steps") or [])
    if steps is not None:
        event["steps"] = steps
    changes = {k: v for k, v in new.items()
               if k != "steps" and (k not in old.record or old.record[k] != v)}
    if changes:
        event["set"] = changes
    if fold(old.record, event) != new:
        return None  # never journal a delta that does not read back as the record
    if old.chain_bytes + line_bytes(event) > old.root_bytes:
        return None
    return event


def step_delta(old: list[Any], new: list[Any]) -> list[Any] | None:
    """`new` as spans of `old` and new steps (see the module docstring); None when equal.

    Greedy: continue the span being built while the steps agree, else start one at the place
    in `old` (of the first few holding this step) whose run is longest. Both merges a turn
    makes come out small: steps appended ([[0, n], …new]), and the 500-step fit dropping a
    middle run ([[0, 250], {marker}, [262, 500], …new])."""
    if old == new:
        return None
    keys_old = [_key(s) for s in old]
    keys_new = [_key(s) for s in new]
    where: dict[str, list[int]] = {}
    for position, key in enumerate(keys_old):
        where.setdefault(key, []).append(position)
    out: list[Any] = []
    i = 0
    while i < len(new):
        last = out[-1] if out and isinstance(out[-1], list) else None
        if last is not None and last[1] < len(old) and keys_old[last[1]] == keys_new[i]:
            last[1] += 1
            i += 1
            continue
        best, run = -1, 0
        for start in where.get(keys_new[i], [])[:8]:
            length = 0
            while start + length < len(old) and i + length < len(new) and \
                    keys_old[start + length] == keys_new[i + length]:
                length += 1
            if length > run:
                best, run = start, length
        if run:
            out.append([best, best + run])
            i += run
        else:
            out.append(new[i])
            i += 1
    return out


def _key(step: Any) -> str:
    return json.dumps(step, sort_keys=True, ensure_ascii=False)
