"""Trigger evals for skill authors: does the library route a skill's own test queries to it?

The Agent Skills guide ("Optimizing descriptions") has authors keep queries labelled with
whether the skill should fire, as a JSON array of `{"query": ..., "should_trigger": true|false}`
(skill-creator's scripts also take `{"evals": [...]}` and `"prompt"` for `"query"`); JSON lines
with the same objects are read too (a `.jsonl` file, or one whose first line is a whole object;
any other file that is not JSON is named once, at the line and column where it breaks), and so
is one such object alone, on one line or pretty-printed. Where a skill keeps them:
`evals/trigger_evals.json` (the name skill collections use with skill-creator's `run_eval.py`),
or one of `TRIGGER_FILES`.

Here the "agent" is skillbank's own router over the whole library: a query triggers the skill
when it is among the first `k` hits of `skills.search` that `skills search` shows (a hit scored
0.000 is not shown; an empty answer triggers nothing). A
should-trigger query that routes elsewhere is a *miss* (its top hits are reported); a
should-not query that routes to the skill is a *false trigger*. Routing is deterministic, so
each query runs once (the guide's runs-per-query and trigger-rate threshold are for sampled
models).
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Iterable

from skillbank.errors import InvalidInputError

TRIGGER_FILES = ("evals/trigger_evals.json", "evals/trigger-evals.json", "evals/trigger_evals.jsonl",
                 "evals/eval_queries.json", "eval_queries.json")
MAX_EVAL_BYTES = 2_000_000
MAX_CASES = 2_000


@dataclass
class Case:
    query: str
    should_trigger: bool
    where: str  # "file:line" or "file: item N", for messages


@dataclass
class CaseResult:
    query: str
    should_trigger: bool
    triggered: bool
    routed_to: list[str]  # the first max(k, 3) shown hits' names, best first ([]: none fits)
    where: str

    @property
    def passed(self) -> bool:
        return self.triggered == self.should_trigger


@dataclass
class SkillEval:
    skill: str
    file: str
    k: int
    results: list[CaseResult] = field(default_factory=list)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def misses(self) -> list[CaseResult]:
        return [r for r in self.results if r.should_trigger and not r.triggered]

    @property
    def false_triggers(self) -> list[CaseResult]:
        return [r for r in self.results if not r.should_trigger and r.triggered]

    def as_dict(self) -> dict[str, Any]:
        return {"skill": self.skill, "file": self.file, "k": self.k, "total": len(self.results),
                "passed": self.passed, "misses": len(self.misses),
                "false_triggers": len(self.false_triggers),
                "results": [{"query": r.query, "should_trigger": r.should_trigger,
                             "triggered": r.triggered, "passed": r.passed,
                             "routed_to": r.routed_to, "where": r.where} for r in self.results]}


def find_file(skill_folder: Path) -> Path | None:
    """The skill's trigger-eval file, if it keeps one in a known place."""
    for relative in TRIGGER_FILES:
        candidate = skill_folder / relative
        if candidate.is_file():
            return candidate
    return None


def not_loaded(findings: Iterable[Any], loaded: set[Path]) -> list[dict[str, str]]:
    """Error rows for skill folders that keep an eval file but whose SKILL.md is not served
    (`findings`: a sync's; `loaded`: the folders of the skills that are).

    Users met a 1.08 MB SKILL.md refused as too large while its eval file was skipped in
    silence: "passed 1/1", and `--fail-on-miss` exited 0 with the skill not served at all. A
    skill shadowed by a same-named one, or nested inside another skill's folder, is a warning,
    not an error, and its evals were skipped the same way: "No skill keeps trigger evals", exit
    0 (hunt-evalgate #1, session 37)."""
    rows: dict[Path, dict[str, str]] = {}
    for finding in findings:
        path = Path(str(getattr(finding, "path", "") or ""))
        code, message = getattr(finding, "code", ""), getattr(finding, "message", "")
        if path.name != "SKILL.md":
            continue
        if getattr(finding, "severity", "") == "error":
            unserved = [(path.parent, f"SKILL.md could not be loaded ({code}): {message}")]
        elif code == "shadowed":
            unserved = [(path.parent, f"its evals were not run: it is not served ({message})")]
        elif code == "hidden-skills":
            unserved = [(inner.parent, f"its evals were not run: it is not served, as it is "
                                       f"inside the folder of the skill at {path}, whose "
                                       "subfolders are its resources; move it out")
                        for inner in _nested(path.parent)]
        else:
            continue
        for folder, error in unserved:
            found = find_file(folder)
            if folder in loaded or folder in rows or found is None:
                continue
            rows[folder] = {"skill": folder.name, "file": str(found), "error": error}
    return list(rows.values())


