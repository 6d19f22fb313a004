"""`skillbank config`: what the memory root remembers (its skill folders), shown and changed
explicitly. Changing them says what the index gains or loses, then brings the index up to date
(see `skillbank.remember` for why the root remembers)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from skillbank.cli.common import key_values, state

app = typer.Typer(help="Show or change what this memory root remembers (its skill folders).",
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
    data: dict[str, Any] = {"root": str(root), "config": str(root / remember.CONFIG),
                            "skill_roots": folders}

    def human() -> None:
        pairs: list[tuple[str, Any]] = [("root", data["root"]), ("config file", data["config"])]
        pairs.append(("skill folders", "\n".join(folders) or
                      "none recorded (add one: skillbank config add-skills-dir DIR)"))
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
    known = remember.recorded(root) or []
    target = str(folder.expanduser().resolve())
    if target in {str(Path(p).resolve()) for p in known}:
        st.out.note(f"{target} is already one of this root's skill folders; nothing to do.")
        return
    st.out.note(f"Adding {target} ({_count_skills(folder)} SKILL.md files): their skills are "
                "indexed now.")
    remember.write(root, known + [target])
    st.skills_dirs = []
    report = st.bank(sync="skills")
    del report
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
    kept = [p for p in known if str(Path(p).resolve()) != target]
    if len(kept) == len(known):
        raise NotFoundError(f"{target} is not one of this root's skill folders ("
                            + (", ".join(known) or "none recorded") + "); `skillbank config` "
                            "lists them")
    st.out.note(f"Removing {target}: its {_count_skills(folder)} SKILL.md files leave the index "
                "now (the files are not touched).")
    remember.write(root, kept)
    st.skills_dirs = []
    st.bank(sync="skills")
    _show(ctx)
