"""The facade: `Skillbank` opens a memory root and owns its three memories.

Every face (CLI, MCP server, LangChain and LlamaIndex adapters) talks to this class and the
records, never to a memory's internals, so behaviour is the same wherever an agent plugs in.
"""

from __future__ import annotations

import logging
import os
import threading
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from skillbank.index_gone import not_rebuilt, recheck_all, resync_if_gone
from skillbank.settings import Settings, load_settings

if TYPE_CHECKING:  # imported lazily at run time: `import skillbank` must stay light
    from skillbank.context import MemoryContext
    from skillbank.distill import Distiller
    from skillbank.memories.experiences.memory import ExperienceMemory
    from skillbank.memories.guidelines.memory import GuidelineMemory
    from skillbank.memories.skills.library import SkillLibrary

log = logging.getLogger("skillbank")

COLLECTIONS = {"skills": "skills", "experiences": "experiences", "guidelines": "guidelines"}
#: Vectors held in memory (dense_live; `MAX_TEXTS` caps them): Chroma's filtered query made a rule
#: search 38.9 ms at 1,281 rules (7.3 at 97). Experiences grow without end: Chroma answers them.
DENSE_IN_MEMORY = frozenset({"skills", "guidelines"})


def bundled_skills_dir() -> Path | None:
    """The skills that ship with skillbank, found the same way in a wheel and an editable install.

    A built wheel carries them as the `skillbank.skills` package; an editable install maps that
    package to the repository's `skills/` folder, which `importlib.resources` cannot always see,
    so the repository layout is the fallback.
    """
    candidates: list[Path] = []
    try:
        from importlib.resources import files

        candidates.append(Path(str(files("skillbank.skills"))))
    except (ImportError, ModuleNotFoundError, TypeError):
        pass
    candidates.append(Path(__file__).resolve().parent.parent / "skills")
    for folder in candidates:
        if folder.is_dir() and any(folder.glob("*/SKILL.md")):
            return folder
    return None


def _default_embedding(settings: Settings) -> Any:
    from skillbank.embeddings import MiniLMEmbedding

    return MiniLMEmbedding(model_dir=str(settings.model_dir) if settings.model_dir else None)


