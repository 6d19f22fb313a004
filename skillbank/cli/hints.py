"""Messages in CLI terms.

The memories write their errors for whoever calls the facade, and some of them name a Python
call as the fix ("use retire()", "find ids with bank.guidelines.search(task) or list()"). A
person at a shell needs the command instead; this table says which. tests/test_cli_messages.py
triggers each of these errors through the CLI and fails if a Python call leaks through, so a
reworded message shows up there.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

#: (pattern, replacement): applied in order to every message the CLI prints.
def copy_command(name: str, new_name: str | None = None) -> str:
    """`skillbank skills copy NAME [--as NEW]` as a shell takes it: the name quoted ("Excel
    Automation"), and after `--` when it starts with '-', which the CLI would take for an
    option ("No such option: -2" for the advice given for `-2chat-automation`; hunt-clicorpus
    #3, session 36)."""
    as_new = f" --as {shlex.quote(new_name)}" if new_name is not None else ""
    if name.startswith("-"):
        return f"skillbank skills copy{as_new} -- {shlex.quote(name)}"
    return f"skillbank skills copy {shlex.quote(name)}{as_new}"


def copy_advice(name: str) -> str:
    """The one way to make a read-only skill the bank's own, named by `skills new`, `skills
    update` and `skills copy` itself (`copy_command`)."""
    from skillbank.cli.skill_copy import suggested_name
    from skillbank.memories.skills.skill_file import validate_name

    own = None
    if validate_name(name):  # not a name the bank's own library can hold
        own = suggested_name(name)
    return (f"make it the bank's own with `{copy_command(name, own)}`, then change it with "
            f"`skillbank skills update {shlex.quote(own or name)}`")


HINTS: tuple[tuple[re.Pattern[str], Any], ...] = tuple((re.compile(p), r) for p, r in (
    (r"find ids with bank\.guidelines\.list\([^)]*\) or search\(\)",
     "find ids with `skillbank guidelines list` or `skillbank guidelines search TASK`"),
    (r"find ids with bank\.guidelines\.search\(task\) or list\(\)",
     "find ids with `skillbank guidelines search TASK` or `skillbank guidelines list`"),
    # Every CLI command syncs what it reads first: a file added by hand is already seen.
    (r",? or run sync\(\) if the file was just added by hand", ""),
    (r"run sync\(\)", "run `skillbank reindex`"),
    (r"bank\.guidelines\.problems\(\) names every file",
     "`skillbank guidelines list` names every file"),
    (r"use retire\(\) for an active one", "use `skillbank guidelines retire ID` for an active one"),
    (r"waits for approve\(\) or reject\(\)",
     "waits for `skillbank guidelines approve ID` or `skillbank guidelines reject ID`"),
    (r"(skill '([^']+)' lives in read-only root [^;]+); copy it into the bank's own library "
     r"to change it",
     lambda m: f"{m[1]}; " + copy_advice(m[2])),
    (r"(skill '([^']+)' already exists); update it instead",
     r"\1; change it with `skillbank skills update \2`"),
    (r"; drafts\(\) lists them", "; `skillbank skills drafts` lists them"),
    (r"(skill '([^']+)' has no version '[^']*'); history\(\) lists them",
     r"\1; `skillbank skills history \2` lists them"),
    (r"as listed by history\(\)", "as listed by `skillbank skills history NAME`"),
    (r"forget it by id instead", "forget it with `skillbank forget ID` instead"),
    (r"run `skillbank reindex` to rebuild it",
     "run `skillbank reindex` to rebuild every index with the embedding you use now"),
))

#: What a Python call looks like in a message (`retire()`, `bank.skills.load(name)`).
PYTHON_CALL = re.compile(r"\b[a-z_][a-z_.]*\([^()]*\)")


def cli_terms(message: str) -> str:
    """`message` with the Python calls the facade names replaced by the CLI commands."""
    for pattern, replacement in HINTS:
        message = pattern.sub(replacement, message)
    return message
