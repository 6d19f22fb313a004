"""How a skill sync's report reads to a person: the counts, what changed, what could not be
loaded, what is shadowed or hidden (`skills sync`, `skills watch`, `reindex`; the JSON is the
report itself). Apart from the `skills` commands, which it kept past the size limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillbank.cli.common import Output, text


def sync_summary(report: Any) -> str:
    parts = [f"{len(report.added)} added", f"{len(report.changed)} changed",
             f"{len(report.removed)} removed", f"{report.unchanged} unchanged"]
    if report.skipped:
        parts.append(f"{len(report.skipped)} skipped")
    # Texts a watcher's thread embeds are "queued", not "0 embedded" (hunt-clicorpus #4)
    queued = getattr(report, "queued", 0)
    done = f"{report.embedded} texts embedded" if report.embedded or not queued else ""
    done += (", " if done and queued else "") + (f"{queued} texts queued for embedding"
                                                 if queued else "")
    return ", ".join(parts) + f" ({done}, {report.seconds:.1f} s)"


def print_findings(out: Output, findings: list[Any], limit: int | None = None) -> int:
    """Linter style: each file, then one line per finding (paths stay whole). Returns how many
    findings were left out by `limit`."""
    by_path: dict[str, list[Any]] = {}
    for f in findings:
        by_path.setdefault(f.path or "", []).append(f)
    shown = 0
    for path, items in by_path.items():
        if limit is not None and shown >= limit:
            break
        if path:
            out.print(text(path, "bold"), soft_wrap=True)
        for f in items:
            line = text(f"  {f.severity:<8}", "red" if f.severity == "error" else "yellow")
            line.append(f"{f.code:<20} ")
            line.append(f.message)
            out.print(line, soft_wrap=True)
            shown += 1
    return len(findings) - shown


#: Warning codes that are only warnings; any other warning in a sync report is a spec error
#: the lenient loader downgraded (see `skill_file.parse_skill_text`).
PLAIN_WARNINGS = frozenset({"shadowed", "unknown-key", "yaml-repaired", "duplicate-key",
                            "leading-blank-lines"})


def print_changes(out: Output, report: Any, title: str) -> None:
    """A sync report's first lines: the counts, then what was added, changed, removed."""
    out.print(text(f"{title}: {sync_summary(report)}", "bold"))
    for label, names in (("added", report.added), ("changed", report.changed),
                         ("removed", report.removed)):
        if names:
            out.print(text(f"  {label}: {_names(names)}"))
    already = getattr(report, "already", None) or {}
    if already:  # the watcher's syncs went to no one (hunt-corpus #4): "0 added" was all
        out.print(text("  synced already, since the last sync asked for (the skill folders are "
                       "watched): " + "; ".join(f"{len(names)} {kind}: {_names(names)}"
                                                for kind, names in already.items()), "bold"))


def _names(names: list[str]) -> str:
    more = f", … ({len(names) - 10} more)" if len(names) > 10 else ""
    return ", ".join(names[:10]) + more


def render_sync_report(out: Output, report: Any, title: str = "skills") -> None:
    """A skill sync's report (a guideline or experience report is not one: its warnings are no
    Agent Skills spec violations; `commands.render_memory_report`)."""
    print_changes(out, report, title)
    errors = [f for f in report.findings if f.severity == "error"]
    if errors:
        out.print(text(f"  {len(report.skipped)} files could not be loaded:", "red"))
        left = print_findings(out, errors, limit=10)
        if left:
            out.print(text(f"  … and {left} more errors", "dim"))
    shadowed = sum(1 for f in report.findings if f.code == "shadowed")
    # Loading downgrades Agent Skills spec violations to warnings (skills that break the spec
    # are still served, as the spec's client guide says); they are errors under `skills
    # validate`, so they are counted apart, by skill, not drowned among the warnings (#27).
    # A file that does not parse is counted above; a shadowed copy is not served at all: neither
    # is "served, flagged" (hunt-author #5, session 24: both were, by their folder's name).
    apart = {f.path for f in report.findings if f.severity == "error" or f.code == "shadowed"}
    broken = sorted({f.path or "" for f in report.findings if f.severity == "warning"
                     and f.code not in PLAIN_WARNINGS
                     and f.code not in ("kept-last-good", "hidden-skills", "hidden-folder")
                     and f.path not in apart})
    if broken:
        names = [Path(p).parent.name for p in broken]
        more = f", … ({len(names) - 10} more)" if len(names) > 10 else ""
        out.print(text(f"  {len(broken)} skills break the Agent Skills spec (invalid name or "
                       "frontmatter; served, flagged): " + ", ".join(names[:10]) + more,
                       "yellow"))
    warnings = sum(1 for f in report.findings if f.severity == "warning"
                   and f.code in PLAIN_WARNINGS) - shadowed
    if shadowed:  # `skills validate` checks one file at a time: it never names these
        out.print(text(f"  {shadowed} skills shadowed by a same-named skill that comes first "
                       "(in an earlier root, or at an earlier path of the same root; not served; "
                       "which ones: `skillbank --json skills sync`, findings with code "
                       "\"shadowed\")", "dim"))
    hiding = [f for f in report.findings if f.code == "hidden-skills"]
    if hiding:  # a skill's folder holding more skills: not served, and never said (#5)
        out.print(text(f"  {len(hiding)} skills hide the SKILL.md files in the folders below "
                       "theirs (not served; a skill's subfolders are its resources):", "yellow"))
        for f in hiding[:10]:
            out.print(text(f"    {f.path} {f.message}", "yellow"), soft_wrap=True)
        if len(hiding) > 10:
            out.print(text(f"    … and {len(hiding) - 10} more (`skillbank --json skills sync`, "
                           "code \"hidden-skills\")", "dim"))
    print_hidden_folders(out, [(f.path or "", f.message) for f in report.findings
                               if f.code == "hidden-folder"])
    if warnings:
        out.print(text(f"  {warnings} warnings (details: `skillbank skills validate ROOT` or "
                       "--json)", "dim"))


def print_hidden_folders(out: Output, folders: list[tuple[str, str]]) -> None:
    """The hidden folders a walk skipped that hold SKILL.md files, each with what it says
    (`unreadable.hidden_folder`): a root whose skills all sit in `.curated` synced "0 added"
    without a word why (hunt-clicorpus #1, session 36)."""
    if not folders:
        return
    out.print(text(f"  {len(folders)} hidden folders hold SKILL.md files that are not indexed "
                   "(folders whose name starts with '.' are skipped):", "yellow"))
    for path, message in folders[:10]:
        out.print(text(f"    {path}: {message.split(':')[0]}", "yellow"), soft_wrap=True)
    if len(folders) > 10:
        out.print(text(f"    … and {len(folders) - 10} more (`skillbank --json skills sync`, "
                       "code \"hidden-folder\")", "dim"))
    out.print(text("  give such a folder as --skills-dir (or `skillbank config add-skills-dir "
                   "FOLDER`) to index its skills", "yellow"))


def hidden_folders_once(report: Any, told: list[set[tuple[str, str]]]) -> Any:
    """`report` without its hidden-folder findings when they are the ones `told[0]` holds (what
    the watch said last), and `told[0]` updated: every watch event repeated the same block
    (review 1, session 36). Said again when the set changes."""
    hidden = {(f.path or "", f.message) for f in report.findings if f.code == "hidden-folder"}
    same = hidden == told[0]
    told[0] = hidden
    if not same:
        return report
    return report.model_copy(update={"findings": [
        f for f in report.findings if f.code != "hidden-folder"]})

