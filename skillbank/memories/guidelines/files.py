"""The guideline file format: one markdown file per rule, YAML frontmatter and the rule as body.

Also the text helpers every part of guideline memory shares (one-line cleaning, the caller's
string checks), so that the file format and the callers agree on what a rule's text may hold.
"""

from __future__ import annotations

import os
import re
import stat
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import ValidationError

from skillbank.errors import InvalidInputError
from skillbank.fsutil import UnsafePathError, check_topic, check_unicode, slugify
from skillbank.moments import out_of_range, stored_utc
from skillbank.records import (MAX_SHORT, Finding, Guideline, GuidelineSource,
                               SourceRecord)  # SourceRecord: re-exported

ID_RE = re.compile(r"^gl-[0-9a-f]{12}$")
STATUSES = ("active", "pending", "retired", "superseded")
IN_PLAY = ("active", "pending")  # what new rules are compared with
MAX_FILE_BYTES = 1 << 20
MAX_SOURCES = 20  # kept per file: the first source and the most recent ones
MAX_SOURCE_NAME = 200
#: What a pending rule keeps of an untrusted critique: the part around the sentence it came
#: from. Users met each of 20 pending rules carrying the whole 20,000-character critique.
MAX_PENDING_CRITIQUE = 1500
MAX_NAMESPACE = 128
ALL_NAMESPACES = "*"


# ------------------------------------------------------------------------------------ file format

_OPEN = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*\r?$", re.M)
FRONTMATTER_KEYS = (
    "id", "topic", "when_to_use", "status", "helpful", "harmful", "reinforcements", "sources",
    "supersedes", "superseded_by", "related", "overrides", "untrusted_helpful",
    "untrusted_harmful", "outside_votes", "namespace", "created", "updated",
)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class _Dumper(yaml.SafeDumper):
    """Safe dumper whose strings read back exactly: YAML folds NEL and the Unicode line and
    paragraph separators in plain and single-quoted scalars, so those get double quotes."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = '"' if any(ch in data for ch in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _represent_str)


def render_guideline(g: Guideline) -> str:
    """The file text of a guideline: YAML frontmatter (fixed key order) and the rule as body.

    Writes over a file a person may have annotated go through
    `skillbank.memories.guidelines.file_rewrite.rewrite_guideline`, which keeps their lines."""
    return f"---\n{frontmatter_text(g)}---\n{_one_line(g.text)}\n"


def frontmatter_text(g: Guideline) -> str:
    """The frontmatter `render_guideline` writes for `g`, without its `---` lines."""
    data = frontmatter_values(g)
    for optional in OPTIONAL_KEYS:
        if not data[optional]:  # written only when there is something to say
            del data[optional]
    return dump_yaml(data)


#: Frontmatter keys written only when they hold something.
OPTIONAL_KEYS = ("related", "overrides", "untrusted_helpful", "untrusted_harmful", "outside_votes")


def dump_yaml(data: dict[str, Any]) -> str:
    """Frontmatter entries as `render_guideline` writes them (block style, one line a scalar)."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000,
                     default_flow_style=False)


def frontmatter_values(g: Guideline) -> dict[str, Any]:
    """Every frontmatter key of `g` (`FRONTMATTER_KEYS` order) with the value written for it."""
    sources = []
    for s in g.sources:
        item: dict[str, Any] = {
            "critique": s.critique,
            "task": s.task,
            "source": s.source,
            "score": s.score,
            "at": _iso(s.at),
        }
        rule = getattr(s, "rule", None)
        sentence = getattr(s, "sentence", None)
        if rule:
            item["rule"] = rule
        if sentence:
            item["sentence"] = sentence
        if getattr(s, "trusted", None) is False:
            item["trusted"] = False
        sources.append(item)
    return {
        "id": g.id,
        "topic": g.topic,
        "when_to_use": g.when_to_use,
        "status": g.status,
        "helpful": g.helpful,
        "harmful": g.harmful,
        "reinforcements": g.reinforcements,
        "sources": sources,
        "supersedes": list(g.supersedes),
        "superseded_by": g.superseded_by,
        "related": list(g.related),
        "overrides": list(g.overrides),
        "untrusted_helpful": g.untrusted_helpful,
        "untrusted_harmful": g.untrusted_harmful,
        "outside_votes": dict(sorted(g.outside_votes.items())),
        "namespace": g.namespace,
        "created": _iso(g.created),
        "updated": _iso(g.updated),
    }


