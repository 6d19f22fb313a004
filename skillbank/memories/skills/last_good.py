"""The last good version of a skill whose SKILL.md stops parsing, kept while it is edited.

An editor's save caught half way, a `git checkout` mid-way or a sync tool leaves a SKILL.md
truncated for a moment. The watcher re-synced, the skill left the index, and an agent working
then got `find_skills` → [] and `load_skill` → "no skill named …" and concluded the skill did
not exist (hunt-skills, session 20, #4). Now a file that stops parsing *at the path it was
indexed from* keeps its index entry (routing as before), the sync reports the parse finding with
a `kept-last-good` warning, and the entry goes only when the file or its folder is gone, or is
replaced when the file parses again.

Serving a skill discloses its body, which is read from the file. So the text each skill of the
bank's own writable library was indexed from is kept here (`<root>/skill-last-good/`), and
`load` serves it while the file does not parse, with a note saying so. Only the bank's own:
a team or third-party skill is served only from files its trust rules judged (its scan and
its pin are of the folder as it is now), so while its SKILL.md does not parse it stays routed
but `load` answers "being edited … try again", never an older body. A skill that never parsed
has no entry and no copy: it is reported and never served.

A file left mid-merge (git's conflict markers, `skill_file.merge_conflicts`) is treated the same
way, but it will not fix itself: the refusal says a person must resolve it, not "try again in a
moment" (hunt-git #2 and #6, session 23). A person's read (`include_held=True`: `skills show`,
the browser) is never refused for a file that does not parse: it shows the file as it is, with
the problem named (`as_it_is`), so the person who must fix it can.

The copy is a cache, checked against the index's content hash before it is served (a torn or
stale copy is never served), so it is written without fsync: a first sync of a large library
must stay fast.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Callable, Iterable

from skillbank.errors import InvalidInputError
from skillbank.records import Finding

KEPT_DIR = "skill-last-good"


def _file(bank_root: Path, name: str) -> Path:
    # Hashed: a hand-written frontmatter's name is not a safe file name.
    return bank_root / KEPT_DIR / (hashlib.sha256(name.encode()).hexdigest()[:40] + ".md")


def keep(bank_root: Path, name: str, data: bytes) -> None:
    """Keep `data` (the SKILL.md bytes a skill was just indexed from) as its last good text."""
    target = _file(bank_root, name)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, target)
    except OSError:
        pass  # only a cache: the skill then answers "being edited" while its file is broken


def has(bank_root: Path, name: str) -> bool:
    """Whether a text is kept for `name` (one stat: a sync asks it of every own skill)."""
    return _file(bank_root, name).is_file()


def keep_indexed(bank_root: Path, digest: Callable[[Path, bytes], str],
                 indexed: list[tuple[Path, bytes | None, str, str]]) -> None:
    """Keep the text each of the bank's own skills was just indexed from: (path, the bytes the
    scan read or None, their content hash, name); bytes that no longer hash so are not kept."""
    for path, data, expected, name in indexed:
        if data is None:
            try:
                data = path.read_bytes()
            except OSError:
                continue
        if digest(path, data) == expected:
            keep(bank_root, name, data)


def prune(bank_root: Path, indexed: Iterable[str]) -> None:
    """Drop every kept text whose skill is not in the index any more, however it left (review:
    a folder removed by hand and then `forget`, or a `reindex` while a file was half-saved,
    left a copy no sync would ever name: forget means gone)."""
    folder = bank_root / KEPT_DIR
    if not folder.is_dir():
        return
    wanted = {_file(bank_root, name).name for name in indexed}
    for kept in folder.iterdir():
        if kept.name not in wanted:
            try:
                kept.unlink()
            except OSError:
                pass


def drop(bank_root: Path, names: Iterable[str]) -> None:
    """Forget the kept text of skills that left the index (deleted, renamed, folder gone)."""
    for name in names:
        try:
            _file(bank_root, name).unlink()
        except OSError:
            pass


def read(bank_root: Path, name: str, matches: Callable[[bytes], bool]) -> str | None:
    """The kept text of `name` when `matches` (its content hash is the indexed one), else None."""
    try:
        data = _file(bank_root, name).read_bytes()
        return data.decode("utf-8") if matches(data) else None
    except (OSError, UnicodeDecodeError):
        return None


def served(bank_root: Path, skill: Any, findings: list[Finding],
           matches: Callable[[bytes], bool]) -> tuple[str, Any]:
    """The text to serve for `skill` while its SKILL.md does not parse (`findings` say why),
    and the skill with the note that says so: the kept copy of a bank's own writable skill,
    checked by `matches` against the index's hash. Any other skill, or no good copy: the
    `being_edited` error is raised."""
    from skillbank.memories.skills.skill_file import parse_skill_text

    path = Path(skill.path)
    text = read(bank_root, skill.name, matches) \
        if skill.trust == "own" and skill.writable else None
    if text is None or parse_skill_text(text, path=str(path),
                                        folder_name=path.parent.name)[0] is None:
        raise being_edited(skill, findings)
    return text, skill.model_copy(update={"notes": [*skill.notes, editing_note(findings)]})


def document(bank_root: Path, skill: Any, findings: list[Finding],
             matches: Callable[[bytes], bool], *, person: bool) -> tuple[Any, Any]:
    """What `load` serves of a skill whose SKILL.md does not parse (`findings` say why), and the
    skill with its note: for a `person`, the file as it is (`as_it_is`); for an agent, the last
    good version (`served`) or the `being_edited` refusal."""
    from skillbank.memories.skills.skill_file import parse_skill_text

    if person:
        return as_it_is(bank_root, skill, findings, matches)
    path = Path(skill.path)
    text, skill = served(bank_root, skill, findings, matches)
    doc = parse_skill_text(text, path=str(path), folder_name=path.parent.name)[0]
    if doc is None:  # served() parsed it; kept for the type checker
        raise being_edited(skill, findings)
    return doc, skill


AS_IT_IS = "does not parse"


def as_it_is(bank_root: Path, skill: Any, findings: list[Finding],
             matches: Callable[[bytes], bool]) -> tuple[Any, Any]:
    """A person's read of a skill whose SKILL.md does not parse: the whole file as it is for the
    body (no frontmatter: it did not parse), and a note naming the problem and what agents get.

    Why: the person who must resolve a team skill's merge conflict met `skills show NAME` exit 2
    and a browser 400 saying "try again in a moment" (hunt-git #6, session 23), while docs/trust.md
    says a person's read shows the file as it is."""
    from skillbank.memories.skills.skill_file import SkillDocument

    try:
        served(bank_root, skill, findings, matches)
        agents = "agents are served its last good version until it is fixed"
    except InvalidInputError:
        agents = "agents are refused it until it is fixed"
    note = f"{AS_IT_IS}: {_errors(findings)}; shown as the file is ({agents})"
    path = Path(skill.path)
    body = SkillDocument(frontmatter={}, body=_text_of(path), fallback_name=path.parent.name)
    return body, skill.model_copy(update={"notes": [*skill.notes, note]})


def is_as_it_is_note(note: str) -> bool:
    """Whether `note` says the body is the unparsed file as it is (a face shows it verbatim,
    not rendered as markdown)."""
    return note.startswith(AS_IT_IS + ":")


def _text_of(path: Path) -> str:
    """The file's text, or '' when it cannot be shown as text (too large, binary, not UTF-8,
    unreadable: its finding says so)."""
    from skillbank.memories.skills.resources import open_for_hash
    from skillbank.memories.skills.skill_file import MAX_SKILL_BYTES

    try:
        with open_for_hash(path) as handle:  # regular files only, never blocks
            data = handle.read(MAX_SKILL_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    return "" if len(data) > MAX_SKILL_BYTES or "\0" in text else text


def skill_md(bank_root: Path, skill: Any, data: bytes,
             matches: Callable[[bytes], bool]) -> bytes:
    """The SKILL.md bytes to serve as a file (MCP's ``skill://NAME/SKILL.md``, a LangChain or
    LlamaIndex resource read): `data` when it parses, else what `load` serves meanwhile.

    Why: `load` served the last good body of a half-saved skill while the resource read of the
    same SKILL.md returned the torn file (session 20's left item), so an MCP client that reads
    skills as resources met the broken text that `load` had been built to keep from it."""
    from skillbank.memories.skills.skill_file import parse_skill_text

    path = Path(skill.path)
    findings: list[Finding]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        findings = [Finding(severity="error", code="encoding", path=str(path),
                            message=f"{path} is not valid UTF-8 (byte {exc.start})")]
    else:
        doc, findings = parse_skill_text(text, path=str(path), folder_name=path.parent.name)
        if doc is not None and "\0" not in text:
            return data
        if doc is not None:
            findings = [Finding(severity="error", code="binary", path=str(path),
                                message=f"{path} contains NUL bytes; not a text file")]
    return served(bank_root, skill, findings, matches)[0].encode("utf-8")


def kept_finding(name: str, path: Path) -> Finding:
    """What the sync says beside the parse finding of a file it kept the last good entry of."""
    return Finding(severity="warning", code="kept-last-good", path=str(path), message=(
        f"skill {name!r} stays in the index as its last good version until {path.name} parses "
        "again (or is removed); fix the error above"))


EDITING = "being edited: its SKILL.md does not parse right now"


def editing_note(findings: list[Finding]) -> str:
    """The note served beside a skill's last good version (an agent and a person see why)."""
    if any(f.code == "too-large" for f in findings):  # it will not fix itself (review 3, s. 33)
        return (f"{EDITING} ({_errors(findings)}); this is the last good version until a "
                "person cuts the file back (move long material to references/)")
    return f"{EDITING} ({_errors(findings)}); this is the last good version"


def is_editing_note(note: str) -> bool:
    """Whether `note` says the skill was served as its last good version (faces that list the
    file's digest describe those bytes then, not the file's)."""
    return note.startswith(EDITING)


def being_edited(skill: Any, findings: list[Finding]) -> InvalidInputError:
    """The error `load` answers when a skill's file does not parse and no good copy is served."""
    why = "" if skill.trust == "own" else (
        f"; a {skill.trust} skill is served only from the files its trust rules judged")
    if any(f.code == "merge-conflict" for f in findings):  # it will not fix itself (hunt-git #6)
        return InvalidInputError(
            f"skill {skill.name!r} is not served: its SKILL.md at {skill.path} has an unresolved "
            f"merge conflict ({_errors(findings)}){why}; it is served again once a person "
            "resolves the conflict", findings)
    if any(f.code == "too-large" for f in findings):  # nor will a file past the size limit
        return InvalidInputError(
            f"skill {skill.name!r} is not served: its SKILL.md at {skill.path} is too large "
            f"({_errors(findings)}){why}; it is served again once a person cuts it back "
            "(move long material to references/)", findings)
    return InvalidInputError(
        f"skill {skill.name!r} is being edited: its SKILL.md at {skill.path} does not parse "
        f"right now ({_errors(findings)}){why}; try again in a moment", findings)


def _errors(findings: list[Finding]) -> str:
    return "; ".join(f.message for f in findings if f.severity == "error")[:300] or "unreadable"