class _ClosedChroma:
    """What a closed bank's indexes hold in place of their Chroma client and collection.

    A memory taken from the bank before close() (`memory = bank.experiences`) kept its index,
    whose next call raised chromadb's "'RustBindingsAPI' object has no attribute 'bindings'"
    (hunt-rag #6, session 24); with a caller's own client it read and wrote on. Now every use
    raises ClosedError."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def __getattr__(self, name: str) -> Any:
        from skillbank.errors import ClosedError

        raise ClosedError.for_root(self._root)


class Skillbank:
    """A memory root: skill library, experience memory and guideline memory over one Chroma."""

    #: False: this process opened the root itself (a client of another process's bank says
    #: True), so `bank.is_remote` works on every bank docs/api.md shows.
    is_remote = False

    def __init__(
        self,
        settings: Settings,
        *,
        embedding_function: Any = None,
        distiller: "Distiller | None" = None,
        client: Any = None,
        include_bundled: bool = False,
        lock_timeout: float = 10.0,
        write_lock_timeout: float = 60.0,
        owner_lock: Any = None,
    ) -> None:
        from filelock import Timeout

        from skillbank.errors import BusyError
        from skillbank.locks import owner_lock as root_owner_lock
        from skillbank.locks import write_lock

        self.settings = settings
        self.root = settings.root
        from skillbank.fsutil import make_root

        make_root(self.root, embedded=client is None and not settings.chroma_url)  # new: 0700
        self._owner_lock = None
        self._server: Any = None
        self._own_client = client is None
        #: Server mode: how processes sharing a Chroma server learn of each other's writes.
        self.changes: Any = None
        if settings.chroma_url:
            from skillbank.changes import ChangeFeed

            self.changes = ChangeFeed(self.root)
        if client is None and not settings.chroma_url:
            # Embedded Chroma keeps its vector index in this process's memory: a second process
            # writing the same folder would never be seen here. One owner process at a time;
            # `Skillbank.open` makes the others its clients (skillbank.sharing).
            if owner_lock is not None:
                self._owner_lock = owner_lock  # acquired by the caller
            else:
                self._owner_lock = root_owner_lock(self.root)
                try:
                    self._owner_lock.acquire(timeout=lock_timeout)
                except Timeout:
                    raise BusyError(
                        f"another skillbank process has {self.root} open with the embedded "
                        "index; open it with Skillbank.open (which shares it with that "
                        "process), or close that process"
                    ) from None
        # Serialises file writes between processes sharing the root (server mode); waiting
        # longer than `write_lock_timeout` raises BusyError, never filelock.Timeout.
        self.write_lock = write_lock(self.root, timeout=write_lock_timeout)
        self.embedding_function = embedding_function or _default_embedding(settings)
        self._distiller = distiller
        self._client = client
        #: Where the collections live and whose entries this bank owns (skillbank.index_ownership).
        self._placement: Any = None
        self._opener: Any = None  # chroma_client.ServerOpener, on a server
        self._indexes: dict[str, Any] = {}
        self._memories: dict[str, Any] = {}
        self._guard = threading.RLock()
        self._closed = False  # set by close(): every later use raises ClosedError
        self._pid = os.getpid()  # a forked child's copy closes nothing of its parent's
        self._watch: tuple[threading.Thread, threading.Event] | None = None
        self._background: Any = None  # skillbank.background.BackgroundWriter, made on first use
        self._usage_logs: dict[str, Any] = {}
        from skillbank.audit import open_log as open_audit_log

        #: Who did what (skillbank.audit); the memories note every write into it.
        self.audit: Any = open_audit_log(self.root)
        #: Team mode (a `database_url`): lock, change feed, usage and audit in PostgreSQL.
        self.store: Any = None
        if getattr(settings, "database_url", None):
            from skillbank.team import attach_store

            try:
                attach_store(self, write_lock_timeout)
            except BaseException:
                if owner_lock is None and self._owner_lock is not None:
                    self._owner_lock.release()  # the caller never gets this bank
                raise
        bundled = bundled_skills_dir() if include_bundled else None
        roots = [Path(r).expanduser() for r in settings.skill_roots]
        self.skill_roots: list[Path] = roots + ([bundled] if bundled and bundled not in roots else [])

    # Opening ------------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        root: str | os.PathLike | None = None,
        *,
        skill_roots: Sequence[str | os.PathLike] | None = None,
        chroma_url: str | None = None,
        namespace: str | None = None,
        model_dir: str | os.PathLike | None = None,
        embedding_function: Any = None,
        distiller: "Distiller | None" = None,
        client: Any = None,
        include_bundled: bool = False,
        sync: bool = True,
        lock_timeout: float = 10.0,
        write_lock_timeout: float = 60.0,
        share: bool = True,
        **overrides: Any,
    ) -> "Skillbank":
        """Open (creating if missing) a memory root and bring its index up to date with files.

        With the embedded index, the first process to open a root owns it and serves it to the
        others (`share=True`, the default): a later process gets a `BankClient` with the same
        public API that forwards each call to the owner, and takes over if the owner exits.
        `lock_timeout` is how long a later process waits to reach the owner (or, with
        `share=False`, for the owner to close the root); `write_lock_timeout` how long each write
        waits for another process's write to finish. Either running out raises `BusyError`.

        `include_bundled` adds the skills shipped with skillbank (how to use this memory) as the
        last read-only root. They teach an assistant that calls memory tools itself (the MCP
        server and the CLI turn them on); an agent whose memory is injected by a middleware
        does not need them, so the Python default is off.

        Implemented in `skillbank.opening`, which sees both this facade and the sharing layer
        (the facade itself never imports `skillbank.sharing`).
        """
        from skillbank.opening import open_bank

        return open_bank(cls, root, skill_roots=skill_roots, chroma_url=chroma_url,
                         namespace=namespace, model_dir=model_dir,
                         embedding_function=embedding_function, distiller=distiller,
                         client=client, include_bundled=include_bundled, sync=sync,
                         lock_timeout=lock_timeout, write_lock_timeout=write_lock_timeout,
                         share=share, **overrides)

    def close(self) -> None:
        if os.getpid() != self._pid:  # a forked child leaving the parent's `with` block: its
            self._closed = True  # Chroma close hung, and the lock it shares is the parent's
            return  # (review 3 of session 33)
        server = None
        if self._server is not None:
            server, self._server = self._server, None
            server.stop()  # no new calls from other processes: they fail over
        try:
            self.flush()  # queued writes and buffered usage counts, before letting go of the root
        except OSError as exc:
            log.error("skillbank: could not write buffered usage counts on close: %s", exc)
        if self._background is not None:
            self._background.close()
        # Only now: the queued writes above ran through the memories. From here on every use
        # raises ClosedError instead of opening Chroma again (hunt-rag #6, session 24).
        self._closed = True
        if self.store is not None:
            self.store.close()  # after the last queued write has taken and released its lock
        watcher_stopped = self.stop_watching()
        if "skills" in self._memories:
            self._memories["skills"].stop_scans()  # a background security scan (#28)
            self._memories["skills"].stop_following()  # skills in git: the follow thread
        from skillbank.locks import WriteLock

        if isinstance(self.write_lock, WriteLock):  # team mode: its store's, closed above
            self.write_lock.refuse(self.root)  # a memory kept from before close writes nothing
        if self._owner_lock is not None and self._owner_lock.is_locked:
            try:
                # Still the only process on this root: leave the keyword side for the next
                # one, unless the file watcher may still be writing.
                if watcher_stopped:
                    with self._guard:
                        indexes = list(self._indexes.values())
                    for index in indexes:
                        index.save_snapshot()
                else:
                    log.info("skillbank: keyword snapshots not saved: the file watcher was "
                             "still running; the next start rebuilds them")
            finally:
                self._release_chroma()
                if not self.settings.chroma_url:  # what hnswlib wrote from uninitialised memory
                    from skillbank.forgetting import scrub_vector_files

                    scrub_vector_files(self.settings.chroma_path)
                if server is not None:
                    server.closed()  # its note goes before the lock: the next holder's stays
                self._owner_lock.release()
        else:
            self._release_chroma()

    def _refuse_if_closed(self) -> None:
        """The gate every use of the bank passes (its memories, indexes and Chroma client):
        after close() a retriever, tool or middleware built on it reopened Chroma and wrote
        into a root another process owned by then (hunt-rag #6, session 24). A copy of the
        bank in a forked child raises ForkedError: the parent's Chroma engine, locks and
        connections stayed in the parent, and a search there waited for ever."""
        if self._closed:
            from skillbank.errors import ClosedError

            raise ClosedError.for_root(self.root)
        if os.getpid() != self._pid and (not self.settings.chroma_url or self.store is not None):
            # embedded Chroma (its engine) or team mode (database connections): a bank on a
            # Chroma server alone works in a child (review 1, session 36: gunicorn --preload)
            from skillbank.errors import ForkedError

            raise ForkedError.for_pid(self._pid)

    def _release_chroma(self) -> None:
        """Let go of Chroma's per-path system, so reopening this root later reads it afresh.

        chromadb caches one system per persist path for the life of the process; a root
        reopened after another process wrote would otherwise be served from the stale one.
        An index a caller kept (in a memory taken before close) holds `_ClosedChroma` now.
        """
        with self._guard:
            for index in self._indexes.values():
                index.client = index._coll = _ClosedChroma(self.root)
            client = self._client if self._own_client else None
            placed = self._placement.client if self._placement is not None else None
            if self._own_client:
                self._client = None
                self._placement = None
                self._indexes.clear()
                self._memories.clear()
        # A placed client (this deployment's database on the same Chroma) is ours even when
        # the caller's client is not; each holds a reference to the shared Chroma system.
        base = client if client is not None else self._client
        closing = [placed] if placed is not None and placed is not base else []
        for one in closing + [client]:
            if one is not None and hasattr(one, "close"):
                try:
                    one.close()
                except Exception:  # noqa: BLE001 - closing is best effort
                    log.debug("closing the Chroma client failed", exc_info=True)

    def __repr__(self) -> str:
        from skillbank.index_outage import without_credentials

        url = self.settings.chroma_url
        return f"Skillbank({without_credentials(url) if url else str(self.root)!r})"

    @property
    def background(self) -> Any:
        """The bank's `skillbank.background.BackgroundWriter`: writes off an agent's hot path."""
        with self._guard:
            if self._background is None:
                from skillbank.background import BackgroundWriter

                self._background = BackgroundWriter(name=f"skillbank-writer:{self.root.name}")
            return self._background

    def flush(self, timeout: float | None = None) -> bool:
        """Make every write handed to the background and every buffered usage count durable.

        Returns False if background writes were still running after `timeout` seconds, or if
        an agent run could not be recorded since the last flush (`skillbank.recording`).
        """
        from skillbank.recording import failures_of

        done = self._background.flush(timeout) if self._background is not None else True
        with self._guard:
            logs = list(self._usage_logs.values())
        for usage_log in logs:
            usage_log.flush()
        return failures_of(self).report() and done

    def _usage(self, memory: str) -> Any:
        from skillbank.usage import UsageLog

        if memory not in self._usage_logs:
            # Server mode: other processes append to the same logs; reads pick their events up.
            self._usage_logs[memory] = UsageLog(self.root / "usage" / f"{memory}.jsonl",
                                                shared=bool(self.settings.chroma_url))
        return self._usage_logs[memory]

    def __enter__(self) -> "Skillbank":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Kernel parts ---------------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        self._refuse_if_closed()
        with self._guard:
            if self._placement is None:
                if self.settings.chroma_url:
                    if self._opener is None:
                        from skillbank.chroma_client import ServerOpener

                        self._opener = ServerOpener(self.settings, self._own_client,
                                                    store=self.store)
                    self._client, self._placement = self._opener.open(self._client)
                else:
                    from skillbank.chroma_client import make_client
                    from skillbank.index_ownership import place

                    if self._client is None:
                        self._client = make_client(path=str(self.settings.chroma_path))
                    from skillbank.chroma_gate import install

                    install(self._client)  # forget zeroes hnswlib's files between its calls
                    # A Chroma others reach: this deployment's own database (issue 24).
                    self._placement = place(self.settings, self._client,
                                            own_client=self._own_client, store=self.store)
            return self._placement.client

    def index(self, kind: str) -> Any:
        """The hybrid index of one memory (`skills`, `experiences`, `guidelines`)."""
        self._refuse_if_closed()
        with self._guard:
            if kind not in self._indexes:
                from skillbank.index_mirror import open_index

                name = f"{self.settings.collection_prefix}_{COLLECTIONS[kind]}"
                snapshot = None
                if not self.settings.chroma_url:
                    from skillbank.index_snapshot import KeywordSnapshot

                    # Embedded and exclusive (the owner lock): a snapshot is safe to use. With
                    # a caller's own client this bank may share the folder's Chroma with an
                    # embedded one, so it only invalidates the snapshot when it writes.
                    snapshot = KeywordSnapshot(self.root / ".cache" / "index" / name,
                                               saves=self._owner_lock is not None)
                # A server that does not answer yet: keyword from the files (index_mirror).
                index = open_index(lambda: (self.client, self._placement.owner,
                                            self._placement.private), name,
                                   self.embedding_function, shared=bool(self.settings.chroma_url),
                                   snapshot=snapshot, url=self.settings.chroma_url,
                                   detached_ok=self.settings.start_without_chroma)
                index._dense.enabled = kind in DENSE_IN_MEMORY  # exact cosine in memory
                if self.changes is not None:
                    self.changes.start(kind)
                    if hasattr(self.changes, "take"):  # team mode's feed carries the ids
                        index.after_write = lambda: self.changes.wrote(kind, index.last_written)
                    else:
                        index.after_write = lambda: self.changes.wrote(kind)
                self._indexes[kind] = index
            return self._indexes[kind]

    def _before_use(self, kind: str) -> None:
        """Before a memory is handed out: refuse a closed bank; in server mode, if another
        process wrote to `kind`, re-read it first (one `stat` when nothing changed, see
        skillbank.changes)."""
        self._refuse_if_closed()
        resync_if_gone(self, kind)  # its server lost the collection (hunt-chroma #1, session 29)
        if self.changes is None or kind not in self._memories:
            return
        take = getattr(self.changes, "take", None)  # team mode: which ids, or None for all
        written = take(kind) if take is not None else (
            None if self.changes.others_wrote(kind) else False)
        if written is not False:
            with self._guard:
                index = self._indexes[kind]
                memory = self._memories[kind]
            from skillbank.index_outage import ChromaUnavailableError

            try:
                if written is None:
                    index.invalidate()
                else:  # just what the other worker wrote, not the whole collection again
                    index.refresh(written)
            except ChromaUnavailableError:
                pass  # the records are read all the same; the memory re-syncs its index later
            try:
                memory.sync(**({"asked": False} if kind == "skills" else {}))  # no report read
            except ChromaUnavailableError:
                # Chroma stopped answering between the other worker's write and this call: the
                # call goes on (a write is journaled, a recall reads the journal) and a later
                # one syncs. It failed instead: 3 of 120 writes in the first second of an
                # outage were refused and never stored (team hunt, session 19).
                if hasattr(memory, "index_behind"):
                    memory.index_behind = True

    @property
    def distiller(self) -> "Distiller":
        if self._distiller is None:
            from skillbank.distill import RuleDistiller

            self._distiller = RuleDistiller(
                same_threshold=self.settings.merge_threshold,
                related_threshold=self.settings.related_threshold,
            )
        return self._distiller

    @distiller.setter
    def distiller(self, value: "Distiller | None") -> None:
        self._distiller = value

    def search_mode(self) -> str:
        """'keyword' while searches answer by keyword alone (`keyword_reason` says why), else
        'hybrid'. Per search, the same is in `Hits.dense_complete` / `Hits.pending` and hits
        with why="keyword"."""
        return "keyword" if self.keyword_reason() else "hybrid"

    def keyword_reason(self) -> str:
        """Why skill searches answer by keyword alone just now ('' when they do not): no
        model, a Chroma server that does not answer, a first index still embedding
        (`skillbank.model_state.keyword_reason`)."""
        from skillbank.model_state import keyword_reason

        return keyword_reason(self.embedding_function, self._indexes.get("skills"))

    def embed(self, texts: list[str]) -> Any:
        """Embed texts with the bank's embedding function (for similarity checks in memories)."""
        from skillbank.embeddings import embed_texts

        return embed_texts(self.embedding_function, texts)

    # Memories -----------------------------------------------------------------------------------
    @property
    def skills(self) -> "SkillLibrary":
        self._before_use("skills")
        with self._guard:
            if "skills" not in self._memories:
                from skillbank.memories.skills.library import SkillLibrary

                self._memories["skills"] = SkillLibrary(
                    self.root / "skills",
                    self.skill_roots,
                    self.index("skills"),
                    self._usage("skills"),
                    write_lock=self.write_lock,
                    min_score=self.settings.min_score,
                    max_depth=self.settings.max_skill_roots_depth,
                    max_dirs=self.settings.max_scan_dirs,
                )
                # Drafting skills from experience (skills.propose) reads experiences through
                # the experience memory's public API; the memories never import each other.
                self._memories["skills"].experience_source = self._experiences_for_drafting
                self._memories["skills"].distiller_source = lambda: self.distiller
                self._memories["skills"].default_namespace = self.settings.namespace
                # Reads see the folders as they are (hunt-author #4, session 24): 0 turns it off.
                self._memories["skills"].freshness.seconds = self.settings.skills_recheck_seconds
                self._memories["skills"].audit = self.audit
                if self.store is not None:  # drafts and their ledger in PostgreSQL (team mode)
                    self._memories["skills"].draft_store = self.store.drafts(
                        self._memories["skills"].drafts_root)
                if self.settings.skills_repo:  # skills in git (skillbank/team/skills_repo.py)
                    from skillbank.team.skills_repo import attach

                    try:
                        attach(self._memories["skills"], self.settings)
                    except BaseException:
                        del self._memories["skills"]  # never served without its repository
                        raise
                from skillbank.memories.skills.staging import sweep_at_open

                # An adopt killed mid-copy left its staging copy (hunt-drafts #4, session 26).
                sweep_at_open(self._memories["skills"].writable_root, self.write_lock)
            return self._memories["skills"]

    def _experiences_for_drafting(self, namespace: str | None) -> list[Any]:
        """The runs to draft from, and the lesson records distilled from them: a revision reads
        a failed run's distilled lessons too (hunt-drafts #7, session 26)."""
        from skillbank.memories.skills.grouping import MAX_EXPERIENCES

        return (self.experiences.list(namespace, kind="experience", limit=MAX_EXPERIENCES)
                + self.experiences.list(namespace, kind="lesson", limit=MAX_EXPERIENCES))

    @property
    def experiences(self) -> "ExperienceMemory":
        self._before_use("experiences")
        with self._guard:
            if "experiences" not in self._memories:
                from skillbank.item_actions import erase_drafts_of
                from skillbank.memories.experiences.memory import ExperienceMemory

                self._memories["experiences"] = ExperienceMemory(
                    self.root / "experiences",
                    self.index("experiences"),
                    self._usage("experiences"),
                    settings=self.settings,
                    distiller=lambda: self.distiller,
                    write_lock=self.write_lock,
                    # The journal from the store (PostgreSQL in team mode), else its files.
                    journal=self.store.experiences() if self.store is not None else None,
                )
                self._memories["experiences"].audit = self.audit
                # Forget means gone whichever API forgets (hunt-drafts #2, session 26).
                self._memories["experiences"].on_forgotten = partial(erase_drafts_of, self)
                if self.store is not None:  # its own lock for Chroma's upsert, after the write lock
                    self._memories["experiences"].index_lock = self.store.write_lock(
                        self.write_lock.timeout, name="experiences-index")
            return self._memories["experiences"]

    @property
    def guidelines(self) -> "GuidelineMemory":
        self._before_use("guidelines")
        with self._guard:
            if "guidelines" not in self._memories:
                from skillbank.memories.guidelines.memory import GuidelineMemory

                self._memories["guidelines"] = GuidelineMemory(
                    self.root / "guidelines",
                    self.index("guidelines"),
                    settings=self.settings,
                    distiller=lambda: self.distiller,
                    embed=self.embed,
                    # Team mode: the guidelines' own advisory lock. Their writes touch only
                    # their records and index, and under the bank's one lock every learn waited
                    # for every experience write of every worker (benchmarks/team_load.py).
                    write_lock=(self.store.write_lock(self.write_lock.timeout, name="guidelines")
                                if self.store is not None else self.write_lock),
                    # team mode: the records in PostgreSQL (skillbank.store), else the files
                    records=self.store.guidelines() if self.store is not None else None,
                )
                self._memories["guidelines"].audit = self.audit
                if self.store is not None:  # forgotten ids in PostgreSQL (team mode)
                    self._memories["guidelines"].forgotten = self.store.forgotten()
            return self._memories["guidelines"]

    # Whole-bank operations ------------------------------------------------------------------------
    def sync(self, *, asked: bool = True) -> dict[str, Any]:
        """Bring every index up to date with the files; repairs what a crash left behind
        (`asked=False`: the skill changes ride on the next asked-for sync, skills/unasked.py)."""
        from skillbank.memories.skills.unreadable import sync_or_report
        left = recheck_all(self)  # a collection its server lost is made again, filled here
        reports = {  # a skills folder that cannot be used leaves the others working (hunt-disk #6)
            "skills": sync_or_report(lambda: self.skills, asked),
            "guidelines": self.guidelines.sync(),
            "experiences": self.experiences.sync(),
        }
        for kind in left:  # it said "unchanged", compared with what it answered from (review 4)
            reports[kind].findings.append(not_rebuilt(self._indexes[kind]))
        return reports

    def reindex(self) -> dict[str, Any]:
        """Drop every index and rebuild it from the files (the files are the truth).

        Also how to switch embeddings: a collection built with another embedding cannot be
        opened with this one, so it is dropped first. Any other collection is kept and emptied:
        on a Chroma server other processes of this root hold handles to it, and a dropped one
        left every later call of theirs failing ("Collection ... does not exist") until they
        restarted. An embedded index whose files were deleted while open is opened again
        first (`skillbank.index_reopen`)."""
        from skillbank.index_rebuild import empty_and_refill
        from skillbank.index_reopen import rebuilding

        recheck_all(self)  # emptied, the collection its server holds now (hunt-chroma #1)
        return rebuilding(self, partial(empty_and_refill, self))

    def watch(self) -> None:
        """Keep the skill index current in a background thread while this process runs."""
        with self._guard:
            if self._watch is None:
                self._watch = self.skills.start_watching()

    def stop_watching(self) -> bool:
        """Stop the file watcher, and the embedding of what a read's re-check of the skill
        folders staged (`freshness`); False if either was still running after 5 s."""
        with self._guard:
            skills = self._memories.get("skills")
        filled = skills.freshness.stop(timeout=5) if skills is not None else True
        if self._watch is None:
            return filled
        thread, stop = self._watch
        stop.set()
        thread.join(timeout=5)
        self._watch = None
        return not thread.is_alive() and filled

    def context_for(self, task: str, budget_tokens: int = 1500, *,
                    namespace: str | None = None, **options: Any) -> "MemoryContext":
        """What a model should remember for `task`, as one markdown block within a token budget."""
        from skillbank.context import build_context

        # namespace=None: the caller's own and shared namespaces (skillbank.scope)
        return build_context(self, task, budget_tokens=budget_tokens, namespace=namespace,
                             **options)

    # Scope: who is asking (skillbank.scope) ----------------------------------------------------
    def scoped(self, scope: Any) -> Any:
        """This bank as seen by one caller: the same API, every call run as `scope`.

        What faces serving several people use (`skillbank.scoped.ScopedBank`): reads cover the
        caller's namespaces, writes go to its own, ids outside its scope are not found."""
        from skillbank.scoped import ScopedBank

        return ScopedBank(self, scope)

    def caller_scope(self) -> Any:
        """The scope the current call runs as: the active one (`skillbank.scope.using`, a
        scoped view, a client's envelope), else this bank's default — the local user, admin of
        `settings.namespace`. The one place a face or the audit log learns who writes."""
        from skillbank import scope as scopes

        return scopes.current(self.settings.namespace)

    def accept_votes(self, item_id: str) -> dict[str, Any]:
        """A reviewer accepts an item's untrusted uses and votes (kept apart until now): from
        now on they count in its ranking and pruning. Ids as for `rate`; out of scope: not found."""
        from skillbank.item_actions import accept_votes

        return accept_votes(self, item_id)

    def rate(self, item_id: str, helpful: bool, *, trusted: bool = True) -> dict[str, Any]:
        """Say whether a remembered item helped; routes by id prefix to the right memory.

        ``trusted=False`` (an untrusted client): the vote is recorded apart (``counted`` is
        false in the answer) and never moves a ranking or a rule's status.
        """
        from skillbank.item_actions import rate

        return rate(self, item_id, helpful, trusted=trusted)

    def forget(self, item_id: str, *, trusted: bool = True) -> dict[str, Any]:
        """Delete a remembered item by id (trusted callers only); routes by prefix like rate().

        ``gl-…`` guideline file and ``exp-…``/``lsn-…`` records are removed with their index
        entries and the removal recorded; ``skill:<name>`` deletes a bank-owned skill's folder
        for good, ``.versions/`` too (forget means gone: no trash copy, `skillbank.forgetting`).
        """
        from skillbank.item_actions import forget

        return forget(self, item_id, trusted=trusted)

    def stats(self) -> dict[str, Any]:
        """Counts for dashboards and the MCP `skillbank://stats` resource (`skillbank.stats`)."""
        from skillbank.stats import bank_stats

        return bank_stats(self)