def _load_yaml(text: str) -> Any:
    """Bounded YAML load (the SKILL.md loader's bomb guards), falling back to safe_load."""
    try:
        from skillbank.memories.skills.skill_file import _load_yaml as guarded
    except ImportError:  # pragma: no cover - the sibling module ships with skillbank
        return yaml.safe_load(text)
    data, _duplicates = guarded(text)
    return data


def parse_guideline(text: str, *, path: str | None = None, expected_id: str | None = None,
                    expected_topic: str | None = None) -> tuple[Guideline | None, list[Finding]]:
    """Parse a guideline file. Returns (guideline, findings); None when it cannot be used.

    The file name and folder are authoritative for id and topic (a person moving a file to
    another topic folder re-files it); a frontmatter that disagrees gets a warning.
    """
    findings: list[Finding] = []

    def error(code: str, message: str) -> tuple[None, list[Finding]]:
        findings.append(Finding(severity="error", code=code, message=message, path=path))
        return None, findings

    def warn(code: str, message: str) -> None:
        findings.append(Finding(severity="warning", code=code, message=message, path=path))

    opening = _OPEN.match(text)
    if not opening:
        return error("no-frontmatter", "a guideline file starts with a '---' frontmatter line")
    closing = _CLOSE.search(text, opening.end())
    if not closing:
        return error("no-frontmatter", "the frontmatter opened with '---' is never closed")
    raw = text[opening.end():closing.start()]
    body = text[closing.end():].strip()
    try:
        data = _load_yaml(raw)
    except yaml.YAMLError as exc:
        return error("yaml", f"invalid YAML frontmatter: {str(exc).splitlines()[0]}")
    except Exception as exc:  # bomb guard, recursion, constructor errors
        return error("yaml", f"frontmatter refused: {exc}")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return error("frontmatter-type", f"frontmatter must be a mapping, got {type(data).__name__}")
    if not body:
        return error("empty-rule", "the rule text (the body after the frontmatter) is empty")
    body = _one_line(body)
    if not body:
        return error("empty-rule", "the rule text (the body after the frontmatter) is empty")
    if len(body) > MAX_SHORT:
        return error("rule-too-long", f"the rule text is {len(body)} characters; at most {MAX_SHORT}")

    gid = data.get("id")
    if expected_id is not None:
        if gid is not None and gid != expected_id:
            warn("id-mismatch", f"frontmatter id {gid!r} differs from the file name; "
                                f"using {expected_id!r}")
        gid = expected_id
    if not isinstance(gid, str) or not ID_RE.match(gid):
        return error("bad-id", f"guideline id {gid!r} must look like gl-<12 hex digits>")
    topic = data.get("topic")
    if expected_topic is not None:
        if topic is not None and topic != expected_topic:
            warn("topic-mismatch", _ignored_topic(topic, expected_topic, path))
        topic = expected_topic
    topic = topic if topic is not None else "general"
    try:
        topic = check_topic(str(topic), "topic")
    except UnsafePathError as exc:
        return error("bad-topic", str(exc))
    unknown = [k for k in data if k not in FRONTMATTER_KEYS]
    if unknown:
        warn("unknown-key", "unknown frontmatter keys ignored: " + ", ".join(map(str, unknown[:5])))

    raw_sources = data.get("sources") or []
    if not isinstance(raw_sources, list):
        return error("sources-type", "'sources' must be a list")
    sources: list[SourceRecord] = []
    for number, item in enumerate(raw_sources):
        if isinstance(item, str):
            item = {"critique": item}
        if not isinstance(item, dict):
            warn("source-type", f"source {number + 1} is not a mapping; dropped")
            continue
        try:
            sources.append(SourceRecord.model_validate(
                {k: v for k, v in item.items() if v is not None or k == "score"}))
        except ValidationError as exc:
            warn("source-invalid", f"source {number + 1} dropped: {_first_error(exc)}")
    supersedes = data.get("supersedes") or []
    if isinstance(supersedes, str):
        supersedes = [supersedes]
    if not isinstance(supersedes, list) or not all(isinstance(x, str) for x in supersedes):
        return error("supersedes-type", "'supersedes' must be a list of guideline ids")
    related = data.get("related") or []
    if isinstance(related, str):
        related = [related]
    if not isinstance(related, list) or not all(isinstance(x, str) for x in related):
        warn("related-type", "'related' must be a list of guideline ids; ignored")
        related = []
    overrides = data.get("overrides") or []
    if isinstance(overrides, str):
        overrides = [overrides]
    if not isinstance(overrides, list) or not all(isinstance(x, str) for x in overrides):
        warn("overrides-type", "'overrides' must be a list of guideline ids; ignored")
        overrides = []
    namespace = data.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        # str() filed `namespace: [default, team]` under "['default', 'team']", which no one
        # reads: the rule vanished with no problem named (hunt-badinput #3, session 34)
        return error("namespace-type",
                     f"'namespace' must be one namespace name, got a {_yaml_kind(namespace)} "
                     f"({str(namespace)[:80]}); the rule is not served until the file names "
                     "one namespace")
    values = {
        "id": gid,
        "topic": topic,
        "text": body,
        "when_to_use": "" if data.get("when_to_use") is None else str(data.get("when_to_use")),
        "status": data.get("status", "active"),
        "helpful": data.get("helpful", 0) or 0,
        "harmful": data.get("harmful", 0) or 0,
        "reinforcements": data.get("reinforcements", 0) or 0,
        "sources": sources,
        "supersedes": supersedes,
        "superseded_by": data.get("superseded_by"),
        "related": related,
        "overrides": overrides,
        "untrusted_helpful": data.get("untrusted_helpful", 0) or 0,
        "untrusted_harmful": data.get("untrusted_harmful", 0) or 0,
        "outside_votes": _outside_votes(data.get("outside_votes"), warn),
        "namespace": namespace or "default",
        "path": path or "",
    }
    for key in ("created", "updated"):
        if data.get(key) is not None:
            values[key] = data[key]
    try:
        guideline = Guideline.model_validate(values)
    except ValidationError as exc:
        return error("invalid", f"guideline does not validate: {_first_error(exc)}")
    # Hand-written times without a zone ("created: 2024-05-01") are read as UTC, so that every
    # time compares with every other.
    guideline = guideline.model_copy(update={
        "created": stored_utc(guideline.created), "updated": stored_utc(guideline.updated),
        "sources": [src.model_copy(update={"at": stored_utc(src.at)}) for src in guideline.sources]})
    for key in ("created", "updated"):  # year 1 loaded, then broke the Stats page (hunt-time #2)
        problem = out_of_range(getattr(guideline, key))
        if problem is not None:
            return error("date-range", f"{key}: {problem}; write a date in that range")
    if guideline.status not in STATUSES:  # pragma: no cover - the Literal already checks
        return error("bad-status", f"status must be one of {', '.join(STATUSES)}")
    return guideline, findings


