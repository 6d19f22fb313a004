"""The memory root remembers the skill folders it indexes, in `<root>/skillbank.toml`.

Why: an index follows the folders a bank is opened with. Before #27, leaving `--skills-dir` out
once dropped that folder's skills from the index without a word, and the next run with it
embedded them all again (375 s for 1,750 skills). git and llm users expect a root to keep its
configuration, so the root keeps it: the first `--skills-dir DIR` records DIR as
`skill_roots = [...]` in `<root>/skillbank.toml` (the settings file every face already reads:
the MCP server and the adapters open the same folders), and later commands use the recorded
folders whether or not they repeat the flag. A new `--skills-dir` adds to them (nothing is
dropped by adding); only `skillbank config remove-skills-dir DIR` removes one, and says how many
skills leave the index. The other serving option a root is opened with, `--no-bundled`, is kept
the same way (`include_bundled = false`; `skillbank config bundled on|off` changes it).
`--no-remember` makes a command's `--skills-dir`/`--no-bundled` a one-off: used, not recorded.

Two commands changing the file at once (two `--skills-dir` in two terminals) both land: each
change is made under an OS lock on `<root>/.skillbank.toml.lock`, on the file as it is then
(re-read), and written atomically (a temporary file renamed over it).

Light: tomllib and pathlib only (this runs before any command that needs no bank).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path
from typing import ContextManager, Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib  # type: ignore[no-redef]

CONFIG = "skillbank.toml"
KEY = "skill_roots"
BUNDLED = "include_bundled"
DEPLOYMENT = "deployment"
LOCK = ".skillbank.toml.lock"
_LINE = re.compile(r"^[ \t]*skill[_-]roots[ \t]*=.*$", re.M)
_TABLE = re.compile(r"^[ \t]*\[", re.M)  # a table header: [name] or [[name]]
_HEADER = ("# skillbank settings for this memory root (see skillbank.settings). The skill\n"
           "# folders are kept here so every command and face indexes the same ones;\n"
           "# `skillbank config` shows and changes them.\n")


def resolve_root(root: Path | None) -> Path:
    """The memory root a command uses: --root, SKILLBANK_ROOT, else ~/.skillbank."""
    from skillbank.settings import DEFAULT_ROOT

    return Path(root or os.environ.get("SKILLBANK_ROOT") or DEFAULT_ROOT).expanduser()


def _absolute(path: Path | str) -> str:
    return str(Path(path).expanduser().resolve())


def _load(root: Path) -> dict | None:
    """`<root>/skillbank.toml` as a dict (None: no file)."""
    path = root / CONFIG
    try:
        with path.open("rb") as handle:
            return tomllib.loads(handle.read().decode("utf-8-sig"))  # a BOM is no TOML error
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # TOMLDecodeError, UnicodeDecodeError
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"{path} cannot be read ({exc}); fix or remove it") from None


def _written(root: Path) -> list[str] | None:
    """The `skill_roots` entries as written in `<root>/skillbank.toml` (None: none there)."""
    data = _load(root) or {}
    value = data.get(KEY, data.get("skill-roots"))
    if value is None:
        return None
    items = value.split(os.pathsep) if isinstance(value, str) else list(value)
    return [str(p) for p in items if p]


def recorded(root: Path) -> list[str] | None:
    """The skill folders `<root>/skillbank.toml` names (None: no `skill_roots` there); a
    relative entry is the root's (`settings.config_path`), never the current folder's."""
    from skillbank.settings import config_path

    written = _written(root)
    return None if written is None else [str(config_path(p, root)) for p in written]


def bundled(root: Path, checked: bool = True) -> bool | None:
    """Whether the root serves the skills that ship with skillbank, as recorded (None: not
    recorded, the face's default applies). Anything but true or false is refused, as other
    settings are (`settings_check`): `include_bundled = "false"`, `"no"` or `0` counted as not
    recorded, so the bundled skills were served without a word (hunt-badinput #4, session 34).
    Not `checked`: such a value is None (`skillbank config bundled on|off`, which replaces it)."""
    value = _written_bundled(root)
    if value is None or isinstance(value, bool):
        return value
    if not checked:
        return None
    from skillbank.errors import InvalidInputError

    raise InvalidInputError(f"setting {BUNDLED} ({root / CONFIG}) must be true or false (no "
                            f"quotes), not {value!r}; `skillbank config bundled on|off` "
                            "writes it")


def _written_bundled(root: Path) -> object:
    data = _load(root) or {}
    return data.get(BUNDLED, data.get("include-bundled"))


def _changing(root: Path) -> ContextManager[None]:
    """Held while the file is re-read, changed and replaced: the change of another process
    lands before or after this one, never instead of it (an OS lock: a killed command
    releases it)."""
    from skillbank.fsutil import exclusive_lock

    from skillbank.fsutil import make_root

    make_root(root, embedded=False)  # private when new; index folders come when used
    return exclusive_lock(root / LOCK)


def _toml_list(folders: Iterable[str]) -> str:
    quoted = ", ".join('"' + f.replace("\\", "\\\\").replace('"', '\\"') + '"' for f in folders)
    return f"{KEY} = [{quoted}]"


def _set_line(root: Path, pattern: "re.Pattern[str]", line: str) -> Path:
    """Put `line` (one top-level key) in the file in place of what `pattern` matches, keeping
    the rest as written; atomic. Call under `_changing`."""
    path = root / CONFIG
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM is dropped when rewritten
    except FileNotFoundError:
        text = _HEADER
    if pattern.search(text):
        matches = pattern.findall(text)
        if len(matches) != 1 or (pattern is _LINE and "]" not in matches[0]):
            from skillbank.errors import InvalidInputError

            raise InvalidInputError(f"{path}: {line.split(' ')[0]} spans several lines or is "
                                    "set twice; edit it by hand")
        text = pattern.sub(lambda _m: line, text)
    else:
        # Before the first table, so the key stays top-level (a file may begin with one:
        # docs/team.md's `[oidc]`).
        table = _TABLE.search(text)
        head, tail = (text[:table.start()], text[table.start():]) if table else (text, "")
        text = (head.rstrip("\n") + "\n" if head.strip() else "") + line + "\n" \
            + ("\n" + tail if tail else "")
    key = line.split("=", 1)[0].strip()
    try:  # never write a file that no longer parses or does not hold the key at the top
        written = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        written, why = None, str(exc)
    if written is None or key not in written:
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"{path}: cannot set {key} here without breaking the file"
                                f"{' (' + why + ')' if written is None else ''}; edit it by hand")
    tmp = path.with_name(f".{CONFIG}.{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(text, encoding="utf-8")
    if _private(path, written):
        os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


def _private(path: Path, settings: dict) -> bool:
    """Whether the settings file must be readable by its owner only: it records a URL with a
    password (a worker's `--skills-repo https://deploy:TOKEN@forge/...` was kept 0644, team
    hunt session 19), or it was made private already (a rewrite must not widen it again).
    Why not refuse the password: a deploy token in the URL is how most forges give a worker
    push rights, and git itself keeps such a URL in the clone's config; like git's credential
    store (`~/.git-credentials`, 0600), the file holding it is the owner's only."""
    from skillbank.index_outage import holds_password

    def strings(value: object) -> Iterable[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from strings(item)
        elif isinstance(value, list):
            for item in value:
                yield from strings(item)

    if any(holds_password(text) for text in strings(settings) if "@" in text):
        return True
    try:
        return path.stat().st_mode & 0o077 == 0
    except FileNotFoundError:
        return False


def write(root: Path, folders: list[str]) -> Path:
    """Record `folders` as the root's skill folders, keeping the rest of the file as written."""
    with _changing(root):
        return _set_line(root, _LINE, _toml_list(folders))


def add(root: Path, folders: list[Path | str]) -> tuple[list[str], list[str]]:
    """Record `folders` beside those already recorded (re-read under the lock). Returns (all
    recorded folders, the ones that were new)."""
    with _changing(root):
        known = recorded(root) or []
        seen = {_absolute(p) for p in known}
        new = []
        for folder in folders:
            if _absolute(folder) not in seen:
                seen.add(_absolute(folder))
                new.append(_absolute(folder))
        if new:  # the entries as written stay as written (a relative one stays the root's)
            _set_line(root, _LINE, _toml_list((_written(root) or []) + new))
        return known + new, new


def remove(root: Path, folder: Path | str) -> list[str] | None:
    """Forget `folder` (re-read under the lock). The folders left, or None if it was not
    recorded."""
    with _changing(root):
        known = recorded(root) or []
        written = _written(root) or []
        keep = [_absolute(p) != _absolute(folder) for p in known]
        if all(keep):
            return None
        _set_line(root, _LINE, _toml_list([w for w, k in zip(written, keep) if k]))
        return [p for p, k in zip(known, keep) if k]


_BUNDLED_LINE = re.compile(r"^[ \t]*include[_-]bundled[ \t]*=.*$", re.M)


def set_bundled(root: Path, value: bool) -> bool | None:
    """Record whether the root serves the bundled skills; returns what was recorded before."""
    with _changing(root):
        before = bundled(root, checked=False)  # a bad value is what this replaces
        if before is not value:
            _set_line(root, _BUNDLED_LINE, f"{BUNDLED} = {'true' if value else 'false'}")
        return before


def deployment(root: Path) -> str | None:
    """The deployment recorded in the root's settings file (None: not recorded)."""
    value = (_load(root) or {}).get(DEPLOYMENT)
    return value if isinstance(value, str) and value else None


TEAM = "team"
_TEAM_LINE = re.compile(r"^[ \t]*team[ \t]*=.*$", re.M)


def is_team(root: Path) -> bool:
    """Whether the root is recorded as a team deployment's (`team = true`, written by
    `skillbank server`)."""
    return (_load(root) or {}).get(TEAM) is True


def mark_team(root: Path) -> None:
    """Record that team workers serve this root (`team = true`; no secret in it). Without it a
    shell lacking SKILLBANK_DATABASE_URL opened the workers' root embedded: a rule learnt there
    landed in `<root>/guidelines` where no worker saw it, and the restore's `reindex` rebuilt
    an empty embedded index and exited 0 (team hunt, session 19)."""
    with _changing(root):
        if not is_team(root):
            _set_line(root, _TEAM_LINE, f"{TEAM} = true")


def keep_setting(root: Path, key: str, value: str) -> str | None:
    """Record the top-level string `key = value` unless the file sets `key`; returns what was
    set before (None: nothing, now `value`). What a team worker is started with and the CLI on
    the same root must share: with `--deployment team` unrecorded the CLI (the documented
    `reindex` restore, `guidelines list`, `audit`) opened the root's own id, an empty
    deployment; with `--skills-repo` unrecorded it wrote skills straight into the served git
    checkout, unreviewed, and no worker could follow the branch again."""
    line = re.compile(rf"^[ \t]*{re.escape(key)}[ \t]*=.*$", re.M)
    with _changing(root):
        before = (_load(root) or {}).get(key)
        if before is None:
            quoted = value.replace("\\", "\\\\").replace('"', '\\"')
            _set_line(root, line, f'{key} = "{quoted}"')
        return before if isinstance(before, str) else None


def effective(root: Path, given: list[Path], keep: bool = True
              ) -> tuple[list[str] | None, list[str]]:
    """(the folders to open the bank with, the given folders that were new and are now
    recorded). No record and nothing given: (None, []), the settings decide as before.
    `keep=False` (`--no-remember`): the given folders are used, not recorded."""
    known = recorded(root)
    if not given:
        return known, []
    if not keep:
        seen = {_absolute(p) for p in known or []}
        extra = [_absolute(f) for f in given if _absolute(f) not in seen]
        return (known or []) + list(dict.fromkeys(extra)), []
    return add(root, given)
