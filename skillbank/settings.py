"""Settings: explicit arguments win, then environment variables, then `<root>/skillbank.toml`.

One small object, resolved once when a bank opens, so every face (CLI, MCP, adapters) configures
skillbank the same way.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib  # type: ignore[no-redef]

DEFAULT_ROOT = Path("~/.skillbank")
ENV_PREFIX = "SKILLBANK_"


@dataclass(frozen=True)
class Settings:
    """Everything a bank needs to open. Defaults are the embedded, offline-friendly setup."""

    root: Path = DEFAULT_ROOT
    skill_roots: tuple[Path, ...] = ()  # extra read-only skill roots; earlier roots win
    chroma_url: str | None = None  # e.g. http://127.0.0.1:8000 for a `chroma run` server
    # Seconds opening that server's client, and then each request to it, may wait (connecting:
    # at most 10 of them; 0 or inf: forever). chromadb's own client waits forever, so a server
    # that hangs hung every agent call (skillbank.chroma_client).
    chroma_timeout: float = 60.0
    # A server (a team worker, `skillbank serve`) starts while that Chroma server does not
    # answer, searching by keyword from the files until it does (skillbank.index_mirror). Off,
    # as for the CLI and scripts: a one-shot open fails with the error naming the URL, so a
    # wrong chroma_url is not taken for an outage.
    start_without_chroma: bool = False
    model_dir: Path | None = None  # folder holding onnx/model.onnx of all-MiniLM-L6-v2
    namespace: str = "default"
    # The collections' names inside the deployment's database: each root is its own deployment
    # (index_ownership), whatever the prefix; one deployment's index is one root folder's.
    collection_prefix: str = "skillbank"
    # Index ownership (skillbank.index_ownership): whose index entries these are (default: the
    # root's id in <root>/.skillbank-id), and where on a shared Chroma they live (default: the
    # server's default tenant, a database named after the deployment).
    deployment: str | None = None
    # Claim a `deployment` set by hand from whichever root folder holds it on a Chroma server
    # (index_ownership.claim_deployment): this root's files then replace that root's index
    # entries. Without it a second root folder is refused forever (review F2, session 24). In
    # team mode, from whichever PostgreSQL database holds it (skillbank.team.index_claim): a
    # deployment moved to another cluster, said once (SKILLBANK_DEPLOYMENT_TAKEOVER=1).
    deployment_takeover: bool = False
    chroma_tenant: str | None = None
    chroma_database: str | None = None
    # Team mode: PostgreSQL holds the write lock, change feed, usage counters and audit log
    # (skillbank.team), e.g. postgresql://user:password@host:5432/skillbank.
    database_url: str | None = None
    # Seconds one PostgreSQL statement may run (its statement_timeout); a PostgreSQL that does
    # not answer at all (a hung machine, a stalled disk) is given up on `timeout` (5 s) later,
    # so it fails a call instead of hanging it and /readyz (hunt-pg #6, session 28). 0 or inf:
    # no limit. Schema migrations and `skillbank migrate`'s import are never cut.
    database_statement_timeout: float = 60.0
    # Skills in git (skillbank/team/skills_repo.py): <root>/skills is a checkout of this remote's
    # branch, followed every skills_follow_seconds; writes become proposal branches.
    skills_repo: str | None = None
    skills_branch: str = "main"
    skills_follow_seconds: float = 30.0
    skills_direct_publish: bool = False  # a trusted reviewer may publish (merge) through skillbank
    # Retrieval
    min_score: float = 0.18  # best skill cosine below this (and weak BM25): "no skill fits"
    # Guidelines
    # Similarity (guideline profile cosine + word overlap - topic penalty) at which a new rule
    # is taken as the same as an old one. 0.5 suits the deterministic distiller, whose rewordings
    # of one rule score 0.3-0.7 (B-cubed F1 0.37 at 0.86, 0.52 at 0.5 on the critique set);
    # with an LLM distiller's cleaner rule texts raise it (0.86 kept 37 of 38 true rules apart).
    merge_threshold: float = 0.5
    related_threshold: float = 0.60  # cosine above which two rules speak of the same matter
    retire_harmful_margin: int = 3  # retire when harmful - helpful >= this
    # Experiences
    prune_min_uses: int = 5  # prune only what was recalled at least this often …
    prune_max_help_rate: float = 0.2  # … and helped in at most this share of those uses
    duplicate_threshold: float = 0.97  # cosine above which two experiences of one task are one
    # A face whose own state of a conversation is gone (a restart, another worker) goes on with
    # the thread's open episode in the bank only when its last turn is at most this old;
    # else the request is a new goal (a reused thread id; review 1 #2, session 32). 0: never;
    # inf: at any age.
    thread_pickup_seconds: float = 3600.0
    # Limits
    # The review queue: pending items per namespace past which an untrusted write is refused
    # (QueueFullError) until a reviewer decides on some; trusted writes never are; 0: no cap.
    # 500 is more than a reviewer reads in a sitting, and far below what a loop of untrusted
    # calls wrote unchecked (hunt s18: 20 files a call, each carrying the whole critique).
    max_pending_guidelines: int = 500
    max_pending_experiences: int = 500
    # Freshness: without a file watcher (`bank.watch()`, a server, a served owner), a skill read
    # re-checks the skill folders at most this often and syncs what changed; 0: never.
    skills_recheck_seconds: float = 2.0
    # A guideline search re-checks the rule files for hand edits (a stat of each) at most this
    # often and re-reads what changed; 0: at every search (hunt-curator #1, session 25).
    guidelines_recheck_seconds: float = 2.0
    max_skill_roots_depth: int = 6
    max_scan_dirs: int = 20_000

    @property
    def chroma_path(self) -> Path:
        return self.root / "chroma"


def config_path(value: str | os.PathLike, root: str | os.PathLike) -> Path:
    """A folder named in `<root>/skillbank.toml`: `~` expanded, a relative one the root's.

    A relative `skill_roots` entry was the current folder's, so the index of one root gained
    and lost skills with every `cd` (and, with a shared owner, the first command's folder won
    for every client), while `[skill_trust]` paths beside it were already the root's. A path
    given on the command line or to `Skillbank.open` stays the current folder's, as a shell
    user means it."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(os.path.abspath(Path(root).expanduser())) / path