_NAMESPACE_LINE = re.compile(r"^namespace:[ \t]*(.*?)[ \t]*\r?$", re.M)


def _yaml_kind(value: Any) -> str:
    """What a YAML value is, in words."""
    return {list: "list", dict: "mapping", bool: "yes/no value", int: "number",
            float: "number"}.get(type(value), type(value).__name__)


def written_namespace(path: str | None) -> str | None:
    """The namespace a guideline file that was not read as a rule says it belongs to: its
    frontmatter's `namespace` (absent: "default", as `parse_guideline` files a rule), or where
    the YAML does not parse, its one top-level `namespace:` line; None when that cannot be told
    (no such file, a link, not text, no frontmatter, no or several such lines, not a namespace).

    `problems()` shows a file's findings to its namespace's reviewers only; they went to every
    reviewer, another namespace's rule ids and frontmatter text included (hunt-scope #1,
    session 28)."""
    from skillbank.scope import check_namespace

    try:
        if path is None or not stat.S_ISREG(os.lstat(path).st_mode) \
                or os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            text = handle.read(MAX_FILE_BYTES + 1).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    opening = _OPEN.match(text)
    if not opening:
        return None
    closing = _CLOSE.search(text, opening.end())
    raw = text[opening.end():closing.start() if closing else len(text)]
    try:
        data = _load_yaml(raw) if closing else None
    except Exception:  # noqa: BLE001 - a YAML slip: the namespace line may still be read
        data = None
    if isinstance(data, dict):
        value: Any = data.get("namespace") or "default"
    else:
        lines = _NAMESPACE_LINE.findall(raw)
        if len(lines) != 1:
            return None
        try:
            value = yaml.safe_load(lines[0]) if lines[0] else None
        except yaml.YAMLError:
            value = lines[0]
    try:
        return check_namespace(value)
    except InvalidInputError:
        return None


