"""`skillbank config`: what the memory root remembers (its skill folders, whether it serves the
bundled skills), shown and changed explicitly. Changing them brings the index up to date, then
says which skills entered or left it, from the sync's own report, not the SKILL.md files on disk
(hunt-corpus #3; see `skillbank.remember` for why the root remembers)."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from skillbank.cli.common import bundled_words, key_values, state

app = typer.Typer(help="Show or change what this memory root remembers (its skill folders, "
                       "whether it serves the bundled skills).",
                  invoke_without_command=True, no_args_is_help=False)


def _count_skills(folder: Path) -> int:
    try:
        return sum(1 for _ in folder.rglob("SKILL.md"))
    except OSError:
        return 0


def _show(ctx: typer.Context) -> None:
    from skillbank import remember

    st = state(ctx)
    root = remember.resolve_root(st.root)
    folders = remember.recorded(root) or []
    recorded_bundled = remember.bundled(root)
    data: dict[str, Any] = {"root": str(root), "config": str(root / remember.CONFIG),
                            "skill_roots": folders,
                            "include_bundled": recorded_bundled is not False}

    def human() -> None:
        pairs: list[tuple[str, Any]] = [("root", data["root"]), ("config file", data["config"])]
        pairs.append(("skill folders", "\n".join(folders) or
                      "none recorded (add one: skillbank config add-skills-dir DIR)"))
        pairs.append(("bundled skills", bundled_words(recorded_bundled is not False,
                                                      recorded_bundled)))
        st.out.print(key_values(pairs))

    st.out.emit(data, human)


@app.callback()
def config(ctx: typer.Context) -> None:
    """Show what the root remembers: its skill folders, kept in <root>/skillbank.toml so a
    command run without --skills-dir keeps indexing them."""
    if ctx.invoked_subcommand is None:
        _show(ctx)


@app.command("show")
def show(ctx: typer.Context) -> None:
    """Show the root's remembered skill folders and where they are kept."""
    _show(ctx)


@app.command("add-skills-dir")
def add_skills_dir(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(exists=True, file_okay=False, metavar="DIR",
                                           help="A folder of skills to index from now on.")],
) -> None:
    """Remember a skill folder and index its skills now."""
    from skillbank import remember

    st = state(ctx)
    root = remember.resolve_root(st.root)
    target = str(folder.expanduser().resolve())
    if target in {str(Path(p).resolve()) for p in remember.recorded(root) or []}:
        st.out.note(f"{target} is already one of this root's skill folders; nothing to do.")
        return
    remember.add(root, [target])  # re-read under a lock: another command's change stays
    st.skills_dirs = []
    bank = st.bank(sync="skills")
    if getattr(bank, "is_remote", False) and target in str(getattr(bank, "note", "") or ""):
        # Another process (`skillbank serve`, an agent) owns the root and serves what it was
        # started with: the folder is remembered, not indexed, until that process restarts.
        st.out.note(f"Remembered {target}, but not indexed yet: the process that serves this "
                    "root (named above) indexes it when it starts again.")
    else:
        report = _index_change(st, bank)
        shadowed = sum(1 for f in report.findings if f.code == "shadowed"
                       and _under(f.path, target))
        st.out.note(f"Added {target}: {_skills(report, 'added', target, bank)} entered the index"
                    + (f"; {_skills(report, 'changed', target, bank)} changed (served from it now, "
                       "or edited)" if _names(report, "changed", target, bank) else "")
                    + (f"; {shadowed} of its skills are not served: a same-named skill comes "
                       "first (`skillbank --json skills sync` names them, code \"shadowed\")"
                       if shadowed else "") + ".")
    _show(ctx)


@app.command("remove-skills-dir")
def remove_skills_dir(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A remembered skill folder.")],
) -> None:
    """Forget a skill folder: its skills leave the index now (the files stay where they are)."""
    from skillbank import remember
    from skillbank.errors import NotFoundError

    st = state(ctx)
    root = remember.resolve_root(st.root)
    known = remember.recorded(root) or []
    target = str(folder.expanduser().resolve())
    if target not in {str(Path(p).resolve()) for p in known}:
        raise NotFoundError(f"{target} is not one of this root's skill folders ("
                            + (", ".join(known) or "none recorded") + "); `skillbank config` "
                            "lists them")
    remember.remove(root, target)  # re-read under a lock: another command's change stays
    st.skills_dirs = []
    st.left_out.add(target)  # said below: no note advising to add it back
    bank = st.bank(sync="skills")
    if (served := _still_served(bank, folder)):
        st.out.note(f"Removed {target} from this root's skill folders, but {served} of its "
                    f"skills are still served: {_restart(bank)}")
    else:
        report = _index_change(st, bank)
        st.out.note(f"Removed {target}: {_skills(report, 'removed', target, bank)} left the index"
                    + (f"; {_skills(report, 'changed', target, bank)} changed (served from another "
                       "folder now, or edited)" if _names(report, "changed", target, bank) else "")
                    + " (the files are not touched).")
    _show(ctx)