def _nested(folder: Path, most: int = 1_000) -> list[Path]:
    """The SKILL.md files below a skill's folder (not its own), at most `most` of them."""
    return [p for p in islice(folder.rglob("SKILL.md"), most + 1) if p.parent != folder][:most]


def held(skills: Iterable[Any]) -> list[dict[str, str]]:
    """Error rows for held skills (of `skills`, a listing with the held ones) that keep an eval
    file: a held skill is not served, so its evals cannot run, and saying nothing made
    `skills eval --fail-on-miss` a clean pass while they never ran (hunt-disclose #6, session
    25). The row says why and how to serve it, as `skills eval NAME` does."""
    from skillbank.memories.skills.trust import held_message

    rows = []
    for skill in skills:
        found = find_file(Path(skill.path).parent) if skill.held else None
        if found is not None:
            rows.append({"skill": skill.name, "file": str(found),
                         "error": f"its evals were not run: {held_message(skill)}"})
    return rows


def _case(obj: Any, where: str, problems: list[str]) -> Case | None:
    if not isinstance(obj, dict):
        problems.append(f"{where}: expected an object with \"query\" and \"should_trigger\", "
                        f"got {type(obj).__name__}")
        return None
    query = obj.get("query", obj.get("prompt"))
    if not isinstance(query, str) or not query.strip():
        problems.append(f"{where}: \"query\" must be a non-empty string")
        return None
    unroutable = _unroutable(query)
    if unroutable:
        problems.append(f"{where}: \"query\" {unroutable}")
        return None
    flag = obj.get("should_trigger")
    if not isinstance(flag, bool):
        problems.append(f"{where}: \"should_trigger\" must be true or false, got "
                        f"{json.dumps(flag) if flag is not None else 'nothing'}")
        return None
    return Case(query=query.strip(), should_trigger=flag, where=where)


def _unroutable(query: str) -> str:
    """Why skill search would refuse `query` ('' when it routes), checked as the file loads:
    one query over 50,000 characters or with a lone surrogate (a JSON "\\ud83d") raised from
    the search, outside the per-file handling, so `skills eval` over every skill ended with no
    row for any skill and a message naming no file or item (hunt-badinput #1, session 26).
    A query with no letter or digit (emoji only, a zero-width space) routes nowhere: it was
    counted a miss ("-> nothing fits") and failed `--fail-on-miss` as if the description were
    wrong; it is a bad entry, with the reason `skills search` gives (hunt-evalgate #4,
    session 37)."""
    from skillbank.query_limits import unsearchable, wordless

    why = unsearchable(query, "skill search")
    return why or (f"has nothing to route on: {wordless(query)}" if wordless(query) else "")


def _read(path: Path) -> str:
    """An eval file's text; anything that is not a readable UTF-8 file of a sane size is
    invalid input naming the path (a folder, a pipe, a missing or unreadable file), never an
    OS error: the caller named the file, so it is theirs to fix."""
    try:
        info = path.stat()
    except OSError as exc:
        raise InvalidInputError(f"cannot read the eval file {path}: "
                                f"{exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InvalidInputError(f"{path} is a folder; give the eval file itself (a JSON array "
                                "or JSON lines of {\"query\", \"should_trigger\"})")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInputError(f"{path} is not a regular file (a pipe or device is not read)")
    if info.st_size > MAX_EVAL_BYTES:
        raise InvalidInputError(f"{path} is {info.st_size:,} bytes; trigger-eval files over "
                                f"{MAX_EVAL_BYTES:,} bytes are not read")
    try:
        return path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors, PowerShell
        # Out-File) made a valid eval file "invalid JSON at line 1 column 1"
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read the eval file {path}: "
                                f"{exc.strerror or exc}") from None


