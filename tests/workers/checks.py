"""Assertions shared by the durability and concurrency tests: files and index agree."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Ack:
    kind: str  # exp | gl | skill
    id: str
    text: str


def parse_acks(stdout: str, prefix: str = "ACK") -> list[Ack]:
    """Complete `ACK kind id "json text"` lines (a line cut by the kill is not an ACK)."""
    acks = []
    for line in stdout.splitlines(keepends=True):
        if not line.endswith("\n") or not line.startswith(prefix + " "):
            continue
        _, kind, ident, text = line.rstrip("\n").split(" ", 3)
        acks.append(Ack(kind, ident, json.loads(text)))
    return acks


def journal_lines(root: Path) -> tuple[list[dict[str, Any]], list[str], int]:
    """(parsed events, bad complete lines, bytes of a torn last line) of every journal file."""
    events: list[dict[str, Any]] = []
    bad: list[str] = []
    torn = 0
    for path in sorted((root / "experiences").glob("*.jsonl")):
        data = path.read_bytes()
        lines = data.split(b"\n")
        torn += len(lines[-1])  # what follows the last newline: a torn write, or nothing
        for raw in lines[:-1]:
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
                assert isinstance(event, dict)
                events.append(event)
            except (ValueError, AssertionError):
                bad.append(raw.decode("utf-8", "replace")[:200])
    return events, bad, torn


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp") if "chroma" not in p.relative_to(root).parts]


def check_files_match_index(bank: Any, root: Path) -> dict[str, Any]:
    """Every record in the files is in the index and nothing else is; every file loads."""
    from skillbank.memories.guidelines.memory import ID_RE
    from skillbank.memories.skills.skill_file import read_skill_file

    # Skills: each SKILL.md in the bank's own library loads and is indexed; nothing else is.
    on_disk = {}
    for path in sorted((root / "skills").glob("*/SKILL.md")):
        doc, findings = read_skill_file(path)
        assert doc is not None, f"{path} does not load: {findings}"
        on_disk[doc.name] = path
    assert set(bank.skills.names()) == set(on_disk), "skill index and files disagree"

    # Guidelines: each gl-*.md parses and is known; temp files are not.
    files = {p.stem for p in (root / "guidelines").glob("*/*.md") if ID_RE.match(p.stem)}
    known = {g.id for g in bank.guidelines.list()}
    assert known == files, f"guideline files {sorted(files - known)} unread / {sorted(known - files)} extra"
    assert set(bank.index("guidelines").ids()) == files

    # Experiences: every complete journal line parses; the index holds exactly the added ids.
    events, bad, torn = journal_lines(root)
    added = {e["record"]["id"] for e in events if e.get("op") == "add"}
    assert set(bank.index("experiences").ids()) == added, "experience index and journal disagree"

    leftovers = temp_files(root)
    for path in leftovers:  # a temp file left by a kill is never a record
        assert path.name.startswith("."), path
    return {"skills": len(on_disk), "guidelines": len(files), "experiences": len(added),
            "bad_lines": bad, "torn_bytes": torn, "temp_files": leftovers}


def check_acks(bank: Any, acks: list[Ack]) -> None:
    """Every acknowledged write is in the files and found through the index."""
    superseded = set()
    for ack in acks:
        if ack.kind == "exp":
            record = bank.experiences.get(ack.id)
            assert record.task == ack.text, ack
            hits = bank.experiences.recall(ack.text, k=5, count_use=False)
            assert ack.id in [h.id for h in hits], f"recall by exact text misses {ack}"
        elif ack.kind == "gl":
            g = bank.guidelines.get(ack.id)
            # A rule the memory took as the same as an older one is merged into it: the write is
            # then one more source of that guideline (sources are capped, oldest dropped).
            wordings = {g.text} | {getattr(s, "rule", None) or s.critique for s in g.sources}
            assert ack.text in wordings or g.reinforcements >= 19, (ack, g.text)
            if g.status == "superseded":  # a later rule contradicted it: still there, not served
                superseded.add(ack.id)
                continue
            assert g.status == "active", (ack, g.status)
            hits = bank.guidelines.search(g.text, k=5)
            assert ack.id in [h.id for h in hits], f"search by exact text misses {ack}"
        elif ack.kind == "skill":
            skill = bank.skills.load(ack.id)
            assert skill.description == ack.text, ack
            hits = bank.skills.search(ack.text, k=5)
            assert ack.id in [h.name for h in hits], f"search by exact description misses {ack}"
        else:  # pragma: no cover
            raise AssertionError(ack)
    assert len(superseded) <= len(acks) // 10, f"too many superseded: {superseded}"
