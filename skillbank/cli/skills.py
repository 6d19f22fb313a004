"""`skillbank skills …`: list, show, validate, new, update, search, sync, watch, delete, rename
(and, from skill_drafts.py, propose, drafts, adopt, discard, history)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from skillbank.cli.hints import copy_advice
from skillbank.cli.sync_report import (  # noqa: F401 - re-exported (commands, memory)
    PLAIN_WARNINGS, print_changes, print_findings, print_hidden_folders, render_sync_report,
    hidden_folders_once, sync_summary,
)
from skillbank.memories.skills.folder_files import SKIP_DIRS
from skillbank.memories.skills.last_good import is_as_it_is_note
from skillbank.cli.common import (
    Output,
    invalid,
    jsonable,
    key_values,
    read_text_arg,
    score,
    short,
    state,
    stdout_is_terminal,
    table,
    text,
    usage_text,
)

app = typer.Typer(help="Skills: SKILL.md folders, indexed for routing.", no_args_is_help=True)

#: Rows a `skills list` table shows unless --limit or --all says otherwise.
PAGE = 50


# ------------------------------------------------------------------------------------- rendering


class SyncProgress:
    """A spinner while roots are scanned, then a bar once embedding spans several batches.

    Not on a terminal (a log, CI, a pipe): a plain line on stderr at most every 10 s and at the
    end, so a long first sync is never silent. Two phases: every skill's summary, then the body
    sections (`sections`, ~9x the text; a second bar and line say which)."""

    LOG_EVERY_S = 10.0
    SUMMARIES = "embedding skills"
    #: Ctrl-C is safe: a skill whose sections were not all written keeps its summary's vector
    #: and the next sync embeds its sections (SkillLibrary._stage_files, HybridIndex.keep_first).
    SECTIONS = "embedding body sections (Ctrl-C is safe: the next sync finishes them)"

    def __init__(self, out: Output) -> None:
        self.out = out
        self.enabled = not out.json and out.err.is_terminal
        self.log_lines = not out.json and not out.err.is_terminal
        self._last_line = 0.0
        self._status: Any = None
        self._progress: Any = None
        self._task: Any = None
        self._label = self.SUMMARIES

    def __enter__(self) -> "SyncProgress":
        if self.enabled:
            self._status = self.out.err.status("scanning skill roots…")
            self._status.start()
        return self

    def sections(self, done: int, total: int) -> None:
        """Progress of the body sections, after every summary is in (a new bar or line)."""
        if self._label != self.SECTIONS:
            self._label = self.SECTIONS
            self._last_line = 0.0
            if self._progress is not None:  # the summaries' bar ends; the sections' begins
                self._progress.stop()
                self._progress = None
        self(done, total)

    def __call__(self, done: int, total: int) -> None:
        if self.log_lines:
            import sys
            import time

            now = time.monotonic()
            if done >= total or now - self._last_line >= self.LOG_EVERY_S:
                self._last_line = now
                print(f"skillbank: {self._label} {done}/{total} "
                      f"({100 * done // max(total, 1)}%)", file=sys.stderr, flush=True)
        if not self.enabled:
            return
        if self._progress is None:
            if done >= total:  # one batch: nothing worth a bar
                return
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)

            self._stop_status()
            self._progress = Progress(TextColumn(self._label), BarColumn(),
                                      MofNCompleteColumn(), TimeElapsedColumn(),
                                      console=self.out.err, transient=True)
            self._progress.start()
            self._task = self._progress.add_task("sync", total=total)
        self._progress.update(self._task, completed=done, total=total)

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __exit__(self, *exc: object) -> None:
        self._stop_status()
        if self._progress is not None:
            self._progress.stop()


# -------------------------------------------------------------------------------------- commands


@app.command("list")
def list_(
    ctx: typer.Context,
    match: Annotated[Optional[str], typer.Argument(
        metavar="[FILTER]", help="Only skills whose name or description contains this text "
                                 "(case-insensitive).")] = None,
    limit: Annotated[Optional[int], typer.Option(
        "--limit", "-n", min=1, metavar="N",
        help=f"Show at most N skills (by name; a table shows {PAGE} unless --all).")] = None,
    show_all: Annotated[bool, typer.Option(
        "--all", "-a", help="Show every skill in the table (--json always lists all).")] = False,
) -> None:
    """List indexed skills: name, description, where the file lives, uses."""
    st = state(ctx)
    everything = st.bank(sync=["skills"]).skills.list(include_held=True)  # the person sees all
    needle = (match or "").strip().lower()
    matching = [s for s in everything
                if not needle or needle in s.name.lower() or needle in s.description.lower()]
    if limit is None and not show_all and not st.out.json:
        limit = PAGE if len(matching) > PAGE else None  # a table of 1,750 rows helps nobody
    skills = matching[:limit] if limit else matching

    def human() -> None:
        if not everything:
            hidden = st.bank(sync=None).skills.hidden_folders()  # hunt-clicorpus #1
            st.out.print("No skills indexed." if hidden else
                         "No skills yet. Add roots with --skills-dir or create one with "
                         "`skillbank skills new`.")
            print_hidden_folders(st.out, [(f.path or "", f.message) for f in hidden])
            return
        if not skills:
            st.out.print(f"No skill name or description contains {match!r} "
                         f"({len(everything)} skills in all).")
            return
        # Fit the terminal: a long name must not squeeze the path to one character printed
        # vertically (#27: 196,303 lines at 80 columns). Narrow: no path column (`skills show`
        # has it); wide: the path's tail, which is the part that tells folders apart.
        width = st.out.console.width
        wide = width >= 110
        uses = [str(s.usage.uses) for s in skills]
        trust = [s.trust + (" (held)" if s.held else "") for s in skills]
        # The description keeps DESCRIPTION_MIN characters: a name longer than what is left is
        # broken at its hyphens onto more lines (whole, never cut), not the description
        # squeezed to "Automa…" by one 48-character name (walk finding, 80 columns).
        others = max(4, *map(len, uses)) + max(5, *map(len, trust)) + 11  # borders, padding
        # The path's tail is cut to the column's own width, which is fixed: the tail of 48
        # was cut again at its end by a narrower column, "…me-skills/skills/xss-html-inje…",
        # losing the part that tells folders apart (hunt-clicorpus #2, session 36).
        path_width = max(16, min(48, max(len(_where(s)) for s in skills),
                                 width - others - 14 - 16 - DESCRIPTION_MIN))
        if wide:
            others += path_width + 8 + 6  # path, writable, their borders and padding
        name_width = max(16, width - others - DESCRIPTION_MIN)
        rows = [[_wrap_name(s.name, name_width), short(s.description, 70)]
                + ([_tail(_where(s), path_width), "yes" if s.writable else "no"] if wide else [])
                + [n, t] for s, n, t in zip(skills, uses, trust)]
        title = f"{len(skills)} skills" if len(skills) == len(everything) else \
            f"{len(skills)} of {len(everything)} skills"
        if len(skills) < len(matching):
            title += f" (--limit {limit}; {len(matching)} match)"
        columns: list[Any] = ["name", ("description", {"ratio": 2, "min_width": 16,
                                                       "overflow": "ellipsis", "no_wrap": True})]
        if wide:
            columns += [("path", {"width": path_width, "overflow": "fold"}), "writable"]
        st.out.print(table(title, columns + ["uses", "trust"], rows))
        if len(skills) < len(matching):
            st.out.note(f"{len(matching) - len(skills)} more: --limit N or --all shows them, "
                        "--json lists every one.")

    st.out.emit([s.model_dump(mode="json", exclude={"body"}) for s in skills], human)
    for finding in st.bank(sync=None).skills.unreadable_files():  # (hunt-disk #5, session 29)
        st.out.note(f"{finding.message}: left out until it can be read")


#: What `skills list` keeps of a description's width before a long name may take it.
DESCRIPTION_MIN = 30


def _wrap_name(name: str, width: int) -> str:
    """`name` in lines of at most `width` characters, broken after its hyphens (a piece longer
    than `width` is cut at it): every character stays, in order, so it can still be read and
    copied; a name that fits is returned as it is."""
    if len(name) <= width:
        return name
    pieces = [piece + "-" for piece in name.split("-")]
    pieces[-1] = pieces[-1][:-1]
    lines: list[str] = []
    line = ""
    for piece in pieces:
        while len(piece) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(piece[:width])
            piece = piece[width:]
        if len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
    if line:
        lines.append(line)
    return "\n".join(lines)


def _tail(path: str, limit: int) -> str:
    return path if len(path) <= limit else "…" + path[-(limit - 1):]


def _where(skill: Any) -> str:
    """The SKILL.md path, with the home folder as ~ (shorter, and what people type)."""
    path = str(skill.path or "")
    home = str(Path.home())
    return "~" + path[len(home):] if home != "/" and path.startswith(home + os.sep) else path


@app.command()
def show(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Skill name.")],
    resource: Annotated[Optional[str], typer.Option(
        "--resource", "-r", help="Print one file of the skill (path relative to its folder).")] = None,
) -> None:
    """Show a skill: metadata, resources and body (or one resource with --resource)."""
    st = state(ctx)
    bank = st.bank(sync=["skills"])
    if resource is not None:
        content = bank.skills.read_resource(name, resource, include_held=True)  # the reviewer's read
        st.out.emit({"name": name, "resource": resource, "text": content},
                    lambda: st.out.plain(content))
        return
    # A person may read a held skill, and one whose SKILL.md does not parse (as it is).
    skill = bank.skills.load(name, include_held=True)

    def human() -> None:
        # The path whole: folded on a terminal, on one line when piped (`skills show X | grep
        # path` got it cut with "…" at 80 columns; hunt-clicorpus #2, session 36).
        path = text(skill.path)
        path.overflow = "fold"
        shown = max(len(str(k)) for k in ("description", *skill.frontmatter)) + 2
        wide = None if stdout_is_terminal() else \
            max(st.out.console.width, shown + len(str(skill.path)))
        st.out.print_at(key_values([
            ("name", skill.name), ("description", skill.description), ("path", path),
            ("trust", f"{skill.trust}; scan: {skill.scan or '-'}"
                      + (f"; {len(skill.findings)} findings" if skill.findings else "")
                      + (f"; HELD: {skill.review}" if skill.held else
                         f"; {skill.review}" if skill.review else "")),
            ("writable", "yes" if skill.writable else "no (read-only root)"),
            ("uses", usage_text(skill.usage)),
            *[(k, _field(v)) for k, v in skill.frontmatter.items() if k not in ("name", "description")],
        ]), wide)
        if skill.resources:
            st.out.print(table("resources", ["path", ("bytes", {"justify": "right"}), "sha256"],
                               [[r.path, r.size, r.sha256[:12]] for r in skill.resources]))
        for f in skill.findings:  # security scan (skills/trust.py)
            st.out.print(text(f"{f.severity} {f.rule}: {f.title} ({f.file or 'SKILL.md'}"
                              f"{f':{f.line}' if f.line else ''})", "yellow"))
        for note in filter(is_as_it_is_note, skill.notes):  # the body is the file as it is
            st.out.print(text(note, "red"))
        st.out.print(text("─" * 40, "dim"))
        st.out.plain(skill.body.rstrip())

    st.out.emit(skill, human)


def _field(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _skill_files(path: Path, hidden: list[tuple[Path, int]] | None = None) -> list[Path]:
    """SKILL.md files named by a path: the file itself, or every SKILL.md under a folder.

    Hidden folders are skipped, as a sync skips them; `hidden` gets each that holds SKILL.md
    files, with how many `validate` of it would check: a checkout keeping its skills in
    `skills/.curated` was "no SKILL.md found" (hunt-clicorpus #1, session 36)."""
    from skillbank.memories.skills.freshness import is_tool_cache

    if path.is_file():
        return [path]
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(path):
        for name in sorted(dirnames) if hidden is not None else []:
            if name.startswith(".") and name not in SKIP_DIRS and not is_tool_cache(name):
                if (count := len(_skill_files(Path(dirpath) / name))):
                    hidden.append((Path(dirpath) / name, count))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        if "SKILL.md" in filenames or "SKILL.md" in dirnames:  # a folder is named too (#5)
            found.append(Path(dirpath) / "SKILL.md")
    return sorted(found)


def validate_file(path: Path) -> list[Any]:
    """Strict findings for one SKILL.md: load problems plus every spec rule as an error."""
    from skillbank.memories.skills.skill_file import read_skill_file, validate_skill

    doc, loaded = read_skill_file(path)
    if doc is None:
        return loaded
    strict = validate_skill(doc, path=str(path))
    # Loading downgrades spec errors to warnings; keep the strict copy, not both.
    seen = {(f.code, f.message) for f in strict}
    return [f for f in loaded if (f.code, f.message) not in seen] + strict


@app.command()
def validate(
    ctx: typer.Context,
    paths: Annotated[list[Path], typer.Argument(
        help="SKILL.md files or folders (searched recursively for SKILL.md).")],
) -> None:
    """Check SKILL.md files against the Agent Skills spec; exit 2 when any has an error.

    Works on files alone: no bank is opened.
    """
    from skillbank.records import Finding

    st = state(ctx)
    files: list[dict[str, Any]] = []
    for given in paths:
        if not given.exists():
            files.append({"path": str(given), "findings": [Finding(
                severity="error", code="missing", message="no such file or folder",
                path=str(given))]})
            continue
        hidden: list[tuple[Path, int]] = []
        found = _skill_files(given, hidden)
        folder = [Finding(severity="error", code="no-skills", path=str(given), message=(
            "no SKILL.md found under this folder outside its hidden folders (named below)"
            if hidden else "no SKILL.md found under this folder"))] if not found else []
        folder += [Finding(  # named, with the way in (hunt-clicorpus #1, session 36)
            severity="warning", code="hidden-folder", path=str(path), message=(
                f"{count} SKILL.md files here are not checked: folders whose name starts with "
                "'.' are skipped; give this folder to check them (and as --skills-dir to index "
                "them)")) for path, count in hidden]
        if folder:
            files.append({"path": str(given), "findings": folder})
        for path in found:
            files.append({"path": str(path), "findings": validate_file(path)})
    for entry in files:
        entry["valid"] = not any(f.severity == "error" for f in entry["findings"])
    errors = sum(1 for e in files for f in e["findings"] if f.severity == "error")
    warnings = sum(1 for e in files for f in e["findings"] if f.severity == "warning")
    invalid = sum(1 for e in files if not e["valid"])
    checked = sum(1 for e in files  # a folder named for its hidden folders alone is no file
                  if not e["findings"] or any(f.code != "hidden-folder" for f in e["findings"]))

    def human() -> None:
        print_findings(st.out, [f for e in files for f in e["findings"]])
        style = "red" if errors else "green"
        st.out.print(text(f"{checked} checked: {checked - invalid} valid, {invalid} invalid "
                          f"({errors} errors, {warnings} warnings)", style))

    st.out.emit({"files": files, "errors": errors, "warnings": warnings, "valid": not errors},
                human)
    if errors:
        raise typer.Exit(2)


def written(verb: str, skill: Any) -> str:
    """What a write did: "created NAME at PATH", or with skills in git the proposal's note (the
    branch and commit a reviewer merges; nothing is served yet)."""
    proposal = getattr(skill, "proposal", None)
    if proposal is not None and proposal.note:
        return f"{skill.name}: {proposal.note}"
    return f"{verb} {skill.name} at {skill.path}"


@app.command()
def new(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Skill name: lowercase letters, digits, hyphens.")],
    description: Annotated[str, typer.Option("--description", "-d",
                                             help="What it does and when to use it.")],
    body: Annotated[Optional[str], typer.Option("--body", "-b", help="Markdown instructions.")] = None,
    body_file: Annotated[Optional[Path], typer.Option(
        "--body-file", "-f", help="Read the body from a file ('-' for stdin).",
        allow_dash=True)] = None,
) -> None:
    """Create a skill in the bank's own library (validated, written atomically, indexed)."""
    from skillbank.errors import AlreadyExistsError
    from skillbank.fsutil import check_slug

    check_slug(name, "skill name")  # before opening the bank: a typo costs no start-up (#27)
    st = state(ctx)
    content = read_text_arg(body, body_file, "the body") or ""
    bank = st.bank(sync=["skills"])  # a name taken in a read-only folder is seen, not shadowed
    try:
        skill = bank.skills.create(name, description, content)
    except AlreadyExistsError:
        existing = _existing(bank, name)
        if existing is not None and not existing.writable:
            raise AlreadyExistsError(
                f"skill {name!r} already exists in the read-only folder {existing.root}; "
                + copy_advice(name)) from None
        raise
    st.out.emit(skill, lambda: st.out.print(text(written("created", skill), "green")))


def _existing(bank: Any, name: str) -> Any:
    from skillbank.errors import SkillbankError

    try:
        return bank.skills.load(name)
    except SkillbankError:
        return None


@app.command()
def copy(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A skill from a read-only folder.")],
    new_name: Annotated[Optional[str], typer.Option(
        "--as", help="The copy's name, where the skill's own is not a valid one "
        "(e.g. 'Excel Automation' --as excel-automation).")] = None,
) -> None:
    """Make a read-only skill the bank's own: copy it (SKILL.md and its files) into the bank's
    library, where it takes precedence and `skills update` can change it.

    Files keep their mode (scripts stay executable); a link to a file inside the skill folder
    is copied as that file. Files over 1 MiB (the limit for what an agent writes through the
    API) are copied too, up to 64 MiB a file. Anything left out (links out of the folder or to
    a folder, pipes, unreadable or larger files) is named, with why (--json: `left_out`).
    Frontmatter the spec refuses in the bank's own library (a list in `metadata`, a list of
    `allowed-tools`) is written in the form the spec allows, each change named (`notes`)."""
    from skillbank.cli import skill_copy
    from skillbank.errors import AlreadyExistsError
    from skillbank.memories.skills.authoring import MAX_RESOURCE_BYTES

    st = state(ctx)
    bank = st.bank(sync=["skills"])
    skill = bank.skills.load(name)
    if skill.writable:
        raise AlreadyExistsError(f"skill {name!r} is already the bank's own ({skill.path}); "
                                 f"change it with `skillbank skills update {name}`")
    target = skill_copy.copy_name(name, new_name)
    if target != name and _existing(bank, target) is not None:
        raise AlreadyExistsError(f"skill {target!r} already exists; pick another name for --as")
    plan = skill_copy.plan_copy(Path(skill.path).parent, MAX_RESOURCE_BYTES)
    extra = skill_copy.spec_frontmatter(skill.frontmatter, plan)
    description = skill_copy.spec_description(skill.description, plan)
    copied = bank.skills.save(target, description, skill.body, frontmatter=extra,
                              resources=dict(plan.resources) or None, carry=False)  # the plan's
    if skill_copy.finish_copy(plan, copied):
        copied = bank.skills.load(target)  # its resources now list the large files too

    def human() -> None:
        st.out.print(text(
            written("copied", copied) if copied.proposal is not None else
            f"copied {name} from {skill.root} to {copied.path}; "
            + ("it now takes precedence, and " if target == name else
               f"the read-only {name!r} is still served beside it, and ")
            + f"`skillbank skills update {target}` changes it", "green"))
        for line in skill_copy.describe(plan):
            st.out.print(text(f"  {line}", "yellow" if line.startswith("left out") else "dim"),
                         soft_wrap=True)

    st.out.emit({**jsonable(copied), "left_out": plan.left_out,
                 "links_copied_as_files": plan.linked, "notes": plan.notes}, human)


@app.command()
def update(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Skill name (in the bank's own library).")],
    description: Annotated[Optional[str], typer.Option(
        "--description", "-d", help="New description.")] = None,
    body: Annotated[Optional[str], typer.Option("--body", "-b", help="New body (markdown).")
                    ] = None,
    body_file: Annotated[Optional[Path], typer.Option(
        "--body-file", "-f", help="Read the new body from a file ('-' for stdin).",
        allow_dash=True)] = None,
) -> None:
    """Change a skill's description or body (validated, written atomically, re-indexed)."""
    st = state(ctx)
    content = read_text_arg(body, body_file, "the body")
    if description is None and content is None:
        raise invalid("nothing to change: give --description, --body or --body-file")
    skill = st.bank(sync=["skills"]).skills.update(name, description=description, body=content)
    st.out.emit(skill, lambda: st.out.print(text(written("updated", skill), "green")))


@app.command()
def search(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="The task, in the words a user would use.")],
    k: Annotated[int, typer.Option("-k", "--k", min=1, max=100, help="How many skills at most.")] = 5,
    min_score: Annotated[Optional[float], typer.Option(
        "--min-score", min=0.0, max=1.0,
        help="Only skills scored at least this (0-1; the default bar is the library's own).")] = None,
    tool: Annotated[Optional[list[str]], typer.Option(
        "--tool", help="A tool the agent has (repeat it); skills that declare tools it lacks "
                       "are left out and named.")] = None,
) -> None:
    """Route a task to the skills that fit it (none when nothing fits)."""
    from skillbank.memories.skills.dependencies import check_available

    st = state(ctx)
    check_available(tool, "--tool")  # `--tool ""` gated every skill (hunt-routing #3, s. 28)
    hits = st.bank(sync=["skills"]).skills.search(task, k=k, min_score=min_score,
                                                  available_tools=tool)
    missing = getattr(hits, "missing_tools", None) or {}
    reason = getattr(hits, "reason", "") or ""

    def human() -> None:
        shown = [h for h in hits if h.shown]  # 0.000: no evidence (as `skills eval` counts)
        for name, lacks in missing.items():
            st.out.note(f"left out {name}: it needs {', '.join(lacks)}")
        if not shown:
            st.out.print(f"No skill for this request: {reason}." if reason else
                         "No skill you can use fits this task (the skills left out need tools "
                         "you lack)." if missing else "No skill fits this task.")
            return
        # Narrow terminals: names may wrap and `why` goes (--json has it), so the description
        # keeps room to be read instead of ~15 characters.
        wide = st.out.console.width >= 110
        columns: list[Any] = ["#", ("skill", {"no_wrap": not (not wide), "overflow": "fold",
                                              "max_width": None if wide else 28}), "score"]
        if wide:
            columns.append(("why", {"no_wrap": False, "max_width": 28}))
        columns.append(("description", {"ratio": 1, "min_width": 30}))
        st.out.print(table(None, columns,
                           [[i, h.name, score(h.score)] + ([h.why] if wide else [])
                            + [short(h.record.description, 100)] for i, h in enumerate(shown, 1)]))

    found = [{"name": h.name, "score": h.score, "why": h.why,
              "description": h.record.description, "path": h.path} for h in hits]
    # `hits.reason` and, with --tool, what the gate left out were dropped (hunt-routing #2, #11)
    if st.out.json and reason and tool is None:  # the list stays bare: say why it is empty
        st.out.err.print(f"no skill for this request: {reason}", highlight=False, soft_wrap=True)
    st.out.emit(found if tool is None else
                {"skills": found, "missing_tools": missing, "reason": reason}, human)