def _json_lines(text: str, path: Path) -> bool:
    """Whether a file that is not one JSON document is meant as JSON lines: a `.jsonl` name,
    or a first line that is a whole JSON value and no `[`. A pretty-printed array or object
    with one slip (a trailing comma) is one document: read line by line, it gave one "not
    JSON" per line and never the slip's place."""
    if path.suffix == ".jsonl":
        return True
    first = next((line for line in text.splitlines() if line.strip()), "")
    if first.lstrip().startswith("["):
        return False
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return False
    return True


def _where(exc: json.JSONDecodeError) -> str:
    """Where a JSON document breaks, pointing at a trailing comma when that is the slip."""
    before = exc.doc[:exc.pos].rstrip()
    if before.endswith(",") and exc.doc[exc.pos:exc.pos + 1] in ("]", "}"):
        comma = len(before) - 1
        line = exc.doc.count("\n", 0, comma) + 1
        column = comma - exc.doc.rfind("\n", 0, comma)
        return (f"invalid JSON at line {line} column {column}: a trailing comma before "
                f"{exc.doc[exc.pos]!r} (line {exc.lineno} column {exc.colno})")
    return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"


def load(path: Path) -> list[Case]:
    """The cases of one eval file; every bad line or item is named in one clear error."""
    text = _read(path)
    problems: list[str] = []
    cases: list[Case] = []
    name = path.name
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if not _json_lines(text, path):
            raise InvalidInputError(f"{path}: {_where(exc)}") from None
        document = None
    if isinstance(document, dict) and "evals" not in document and (
            "query" in document or "prompt" in document):
        # One case: a one-line file of JSON lines, or the same object pretty-printed, which
        # was re-read line by line and refused with a "not JSON" per line (hunt-routing #5,
        # session 28).
        document = [document]
    if document is None:
        for number, line in enumerate(text.splitlines(), 1):  # JSON lines
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{name}:{number}: not JSON ({exc.msg}, column {exc.colno})")
                continue
            case = _case(obj, f"{name}:{number}", problems)
            if case:
                cases.append(case)
    if document is not None:
        items = document.get("evals") if isinstance(document, dict) else document
        if not isinstance(items, list):
            raise InvalidInputError(f"{path}: expected a JSON array of {{\"query\", "
                                    "\"should_trigger\"} objects (or {\"evals\": [...]})")
        for number, obj in enumerate(items, 1):
            case = _case(obj, f"{name}: item {number}", problems)
            if case:
                cases.append(case)
    if problems:
        shown = "; ".join(problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise InvalidInputError(f"{len(problems)} bad entr{'y' if len(problems) == 1 else 'ies'}"
                                f" in {path}: {shown}{more}")
    if not cases:
        raise InvalidInputError(f"{path} holds no trigger queries")
    if len(cases) > MAX_CASES:
        raise InvalidInputError(f"{path} holds {len(cases)} queries; at most {MAX_CASES}")
    seen: dict[str, bool] = {}
    for case in cases:
        if seen.setdefault(case.query, case.should_trigger) != case.should_trigger:
            raise InvalidInputError(f"{path}: the query {case.query!r} is labelled both ways")
    return cases


def run(skills: Any, name: str, cases: list[Case], file: str, k: int = 1,
        available_tools: Any = None) -> SkillEval:
    """Route every case through `skills.search` over the whole library. A query the search
    refuses is invalid input naming its file and item (it named neither; hunt-badinput #1,
    session 26).

    Only the hits `skills search` shows count (`Hit.shown`): a hit scored 0.000 ("no
    evidence", left out of the search table) made a should-not query "fire" at any k > 1 and
    `--fail-on-miss` fail CI (hunt-routing #8, session 28). `routed_to` holds the first
    max(k, 3) of them, every hit the verdict was taken on: it kept 3, so a false trigger at
    rank 4..k was reported with a list that lacked the skill (hunt-routing #4, session 28)."""
    report = SkillEval(skill=name, file=file, k=k)
    reported = max(k, 3)  # a miss at k=1 still shows where the query went
    for case in cases:
        try:
            hits = skills.search(case.query, k=reported, available_tools=available_tools)
        except InvalidInputError as exc:
            raise InvalidInputError(f"{file}: {case.where}: {exc}") from None
        routed = [h.name for h in hits if h.shown]
        report.results.append(CaseResult(case.query, case.should_trigger, name in routed[:k],
                                         routed[:reported], case.where))
    return report
