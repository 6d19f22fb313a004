"""Guideline memory: critiques in, durable de-duplicated rules out, retrieved for new tasks.

A guideline is one markdown file, ``<folder>/<topic>/<id>.md``: YAML frontmatter (id, topic,
when_to_use, status, counters, sources, supersession links, namespace, timestamps) and the rule
text as the body. Files are the truth; the hybrid index (dense Chroma + BM25) is rebuilt from
them by :meth:`GuidelineMemory.sync`, which compares content hashes, so a person may edit, move
or delete a file by hand.

Learning (:meth:`GuidelineMemory.learn`): the distiller turns a critique into candidate rules.
Each actionable candidate is compared with the guidelines of its namespace that are still in
play (active and pending). Similarity is measured against a guideline's *profile*: the mean of
the vectors of every wording that ever reinforced it (for each source: the candidate rule, the
critique sentence it came from and the critique), plus the TF-IDF overlap of their words, minus
a small penalty across topics. Critiques of one rule rarely share a sentence but do share the
rule's context and jargon, so a profile that grows with each reinforcement recognises the next
paraphrase far better than the first wording alone does. The nearest guidelines (at most three)
are handed to ``distiller.relate`` with that similarity:

* ``same`` -> merge: one more reinforcement, the source is kept, the wording stays unless the
  new wording is clearly more specific (it contains every content word of the old one and adds
  at least one; see :func:`more_specific`).
* ``contradiction`` -> the new rule is added and the old one marked ``superseded`` (links both
  ways); a merge also supersedes the other neighbours that contradict it. A rule never
  supersedes one created or merged by the same call, and an untrusted source never supersedes
  anything: its rule waits as ``pending`` and supersedes on approval.
* otherwise -> added (``pending`` when the source is not trusted).

Critique text is data. It is stored verbatim in the sources and only ever reaches the distiller
as text to read; no status, trust or routing decision looks at its words.

Retrieval (:meth:`GuidelineMemory.search`): active guidelines of one namespace only. What is
embedded decides retrieval, because task wording rarely repeats critique wording: the rule text
with its when_to_use, the when_to_use alone, and the rule with the tasks it was learned from (a
rule that three critiques of "write a runbook" produced applies to the next runbook). Keyword
text adds the topic, the source tasks and the source critiques. A small prior from votes and
reinforcements reorders near ties.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import secrets
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import yaml
from pydantic import Field, ValidationError

from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import UnsafePathError, atomic_write, check_slug, safe_join, slugify
from skillbank.index import HybridIndex, IndexItem, tokenize
from skillbank.records import (
    MAX_SHORT,
    MAX_TEXT,
    Finding,
    Guideline,
    GuidelineSource,
    Hit,
    LearnEntry,
    LearnReport,
    SyncReport,
    utcnow,
)

log = logging.getLogger("skillbank.guidelines")

__all__ = [
    "GuidelineMemory",
    "LearnEntry",
    "LearnReport",
    "render_guideline",
    "parse_guideline",
    "more_specific",
]

ID_RE = re.compile(r"^gl-[0-9a-f]{12}$")
STATUSES = ("active", "pending", "retired", "superseded")
IN_PLAY = ("active", "pending")  # what new rules are compared with
MAX_FILE_BYTES = 1 << 20
MAX_SOURCES = 20  # kept per file: the first source and the most recent ones
MAX_TASK_CHUNKS = 8  # source tasks embedded per guideline (most recent distinct ones)
MAX_PROFILE_TEXTS = 24  # wordings averaged into a guideline's matching profile
MAX_NEIGHBOURS = 3  # nearest guidelines handed to distiller.relate per candidate
SHORTLIST = 24  # guidelines the index proposes for a profile comparison (large pools)
MAX_KEYWORD_CHARS = 20_000
MAX_SOURCE_NAME = 200
MAX_NAMESPACE = 128
ALL_NAMESPACES = "*"

# Prior added to fused reciprocal-rank scores (~1/61 at rank 1, ~0.00026 between neighbouring
# ranks): at most ~0.0006, about two rank steps near the top, so it only reorders near ties.
VOTE_PRIOR = 0.0004
REINFORCEMENT_PRIOR = 0.0002

# A search hit needs some evidence: dense cosine or normalised BM25 at least this high.
MIN_DENSE = 0.15
MIN_KEYWORD = 0.15

class SourceRecord(GuidelineSource):
    """A source as stored in the file: the critique plus the wording it contributed.

    ``rule`` is the candidate rule the critique was distilled into and ``sentence`` the critique
    sentence it came from; both feed the guideline's matching profile and show a person which
    wording each reinforcement brought.
    """

    rule: str | None = Field(default=None, max_length=MAX_SHORT)
    sentence: str | None = Field(default=None, max_length=MAX_SHORT)


# ------------------------------------------------------------------------------------ file format

_OPEN = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*\r?$", re.M)
_FRONTMATTER_KEYS = (
    "id", "topic", "when_to_use", "status", "helpful", "harmful", "reinforcements", "sources",
    "supersedes", "superseded_by", "namespace", "created", "updated",
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
    """The file text of a guideline: YAML frontmatter (fixed key order) and the rule as body."""
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
        sources.append(item)
    data = {
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
        "namespace": g.namespace,
        "created": _iso(g.created),
        "updated": _iso(g.updated),
    }
    front = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1_000_000,
                      default_flow_style=False)
    body = _one_line(g.text)
    return f"---\n{front}---\n{body}\n"


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
            warn("topic-mismatch", f"frontmatter topic {topic!r} differs from the folder; "
                                   f"using {expected_topic!r}")
        topic = expected_topic
    topic = topic if topic is not None else "general"
    try:
        check_slug(str(topic), "topic")
    except UnsafePathError as exc:
        return error("bad-topic", str(exc))
    unknown = [k for k in data if k not in _FRONTMATTER_KEYS]
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
        "namespace": str(data.get("namespace") or "default"),
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
        "created": _aware(guideline.created), "updated": _aware(guideline.updated),
        "sources": [src.model_copy(update={"at": _aware(src.at)}) for src in guideline.sources]})
    if guideline.status not in STATUSES:  # pragma: no cover - the Literal already checks
        return error("bad-status", f"status must be one of {', '.join(STATUSES)}")
    return guideline, findings


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"{where}: {first.get('msg')}" if where else str(first.get("msg"))


# ------------------------------------------------------------------------------------ wording

_CONTENT_RE = re.compile(r"[a-z0-9][a-z0-9_'-]*")
_FILLER = frozenset(
    """a an the and or but to of in on at by for with from into as is are be it its this that
    these those you your we our they them their do does did not no never always please also just
    so very should must can could would will make use using""".split()
)


def _content_words(text: str) -> set[str]:
    return {w for w in tokenize(text) if w not in _FILLER}


def more_specific(new: str, old: str) -> bool:
    """True when `new` says everything `old` says and more (wording replaced on merge).

    Content words are compared after stemming (the index's tokenizer): the new wording must
    contain every content word of the old one and add at least one, and stay a short rule.
    "Add tests." -> "Add tests for edge cases and failure paths." is taken; a paraphrase that
    drops a word of the old wording is not, so the wording a person reviewed stays put.
    """
    old_words, new_words = _content_words(old), _content_words(new)
    if not old_words or len(new) > 400:
        return False
    return old_words < new_words


_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


def _one_line(text: str) -> str:
    """One line of plain text: control characters, stray BOMs and surrogates become spaces."""
    return " ".join(_INVISIBLE.sub(" ", str(text or "")).split())


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
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            f"{what} is not valid Unicode text (it holds a lone surrogate); "
            "send UTF-8 text") from None
    return value


# ------------------------------------------------------------------------------------ the memory


class GuidelineMemory:
    """Guidelines on disk, indexed for search, learned from critiques."""

    def __init__(
        self,
        folder: Path | str,
        index: HybridIndex,
        *,
        settings: Any = None,
        distiller: Any = None,
        embed: Callable[[list[str]], np.ndarray] | None = None,
        write_lock: Any = None,
    ) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.index = index
        self.settings = settings
        self._distiller_source = distiller
        self._embed_fn = embed
        self.write_lock = write_lock if write_lock is not None else threading.RLock()
        self._lock = threading.RLock()
        self._items: dict[str, Guideline] = {}
        self._files: dict[str, tuple[int, int]] = {}  # path -> (mtime_ns, size) at last read
        self._digests: dict[str, str] = {}  # id -> content hash of the file last read
        self._loaded = False
        self._vectors: dict[str, np.ndarray] = {}  # text -> unit vector (matching cache)
        self._profiles: dict[str, tuple[Any, np.ndarray]] = {}
        self._bags: dict[str, tuple[Any, dict[str, float], frozenset[str]]] = {}

    # Settings and collaborators ------------------------------------------------------------------
    def _setting(self, name: str, default: Any) -> Any:
        return getattr(self.settings, name, default) if self.settings is not None else default

    @property
    def default_namespace(self) -> str:
        return str(self._setting("namespace", "default"))

    @property
    def retire_margin(self) -> int:
        return int(self._setting("retire_harmful_margin", 3))

    @property
    def match_floor(self) -> float:
        """Neighbours below this similarity are not even shown to the distiller.

        The distiller's own "same matter" floor for contradictions is ``related_threshold``
        minus a margin; going lower would only cost relate calls (model calls, for an LLM).
        """
        return float(self._setting("related_threshold", 0.60)) - 0.25

    @property
    def distiller(self) -> Any:
        source = self._distiller_source
        if source is None:
            from skillbank.distill import RuleDistiller

            self._distiller_source = source = RuleDistiller(
                same_threshold=float(self._setting("merge_threshold", 0.86)),
                related_threshold=float(self._setting("related_threshold", 0.60)),
            )
        if hasattr(source, "rules_from_critique"):
            return source
        return source()  # the bank passes a factory so the distiller can be swapped later

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        if self._embed_fn is not None:
            vectors = np.asarray(self._embed_fn(texts), dtype=np.float32)
        else:
            from skillbank.embeddings import embed_texts

            vectors = np.asarray(embed_texts(self.index.embedding_function, texts), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vectors / norms

    def _vectors_for(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            for text, vector in zip(missing, self._embed(missing)):
                self._vectors[text] = vector
            if len(self._vectors) > 50_000:  # a cache, not a store: drop the oldest half
                for key in list(self._vectors)[:25_000]:
                    del self._vectors[key]
        return np.stack([self._vectors[t] for t in texts])

    # Validation ----------------------------------------------------------------------------------
    @staticmethod
    def _check_id(gid: str) -> str:
        if not isinstance(gid, str):
            raise InvalidInputError(f"guideline id must be a string, got {type(gid).__name__}")
        check_slug(gid, "guideline id")
        if not ID_RE.match(gid):
            raise InvalidInputError(
                f"{gid!r} is not a guideline id: they look like gl-<12 hex digits>; "
                "find ids with bank.guidelines.list(namespace=\"*\") or search()")
        return gid

    @staticmethod
    def _check_topic(topic: str) -> str:
        return check_slug(topic, "topic")

    def _namespace(self, namespace: str | None, *, allow_all: bool = False) -> str:
        if namespace is None:
            return self.default_namespace
        _check_text(namespace, "namespace", MAX_NAMESPACE)
        if not namespace.strip():
            raise InvalidInputError("namespace must be a non-empty string")
        if namespace == ALL_NAMESPACES and not allow_all:
            raise InvalidInputError(f"namespace {ALL_NAMESPACES!r} (all) is only for list/counts")
        if _INVISIBLE.search(namespace) or namespace != namespace.strip():
            raise InvalidInputError(
                f"namespace must be at most {MAX_NAMESPACE} printable characters, with no "
                "control characters or surrounding spaces")
        return namespace

    def _path_for(self, topic: str, gid: str) -> Path:
        return safe_join(self.folder, f"{self._check_topic(topic)}/{self._check_id(gid)}.md")

    def _new_id(self) -> str:
        while True:
            gid = "gl-" + secrets.token_hex(6)
            if gid not in self._items and self.index.metadata(gid) is None:
                return gid

    # Scanning and sync ---------------------------------------------------------------------------
    def _scan(self) -> tuple[dict[str, Path], list[Finding]]:
        """Guideline files on disk: `<topic>/<id>.md`; anything else is reported, not read."""
        found: dict[str, Path] = {}
        findings: list[Finding] = []
        if not self.folder.is_dir():
            return found, findings
        for topic_dir in sorted(os.scandir(self.folder), key=lambda e: e.name):
            if topic_dir.name.startswith("."):
                continue
            if not topic_dir.is_dir(follow_symlinks=False):
                if topic_dir.name.endswith(".md"):
                    findings.append(Finding(severity="warning", code="stray-file",
                                            path=topic_dir.path,
                                            message="guideline files live in <topic>/<id>.md; "
                                                    "this one is not read"))
                continue
            try:
                check_slug(topic_dir.name, "topic")
            except UnsafePathError:
                findings.append(Finding(severity="warning", code="bad-topic-folder",
                                        path=topic_dir.path,
                                        message="topic folders are slugs (a-z, 0-9, '-'); "
                                                "files in this one are not read"))
                continue
            for entry in sorted(os.scandir(topic_dir.path), key=lambda e: e.name):
                if entry.name.startswith(".") or not entry.name.endswith(".md"):
                    continue
                gid = entry.name[:-3]
                if not entry.is_file(follow_symlinks=False):
                    findings.append(Finding(severity="warning", code="not-a-file",
                                            path=entry.path, message="not a regular file; skipped"))
                    continue
                if not ID_RE.match(gid):
                    findings.append(Finding(severity="warning", code="bad-file-name",
                                            path=entry.path,
                                            message="guideline files are named gl-<12 hex>.md; "
                                                    "this one is not read"))
                    continue
                if gid in found:
                    findings.append(Finding(severity="error", code="duplicate-id", path=entry.path,
                                            message=f"{gid} is also at {found[gid]}, which wins"))
                    continue
                found[gid] = Path(entry.path)
        return found, findings

    def _stat_all(self) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        found, _ = self._scan()
        for path in found.values():
            try:
                st = path.stat()
            except OSError:
                continue
            out[str(path)] = (st.st_mtime_ns, st.st_size)
        return out

    @staticmethod
    def _digest(path: Path, data: bytes) -> str:
        return hashlib.sha256(str(path).encode() + b"\0" + data).hexdigest()

    def _read(self, gid: str, path: Path) -> tuple[Guideline | None, str, list[Finding]]:
        try:
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                return None, "", [Finding(severity="error", code="too-large", path=str(path),
                                          message=f"{size} bytes; at most {MAX_FILE_BYTES}")]
            data = path.read_bytes()
        except OSError as exc:
            return None, "", [Finding(severity="error", code="unreadable", path=str(path),
                                      message=str(exc))]
        if b"\0" in data:
            return None, "", [Finding(severity="error", code="binary", path=str(path),
                                      message="contains NUL bytes; not a text file")]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, "", [Finding(severity="error", code="encoding", path=str(path),
                                      message=f"not valid UTF-8 (byte {exc.start})")]
        guideline, findings = parse_guideline(text, path=str(path), expected_id=gid,
                                              expected_topic=path.parent.name)
        return guideline, self._digest(path, data), findings

    def sync(self) -> SyncReport:
        """Make memory and index equal to the files: re-read changed files, drop deleted ones.

        Unparseable files are reported (``skipped`` + ``findings``) and left out; sync never
        raises for a bad file.
        """
        started = time.perf_counter()
        report = SyncReport()
        with self._lock, self.write_lock:
            found, report.findings = self._scan()
            indexed = self.index.hashes()
            items: dict[str, Guideline] = {}
            files: dict[str, tuple[int, int]] = {}
            digests: dict[str, str] = {}
            to_index: list[IndexItem] = []
            for gid, path in found.items():
                try:  # before reading, so an edit made while we read is seen next time
                    st = path.stat()
                    files[str(path)] = (st.st_mtime_ns, st.st_size)
                except OSError:
                    pass
                guideline, digest, findings = self._read(gid, path)
                report.findings.extend(findings)
                if guideline is None:
                    report.skipped.append(str(path))
                    continue
                items[gid] = guideline
                digests[gid] = digest
                if indexed.get(gid) == digest:
                    report.unchanged += 1
                    continue
                (report.changed if gid in indexed else report.added).append(gid)
                to_index.append(self._index_item(guideline, digest))
            removed = sorted(gid for gid in indexed if gid not in items)
            for start in range(0, len(to_index), 64):
                report.embedded += self.index.upsert(to_index[start:start + 64])
            if removed:
                self.index.delete(removed)
                report.removed = removed
            self._items = items
            self._files = files
            self._digests = digests
            self._profiles = {k: v for k, v in self._profiles.items() if k in items}
            self._bags = {k: v for k, v in self._bags.items() if k in items}
            self._loaded = True
        report.seconds = time.perf_counter() - started
        return report

    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self.sync()

    def _refresh(self) -> None:
        """Pick up files changed by hand (or by another process) since they were last read.

        A stat of every file (no reading, no embedding unless something changed): done before
        every write and by the inventory views (list, counts, topics, playbook)."""
        if not self._loaded or self._stat_all() != self._files:
            self.sync()

    # Index items ---------------------------------------------------------------------------------
    @staticmethod
    def _source_tasks(g: Guideline) -> list[str]:
        tasks: list[str] = []
        for source in reversed(g.sources):  # most recent first
            task = " ".join((source.task or "").split())
            if task and task not in tasks:
                tasks.append(task[:MAX_SHORT])
            if len(tasks) >= MAX_TASK_CHUNKS:
                break
        return tasks

    def _index_item(self, g: Guideline, digest: str) -> IndexItem:
        """What a guideline is found by (see the module docstring)."""
        when = " ".join(g.when_to_use.split())
        tasks = self._source_tasks(g)
        texts = [f"{g.text} {when}".strip()]  # the rule and when it applies
        if when:
            texts.append(when)  # when it applies, alone: the kind of task decides
        if tasks:  # the rule as used: what it was learned on (one text, so it reads as a whole)
            texts.append(f"{g.text} {when} Tasks: {'; '.join(tasks)}".strip())
        critiques = "\n".join(s.critique for s in g.sources)
        keyword = "\n".join([g.text, g.text, when, g.topic.replace("-", " "), "\n".join(tasks),
                             critiques])[:MAX_KEYWORD_CHARS]
        metadata = {
            "kind": "guideline",
            "status": g.status,
            "topic": g.topic,
            "namespace": g.namespace,
            "hash": digest,
            "path": g.path,
            "helpful": g.helpful,
            "harmful": g.harmful,
            "reinforcements": g.reinforcements,
        }
        return IndexItem(id=g.id, embed_texts=texts, keyword_text=keyword, metadata=metadata)

    # Writing -------------------------------------------------------------------------------------
    def _save(self, g: Guideline, *, reembed: bool = True) -> Guideline:
        """Write the file atomically, then bring the index and the in-memory map up to date.

        Call with the write lock held. ``reembed=False`` (votes, status changes) only updates
        the index's filterable metadata; content changes re-embed.
        """
        path = self._path_for(g.topic, g.id)
        previous = self._items.get(g.id)
        g = g.model_copy(update={"path": str(path), "sources": _trim_sources(g.sources)})
        text = render_guideline(g)
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise InvalidInputError(f"guideline {g.id} would exceed {MAX_FILE_BYTES} bytes")
        atomic_write(path, data)
        if previous is not None and previous.path and Path(previous.path) != path:
            try:
                Path(previous.path).unlink()
            except FileNotFoundError:
                pass
            self._files.pop(previous.path, None)
        digest = self._digest(path, data)
        if reembed or self.index.metadata(g.id) is None or (
                previous is not None and previous.path != str(path)):
            self.index.upsert([self._index_item(g, digest)])
        else:
            self.index.update_metadata(g.id, status=g.status, hash=digest, helpful=g.helpful,
                                       harmful=g.harmful, reinforcements=g.reinforcements)
        st = path.stat()
        self._files[str(path)] = (st.st_mtime_ns, st.st_size)
        self._items[g.id] = g
        self._digests[g.id] = digest
        return g

    # Matching ------------------------------------------------------------------------------------
    #: How one wording becomes a matching vector: the weighted mean of the vectors of the rule,
    #: the critique sentence it came from and the whole critique, which carries the context a
    #: short rule loses ("Lead with it." says little; the critique around it says what "it" is).
    MEMBER_WEIGHTS = {"rule": 1.0, "sentence": 1.0, "critique": 1.0}
    #: Subtracted from the similarity of a guideline filed under another topic (neither being
    #: "general"): the same words mean different rules in different domains ("signature").
    TOPIC_PENALTY = 0.1

    def _member_vector(self, rule: str, sentence: str | None, critique: str | None) -> np.ndarray:
        parts = [(rule, self.MEMBER_WEIGHTS["rule"])]
        if sentence and sentence != rule:
            parts.append((sentence, self.MEMBER_WEIGHTS["sentence"]))
        if critique and critique not in (rule, sentence) and self.MEMBER_WEIGHTS["critique"]:
            parts.append((critique[:2000], self.MEMBER_WEIGHTS["critique"]))
        parts = [(t, w) for t, w in parts if t and w]
        vectors = self._vectors_for([t for t, _ in parts])
        weights = np.asarray([w for _, w in parts], dtype=np.float32)[:, None]
        total = (vectors * weights).sum(axis=0)
        return total / (float(np.linalg.norm(total)) or 1.0)

    @staticmethod
    def _members(g: Guideline) -> tuple[tuple[str, str | None, str | None], ...]:
        """(rule, sentence, critique) of each wording that reinforced `g`, most recent last."""
        members: list[tuple[str, str | None, str | None]] = [(g.text, None, None)]
        for source in g.sources:
            rule = " ".join((getattr(source, "rule", None) or "").split())
            if rule:
                members.append((rule, getattr(source, "sentence", None), source.critique))
        return tuple(members[:1] + members[1:][-(MAX_PROFILE_TEXTS - 1):])

    def _profile(self, g: Guideline) -> np.ndarray:
        """Mean of the member vectors: the guideline as all its paraphrases say it."""
        members = self._members(g)
        cached = self._profiles.get(g.id)
        if cached is not None and cached[0] == members:
            return cached[1]
        total = np.sum([self._member_vector(*m) for m in members], axis=0)
        profile = (total / (float(np.linalg.norm(total)) or 1.0)).astype(np.float32)
        self._profiles[g.id] = (members, profile)
        return profile

    #: Weight of the lexical evidence added to the dense similarity. Critiques of one rule
    #: share its jargon ("sign-off", "NULL", "`$` prompt") even when their sentences differ.
    LEXICAL_WEIGHT = 1.0

    def _bag(self, g: Guideline) -> tuple[dict[str, float], frozenset[str]]:
        """A guideline's words (text and every member's rule, sentence and critique)."""
        members = self._members(g)
        cached = self._bags.get(g.id)
        if cached is not None and cached[0] == members:
            return cached[1], cached[2]
        counts: dict[str, int] = {}
        seen: set[str] = set()
        for rule, sentence, critique in members:
            for text in (rule, sentence, critique):
                if text and text not in seen:
                    seen.add(text)
                    for token in tokenize(text[:4000]):
                        counts[token] = counts.get(token, 0) + 1
        tf = {t: 1.0 + math.log(c) for t, c in counts.items()}
        self._bags[g.id] = (members, tf, frozenset(tf))
        return tf, frozenset(tf)

    @staticmethod
    def _tfidf(tf: dict[str, float], idf: Callable[[str], float]) -> dict[str, float]:
        weighted = {t: w * idf(t) for t, w in tf.items()}
        norm = math.sqrt(sum(v * v for v in weighted.values())) or 1.0
        return {t: v / norm for t, v in weighted.items()}

    def _lexical(self, query: str, pool: list[Guideline], scored: list[Guideline]) -> np.ndarray:
        """TF-IDF cosine of the query with the words of each `scored` guideline (idf: `pool`)."""
        df: dict[str, int] = {}
        for g in pool:
            for t in self._bag(g)[1]:
                df[t] = df.get(t, 0) + 1
        n = len(pool)
        idf = lambda t: math.log(1.0 + (n + 1) / (df.get(t, 0) + 1))  # noqa: E731
        counts: dict[str, int] = {}
        for token in tokenize(query):
            counts[token] = counts.get(token, 0) + 1
        q = self._tfidf({t: 1.0 + math.log(c) for t, c in counts.items()}, idf)
        out = np.zeros(len(scored), dtype=np.float32)
        for i, g in enumerate(scored):
            tf, words = self._bag(g)
            shared = words.intersection(q)
            if shared:
                d = self._tfidf(tf, idf)
                out[i] = sum(q[t] * d[t] for t in shared)
        return out

    def _shortlist(self, query: str, namespace: str, pool: list[Guideline],
                   always: frozenset[str] = frozenset()) -> list[Guideline]:
        """The guidelines worth a profile comparison: all of a small pool, else the index's best.

        Profiles need every member embedded; the persistent index narrows a large pool first so
        the first learn after a restart does not embed the whole memory.
        """
        if len(pool) <= SHORTLIST:
            return pool
        where = {"$and": [{"namespace": namespace}, {"status": {"$in": list(IN_PLAY)}}]}
        hits = self.index.search(query[:MAX_SHORT], k=SHORTLIST, where=where,
                                 candidates=SHORTLIST * 2)
        by_id = {g.id: g for g in pool}
        ids = list(dict.fromkeys([h.id for h in hits] + sorted(always)))
        return [by_id[i] for i in ids if i in by_id]

    def _nearest(self, vector: np.ndarray, query: str, namespace: str, topic: str,
                 rule_vector: np.ndarray | None = None, touched: frozenset[str] = frozenset(),
                 n: int = MAX_NEIGHBOURS, only: Iterable[str] | None = None,
                 floor: float | None = None) -> list[tuple[float, str]]:
        """In-play guidelines of the namespace most like a candidate, best first.

        Similarity = cosine with the guideline's profile + LEXICAL_WEIGHT x TF-IDF cosine of
        words - TOPIC_PENALTY across topics; neighbours under `match_floor` are dropped.
        Guidelines this very critique already created or reinforced (`touched`) share its text,
        which says nothing about whether two of its rules are one: they are compared by rule and
        sentence alone (`rule_vector` against what this critique contributed to them), so two
        rules from one sentence tend to merge and rules from different sentences stand apart.
        ``only`` scores just those guidelines; ``floor`` replaces `match_floor`.
        """
        pool = [g for g in self._items.values()
                if g.namespace == namespace and g.status in IN_PLAY]
        if not pool:
            return []
        if only is not None:
            wanted = set(only)
            scored = [g for g in pool if g.id in wanted]
        else:
            scored = self._shortlist(query, namespace, pool, touched)
        if not scored:
            return []
        profiles = np.stack([self._profile(g) for g in scored])
        sims = profiles @ vector
        if self.LEXICAL_WEIGHT:
            sims = sims + self.LEXICAL_WEIGHT * self._lexical(query, pool, scored)
        if self.TOPIC_PENALTY:
            other = np.asarray([g.topic != topic and "general" not in (g.topic, topic)
                                for g in scored])
            sims = sims - self.TOPIC_PENALTY * other
        if touched and rule_vector is not None:
            for i, g in enumerate(scored):
                if g.id in touched:
                    last = g.sources[-1]
                    mine = self._member_vector(getattr(last, "rule", None) or g.text,
                                               getattr(last, "sentence", None), None)
                    sims[i] = float(mine @ rule_vector)
        sims = np.minimum(sims, 1.0)
        order = np.argsort(-sims)[:n]
        floor = self.match_floor if floor is None else floor
        return [(float(sims[i]), scored[i].id) for i in order if sims[i] >= floor]

    # Learning ------------------------------------------------------------------------------------
    def learn(
        self,
        critique: str,
        task: str | None = None,
        response: str | None = None,
        score: float | None = None,
        source: str = "user",
        trusted: bool = True,
        namespace: str | None = None,
        candidates: Sequence[Any] | None = None,
    ) -> LearnReport:
        """Turn a critique into guidelines: add, merge, supersede, or ignore each candidate rule.

        ``candidates`` (``CandidateRule`` objects or dicts) skips the distiller's extraction; the
        store's dedup and supersede logic still applies. ``trusted=False`` (e.g. a critique from
        an untrusted channel) adds rules as ``pending`` and never supersedes an existing rule
        until a person approves.
        """
        critique = _check_text(critique, "critique", MAX_TEXT)
        task = _check_text(task, "task", MAX_TEXT, optional=True)
        if response is not None:  # context for the distiller only: cut, not refused
            response = _check_text(response[:MAX_TEXT] if isinstance(response, str) else response,
                                   "response", MAX_TEXT)
        if score is not None:
            try:
                finite = not isinstance(score, bool) and math.isfinite(float(score))
            except (TypeError, ValueError, OverflowError):
                finite = False
            if not finite:
                raise InvalidInputError("score must be a finite number")
            score = float(score)
        if not isinstance(trusted, bool):
            raise InvalidInputError("trusted must be true or false")
        source = self._check_source(source)
        ns = self._namespace(namespace)
        if candidates is None:
            if not critique.strip():
                return LearnReport(entries=[LearnEntry(action="ignored", text="",
                                                       detail="empty critique")])
            rules = list(self.distiller.rules_from_critique(
                critique, task=task, response=response, score=score))
        else:
            if isinstance(candidates, (str, bytes, dict)) or not isinstance(candidates, Iterable):
                raise InvalidInputError(
                    "candidates must be a list of CandidateRule objects or dicts")
            rules = [self._as_candidate(c) for c in candidates]
        report = LearnReport()
        touched: set[str] = set()
        with self._lock, self.write_lock:
            self._refresh()
            for rule in rules:
                if not getattr(rule, "actionable", True) or not _clean(rule.text, MAX_SHORT):
                    report.entries.append(LearnEntry(
                        action="ignored", text=_clean(rule.text, MAX_SHORT),
                        detail="no reusable advice (praise, a score, a one-off fix or a vague "
                               "reaction)"))
                    continue
                src = SourceRecord(critique=critique, task=task, source=source, score=score,
                                   rule=_clean(rule.text, MAX_SHORT),
                                   sentence=_clean(getattr(rule, "source_sentence", "") or "",
                                                   MAX_SHORT) or None)
                entry = self._learn_one(
                    text=_clean(rule.text, MAX_SHORT),
                    topic=slugify(str(rule.topic or "general")),
                    when_to_use=_clean(getattr(rule, "when_to_use", "") or "", MAX_SHORT),
                    sentence=src.sentence or "",
                    source=src, namespace=ns, trusted=trusted, touched=touched)
                report.entries.append(entry)
        report.pending_review = any(self.get(gid).status == "pending" for gid in report.ids())
        return report

    def add(self, text: str, topic: str | None = None, when_to_use: str = "",
            source: str = "agent", trusted: bool = True, namespace: str | None = None
            ) -> LearnEntry:
        """Add one rule (the agent-controlled path) with the same dedup / supersede logic.

        The wording is kept as given; when ``topic`` (or ``when_to_use``) is missing the
        distiller proposes one from the rule text.
        """
        text = _check_text(text, "rule text", 4 * MAX_SHORT)
        text = _one_line(text)
        if not text:
            raise InvalidInputError("rule text must be a non-empty string")
        if len(text) > MAX_SHORT:
            raise InvalidInputError(f"rule text is {len(text)} characters; at most {MAX_SHORT}")
        when_to_use = _check_text(when_to_use if when_to_use is not None else "", "when_to_use",
                                  MAX_SHORT)
        if not isinstance(trusted, bool):
            raise InvalidInputError("trusted must be true or false")
        if topic is not None:
            self._check_topic(topic)
        source = self._check_source(source)
        ns = self._namespace(namespace)
        when = _one_line(when_to_use)
        if topic is None or not when:
            guess_topic, guess_when = self._guess(text)
            topic = topic or guess_topic
            when = when or guess_when
        with self._lock, self.write_lock:
            self._refresh()
            return self._learn_one(
                text=text, topic=topic, when_to_use=when, sentence="",
                source=SourceRecord(critique=text, task=None, source=source, rule=text),
                namespace=ns, trusted=trusted, touched=set())

    def _guess(self, text: str) -> tuple[str, str]:
        """Topic and when_to_use for a bare rule, from the distiller (never fails)."""
        try:
            for rule in self.distiller.rules_from_critique(text):
                if getattr(rule, "actionable", True):
                    return slugify(str(rule.topic or "general")), _clean(rule.when_to_use, MAX_SHORT)
        except Exception as exc:  # noqa: BLE001 - a guess is optional
            log.warning("topic guess failed: %s", exc)
        try:
            from skillbank.distill import guess_topic

            return slugify(guess_topic(text)), ""
        except Exception:  # noqa: BLE001
            return "general", ""

    @staticmethod
    def _check_source(source: str) -> str:
        source = _check_text(source, "source", MAX_SOURCE_NAME)
        if not _one_line(source):
            raise InvalidInputError(
                f"source must be a short non-empty label (at most {MAX_SOURCE_NAME} characters)")
        return _one_line(source)

    @staticmethod
    def _as_candidate(value: Any) -> Any:
        from skillbank.distill import CandidateRule

        if isinstance(value, CandidateRule):
            return value
        if isinstance(value, str):
            return CandidateRule(text=value)
        try:
            return CandidateRule.model_validate(
                value if isinstance(value, dict) else value.model_dump())
        except (ValidationError, AttributeError) as exc:
            raise InvalidInputError(
                f"candidates must be CandidateRule objects or dicts: {exc}") from None

    def _learn_one(self, *, text: str, topic: str, when_to_use: str, sentence: str,
                   source: SourceRecord, namespace: str, trusted: bool, touched: set[str]
                   ) -> LearnEntry:
        distiller = self.distiller
        vector = self._member_vector(text, sentence or None, source.critique)
        query = " ".join(dict.fromkeys(t for t in (text, sentence, source.critique) if t))
        same: tuple[float, str] | None = None
        contradicted: list[tuple[float, str]] = []
        rule_vector = self._member_vector(text, sentence or None, None)
        neighbours = self._nearest(vector, query, namespace, topic, rule_vector, frozenset(touched))
        for similarity, gid in neighbours:
            old = self._items[gid]
            relation = distiller.relate(text, old.text, similarity=similarity)
            if relation == "same" and same is None:
                same = (similarity, gid)
            elif relation == "contradiction" and gid not in touched:
                contradicted.append((similarity, gid))
        if contradicted and trusted:
            contradicted += self._more_contradicted(
                text, vector, query, namespace, topic, contradicted,
                skip={gid for _, gid in neighbours} | touched)
        now = utcnow()
        if same is not None:
            similarity, gid = same
            old = self._items[gid]
            update: dict[str, Any] = {
                "reinforcements": old.reinforcements + 1,
                "sources": [*old.sources, source],
                "updated": now,
            }
            notes = [f"same as {gid} (similarity {similarity:.2f}); "
                     f"reinforcements now {old.reinforcements + 1}"]
            if more_specific(text, old.text):
                update["text"] = text
                notes.append("took the new, more specific wording")
            if old.status == "pending" and trusted:
                update["status"] = "active"
                notes.append("confirmed by a trusted source: now active")
            # A trusted restatement of a rule also overrules what still contradicts it (say an
            # older paraphrase the first contradiction did not reach).
            olds = [o for _, o in contradicted if o != gid] if trusted else []
            if olds and update.get("status", old.status) == "active":
                update["supersedes"] = list(dict.fromkeys([*old.supersedes, *olds]))
                notes.append(f"supersedes {', '.join(olds)} (contradiction)")
            else:
                olds = []
            merged = self._save(old.model_copy(update=update))
            touched.add(gid)
            for old_id in olds:
                self._mark_superseded(old_id, gid, now)
            return LearnEntry(action="merged", guideline_id=gid, text=merged.text,
                              superseded_id=olds[0] if olds else None, detail="; ".join(notes))

        gid = self._new_id()
        olds = [g for _, g in contradicted]
        status = "active" if trusted else "pending"
        new = Guideline(id=gid, topic=topic, text=text, when_to_use=when_to_use, status=status,
                        sources=[source], supersedes=olds, namespace=namespace,
                        created=now, updated=now)
        new = self._save(new)
        touched.add(gid)
        if olds and trusted:
            for old_id in olds:
                self._mark_superseded(old_id, gid, now)
            detail = f"supersedes {', '.join(olds)} (contradiction)"
            return LearnEntry(action="superseded", guideline_id=gid, text=new.text,
                              superseded_id=olds[0], detail=detail)
        if not trusted:
            detail = "untrusted source: waits for approve() or reject()"
            if olds:
                detail += f"; would supersede {', '.join(olds)} once approved"
            return LearnEntry(action="pending", guideline_id=gid, text=new.text,
                              superseded_id=olds[0] if olds else None, detail=detail)
        return LearnEntry(action="added", guideline_id=gid, text=new.text, detail="new rule")

    def _more_contradicted(self, text: str, vector: np.ndarray, query: str, namespace: str,
                           topic: str, contradicted: list[tuple[float, str]], skip: set[str]
                           ) -> list[tuple[float, str]]:
        """Other wordings of an overruled rule, which the candidate did not rank among its own
        neighbours: an old rule often lives on in a second guideline. Each is still put to
        ``distiller.relate``, with the stronger of two pieces of evidence that it is about the
        same matter: its similarity to the candidate, or to the rule the candidate overrules."""
        via: dict[str, float] = {}
        for _, old_id in contradicted:
            old = self._items[old_id]
            old_query = " ".join(dict.fromkeys(m[0] for m in self._members(old)))
            near = self._nearest(self._profile(old), old_query, namespace, old.topic,
                                 n=MAX_NEIGHBOURS + len(skip) + 1)
            near = [(sim, gid) for sim, gid in near if gid != old_id and gid not in skip]
            for sim, gid in near[:MAX_NEIGHBOURS]:
                via[gid] = max(via.get(gid, -1.0), sim)
        found: list[tuple[float, str]] = []
        if not via:
            return found
        for similarity, gid in self._nearest(vector, query, namespace, topic, n=len(via),
                                             only=via, floor=-1.0):
            similarity = max(similarity, via[gid])
            relation = self.distiller.relate(text, self._items[gid].text, similarity=similarity)
            if relation == "contradiction":
                found.append((similarity, gid))
        return found

    def _mark_superseded(self, old_id: str, new_id: str, now: datetime) -> None:
        old = self._items.get(old_id)
        if old is None or old.status in ("superseded", "retired"):
            return
        self._save(old.model_copy(update={"status": "superseded", "superseded_by": new_id,
                                          "updated": now}), reembed=False)

    # Search --------------------------------------------------------------------------------------
    def search(self, task: str, k: int = 5, namespace: str | None = None,
               topic: str | None = None) -> list[Hit[Guideline]]:
        """Active guidelines for a task, best first; [] when nothing has real evidence."""
        task = _check_text(task, "task", 4 * MAX_TEXT)
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise InvalidInputError("k must be a non-negative integer")
        ns = self._namespace(namespace)
        if topic is not None:
            self._check_topic(topic)
        if k == 0 or not task.strip():
            return []
        with self._lock:
            self._ensure_loaded()
            clauses: list[dict[str, Any]] = [{"namespace": ns}, {"status": "active"}]
            if topic is not None:
                clauses.append({"topic": topic})
            where = {"$and": clauses}
            fused = self._fuse(task[:MAX_TEXT], where, max(50, k * 4))
            if any(gid not in self._items or self._digests.get(gid) != meta.get("hash")
                   for gid, *_, meta in fused):
                # Another process sharing a Chroma server wrote guidelines: read the files.
                self._refresh()
                fused = self._fuse(task[:MAX_TEXT], where, max(50, k * 4))
            hits: list[Hit[Guideline]] = []
            for gid, score, dense, keyword, meta in fused:
                g = self._items.get(gid)
                if g is None or g.status != "active" or g.namespace != ns:
                    continue  # the files are the truth, even before the index catches up
                if topic is not None and g.topic != topic:
                    continue
                dense_ok = dense is not None and dense >= MIN_DENSE
                keyword_ok = keyword is not None and keyword >= MIN_KEYWORD
                if not (dense_ok or keyword_ok):
                    continue
                why = "both" if dense is not None and keyword is not None else (
                    "dense" if dense is not None else "keyword")
                hits.append(Hit[Guideline](id=g.id, score=round(score + self.prior(g), 6),
                                           why=why, record=g))
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[:k]

    def _fuse(self, query: str, where: dict[str, Any], candidates: int
              ) -> list[tuple[str, float, float | None, float | None, dict[str, Any]]]:
        """Reciprocal-rank fusion of the index's dense and keyword scores, tie-proof.

        Items with equal scores share a rank (and ties are listed by id), so the result does
        not depend on the order the index happens to return them in: a reindex from the files
        gives the same ranking.
        """
        from skillbank.embeddings import embed_query
        from skillbank.index import RRF_K

        vector = embed_query(self.index.embedding_function, query)
        dense = self.index.dense(vector, candidates * 2, where)
        keyword = self.index.keyword(query, candidates, where)
        fused: dict[str, float] = {}
        for scores in (dense, keyword):
            rounded = {i: round(v, 6) for i, v in scores.items()}
            rank, previous = 0, None
            for position, item in enumerate(sorted(rounded, key=lambda i: (-rounded[i], i))):
                if rounded[item] != previous:
                    rank, previous = position, rounded[item]
                fused[item] = fused.get(item, 0.0) + 1.0 / (RRF_K + rank + 1)
        out = []
        for item, score in fused.items():
            meta = self.index.metadata(item) or {}
            out.append((item, score, dense.get(item), keyword.get(item), meta))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out

    @staticmethod
    def prior(g: Guideline) -> float:
        """Votes and reinforcements as a nudge, sized to reorder near ties only."""
        votes = math.tanh((g.helpful - g.harmful) / 3.0) * VOTE_PRIOR
        reinforced = math.tanh(g.reinforcements / 5.0) * REINFORCEMENT_PRIOR
        return votes + reinforced

    # Reading -------------------------------------------------------------------------------------
    def get(self, gid: str) -> Guideline:
        self._check_id(gid)
        with self._lock:
            self._ensure_loaded()
            g = self._items.get(gid)
            if g is None or self._file_changed(g):
                self._refresh()  # written by another process, or edited by hand
                g = self._items.get(gid)
        if g is None:
            raise NotFoundError(
                f"no guideline {gid!r}; find ids with bank.guidelines.search(task) or list(), "
                "or run sync() if the file was just added by hand")
        return g

    def __contains__(self, gid: object) -> bool:
        if not isinstance(gid, str) or not ID_RE.match(gid):
            return False
        try:
            self.get(gid)
        except NotFoundError:
            return False
        return True

    def _file_changed(self, g: Guideline) -> bool:
        try:
            st = os.stat(g.path)
        except OSError:
            return True
        return self._files.get(g.path) != (st.st_mtime_ns, st.st_size)

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._items)

    def list(self, status: str | None = None, topic: str | None = None,
             namespace: str | None = None) -> list[Guideline]:
        """Guidelines, newest first. ``namespace=None`` is the bank's namespace; ``"*"`` lists
        every namespace (an inventory), as for experiences."""
        if status is not None and status not in STATUSES:
            raise InvalidInputError(f"status must be one of {', '.join(STATUSES)}")
        if topic is not None:
            self._check_topic(topic)
        ns = self._namespace(namespace, allow_all=True)
        with self._lock:
            self._refresh()
            items = list(self._items.values())
        out = [g for g in items
               if (status is None or g.status == status)
               and (topic is None or g.topic == topic)
               and (ns == ALL_NAMESPACES or g.namespace == ns)]
        out.sort(key=lambda g: (g.created, g.id), reverse=True)
        return out

    def topics(self, namespace: str | None = None) -> list[str]:
        """Topics that have active or pending guidelines in a namespace (default: the bank's)."""
        ns = self._namespace(namespace, allow_all=True)
        with self._lock:
            self._refresh()
            return sorted({g.topic for g in self._items.values()
                           if g.status in IN_PLAY and (ns == ALL_NAMESPACES or g.namespace == ns)})

    def counts(self, namespace: str | None = None) -> dict[str, int]:
        """Guidelines by status; ``namespace=None`` is the bank's namespace, ``"*"`` all."""
        ns = self._namespace(namespace, allow_all=True)
        out = {status: 0 for status in STATUSES}
        with self._lock:
            self._refresh()
            for g in self._items.values():
                if ns == ALL_NAMESPACES or g.namespace == ns:
                    out[g.status] = out.get(g.status, 0) + 1
        return out

    def playbook(self, topic: str | None = None, namespace: str | None = None) -> str:
        """Markdown: a heading per topic, its active rules with when_to_use and counts.

        ``topic=None`` gives every topic of the namespace.
        """
        if topic is not None:
            self._check_topic(topic)
        ns = self._namespace(namespace)
        with self._lock:
            self._refresh()
            active = [g for g in self._items.values()
                      if g.status == "active" and g.namespace == ns
                      and (topic is None or g.topic == topic)]
        topics = [topic] if topic is not None else sorted({g.topic for g in active})
        lines: list[str] = []
        for name in topics:
            rules = sorted((g for g in active if g.topic == name),
                           key=lambda g: (-(g.helpful - g.harmful), -g.reinforcements, g.created))
            if lines:
                lines.append("")
            lines.append(f"## {name}")
            if not rules:
                lines.append("")
                lines.append("_No active guidelines._")
                continue
            lines.append("")
            for g in rules:
                line = f"- **{g.text}**"
                if g.when_to_use:
                    line += f" — {g.when_to_use}"
                line += (f" (reinforced {g.reinforcements}×, helpful {g.helpful}, "
                         f"harmful {g.harmful}; `{g.id}`)")
                lines.append(line)
        if not lines:
            lines = ["_No active guidelines._"]
        return "\n".join(lines) + "\n"

    # Feedback and review -------------------------------------------------------------------------
    def _change(self, gid: str, update: Callable[[Guideline], dict[str, Any] | None]) -> Guideline:
        self._check_id(gid)
        with self._lock, self.write_lock:
            self._refresh()
            g = self._items.get(gid)
            if g is None:
                raise NotFoundError(
                    f"no guideline {gid!r}; find ids with bank.guidelines.search(task) or list()")
            changes = update(g)
            if not changes:
                return g
            return self._save(g.model_copy(update={**changes, "updated": utcnow()}),
                              reembed=False)

    def vote(self, gid: str, helpful: bool = True) -> Guideline:
        """Count whether a guideline helped; retire it when harmful - helpful reaches the margin."""
        def apply(g: Guideline) -> dict[str, Any]:
            changes: dict[str, Any] = {"helpful": g.helpful + (1 if helpful else 0),
                                       "harmful": g.harmful + (0 if helpful else 1)}
            if (changes["harmful"] - changes["helpful"] >= self.retire_margin
                    and g.status in IN_PLAY):
                changes["status"] = "retired"
                log.info("guideline %s retired by votes", gid)
            return changes
        return self._change(gid, apply)

    def approve(self, gid: str) -> Guideline:
        """pending -> active; applies the supersessions it proposed. Active: no change."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status == "active":
                return None
            if g.status != "pending":
                raise InvalidInputError(
                    f"guideline {gid} is {g.status}; only pending guidelines can be approved "
                    "(add the rule again to bring it back)")
            return {"status": "active"}
        with self._lock, self.write_lock:
            g = self._change(gid, apply)
            now = utcnow()
            for old_id in g.supersedes:
                old = self._items.get(old_id)
                if old is not None and old.status in IN_PLAY and old.superseded_by in (None, gid):
                    self._mark_superseded(old_id, gid, now)
            return g

    def reject(self, gid: str) -> Guideline:
        """pending -> retired."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status == "retired":
                return None
            if g.status != "pending":
                raise InvalidInputError(
                    f"guideline {gid} is {g.status}; only pending guidelines can be rejected "
                    "(use retire() for an active one)")
            return {"status": "retired"}
        return self._change(gid, apply)

    def retire(self, gid: str) -> Guideline:
        """Stop serving a guideline (active or pending -> retired); the file is kept."""
        def apply(g: Guideline) -> dict[str, Any] | None:
            if g.status in ("retired", "superseded"):
                return None
            return {"status": "retired"}
        return self._change(gid, apply)


def _trim_sources(sources: Iterable[GuidelineSource]) -> list[GuidelineSource]:
    """Keep the first source (why the rule exists) and the most recent ones."""
    sources = list(sources)
    if len(sources) <= MAX_SOURCES:
        return sources
    return sources[:1] + sources[-(MAX_SOURCES - 1):]
