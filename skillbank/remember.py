"""The memory root remembers the skill folders it indexes, in `<root>/skillbank.toml`.

Why: an index follows the folders a bank is opened with. Before #27, leaving `--skills-dir` out
once dropped that folder's skills from the index without a word, and the next run with it
embedded them all again (375 s for 1,750 skills). git and llm users expect a root to keep its
configuration, so the root keeps it: the first `--skills-dir DIR` records DIR as
`skill_roots = [...]` in `<root>/skillbank.toml` (the settings file every face already reads:
the MCP server and the adapters open the same folders), and later commands use the recorded
folders whether or not they repeat the flag. A new `--skills-dir` adds to them (nothing is
dropped by adding); only `skillbank config remove-skills-dir DIR` removes one, and says how many
skills leave the index.

Light: tomllib and pathlib only (this runs before any command that needs no bank).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib  # type: ignore[no-redef]

CONFIG = "skillbank.toml"
KEY = "skill_roots"
_LINE = re.compile(r"^\s*skill[_-]roots\s*=.*$", re.M)


def resolve_root(root: Path | None) -> Path:
    """The memory root a command uses: --root, SKILLBANK_ROOT, else ~/.skillbank."""
    from skillbank.settings import DEFAULT_ROOT

    return Path(root or os.environ.get("SKILLBANK_ROOT") or DEFAULT_ROOT).expanduser()


def _absolute(path: Path | str) -> str:
    return str(Path(path).expanduser().resolve())


def recorded(root: Path) -> list[str] | None:
    """The skill folders `<root>/skillbank.toml` names (None: no `skill_roots` there)."""
    path = root / CONFIG
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"{path} cannot be read ({exc}); fix or remove it") from None
    value = data.get(KEY, data.get("skill-roots"))
    if value is None:
        return None
    items = value.split(os.pathsep) if isinstance(value, str) else list(value)
    return [str(Path(p).expanduser()) for p in items if p]


def _toml_list(folders: Iterable[str]) -> str:
    quoted = ", ".join('"' + f.replace("\\", "\\\\").replace('"', '\\"') + '"' for f in folders)
    return f"{KEY} = [{quoted}]"


def write(root: Path, folders: list[str]) -> Path:
    """Record `folders` as the root's skill folders, keeping the rest of the file as written."""
    path = root / CONFIG
    line = _toml_list(folders)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ("# skillbank settings for this memory root (see skillbank.settings). The skill\n"
                "# folders are kept here so every command and face indexes the same ones;\n"
                "# `skillbank config` shows and changes them.\n")
    if _LINE.search(text):
        matches = _LINE.findall(text)
        if len(matches) != 1 or "]" not in matches[0]:
            from skillbank.errors import InvalidInputError

            raise InvalidInputError(f"{path}: skill_roots spans several lines; edit it by hand")
        text = _LINE.sub(lambda _m: line, text)
    else:
        # Before the first table, so the key stays top-level.
        head, sep, tail = text.partition("\n[")
        text = head.rstrip("\n") + "\n" + line + "\n" + (("\n[" + tail) if sep else "")
    root.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{CONFIG}.{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def effective(root: Path, given: list[Path]) -> tuple[list[str] | None, list[str]]:
    """(the folders to open the bank with, the given folders that were new and are now
    recorded). No record and nothing given: (None, []), the settings decide as before."""
    known = recorded(root)
    if not given:
        return known, []
    known = known or []
    seen = {_absolute(p) for p in known}
    new = []
    for folder in given:
        if _absolute(folder) not in seen:
            seen.add(_absolute(folder))
            new.append(_absolute(folder))
    if new:
        write(root, known + new)
    return known + new, new
