"""`skillbank skills copy NAME`: a read-only skill made the bank's own as a faithful copy of its
folder, with anything left out named.

Why not only `bank.skills.save(resources=...)`: resources travel as bytes (through an owner
process too), which carry no file mode, and they are capped at 1 MiB a file. That cap is an
authoring limit for what an agent writes and reads back through the API (`read_resource`
returns no more), not for a folder a person copies on their own disk, where a slide template
or a font of a few MiB is part of the skill. So the SKILL.md and the files up to 1 MiB go
through `save` (validated, written under the root's lock, indexed, audited); then, on the disk
where the copy now lives, larger files (up to `COPY_MAX_BYTES`) are copied beside them and
every file gets the mode `cp` would give it (a script stays executable). A link to a file
inside the skill folder is copied as that file; a link out of the folder, a link to a folder,
a broken link, a pipe or device, an unreadable file or one over `COPY_MAX_BYTES` is left out
and reported by name, never dropped silently.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from skillbank.errors import InvalidInputError
from skillbank.fsutil import atomic_write, safe_join
from skillbank.memories.skills.folder_files import SKILL_FILE, SKIP_DIRS
from skillbank.memories.skills.skill_file import (MAX_COMPATIBILITY, MAX_DESCRIPTION, MAX_NAME,
                                                 validate_name)

#: The largest file a copy takes: a skill's files are instructions, scripts and their assets;
#: a file over 64 MiB is data that belongs elsewhere, and copying it unasked fills the root.
COPY_MAX_BYTES = 64 << 20
_CHUNK = 1 << 20


@dataclass
class CopyPlan:
    """What a copy of one skill folder takes, and what it leaves out (and why)."""

    resources: dict[str, bytes] = field(default_factory=dict)  # through `save` (<= 1 MiB each)
    large: dict[str, Path] = field(default_factory=dict)  # copied on disk after `save`
    modes: dict[str, int] = field(default_factory=dict)  # each copied file's source mode
    linked: list[str] = field(default_factory=list)  # in-folder links copied as files
    left_out: list[dict[str, str]] = field(default_factory=list)  # {"path", "reason"}
    notes: list[str] = field(default_factory=list)  # anything else a person should know

    def leave_out(self, relative: str, reason: str) -> None:
        self.left_out.append({"path": relative, "reason": reason})
        self.modes.pop(relative, None)
        self.resources.pop(relative, None)
        self.large.pop(relative, None)


def suggested_name(name: str) -> str:
    """A valid skill name made of an invalid one: "Excel Automation" -> "excel-automation",
    "Résumé Builder" -> "resume-builder" (Latin letters lose their accents first: it suggested
    "r-sum-builder" and "caf", hunt-author #6, session 24)."""
    from skillbank.fsutil import latin_plain

    slug = re.sub(r"[^a-z0-9]+", "-", latin_plain(name)).strip("-")[:MAX_NAME].strip("-")
    return slug or "copied-skill"


def copy_name(name: str, new_name: str | None) -> str:
    """The name a copy is saved under: `new_name`, else the skill's own when the spec allows
    it (a read-only folder serves "Excel Automation"; the bank's own library cannot hold it)."""
    if new_name is not None:
        problems = validate_name(new_name)
        if problems:
            raise InvalidInputError(f"--as {new_name!r}: {problems[0].message}")
        return new_name
    problems = validate_name(name)
    if problems:  # the rule it breaks, in the validator's words: "a-z, 0-9 and '-'" blamed
        # the characters of '-2chat-automation', whose fault is its leading '-' (hunt-clicorpus
        # #3, session 36); the command given is one the CLI takes (`copy_command`)
        from skillbank.cli.hints import copy_command

        raise InvalidInputError(
            f"{name!r} is not a valid skill name for the bank's own library "
            f"({problems[0].message}); copy it under one: "
            f"`{copy_command(name, suggested_name(name))}`")
    return name


def spec_frontmatter(frontmatter: dict[str, Any], plan: "CopyPlan") -> dict[str, Any]:
    """The frontmatter a copy is saved with (all but name and description), in the forms the
    spec allows; each value rewritten or left out is noted in `plan`. Read-only folders are
    served as they are, flagged; the bank's own library takes only valid skills, so a copy of a
    skill with `metadata: {dependencies: [openpyxl]}` was refused and could not be made."""
    out: dict[str, Any] = {}
    for key, value in frontmatter.items():
        if key in ("name", "description"):
            continue
        if value is None or value == "":
            plan.notes.append(f"{key} was empty: left out")
        elif key == "metadata" and isinstance(value, dict):
            fixed = {str(k): _as_text(v) for k, v in value.items() if v is not None}
            changed = [str(k) for k, v in value.items() if v is not None
                       and (not isinstance(k, str) or not isinstance(v, str))]
            if changed:
                plan.notes.append("metadata values written as text, as the spec wants: "
                                  + ", ".join(f"{k}: {fixed[k]!r}" for k in changed))
            empty = [str(k) for k, v in value.items() if v is None]
            if empty:
                plan.notes.append("empty metadata left out: " + ", ".join(empty))
            if fixed:
                out[key] = fixed
        elif key == "metadata":
            out[key] = {"value": _as_text(value)}
            plan.notes.append(f"metadata was not a mapping; kept as metadata.value: "
                              f"{out[key]['value']!r}")
        elif key == "allowed-tools" and isinstance(value, list):
            out[key] = " ".join(_as_text(v) for v in value)
            plan.notes.append(f"allowed-tools written as one space-separated string: "
                              f"{out[key]!r}")
        elif key in ("license", "compatibility", "allowed-tools") and not isinstance(value, str):
            out[key] = _as_text(value)
            plan.notes.append(f"{key} written as text: {out[key]!r}")
        else:
            out[key] = value
    compatibility = out.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > MAX_COMPATIBILITY:
        del out["compatibility"]
        plan.notes.append(f"compatibility left out: {len(compatibility)} characters, over the "
                          f"spec's {MAX_COMPATIBILITY}; write a shorter one in the copy's file")
    return out


def spec_description(description: str, plan: "CopyPlan") -> str:
    """The description a copy is saved with: cut to the spec's limit, noted (it was refused)."""
    if len(description) <= MAX_DESCRIPTION:
        return description
    plan.notes.append(f"description cut to {MAX_DESCRIPTION} characters (the spec's limit; it "
                      f"had {len(description)}): `skillbank skills update` changes it")
    return description[:MAX_DESCRIPTION].rstrip()


def _as_text(value: Any) -> str:
    """A value as a person reads it in YAML: true, 2, ["a", "b"]."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, list, dict)) or value is None:
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def plan_copy(folder: Path, max_resource_bytes: int) -> CopyPlan:
    """Walk a skill folder (never following links) and sort its files into a `CopyPlan`."""
    plan = CopyPlan()
    inside = folder.resolve()
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        kept = []
        for name in sorted(dirnames):
            if name in SKIP_DIRS:
                continue  # vendored and VCS folders: never part of a skill (resources.py)
            if (here / name).is_symlink():
                plan.leave_out(_rel(here / name, folder), "a link to a folder (not followed)")
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            item = here / name
            relative = _rel(item, folder)
            if relative != SKILL_FILE:
                _add(plan, item, relative, inside, max_resource_bytes)
    return plan


def _rel(item: Path, folder: Path) -> str:
    return item.relative_to(folder).as_posix()


def _add(plan: CopyPlan, item: Path, relative: str, inside: Path, max_resource_bytes: int
         ) -> None:
    """Put one file into the plan, or leave it out with the reason."""
    source = item
    if item.is_symlink():
        target = Path(os.path.realpath(item))
        if target != inside and inside not in target.parents:
            plan.leave_out(relative, "a link out of the skill folder (not followed)")
            return
        if not target.exists():
            plan.leave_out(relative, "a broken link")
            return
        source = target
    try:
        info = os.stat(source)
    except OSError as exc:
        plan.leave_out(relative, f"cannot be read: {exc.strerror or exc}")
        return
    if not stat.S_ISREG(info.st_mode):
        what = "a link to a folder" if stat.S_ISDIR(info.st_mode) else \
            "not a regular file (a pipe, socket or device)"
        plan.leave_out(relative, what)
        return
    if info.st_size > COPY_MAX_BYTES:
        plan.leave_out(relative, f"{info.st_size:,} bytes, over the copy limit of "
                                 f"{COPY_MAX_BYTES >> 20} MiB a file; copy it by hand if "
                                 "the skill needs it")
        return
    if source is not item:
        plan.linked.append(relative)
    plan.modes[relative] = stat.S_IMODE(info.st_mode)
    if info.st_size > max_resource_bytes:
        plan.large[relative] = source
        return
    try:
        plan.resources[relative] = source.read_bytes()
    except OSError as exc:
        plan.leave_out(relative, f"cannot be read: {exc.strerror or exc}")


def finish_copy(plan: CopyPlan, copied: Any) -> bool:
    """After `save`: copy the large files and set every file's mode in the new folder.

    Returns whether anything was written here (the caller then reloads the skill so its
    resources list the large files). A proposal (skills in git) is a branch, not a folder on
    this disk: its large files are left out, named."""
    if getattr(copied, "proposal", None) is not None:
        for relative in list(plan.large):
            plan.leave_out(relative, "over 1 MiB: a proposal carries files up to 1 MiB; add "
                                     "it to the proposal's branch by hand")
        executable = sorted(r for r, m in plan.modes.items() if m & 0o111)
        if executable:
            plan.notes.append("the proposal commits these without their executable bit (set "
                              "it on the branch by hand): " + ", ".join(executable))
        return False
    destination = Path(copied.path).parent
    wrote = False
    for relative, source in list(plan.large.items()):
        try:
            atomic_write(safe_join(destination, relative), _chunks(source), private=False)
            wrote = True
        except (OSError, InvalidInputError) as exc:
            why = getattr(exc, "strerror", None) or exc
            plan.leave_out(relative, f"could not be copied: {why}")
    for relative, mode in plan.modes.items():
        _set_mode(destination, relative, mode)
    return wrote


def _chunks(source: Path) -> Iterator[bytes]:
    """A file's bytes a chunk at a time (a large asset is never held in memory whole)."""
    with open(source, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield chunk


def _set_mode(destination: Path, relative: str, source_mode: int) -> None:
    """Give a copied file the mode `cp` would: the source's permission bits, less what the
    umask takes (read off the copy, which was created with the umask's default); execute bits
    follow the read bits the umask leaves."""
    try:
        path = safe_join(destination, relative)
        current = stat.S_IMODE(os.stat(path).st_mode)
        allowed = current | ((current & 0o444) >> 2)
        wanted = source_mode & 0o777 & allowed
        if wanted != current:
            os.chmod(path, wanted)
    except (OSError, InvalidInputError):
        pass  # the copy is there and readable; a mode that cannot be set is no reason to fail


def describe(plan: CopyPlan) -> list[str]:
    """Lines for a person: what was left out and why, and which links became files."""
    lines = [f"left out {entry['path']}: {entry['reason']}" for entry in plan.left_out]
    if plan.linked:
        lines.append("copied as files (links inside the skill folder): " + ", ".join(plan.linked))
    return lines + plan.notes