@app.command()
def sync(ctx: typer.Context) -> None:
    """Bring the skill index up to date with the files (embeds only what changed)."""
    st = state(ctx)
    bank = st.bank(sync=None)
    with SyncProgress(st.out) as progress:
        report = bank.skills.sync(progress=progress, sections_progress=progress.sections)
    st.out.emit(report, lambda: render_sync_report(st.out, report))


@app.command()
def watch(
    ctx: typer.Context,
    timeout: Annotated[Optional[float], typer.Option(
        help="Stop after this many seconds (for scripts and tests); default: until Ctrl-C.")] = None,
) -> None:
    """Keep the skill index current, printing each change, until Ctrl-C.

    With --json, each event is one JSON object on its own line (JSON Lines).
    """
    from skillbank.signals import ctrl_c_stopping

    st = state(ctx)
    with ctrl_c_stopping():  # even when started with SIGINT ignored (`cmd &` in a script)
        _watch(st, timeout)


def _watch(st: Any, timeout: float | None) -> None:
    bank = st.bank(sync=None)
    report = bank.skills.sync(asked=False)  # its summary; a later `skills sync` tells the rest
    roots = [str(r) for r, _ in bank.skills.roots if r.is_dir()]
    if st.out.json:
        st.out.write_json({"event": "start", "roots": roots, "report": report}, compact=True)
    else:
        st.out.print(text(f"watching {len(roots)} roots: {sync_summary(report)}", "bold"))
        for root in roots:
            st.out.print(text(f"  {root}", "dim"))
        st.out.print(text("Ctrl-C to stop", "dim"))

    told: list[set[tuple[str, str]]] = [set()]  # the hidden folders said last (the watch's)

    def on_sync(change: Any) -> None:
        if st.out.json:
            st.out.write_json({"event": "sync", "report": change}, compact=True)
            return
        change = hidden_folders_once(change, told)
        st.out.print(text(time.strftime("%H:%M:%S "), "dim"), end="")
        render_sync_report(st.out, change, title="changed")

    stop = threading.Event()
    timer = threading.Timer(timeout, stop.set) if timeout else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        bank.skills.watch(stop_event=stop, on_sync=on_sync)
    except KeyboardInterrupt:
        stop.set()
        st.out.note("stopped")
    finally:
        if timer:
            timer.cancel()


@app.command()
def delete(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Skill name (in the bank's own library).")],
) -> None:
    """Delete a skill from the bank's library (its folder is kept in <root>/.trash)."""
    st = state(ctx)
    trash = st.bank(sync=["skills"]).skills.delete(name)
    st.out.emit({"deleted": name, "trash": str(trash)},
                lambda: st.out.print(text(f"deleted {name} (kept at {trash})", "green")))


@app.command()
def rename(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(help="Current name.")],
    new_name: Annotated[str, typer.Argument(metavar="NEW", help="New name.")],
) -> None:
    """Rename a skill in the bank's library (folder and frontmatter name)."""
    st = state(ctx)
    skill = st.bank(sync=["skills"]).skills.rename(old, new_name)
    st.out.emit(skill, lambda: st.out.print(text(f"renamed {old} → {skill.name} ({skill.path})",
                                                 "green")))


# Drafting from experience (propose, drafts, adopt, discard, history) registers on this app.
from skillbank.cli import skill_drafts as _skill_drafts  # noqa: E402,F401
from skillbank.cli import skill_trust as _skill_trust  # noqa: E402,F401  (scan, review, versions)
from skillbank.cli import skill_eval as _skill_eval  # noqa: E402,F401  (eval: trigger evals, #26)