def _coerce(name: str, raw: Any, root: Path | None = None, where: str = "argument") -> Any:
    """Turn an environment/TOML value into the field's type (`root`: read from the root's
    settings file, whose relative folders are the root's), checked against its range
    (`skillbank.settings_check`; `where` names where it was read)."""
    from skillbank.settings_check import check_value

    if name in ("root", "model_dir"):
        check_value(name, raw, where)  # `model_dir = 5` was a bare TypeError
    value = _converted(name, raw, root, where)
    check_value(name, value, where)
    return value


def _converted(name: str, raw: Any, root: Path | None, where: str) -> Any:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    if name == "skill_roots":
        items = raw.split(os.pathsep) if isinstance(raw, str) else list(raw)
        if root is not None:
            return tuple(config_path(p, root) for p in items if p)
        return tuple(Path(p).expanduser() for p in items if p)
    if name == "model_dir" and root is not None:
        return config_path(raw, root)  # the root's too, as skill_roots (docs hunt, s18)
    if name in ("root", "model_dir"):
        return Path(raw).expanduser()
    if str(kind) == "bool":
        return _flag(name, raw)
    try:  # "could not convert string to float: 'abc'" named no setting
        if "float" in str(kind):
            return float(raw)
        if "int" in str(kind):
            if isinstance(raw, float) and not raw.is_integer():
                raise ValueError(raw)  # int(2.5) was 2, silently
            return int(raw)
    except (TypeError, ValueError, OverflowError):
        from skillbank.errors import InvalidInputError  # exit 2 (invalid input), not 1

        whole = "int" in str(kind) and "float" not in str(kind)
        raise InvalidInputError(f"setting {name} ({where}) must be "
                                f"{'a whole number' if whole else 'a number'}, not {raw!r}") \
            from None
    return raw


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


def _flag(name: str, raw: Any) -> bool:
    """A yes/no setting from TOML (a boolean) or the environment (a word): the string "0" was
    kept as is, and any non-empty string is true, so `SKILLBANK_SKILLS_DIRECT_PUBLISH=0`
    turned publishing on."""
    if isinstance(raw, bool):
        return raw
    word = str(raw).strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    from skillbank.errors import InvalidInputError  # a ValueError too, exit 2

    raise InvalidInputError(f"setting {name} must be true or false (1/0, yes/no, on/off), not {raw!r}")


def load_settings(root: str | os.PathLike | None = None, **overrides: Any) -> Settings:
    """Resolve settings: arguments, then `SKILLBANK_*` environment, then `<root>/skillbank.toml`."""
    env = os.environ
    # Absolute once, here: an owner opened with a relative root published a relative socket
    # path in `.owner.json`, and clients started from another folder found "its socket is
    # gone" (BusyError). Links are kept as given (abspath, not resolve).
    root_path = Path(os.path.abspath(
        Path(root or env.get(f"{ENV_PREFIX}ROOT") or DEFAULT_ROOT).expanduser()))
    values: dict[str, Any] = {}
    toml_file = root_path / "skillbank.toml"
    if toml_file.is_file():
        with toml_file.open("rb") as handle:
            data = tomllib.loads(handle.read().decode("utf-8-sig"))  # a BOM is no TOML error
        from skillbank.settings_check import check_keys

        names = {f.name for f in fields(Settings)}
        check_keys([key.replace("-", "_") for key in data], names - {"root"}, str(toml_file))
        for key, raw in data.items():
            key = key.replace("-", "_")
            if key in names and key != "root":
                values[key] = _coerce(key, raw, root_path, str(toml_file))
    for f in fields(Settings):
        raw = env.get(ENV_PREFIX + f.name.upper())
        if raw and f.name != "root":
            values[f.name] = _coerce(f.name, raw, where=ENV_PREFIX + f.name.upper())
    for key, raw in overrides.items():
        if raw is None:
            continue
        if key not in {f.name for f in fields(Settings)}:
            raise TypeError(f"unknown setting {key!r}")
        if key in ("skill_roots", "model_dir"):
            values[key] = _coerce(key, raw)
        else:
            from skillbank.settings_check import check_value

            check_value(key, raw, "argument")
            values[key] = raw
    return replace(Settings(root=root_path), **values)