def _index_change(st: Any, bank: Any) -> Any:
    """The skill index's change this command made, as a sync's report: this process's sync
    (`State.bank`), or while another process owns the root, a sync asked of it, whose
    `already` holds what its opening sync applied (a fresh owner serves the changed folders).
    Not the SKILL.md files on disk: 81 were said to enter the index where 3 did, the rest
    shadowed by the library's own copies or nested in other skills (hunt-corpus #3)."""
    return st.skills_report if st.skills_report is not None else bank.skills.sync()


def _names(report: Any, kind: str, folder: str | None = None, bank: Any = None) -> list[str]:
    """The skills of `kind` in the sync's report (and what it says was applied already), only
    those `folder` declares when given: the same sync indexes other folders' changes too, and
    on a fresh root `add-skills-dir` of a one-skill folder said 8 skills entered, the bundled
    seven with it (review, session 30). The folder is walked with the bank's own limits."""
    from skillbank.memories.skills.unreadable import declared_names
    from skillbank.settings import Settings

    names = {*getattr(report, kind), *(getattr(report, "already", None) or {}).get(kind, [])}
    if folder is None:
        return sorted(names)
    settings = getattr(bank, "settings", None) or Settings()
    return sorted(names & declared_names(Path(folder), settings.max_skill_roots_depth,
                                         settings.max_scan_dirs))


def _skills(report: Any, kind: str, folder: str | None = None, bank: Any = None) -> str:
    """"3 skills (a, b, c)", or "no skill"."""
    names = _names(report, kind, folder, bank)
    if not names:
        return "no skill"
    shown = ", ".join(names[:5]) + (f", … ({len(names) - 5} more)" if len(names) > 5 else "")
    return f"{len(names)} skill{'s' if len(names) != 1 else ''} ({shown})"


def _under(path: Any, folder: str) -> bool:
    """Whether the file at `path` is in `folder` (a resolved path), as walked or as resolved (a
    SKILL.md linked from outside is where the walk found it)."""
    try:
        found = Path(str(path))
        return any(p.is_relative_to(folder) for p in (Path(os.path.abspath(found)),
                                                       found.resolve()))
    except (OSError, RuntimeError, ValueError):
        return False


def _restart(bank: object) -> str:
    """What a change of the served folders waits for while another process owns the root."""
    pid = getattr(bank, "owner_pid", None)
    return (f"the process that serves this root{f' (pid {pid})' if pid else ''} serves what it "
            "was started with, until it starts again.")


def _still_served(bank: Any, folder: Path | None) -> int:
    """How many of `folder`'s skills the process that owns the root still serves (0 when this
    process serves the root itself: the sync just now left them out). `config bundled off`
    and `remove-skills-dir` said the skills "leave the index now" while `skillbank serve` or
    an agent kept serving them to every agent, the CLI included (hunt-procs #3, session 28);
    `add-skills-dir` already said "not indexed yet". By where each served skill's file is: by
    name, the library's own same-named copies counted as "still served" (hunt-corpus #3)."""
    if folder is None or not getattr(bank, "is_remote", False):
        return 0
    target = str(folder.expanduser().resolve())
    return sum(1 for skill in bank.skills.list(include_held=True) if _under(skill.path, target))


class OnOff(str, Enum):
    on = "on"
    off = "off"


@app.command("bundled")
def bundled(
    ctx: typer.Context,
    choice: Annotated[OnOff, typer.Argument(metavar="on|off",
                                            help="on: serve them; off: leave them out.")],
) -> None:
    """Serve the skills that ship with skillbank (on, the default) or leave them out (off,
    what --no-bundled records); the index follows now."""
    from skillbank import remember
    from skillbank.bank import bundled_skills_dir
    from skillbank.errors import InvalidInputError

    st = state(ctx)
    root = remember.resolve_root(st.root)
    value = choice is OnOff.on
    try:
        served: bool | None = remember.bundled(root) is not False
    except InvalidInputError:
        # Not true or false: every command refuses it and names this one, which replaces it
        # either way. Read as not recorded, `on` said "already served; nothing to do", exited
        # 2 and left the file (review 2 #4, session 34).
        served = None
    if served == value:
        st.out.note(f"The bundled skills are already {'served' if value else 'left out'}; "
                    "nothing to do.")
        _show(ctx)
        return
    folder = bundled_skills_dir()
    count = _count_skills(folder) if folder is not None else 0
    remember.set_bundled(root, value)
    st.include_bundled, st.remember = True, True  # the record decides from here
    if not value and folder is not None:
        st.left_out.add(str(folder.resolve()))  # said below: no note advising to add it back
    bank = st.bank(sync="skills")
    what = f"the {count} skills that ship with skillbank"
    served = _still_served(bank, folder)
    if getattr(bank, "is_remote", False) and (served < count if value else served):
        st.out.note(f"Remembered in {root / remember.CONFIG}: {what} are "
                    f"{'served' if value else 'left out'} from now on, but not yet: "
                    f"{_restart(bank)}")
    else:
        st.out.note(f"{'Serving' if value else 'Leaving out'} {what}: they "
                    f"{'are indexed' if value else 'leave the index'} now "
                    f"(remembered in {root / remember.CONFIG}).")
    _show(ctx)
