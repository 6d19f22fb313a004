"""The skill library: SKILL.md folders on disk, indexed in Chroma, routed by hybrid search.

Files are the truth. The library scans its roots (the bank's writable `<root>/skills` first,
then read-only roots such as `.claude/skills`), keeps the index equal to what is on disk by
content hash, and discloses a skill in three steps: catalog (name + description), body, then
one resource at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from skillbank import index_mirror
from skillbank.index_outage import ChromaUnavailableError
from skillbank.audit import note
from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.fsutil import make_folder, safe_join, through_link
from skillbank.embeddings import MiniLMEmbedding, ModelUnavailableError, embed_query, embed_texts
from skillbank.index import HybridIndex
from skillbank.skill_ids import same_name, unknown_name
from skillbank import scope as scopes
from skillbank.memories.skills import checks, fit as fitting
from skillbank.memories.skills import dependencies, search as routing
from skillbank.memories.skills import gate, last_good, near_copies, skill_trust_api, trust
from skillbank.memories.skills.unserved import others_serve, unserved
from skillbank.memories.skills.unreadable import (UnreadableFiles, refuse_unread_file,
                                                  refuse_unreadable, walk)
from skillbank.memories.skills.fit import ABSTAIN_BELOW, fit_probability  # noqa: F401 - re-exported
from skillbank.memories.skills.catalog import Catalog, CatalogEntry, catalog_line
from skillbank.memories.skills.authoring import MAX_RESOURCE_BYTES, SkillAuthoring, sweep_removing
from skillbank.memories.skills.drafts import SkillDrafts
from skillbank.memories.skills.exclusions import ExclusionGate
from skillbank.memories.skills.freshness import Freshness, key_of, stat_key
from skillbank.memories.skills.index_item import (  # noqa: F401 - re-exported
    KEYWORD_BODY_CHARS, _embedded_whole, _humanise, index_item_for, kept_findings, summary_text,
    unservable,
)
from skillbank.memories.skills.unasked import Unasked, given_back_if_failed, record
from skillbank.memories.skills.renames import hand_renames
from skillbank.memories.skills.repo_api import SkillsInGit
from skillbank.memories.skills.sections import (  # noqa: F401 - re-exported
    BODY_SECTIONS, DENSE_TEXTS, SECTION_CHARS, SECTION_MIN_WORDS, SUMMARY_TEXTS, body_sections,
    section_texts, skill_sections,
)
from skillbank.memories.skills.folder_files import (file_gone, hard_linked, leads_left_out,
                                                    left_out)
from skillbank.memories.skills.resources import list_resources
from skillbank.memories.skills.skill_file import (
    MAX_SKILL_BYTES,
    SkillDocument,
    parse_skill_text,
    read_skill_file,
)
from skillbank.memories.skills.scanned import TOO_LARGE, Found, digest_of, parse_found
from skillbank.records import Finding, Hit, Hits, Skill, SyncReport
from skillbank.tokens import count_tokens
from skillbank.usage import UsageLog

log = logging.getLogger("skillbank.skills")

MAX_RESOURCES = 500
#: Usage prior on the z-score scale (one standard deviation ~ 1): a skill that always worked
#: gains at most 0.15, enough to settle near-ties, never to lift a poor match over a good one.
PRIOR_SCALE = 0.15
class SkillLibrary(SkillAuthoring, SkillDrafts, skill_trust_api.SkillTrust, SkillsInGit,
                   UnreadableFiles):
    """Skills across several roots, with one writable root; search, disclosure and authoring."""

    def __init__(
        self,
        writable_root: Path,
        read_only_roots: list[Path],
        index: HybridIndex,
        usage: UsageLog,
        *,
        write_lock: Any = None,
        min_score: float = 0.18,
        min_keyword: float = 0.25,
        max_depth: int = 6,
        max_dirs: int = 20_000,
    ) -> None:
        self.writable_root = writable_root
        self.read_only_roots = [r for r in read_only_roots if r.resolve() != writable_root.resolve()]
        self.index = index
        # Started while its Chroma server was down: embed what was staged once it answers.
        index.on_attach = lambda: index_mirror.fill_behind(index, first_texts_first=True)
        self.usage = usage
        self.write_lock = write_lock or threading.RLock()
        self.min_score = min_score
        self.min_keyword = min_keyword
        self.max_depth = max_depth
        self.max_dirs = max_dirs
        self._sync_lock = threading.RLock()
        self._background: fitting.Background | None = None
        #: Reads re-sync when the folders changed (hunt-author #4, session 24); the bank sets
        #: `freshness.seconds` from `skills_recheck_seconds`.
        self.freshness = Freshness(self)
        self.unasked = Unasked()  # what syncs no one asked for changed (unasked.py)
        make_folder(writable_root, "cannot use the skills folder")  # a broken link named (#6)

    # Roots and scanning ------------------------------------------------------------------------
    @property
    def roots(self) -> list[tuple[Path, bool]]:
        """Every root in precedence order, with whether skillbank may write there: the bank's
        own first, then the others by trust (own, team, third-party), as given within a level.
        A third-party folder declaring `name: recall-before-acting` replaced the bundled skill
        of that name for every agent, since the bundled root came after the user's roots."""
        rank = {level: i for i, level in enumerate(trust.LEVELS)}
        level = self.trust_book.level
        ordered = sorted(self.read_only_roots, key=lambda r: rank.get(level(r), len(rank)))
        return [(self.writable_root, True)] + [(r, False) for r in ordered]

    def _walk(self, root: Path, findings: list[Finding] | None = None) -> Iterator[Path]:
        """SKILL.md files under `root`, skipping hidden and vendored folders and symlink loops;
        a folder it could not look in is a finding, and a hidden folder holding skills (not in
        the bank's own folder: its hidden folders are renames and deletes under way)."""
        return iter([Path(p) for p in walk(root, self.max_depth, self.max_dirs, findings, True,
                                           dotted=root != self.writable_root)])

    def _scan(self, known: dict[str, tuple[str, str]], walked: dict[str, str] | None = None
              ) -> tuple[list[Found], list[Finding]]:
        """Every SKILL.md under the roots with its content hash.

        `known` maps indexed paths to (stat key, hash): a file whose size and mtime are what the
        index recorded is taken as unchanged without reading it, which keeps a no-change sync of
        thousands of skills well under a second. `walked` gets each path's stat key (what a
        read's re-check compares the folders with: `freshness`).
        """
        found: list[Found] = []
        findings: list[Finding] = []
        walked = {} if walked is None else walked
        served = getattr(self, "skills_repo", None) is not None
        for root, writable in self.roots:
            for path in self._walk(root, findings):
                if writable and served and through_link(root, path):
                    if (linked := stat_key(path)):
                        walked[str(path)] = linked
                    findings.append(Finding(severity="error", code="linked-folder", path=str(
                        path), message="a symbolic link in the skills repository would serve "
                        "a folder of the host (review sees one line); commit the files instead"))
                    continue
                try:
                    stat = path.stat()
                    key = walked[str(path)] = key_of(stat)
                    seen = known.get(str(path))
                    if seen and seen[0] == key:
                        found.append(Found(path, root, writable, seen[1], None, key))
                        continue
                    if stat.st_size > MAX_SKILL_BYTES:
                        # Unread: parsed as "too-large", the last good kept (hunt-watch #2)
                        found.append(Found(path, root, writable, f"{TOO_LARGE}{key}", None, key))
                        continue
                    data = path.read_bytes()
                except OSError as exc:
                    findings.append(Finding(severity="error", code="unreadable", message=str(exc), path=str(path)))
                    continue
                found.append(Found(path, root, writable, digest_of(path, data), data, key))
        return found, findings

    # Sync --------------------------------------------------------------------------------------
    def sync(self, progress: Callable[[int, int], None] | None = None, *,
             embed: bool = True, asked: bool = True,
             sections_progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Make the index equal to the files: embed only what is new or changed.

        Two steps: every new or changed skill is first staged (parsed and searchable by
        keyword at once), then embedded in batches, shortest texts first (`fill_dense`). With
        `embed=False` only the first step runs and the caller fills the vectors in later (the
        MCP server does, so `find_skills` answers within seconds of a first start). `progress`
        is called with (skills whose summary is in, skills to embed) after each batch, then
        `sections_progress` likewise for the body sections, which follow every summary.
        `asked=False` (a watcher, a read's re-check): its changes ride on the next asked-for
        sync's `already` (`unasked.py`).
        """
        started = time.perf_counter()
        with self._sync_lock:  # kept or taken in the order the syncs applied their changes
            report = record(self, self._stage_files(), asked)
        self._scan_changed(report)  # security scans catch up in the background (trust.py)
        if embed:
            with given_back_if_failed(self, report, asked):  # the next asked sync tells it
                report.embedded += self.fill_dense(progress=progress,
                                                   sections_progress=sections_progress)
            report.queued = 0  # embedded in this call, not behind it
        report.seconds = time.perf_counter() - started
        return report

    def fill_dense(self, progress: Callable[[int, int], None] | None = None,
                   stop: threading.Event | None = None, wait: bool = True,
                   sections_progress: Callable[[int, int], None] | None = None,
                   summaries_done: Callable[[], None] | None = None) -> int:
        """Embed what sync staged; resumable (what is embedded is in Chroma, with its hash).

        `wait=False`: return at once when another thread is already filling (it takes the
        newly staged items too). Every skill's summary is embedded before any body section
        (`HybridIndex.fill(first_texts_first=True)`): ranking by summary and keyword is complete
        as soon as it would be with summaries alone; the body side follows. `progress` counts
        skills whose summary is in, `sections_progress` skills whose sections are in;
        `summaries_done` is called once every summary is in (the MCP server's stats mark)."""
        return self.index.fill(progress=progress, stop=stop, wait=wait, first_texts_first=True,
                               rest_progress=sections_progress,
                               first_texts_done=summaries_done)

    @property
    def dense_complete(self) -> bool:
        """Every skill is searchable by its vector too (False while filling, or no model)."""
        return self.index.dense_complete

    def _stage_files(self) -> SyncReport:
        with self._sync_lock:
            report = SyncReport()
            metas = {item_id: meta for item_id in self.index.ids()
                     if (meta := self.index.metadata(item_id)) is not None}
            walked: dict[str, str] = {}
            started = time.monotonic()
            found, report.findings = self._scan(
                {str(m.get("path")): (str(m.get("stat", "")), str(m.get("hash"))) for m in metas.values()}, walked)
            report.skipped.extend(f.path for f in report.findings  # too large, unreadable
                                  if f.path and f.severity == "error")
            indexed = {m.get("path"): (item_id, m.get("hash")) for item_id, m in metas.items()}
            winners: dict[str, Found] = {}
            pending: list[tuple[Found, str, SkillDocument | None]] = []
            parsed: dict[str, list[Finding]] = {}
            for entry in found:
                known = indexed.get(str(entry.path))
                if known and unservable(metas.get(known[0])):  # indexed by an older version
                    known = None  # parsed again, never kept as last good (index_item.py)
                if known and known[1] == entry.digest:
                    name, doc = known[0], None  # unchanged: no parse, no embedding
                    # ... but its findings every time, as when it was indexed (`skills sync`
                    # said "N skills break the spec" only on the sync that first indexed them).
                    report.findings.extend(kept_findings(metas.get(known[0])))
                else:
                    doc, file_findings = parse_found(entry)
                    report.findings.extend(file_findings)
                    parsed[str(entry.path)] = file_findings
                    if doc is None:
                        report.skipped.append(str(entry.path))
                        if known and known[0] not in winners:  # half-saved: keep the last good
                            winners[known[0]] = entry
                            report.findings.append(last_good.kept_finding(known[0], entry.path))
                        continue
                    name = doc.name
                if name in winners:
                    report.findings.append(Finding(
                        severity="warning", code="shadowed", path=str(entry.path),
                        message=f"skill {name!r} is also at {winners[name].path}, which wins"))
                    continue
                winners[name] = entry
                pending.append((entry, name, doc))
            # The trust levels the library holds: a search looks past its k hits for a more
            # trusted original of a copy only where one can exist (near_copies.enough).
            self._levels_held = {self.trust_book.level(w.root) for w in winners.values()}
            # An item embedded with other texts (before the body side), or with its summary
            # alone (a fill stopped before its sections), counts as changed.
            current = {name: digest if _embedded_whole(metas.get(name))
                       or self.index.completing(name) else ""
                       for name, digest in self.index.hashes().items()}
            items, restat = [], {}
            for entry, name, doc in pending:
                if current.get(name) == entry.digest:
                    report.unchanged += 1
                    if (metas.get(name) or {}).get("stat") != entry.stat:  # ctime moved alone:
                        restat[name] = {"stat": entry.stat}  # not read again next time (review)
                    if entry.writable and not last_good.has(self.writable_root.parent, name):
                        # indexed before copies were kept (second review): keep one now
                        last_good.keep_indexed(self.writable_root.parent, digest_of,
                                               [(entry.path, entry.data, entry.digest, name)])
                    continue
                if doc is None:  # known hash under another name: re-read
                    doc, _ = parse_found(entry)
                    if doc is None:
                        continue
                (report.changed if name in current else report.added).append(name)
                items.append(index_item_for(doc, name, entry.path, entry.root, entry.digest,
                                            entry.writable, entry.stat))
                if parsed.get(str(entry.path)):
                    items[-1].metadata["findings"] = json.dumps(
                        [f.model_dump() for f in parsed[str(entry.path)]])
            removed = [name for name in current if name not in winners
                       and not others_serve(self.index, metas.get(name), self.roots)]
            renames = hand_renames(removed, [item.metadata for item in items
                                             if item.id in report.added], metas)
            for old, new in renames:  # before the new name is staged: never served unjudged
                self.trust_book.carry(old, new)  # hunt-git #1: a rejection follows a rename
            # Unchanged files under an index without their sections (written before the body
            # side, or a fill stopped after the summaries) keep their summary's vector: only
            # the sections are embedded (the summary text is the one embedded then).
            same = {item.id for item in items
                    if item.id in metas and metas[item.id].get("hash") == item.metadata["hash"]}
            kept = [item for item in items if item.id in same]
            items = [item for item in items if item.id not in same] + self.index.keep_first(kept)
            whole = {item.id for item in items}  # texts to embed: all, or all but the first
            report.queued = sum(len(i.embed_texts[:32] or [" "]) for i in items) + \
                sum(len(i.embed_texts[:32]) - 1 for i in kept if i.id not in whole)
            self.index.stage(items)
            if restat:  # best effort: a server that does not answer now gets it next sync
                with contextlib.suppress(ChromaUnavailableError):
                    self.index.update_metadatas(restat)
            staged = {item.id for item in items}
            last_good.keep_indexed(self.writable_root.parent, digest_of, [
                (e.path, e.data, e.digest, n) for e, n, _ in pending if e.writable and n in staged])
            last_good.prune(self.writable_root.parent, (set(current) | staged) - set(removed))
            sweep_removing(self.writable_root)  # what a rename cut short left out of sight
            if removed:
                self.index.delete(removed)
                last_good.drop(self.writable_root.parent, removed)
                report.removed = sorted(removed)
                report.findings.extend(unserved(removed, metas, self.roots))
                for old, new in renames:
                    self._carry_usage(old, new)  # renamed by hand: its counts go with it
            self.freshness.saw(walked, started)  # in the index now: reads compare with it
        return report

    def watch(self, stop_event: threading.Event | None = None,
              on_sync: Callable[[SyncReport], None] | None = None) -> None:
        """Block, re-syncing whenever a file under a root changes, and following a root that
        is replaced, until `stop_event` is set (`skillbank.memories.skills.watching`)."""
        from skillbank.memories.skills.watching import watch

        with self.freshness.watched():  # reads need not re-check the folders meanwhile
            watch(self, stop_event, on_sync)

    def start_watching(self, on_sync: Callable[[SyncReport], None] | None = None
                       ) -> tuple[threading.Thread, threading.Event]:
        """Watch in a daemon thread; set the returned event to stop."""
        stop = threading.Event()
        thread = threading.Thread(target=self.watch, args=(stop, on_sync), daemon=True,
                                  name="skillbank-watch")
        thread.start()
        return thread, stop

    # Reading -----------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self.index.ids())

    def list(self, include_held: bool = False) -> list[Skill]:
        """Every indexed skill as a catalog-level record (no body); held skills (trust.py) only
        with `include_held` (for the person reviewing them)."""
        self.freshness.recheck()
        everything = []
        for name in self.names():
            try:
                everything.append(self._summary(name, fresh=False))
            except NotFoundError:  # removed by a sync meanwhile (a checkout under the watcher)
                continue
        return everything if include_held else gate.shown(everything)

    def _summary(self, name: str, fresh: bool = True, on_disk: bool = False) -> Skill:
        """A skill's catalog-level record with its trust state; `fresh=False` on the ranking
        path (list, search, catalog: trust_cache.OUTSIDE_TTL), never when it is served.
        `on_disk` (load, read_resource): a SKILL.md gone since the last sync is not found, as an
        unknown name; a team skill deleted by git was "held for review" (hunt-git #3); one
        that does not load says why (#1 s38), only on these reads: writes went through here,
        and a save over the file was refused (review 4 #4, session 38)."""
        meta = self.index.metadata(name)
        indexed = same_name(name, self.index.ids()) if meta is None else None
        if indexed is not None:  # the name in its folder's Unicode normalisation (NFD)
            name, meta = indexed, self.index.metadata(indexed)
        if meta is None:  # a SKILL.md there that cannot be read is named so (hunt-disk #5)
            refuse_unreadable(self.roots, name, loads=on_disk)  # reads: or does not load
        if meta is None or (on_disk and file_gone(str(meta.get("path", "")))):
            raise NotFoundError(f"no skill named {unknown_name(name)}; search or list the "
                                "skills to find its name")
        return self._trusted(Skill(
            name=name, description=str(meta.get("description", "")),
            path=str(meta.get("path", "")), root=str(meta.get("root", "")),
            writable=bool(meta.get("writable")), content_hash=str(meta.get("hash", "")),
            usage=self.usage.get(name)), fresh)

    def __contains__(self, name: str) -> bool:
        return self.index.metadata(name) is not None or \
            same_name(name, self.index.ids()) is not None

    def load(self, name: str, include_held: bool = False) -> Skill:
        """Step two of disclosure: the whole skill, body and the list of its resources.

        A held skill (trust.py) raises HeldError unless `include_held` (a person reviewing it)."""
        self.freshness.recheck()
        summary = self._summary(name, on_disk=True)
        name = summary.name  # as indexed (`same_name`)
        if not include_held:
            self._disclosable(summary)
        path = Path(summary.path)
        if summary.review == "accepted" and not include_held:
            doc, findings = self._read_pinned(name, path)
        else:
            doc, findings = read_skill_file(path)
        if doc is None:  # cannot be read: said so (hunt-disk #7); mid-save or mid-merge: a
            refuse_unread_file(path, findings)  # person sees the file, an agent the last good
            indexed = summary.content_hash  # version or a clear refusal (last_good.document)
            doc, summary = last_good.document(self.writable_root.parent, summary, findings, (
                lambda data: digest_of(path, data) == indexed), person=include_held)
        description, body = doc.description or summary.description, doc.body
        frontmatter = dict(doc.frontmatter)
        if summary.trust != "own" and not include_held:
            # Hidden Unicode (tag characters, zero-width, bidi) reaches a model, never a person:
            # a skill not the bank's own is served without it (trust.visible).
            description, body = trust.visible(description), trust.visible(body)
            frontmatter = trust.visible_data(frontmatter)
        usage = summary.usage.model_copy(update={"outside": self.usage.outside(name)})
        return summary.model_copy(update={
            "description": description, "body": body, "usage": usage,
            "frontmatter": frontmatter,
            "resources": list_resources(path.parent, own=summary.trust == "own")})

    def _read_pinned(self, name: str, path: Path) -> tuple[SkillDocument | None, list[Finding]]:
        """An accepted skill's SKILL.md, parsed from the very bytes checked against its pin (a
        file flipped between the trust check and the read is never served as accepted)."""
        from skillbank.memories.skills.resources import open_for_hash

        try:
            with open_for_hash(path) as handle:  # regular files only, never blocks
                data = handle.read(MAX_SKILL_BYTES + 1)
        except OSError:
            return read_skill_file(path)  # its clear "unreadable" finding
        pinned = ((self.trust_book.lock.get(name) or {}).get("files") or {}).get(path.name)
        if pinned != "sha256:" + hashlib.sha256(data).hexdigest():
            raise trust.HeldError(f"skill {name!r}: its SKILL.md is not the accepted version "
                                  "(changed while being read); it goes back to review")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return read_skill_file(path)
        if len(data) > MAX_SKILL_BYTES or "\0" in text:
            return read_skill_file(path)
        return parse_skill_text(text, path=str(path), folder_name=path.absolute().parent.name)

    def read_resource(self, name: str, relative: str, include_held: bool = False, *,
                      blob: bool = False) -> Any:
        """Step three: one file of the skill, as text. Binary or huge files are refused; with
        `blob` (MCP `skill://` reads) a file that is not text is returned as the bytes read and
        checked here (`trust.served_blob`), never read again (hunt-mcpauthor #2, session 37).

        A held skill's file raises HeldError unless `include_held` (a person reviewing it, as
        `load`): reviewers met `skills show NAME -r scripts/clean.py` refused while the scan's
        findings pointed at that very script. Path containment holds either way."""
        summary = self._summary(name, on_disk=True)
        if not include_held:
            self._disclosable(summary)
        folder = Path(summary.path).parent
        path = safe_join(folder, relative)
        if not path.is_file():
            raise NotFoundError(f"skill {name!r} has no file {relative!r}")
        if summary.trust != "own" and ((hard_linked(path.stat()) and relative != "SKILL.md")
                                       or relative not in
                                       self.trust_book.digests.digests(folder, True)):
            # Hidden, vendored or past-the-cap files escape the pin (pins.skill_files): a change
            # to one would be served under the accepted version, so they are not served at all;
            # nor a hard link, which may name a file outside the folder (resources.hard_linked),
            # but SKILL.md, whose text `load` serves anyway (uv and pnpm install by hard links).
            raise NotFoundError(f"skill {name!r} has no file {relative!r} among the files its "
                                "trust covers (hidden, vendored and hard-linked files are not "
                                "served)")
        if left_out(relative) or leads_left_out(folder, relative):  # a clone's `.git/config`
            raise NotFoundError(f"skill {name!r} has no file {relative!r} among the files it "
                                "serves (hidden and vendored files are not served)")
        size = path.stat().st_size
        if size > MAX_RESOURCE_BYTES:
            raise InvalidInputError(f"{relative!r} is {size} bytes; resources over "
                                    f"{MAX_RESOURCE_BYTES} bytes are not returned")
        data = path.read_bytes()
        if summary.review == "accepted" and (self.trust_book.lock.get(name) or {}).get(
                "files", {}).get(relative) != "sha256:" + hashlib.sha256(data).hexdigest():
            # Checked on the bytes served, not only on the folder a moment earlier: a file
            # flipped between the two is never served under the accepted pin.
            raise trust.HeldError(f"skill {name!r}: {relative!r} is not the accepted version "
                                  f"(changed while being read); it goes back to review")
        if relative == "SKILL.md" and not include_held:  # mid-save: what `load` serves
            data = last_good.skill_md(self.writable_root.parent, summary, data, lambda kept: (
                digest_of(path, kept) == summary.content_hash))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if blob and (text is None or "\0" in text):
            return trust.served_blob(data, relative, summary.trust == "own" or include_held)
        if b"\0" in data:
            raise InvalidInputError(f"{relative!r} is a binary file; only text resources are returned")
        if text is None:
            raise InvalidInputError(f"{relative!r} is not UTF-8 text")
        # An agent's read of a skill not the bank's own, as `load`: without hidden characters.
        return trust.visible(text) if summary.trust != "own" and not include_held else text

    # Search and catalog ------------------------------------------------------------------------
    def search(self, task: str, k: int = 5, *, min_score: float | None = None,
               available_tools: Any = None) -> list[Hit[Skill]]:
        """Skills for a task, best first, scored in [0, 1]; empty when no skill fits.

        `available_tools`: the calling agent's tool names. A skill declaring tools it lacks
        (`allowed-tools`, `requires`; see `dependencies`) is left out, and named with what it
        lacks in `hits.missing_tools`. None (the default): no tool gate.

        Ranking: dense and keyword scores fused by per-query z-score, plus the usage prior.
        Score: how likely it is that a skill fits at all (`fit.fit_probability`: the best
        name+description cosine against chance in a library this size, a higher bar when that
        skill shares no word with the task, and the background prototypes), times each hit's
        evidence relative to the best hit, so the first hit's score means the same for every
        query and library size and later hits never score above it. Below `min_score` (default
        `ABSTAIN_BELOW`, 0.5) the answer is empty: "no skill fits". Items without a vector yet
        (first index still embedding, or no model) count by their keyword evidence.

        Fresh (`freshness`): the folders are re-checked first when due, and hits whose files
        changed since the last sync are ranked again on them, so a hit's description is its
        file's, the one `load` reads (hunt-author #4, session 24).
        """
        self.freshness.recheck()
        generation = self.freshness.generation
        hits = self._search(task, k, min_score, available_tools)
        if not self.freshness.current(hits, generation):
            hits = self._search(task, k, min_score, available_tools)
        return hits

    def _search(self, task: str, k: int, min_score: float | None,
                available_tools: Any) -> list[Hit[Skill]]:
        checks.check_str(task, "task")
        checks.check_k(k)
        min_score = checks.check_score(min_score)
        available = dependencies.check_available(available_tools)
        if available is None:  # a face that knows the agent's tools set them around this call
            available = dependencies.current_agent_tools()
        task, unroutable = routing.routable(task)  # a clear error for a 100 KB request
        if unroutable:  # only emoji or punctuation: nothing to route on, and say so
            empty = Hits()
            empty.reason = unroutable
            return empty
        floor = ABSTAIN_BELOW if min_score is None else min_score
        calibrated = isinstance(self.index.embedding_function, MiniLMEmbedding)
        vector = self._query_vector(task) if calibrated else None
        # Each side's say follows its evidence in this library and request (search.py).
        dense_weight, keyword_weight = routing.weights(task, routing.words_per_item(self.index))
        raw = self.index.search(task, k=max(k * 4, 20), fusion="z", query_vector=vector,
                                dense_weight=dense_weight, keyword_weight=keyword_weight,
                                body_weight=routing.body_weight(task) if body_sections()
                                else 0.0)  # off: the summaries alone, as before the body side
        hits: Hits = Hits()
        hits.dense_complete, hits.pending = raw.dense_complete, raw.pending
        if not raw:
            return hits
        fit = self._fit(raw, vector, task) if calibrated else fitting.plain_fit(
            raw.best_dense, raw.best_keyword, self.min_score, self.min_keyword)
        if fit < floor:
            return hits
        ranked = sorted(((hit.score + self.usage.prior(hit.id, scale=PRIOR_SCALE), hit)
                         for hit in raw), key=lambda entry: entry[0], reverse=True)
        best_z = ranked[0][0] if ranked else 0.0
        if available is not None:
            hits.missing_tools = {}
        chosen = []
        # Records only for what is returned: a summary carries trust state (files hashed), and
        # building one per candidate cost a quarter of a search on a 900-skill library.
        for z, hit in ranked:
            if len(chosen) == near_copies.enough(chosen, k, getattr(self, "_levels_held", None)):
                break
            try:
                record = self._summary(hit.id, fresh=False)
            except NotFoundError:  # removed by a concurrent sync since the search began
                continue
            if self._exclusions.excludes(record.description, vector, hit.dense):
                continue  # "Not for X" and the request asks for X: it takes no slot
            # A held skill is not checked for tools: `missing_tools` would name it to the agent
            # (it still takes its slot here and is dropped by the trust gate below).
            # Named only with the score it would have been served with, at most k of them: a
            # fit on its own cosine named 9 Rube skills at 0.02-0.09 for "automate notion
            # pages" (hunt-evalgate #2, session 37).
            if available is not None and not record.held and self._lacks_tools(
                    record, available, hits, fitting.hit_score(fit, z, best_z) >= floor
                    and len(hits.missing_tools) < k):
                continue
            chosen.append((z, hit, record))
        for z, hit, record in near_copies.trusted_first(chosen)[:k]:
            score = fitting.hit_score(fit, z, best_z)
            hits.append(Hit[Skill](id=hit.id, score=round(score, 6), why=hit.why,
                                   record=record, dense=hit.dense, keyword=hit.keyword))
        # Trust gate, after ranking: a held skill is never routed to, and the others keep the
        # scores they earned behind it (so a held best match does not promote a poor one).
        shown = gate.visible(hits)
        if shown and shown[0].score < floor:
            # The skill that fitted is held or needs tools the agent lacks: what is left behind
            # it fits no better than the floor says, so the answer is "no skill fits" (an
            # unrelated 'sql-migrate' at 0.11 was listed under "Skills that may apply").
            del shown[:]
        return shown

    @property
    def _exclusions(self) -> ExclusionGate:
        """What descriptions say their skills are not for (clause vectors cached per library)."""
        gate = getattr(self, "_exclusion_gate", None)
        if gate is None:  # a race builds two; one is kept, both are right
            embed = self.index.embedding_function
            gate = self._exclusion_gate = ExclusionGate(lambda texts: embed_texts(embed, texts))
        return gate

    def _lacks_tools(self, record: Skill, available: list[str], hits: Hits, fits: bool) -> bool:
        """Whether the agent lacks tools the skill declares; named in `hits.missing_tools` only
        when it `fits` (the score it would have been served with reaches the floor). Skills
        after it keep the scores they earned (a gated best match promotes nothing)."""
        need = dependencies.of_file(record.path, self.freshness.declaration_key(
            record.path, record.content_hash))  # an edit since the last sync counts at once
        dependencies.warn_once(record.name, need)
        lacking = dependencies.missing(need, available) if need else []
        if lacking and fits:
            hits.missing_tools[record.name] = lacking
        return bool(lacking)

    def _query_vector(self, task: str) -> Any:
        """The task's vector, embedded once for the index and the background prototypes."""
        try:
            return embed_query(self.index.embedding_function, task)
        except ModelUnavailableError:
            return None  # the index answers by keyword alone and records why

    def _fit(self, raw: Any, vector: Any, task: str) -> float:
        """Fit probability under all-MiniLM-L6-v2 (see `fit`), from one search's evidence."""
        keyword = fitting.keyword_fit(raw.best_keyword, self.min_keyword)
        embedded = [h for h in raw if h.dense is not None]
        if vector is None or not embedded or not raw.best_dense:
            return keyword if raw.pending else 0.0
        if routing.readable_share(task) < routing.READABLE_FOR_FIT:
            # The English model cannot read it: its cosine is no evidence, the words are.
            return fitting.keyword_fit(raw.best_keyword, routing.UNREADABLE_MIN_KEYWORD)
        size, best = self.index.count(), raw.best_dense
        top = max(embedded, key=lambda h: (h.dense, h.id))
        if top.dense < best - 1e-9:
            # The best skill by cosine fell out of the fused hits (weak keyword evidence, as a
            # rule): look it up to learn whether it shares a word with the task.
            top = routing.nearest_by_cosine(self.index, task, vector, top)
        # A shared word with any of the skills nearest in meaning, not only the nearest: in a
        # catalog of one-line descriptions the right one is often second or third by cosine
        # and the only one that shares a word (search.shared_word_among).
        among = routing.shared_word_among(routing.words_per_item(self.index))
        nearest = sorted(embedded, key=lambda h: (-h.dense, h.id))[:among]
        shares = bool(top.keyword) or any(h.keyword for h in nearest)
        if self._background is None:
            self._background = fitting.Background(self.index.embedding_function)
        meta = top.metadata or {}
        shares_word, background = self._background.evidence(
            self._background.similarities(vector), str(meta.get("hash") or top.id),
            lambda: summary_text(top.id, str(meta.get("description", ""))), size,
            shares)
        bundled = fitting.is_bundled(meta.get("root"))
        fit = fitting.fit_probability(best, size, shares_word=shares_word, background=background,
                                      bundled=bundled)
        if bundled:  # the bar is the bundled skill's alone
            fit = max(fit, fitting.own_fit(embedded, size, shares_word, background))
        mixed = routing.mixed_min_keyword(task)
        if mixed is not None:  # the part the model cannot read is the keyword side's (search.py)
            fit = max(fit, fitting.keyword_fit(raw.best_keyword, mixed))
        return max(fit, keyword) if raw.pending else fit

    def catalog(self, budget_tokens: int | None = None, task: str | None = None) -> Catalog:
        """Names and descriptions, best first (by relevance to `task`, else by use), in budget."""
        checks.check_budget(budget_tokens)
        checks.check_str(task, "task", optional=True)
        self.freshness.recheck()
        if task:
            ordered = [h.name for h in self.search(task, k=len(self.names()) or 1)]
            ordered += [n for n in self.names() if n not in set(ordered)]
        else:
            counts = self.usage.all()
            ordered = sorted(self.names(), key=lambda n: (-(counts[n].uses if n in counts else 0), n))
        catalog = Catalog()
        for name in ordered:
            summary = self._summary(name, fresh=False)
            if summary.held:  # trust gate (gate.py): never in the catalog until accepted
                continue
            entry = CatalogEntry(name, summary.description, summary.path,
                                 trust.summary_note(summary))
            cost = count_tokens(catalog_line(entry) + "\n")
            if budget_tokens is not None and catalog.tokens + cost > budget_tokens:
                catalog.omitted += 1
                continue
            catalog.entries.append(entry)
            catalog.tokens += cost
        return catalog

    # Ratings (record_use) live in skill_trust_api.SkillTrust, beside rollback by outcome.
    # Authoring lives in authoring.SkillAuthoring (create, update, save, rename, delete).
    def _index_one(self, path: Path) -> None:
        data = path.read_bytes()
        digest = digest_of(path, data)
        doc, _ = parse_found(Found(path, self.writable_root, True, digest, data))
        if doc is not None:
            item = index_item_for(doc, doc.name, path, self.writable_root, digest, True)
            self.index.upsert([item])
            self.freshness.wrote(str(path), item.metadata["stat"])  # no re-sync for it
            last_good.keep(self.writable_root.parent, doc.name, data)
            if getattr(self, "_levels_held", None) is not None:
                self._levels_held.add("own")  # the bank's own skill, saved since the last sync

