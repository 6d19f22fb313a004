"""Settings checked when they are read: a number in its range, a key the bank knows.

Users met it (hunt-ops #4): `skillbank.toml` was checked for types only. `retire_harmful_margin
= -1` retired a rule on its first vote, even a helpful one; `merge_threshold = 5` meant nothing
ever merged; `nan`, a negative timeout, a share of 7 were all taken without a word; a misspelt
key (`max_pending_guidlines = 0`) was ignored silently; `model_dir = 5` was a bare TypeError and
a bad number exited 1. Now each is one `InvalidInputError` (exit 2) naming the setting, where it
was read and what it may be, as `[skill_trust]` already does for a typo in a level.
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Iterable

from skillbank.errors import InvalidInputError

#: Top-level names of `<root>/skillbank.toml` that are not `Settings` fields: what other parts
#: of the bank read from the same file (`remember`, skill trust, the team worker's OIDC).
OTHER_KEYS = frozenset({"include_bundled", "team", "skill_trust", "skill_policy", "skill_scan",
                        "oidc"})

#: Allowed ranges: (lowest, highest, what to call it); None is unbounded on that side.
_SHARE = (0.0, 1.0, "a number from 0 to 1")
RANGES: dict[str, tuple[float | None, float | None, str]] = {
    "min_score": _SHARE,
    "merge_threshold": _SHARE,
    "related_threshold": _SHARE,
    "prune_max_help_rate": _SHARE,
    # Above 1 no two runs are that alike: folding off, as the code has always read it
    # (review: a root with 1.01 stopped opening once values were range-checked).
    "duplicate_threshold": (0.0, None, "a number of at least 0 (above 1: never fold)"),
    "retire_harmful_margin": (1, None, "a whole number of at least 1"),
    "prune_min_uses": (1, None, "a whole number of at least 1"),
    "max_pending_guidelines": (0, None, "a whole number of at least 0 (0: no cap)"),
    "max_pending_experiences": (0, None, "a whole number of at least 0 (0: no cap)"),
    "max_skill_roots_depth": (0, None, "a whole number of at least 0"),
    "max_scan_dirs": (1, None, "a whole number of at least 1"),
    "chroma_timeout": (0.0, None, "a number of seconds of at least 0 (0 or inf: no limit)"),
    "database_statement_timeout": (0.0, None,
                                   "a number of seconds of at least 0 (0 or inf: no limit)"),
    "skills_follow_seconds": (0.0, None, "a number of seconds of at least 0"),
    "thread_pickup_seconds": (0.0, None,
                              "a number of seconds of at least 0 (0: never; inf: any age)"),
    "skills_recheck_seconds": (0.0, None, "a number of seconds of at least 0 (0: never)"),
    "guidelines_recheck_seconds": (0.0, None,
                                   "a number of seconds of at least 0 (0: at every search)"),
}
#: Settings whose value may be infinite (no limit).
_MAY_BE_INFINITE = frozenset({"chroma_timeout", "database_statement_timeout",
                              "thread_pickup_seconds"})
#: Settings that are a folder.
_FOLDERS = frozenset({"model_dir", "root"})


def check_value(name: str, value: Any, where: str) -> None:
    """InvalidInputError when `value` is out of `name`'s range (see RANGES); `where` says where
    it was read (the file, the environment variable, the argument)."""
    if name in _FOLDERS and value is not None and not isinstance(value, (str, bytes)) \
            and not hasattr(value, "__fspath__"):
        raise InvalidInputError(f"setting {name} ({where}) must be a folder path, not {value!r}")
    allowed = RANGES.get(name)
    if allowed is None or value is None or isinstance(value, bool):
        return
    low, high, what = allowed
    if not isinstance(value, (int, float)):
        raise InvalidInputError(f"setting {name} ({where}) must be {what}, not {value!r}")
    infinite = math.isinf(value) and name in _MAY_BE_INFINITE and value > 0
    if math.isnan(value) or (math.isinf(value) and not infinite) \
            or (low is not None and value < low) or (high is not None and value > high):
        raise InvalidInputError(f"setting {name} ({where}) must be {what}, not {value!r}")


def check_keys(keys: Iterable[str], known: Iterable[str], where: str) -> None:
    """InvalidInputError naming the first key of `where` that no part of the bank reads, with
    the nearest known name: a misspelt setting did nothing, silently."""
    names = sorted(set(known) | OTHER_KEYS)
    for key in keys:
        if key in names:
            continue
        near = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise InvalidInputError(f"unknown setting {key!r} in {where}{hint} (known: "
                                f"{', '.join(n for n in names if n != 'root')})")