def _ignored_topic(written: Any, folder: str, path: str | None) -> str:
    """What a curator who edited `topic:` by hand is told: the folder files a rule, so the
    edit does nothing, and moving the file does what they meant. "frontmatter topic 'sql'
    differs from the folder" was only logged, and `guidelines list` said nothing
    (hunt-curator #4, session 25)."""
    message = f"topic: {written} is ignored: the folder {folder} decides"
    try:
        wanted = check_topic(slugify(str(written)), "topic")
    except UnsafePathError:
        return message
    if wanted == folder:
        return message
    guidelines = Path(path).parent.parent.name if path else "guidelines"
    return f"{message}; move the file to {guidelines}/{wanted}/ to re-file it"


def _outside_votes(value: Any, warn: Any) -> dict[str, int]:
    """`outside_votes` as written: principal -> net vote. A hand edit that is not such a map
    is dropped with a warning (the rule still loads; those voters count again when they vote)."""
    if not value:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and type(v) is int for k, v in value.items()):
        warn("outside-votes-type", "'outside_votes' must map principals to whole numbers; ignored")
        return {}
    return {k: v for k, v in value.items() if v}


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))


# ------------------------------------------------------------------------------------ text

_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


def _one_line(text: str) -> str:
    """One line of plain text: control characters, stray BOMs and surrogates become spaces."""
    return " ".join(_INVISIBLE.sub(" ", str(text or "")).split())


def critique_excerpt(critique: str, sentence: str | None,
                     limit: int = MAX_PENDING_CRITIQUE) -> str:
    """`critique` cut to about `limit` characters around `sentence` (the part a reviewer needs
    to judge the rule: what it was read from, with some context), saying what was cut.

    An untrusted critique of 20,000 characters read into 20 pending rules was stored whole in
    each rule file (20 copies); now each keeps its own excerpt, and nothing short is cut."""
    if len(critique) <= limit:
        return critique
    text = " ".join(critique.split())
    # The sentence as cleaned (one line, maybe cut short): look for its first words.
    head = " ".join((sentence or "").rstrip("…").split()[:8])
    found = text.find(head) if head else -1
    start = max(0, found - limit // 3) if found >= 0 else 0
    end = min(len(text), start + limit)
    start = max(0, end - limit)
    return (("… " if start else "") + text[start:end].strip() + (" …" if end < len(text) else "")
            + f" [excerpt: {end - start} of {len(critique)}{_EXCERPT_TAIL}")


_EXCERPT_TAIL = " characters; the rest was not kept for an untrusted source]"


def is_excerpt_of(stored: str, critique: str, sentence: str | None) -> bool:
    """Whether `stored` is `critique_excerpt(critique, sentence)` (checked cheaply first)."""
    return (len(critique) > MAX_PENDING_CRITIQUE
            and stored.endswith(f" of {len(critique)}{_EXCERPT_TAIL}")
            and stored == critique_excerpt(critique, sentence))


def kept_excerpt_of(source: SourceRecord, critique: str) -> bool:
    """Whether `source` keeps an excerpt of `critique` (`learning._kept`): the same critique
    learned again by an untrusted caller is still recognised as the one these rules came from.
    (Moved from `learning`, which keeps to the module size limit.)"""
    return source.trusted is False and is_excerpt_of(source.critique, critique,
                                                     source.sentence or source.rule)


def has_words(text: str) -> bool:
    """Whether `text` holds a letter or a digit. A rule of emoji or punctuation alone ("👍",
    "...", a zero-width space) has nothing to follow, and its dense score (never zero) served
    it to every request as empty of words; add() refused it, learn(rules=) stored it active
    (hunt-badinput #4, session 26)."""
    return any(ch.isalnum() for ch in text)


NO_WORDS = "has no words (only symbols or emoji); write the rule as a short imperative sentence"


def _clean(text: str, limit: int) -> str:
    text = _one_line(text)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _check_text(value: Any, what: str, limit: int, *, optional: bool = False) -> str | None:
    """A caller's string: the right type, not too long, and encodable as UTF-8."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidInputError(f"{what} is {len(value)} characters; at most {limit}")
    return check_unicode(value, what)


def _trim_sources(sources: Iterable[GuidelineSource]) -> list[GuidelineSource]:
    """Keep the first source (why the rule exists) and the most recent ones."""
    sources = list(sources)
    if len(sources) <= MAX_SOURCES:
        return sources
    return sources[:1] + sources[-(MAX_SOURCES - 1):]
