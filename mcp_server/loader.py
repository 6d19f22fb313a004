"""Open the bank in the background so the server can answer `initialize` at once.

Importing Chroma, loading the embedding model and building the keyword indexes take longer than
importing mcp. The client waits for none of it: the server starts serving while a thread
- opens the bank, then syncs the skill index with the files while a second thread loads the
  embedding model (the two overlap: file reading and hashing against the ONNX session);
- makes skills fast: one warm-up search loads the keyword index; from here on `find_skills`
  answers;
- starts watching the skill folders and syncs once more, for edits made during startup;
- syncs and warms the guidelines, then the experiences and the tokenizer.
Each tool awaits only the stage it reads, so `find_skills` does not wait for 10,000 experiences.

Before all that, when the root's snapshot is provably current (`skillbank.snapshot_search`),
the skill library is first built over the snapshot, without Chroma: `find_skills` answers from
it (the same code, the same answers) while the bank opens, and the bank's own skills take over
once they are ready. Once they are synced and embedded, their vectors are kept beside the
snapshot for the next start.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any, Callable

log = logging.getLogger("skillbank.mcp")

STAGES = ("open", "skills", "guidelines", "experiences")


class BankUnavailable(Exception):
    """The bank could not be opened (or a stage failed); the message says why and what to do."""


class BankHandle:
    """A bank that is, or is becoming, ready; stages become ready in order."""

    def __init__(self, bank: Any = None, *, opener: Callable[[], Any] | None = None,
                 sync: bool = True, watch: bool = False, warm: bool = True,
                 early: Callable[[], Any] | None = None) -> None:
        self._bank = bank
        self._opener = opener
        #: Builds the skill library over the root's snapshot, or returns None (snapshot_search).
        self._early_opener = early
        self._early: Any = None  # an _EarlyBank while it answers skill searches
        self._early_tried = threading.Event()
        self._early_answered = threading.Event()
        if early is None:
            self._early_tried.set()
        self._sync = sync
        self._watch = watch
        self._warm_up = warm
        self._events = {stage: threading.Event() for stage in STAGES}
        self._errors: dict[str, BaseException] = {}
        self._thread: threading.Thread | None = None
        self.timings: dict[str, float] = {}
        self._fill: threading.Thread | None = None
        self._stop_fill = threading.Event()
        #: Called with (skills embedded, skills to embed) while vectors fill in (MCP progress).
        self.fill_listeners: list[Callable[[int, int], None]] = []
        self._started = time.perf_counter()
        #: What the skill syncs already logged: the sync after the watcher starts repeats it.
        self._logged: set[str] = set()
        if bank is not None and opener is None and not sync:
            for event in self._events.values():
                event.set()

    @classmethod
    def ready(cls, bank: Any) -> "BankHandle":
        """A handle over an already opened (and synced, if the caller wanted) bank."""
        return cls(bank, sync=False)

    # Loading ----------------------------------------------------------------------------------
    def start(self) -> "BankHandle":
        if self._thread is None and not all(e.is_set() for e in self._events.values()):
            self._thread = threading.Thread(target=self._load, name="skillbank-open", daemon=True)
            self._thread.start()
        return self

    def note(self, step: str) -> None:
        """Record when a startup step ended (seconds since this handle was made; in stats)."""
        self.timings[step] = round(time.perf_counter() - self._started, 3)

    def _mark(self, stage: str) -> None:
        self.note(stage)
        self._events[stage].set()

    def _fail_from(self, stage: str, exc: BaseException) -> None:
        from skillbank import onnx_model

        onnx_model.discard()  # a bank that failed to open never takes its preloaded model
        index = STAGES.index(stage)
        for later in STAGES[index:]:
            self._errors.setdefault(later, exc)
            self._events[later].set()

    def _count_early(self) -> None:
        """Count a search answered from the snapshot (`snapshot_answers` in stats)."""
        self.timings["snapshot_answers"] = self.timings.get("snapshot_answers", 0) + 1

    def _open_early(self) -> None:
        """Build the skill library over the snapshot and warm it (BM25, vectors, model); then
        let the first search run before the bank's imports take the interpreter's turns."""
        try:
            library = self._early_opener() if self._early_opener is not None else None
            if library is not None:
                self._warm(lambda: library.search("warm up the skill index", k=1))
                self._early = _EarlyBank(library, self._early_answered, self._count_early)
                self.note("snapshot_ready")
        except Exception:  # noqa: BLE001 - the bank answers instead
            log.debug("the skill snapshot could not answer", exc_info=True)
        finally:
            self._early_tried.set()
        if self._early is not None:
            try:  # tests hold it longer, to know which answered
                hold = float(os.environ.get(EARLY_HOLD_ENV, "") or EARLY_HOLD)
            except ValueError:
                hold = EARLY_HOLD
            self._early_answered.wait(hold)

    def _load(self) -> None:
        stage = "open"
        try:
            self._open_early()
            if self._bank is None:
                assert self._opener is not None
                self._bank = self._opener()
            bank = self._bank
            if self._early is not None and not getattr(bank, "is_remote", False):
                from skillbank.snapshot_search import hand_over

                hand_over(self._early.library, bank.skills)  # one trust book, one scanner
            self._mark("open")
            stage = "skills"
            model = None
            if self._warm_up:  # load the embedding model while the skill files are read
                model = threading.Thread(target=self._warm, name="skillbank-model", daemon=True,
                                         args=(lambda: bank.embedding_function(["warm up"]),))
                model.start()
            try:
                if self._sync:
                    self._sync_skills(bank)
                    self.note("skills_synced")
            finally:
                if model is not None:
                    model.join()
                    self.note("model")
                # The bank has its model now; a preload it did not take (a client of another
                # process's root, another model folder or embedding) would only hold memory.
                from skillbank import onnx_model

                onnx_model.discard()
            # One search loads the skills' keyword index (and the model, if warming was off).
            self._warm(lambda: bank.skills.search("warm up the skill index", k=1))
            self._mark("skills")
            self._early = None  # the bank's own skills answer from here
            if self._watch:
                # Started once skills answer (starting it costs CPU the first call would wait
                # for); the sync after it catches what changed between the first sync and now.
                bank.watch()
                if self._sync:
                    self._sync_skills(bank)
            # Skills answer by keyword from here; their vectors fill in behind (a first start
            # on a thousand skills embeds for minutes), and hybrid search takes over item by item.
            # A client of another process's root leaves that to the owner, which embeds what it
            # syncs (a progress callback cannot cross the wire anyway).
            if not getattr(bank, "is_remote", False):
                self._start_fill(bank)
            stage = "guidelines"
            if self._sync:
                bank.guidelines.sync()
            self._warm(lambda: bank.guidelines.search("warm up the guideline index", k=1))
            self._mark("guidelines")
            stage = "experiences"
            if self._sync:
                bank.experiences.sync()
            self._warm(self._warm_experiences)
            self._warm(_warm_tokenizer)
            self._mark("experiences")
            log.info("bank ready: %s", self.timings)
        except BaseException as exc:  # noqa: BLE001 - reported to every waiting tool
            log.error("skillbank: could not %s: %s", "open the bank" if stage == "open"
                      else f"load the {stage}", exc)
            self._fail_from(stage, exc)

    def _start_fill(self, bank: Any) -> None:
        self._fill = threading.Thread(target=self._fill_skills, args=(bank,), daemon=True,
                                      name="skillbank-embed")
        self._fill.start()

    def _fill_skills(self, bank: Any) -> None:
        started = time.perf_counter()
        try:
            # skills_summaries: every summary is in (ranking as complete as before the body
            # side); skills_dense: the body sections too (#26 item 3).
            embedded = bank.skills.fill_dense(progress=self._fill_progress, stop=self._stop_fill,
                                              summaries_done=self._summaries_done)
        except Exception as exc:  # noqa: BLE001 - keyword search keeps answering
            log.error("skillbank: embedding the skills failed, keyword search only: %s", exc)
            return
        if embedded:
            log.info("skill vectors: %d embedded in %.1f s", embedded,
                     time.perf_counter() - started)
        self.timings["skills_dense"] = round(time.perf_counter() - self._started, 3)
        if self._sync and not self._stop_fill.is_set():
            from skillbank.snapshot_search import save

            index = getattr(bank, "index", None)
            if callable(index) and not getattr(bank, "is_remote", False) and save(index("skills")):
                self.note("snapshot_saved")

    def _summaries_done(self) -> None:
        if "skills_summaries" not in self.timings:
            self.note("skills_summaries")

    def _fill_progress(self, done: int, total: int) -> None:
        for listener in list(self.fill_listeners):
            try:
                listener(done, total)
            except Exception:  # noqa: BLE001 - a listener must not stop the embedding
                log.debug("fill progress listener failed", exc_info=True)

    def _sync_skills(self, bank: Any) -> None:
        # keyword-searchable now (vectors: _fill_skills); no one reads its report, so what
        # the watcher applied stays for the next sync a person asks for (review, session 30)
        report = bank.skills.sync(embed=False, asked=False)
        log_sync_findings(report, self._logged)
        if report.changed_anything:
            log.info("skill sync: %d added, %d changed, %d removed", len(report.added),
                     len(report.changed), len(report.removed))

    def _warm(self, fn: Callable[[], Any]) -> None:
        """Build lazy indexes and load models before the first real call needs them."""
        if not self._warm_up:
            return
        try:
            fn()
        except Exception:  # noqa: BLE001 - warming is best effort; the real call reports errors
            log.debug("warming up failed", exc_info=True)

    def _warm_experiences(self) -> None:
        memory = self._bank.experiences
        try:  # count_use=False: warming up must not count as a use of what it finds
            memory.recall("warm up the experience index", k=1, count_use=False)
        except TypeError:
            pass

    # Waiting ----------------------------------------------------------------------------------
    def _check(self, stage: str) -> Any:
        error = self._errors.get(stage)
        if error is not None:
            raise BankUnavailable(_describe(error, stage)) from error
        return self._bank

    def get(self, stage: str = "experiences", timeout: float | None = None) -> Any:
        """Block until `stage` is ready and return the bank (raises BankUnavailable)."""
        self.start()
        self._early_answered.set()  # a call needs the bank: its opening waits no longer
        if not self._events[stage].wait(timeout):
            raise BankUnavailable(f"the memory is still loading ({stage}); try again in a moment")
        return self._check(stage)

    async def aget_search(self) -> Any:
        """What answers a skill search now: the bank once its skills are ready, before that the
        library over the root's snapshot when there is one, else (waiting) the bank."""
        if not self._events["skills"].is_set():
            self.start()
            import anyio

            if not self._early_tried.is_set():
                await anyio.to_thread.run_sync(self._early_tried.wait, abandon_on_cancel=True)
            early = self._early
            if early is not None and not self._events["skills"].is_set() and early.current():
                return early
        return await self.aget("skills")

    async def aget(self, stage: str = "experiences") -> Any:
        """Await `stage` without blocking the event loop."""
        if self._events[stage].is_set():
            return self._check(stage)
        self.start()
        self._early_answered.set()  # a call needs the bank: its opening waits no longer
        import anyio

        await anyio.to_thread.run_sync(self._events[stage].wait, abandon_on_cancel=True)
        return self._check(stage)

    @property
    def bank(self) -> Any:
        return self._bank

    def is_ready(self, stage: str = "experiences") -> bool:
        return self._events[stage].is_set() and stage not in self._errors

    def readiness(self) -> tuple[bool, dict[str, str]]:
        """For `/readyz` of `skillbank serve --transport http`: not ready while the bank opens
        or after it failed to (saying why), then the checks a team worker's `/readyz` makes
        (`skillbank.team.server.readiness`: its Chroma, embedded or a server)."""
        if not self._events["open"].is_set():
            return False, {"bank": "the memory is still opening"}
        if "open" in self._errors:
            return False, {"bank": _describe(self._errors["open"], "open")}
        from skillbank.index_repair import looks_damaged

        damaged = [(stage, exc) for stage, exc in self._errors.items() if looks_damaged(exc)]
        if damaged:  # a damaged index failed a stage: every tool of it fails (#1c, session 24)
            return False, {"chroma": _describe(damaged[0][1], damaged[0][0])}
        if getattr(self._bank, "is_remote", False):  # the root's owner process keeps its index
            return True, {"bank": "ok"}
        from skillbank.team.server import readiness

        return readiness(self._bank)

    def close(self, wait: float = 30.0) -> None:
        """Stop watching and release the root; waits up to `wait` s for a load in progress."""
        self._stop_fill.set()  # a fill stops after its current batch; the rest resumes later
        if self._thread is not None:
            self._thread.join(timeout=wait)
            if self._thread.is_alive():  # the process is exiting, the OS releases the lock
                log.info("the memory was still opening: not closed, no keyword snapshot saved")
                return
        if self._fill is not None:
            self._fill.join(timeout=wait)
            if self._fill.is_alive():  # said, as a missing snapshot costs the next start (#4)
                log.info("vectors were still being filled after %g s: the memory was not "
                         "closed, no keyword snapshot saved", wait)
                self._flush_only(wait)
                return
        if self._bank is not None:
            try:
                self._bank.close()
            except Exception:  # noqa: BLE001
                log.debug("closing the bank failed", exc_info=True)

    def _flush_only(self, wait: float) -> None:
        """The bank's buffered use counts and background writes made durable without closing
        it (the fill still uses its index): a SIGTERM while vectors were filling left the bank
        unclosed, and those were lost with the process (session 22, the soak's fix helper)."""
        if self._bank is None:
            return
        try:
            if not self._bank.flush(timeout=wait):
                log.warning("background writes were still running at shutdown")
        except Exception:  # noqa: BLE001
            log.debug("flushing the bank failed", exc_info=True)


#: How long the bank's opening waits, once the snapshot library is ready, for the first skill
#: search to be answered: its imports would otherwise take turns with that search on the GIL.
#: A call that needs the bank (memory_context, a resource) ends the wait at once.
EARLY_HOLD = 1.0
EARLY_HOLD_ENV = "SKILLBANK_MCP_EARLY_HOLD"


class _EarlyBank:
    """The bank as a skill search sees it before the bank is open: its skills, from the
    snapshot (`skills.search` only; everything else waits for the bank)."""

    def __init__(self, library: Any, answered: threading.Event,
                 note: Callable[[], None] | None = None) -> None:
        self.library = library
        self._answered = answered
        self._note = note

    @property
    def skills(self) -> Any:
        return _Answering(self.library, self._answered, self._note)

    def current(self) -> bool:
        """Whether the snapshot is still the root's (no other process wrote since the check;
        `snapshot_search.still_current`); if not, the search waits for the bank."""
        from skillbank.snapshot_search import still_current

        return still_current(self.library)


class _Answering:
    """The snapshot library, telling the loader once a search has been answered."""

    def __init__(self, library: Any, answered: threading.Event,
                 note: Callable[[], None] | None = None) -> None:
        self._library = library
        self._answered = answered
        self._note = note

    def search(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self._library.search(*args, **kwargs)
        finally:
            self._answered.set()
            if self._note is not None:
                self._note()


def _warm_tokenizer() -> None:
    from skillbank.tokens import count_tokens

    count_tokens("warm up the tokenizer")


def _describe(error: BaseException, stage: str) -> str:
    from skillbank.errors import SkillbankError
    from skillbank.index_repair import damaged_message

    if isinstance(error, SkillbankError):
        return str(error)
    what = "open the memory root" if stage == "open" else f"load the {stage} memory"
    damaged = damaged_message(error, served=True)  # the repair, not "server-side problem"
    if damaged is not None:  # (hunt-mcpmany #1c, session 24)
        return f"the skillbank server could not {what}: {damaged}"
    return (f"the skillbank server could not {what}: {type(error).__name__}: {error}. "
            "This is a server-side problem; check the server's stderr log.")


def _skill_roots(options: Any) -> list[str] | None:
    """The folders the root remembers (`<root>/skillbank.toml`) plus any `--skills-dir` not
    among them: a server started without one must not drop a folder the CLI indexed (#27).
    The server does not write the record; the CLI does."""
    from pathlib import Path

    from skillbank.remember import recorded, resolve_root

    given = [str(p) for p in options.skills_dirs or []]
    known = recorded(resolve_root(Path(options.root) if options.root else None))
    if not known:
        return given or None
    seen = {str(Path(p).resolve()) for p in known}
    return known + [p for p in given if str(Path(p).resolve()) not in seen]


def _bundled(options: Any) -> bool:
    """Whether to serve the bundled skills: not with --no-bundled, nor when the root remembers
    `include_bundled = false` (`skillbank config bundled off`, a CLI --no-bundled), so the
    server indexes what the CLI does (#27)."""
    if not options.include_bundled:
        return False
    from pathlib import Path

    from skillbank.remember import bundled, resolve_root

    return bundled(resolve_root(Path(options.root) if options.root else None)) is not False


def _embedding(options: Any, made: dict[str, Any]) -> Any:
    """The embedding function the options ask for (None: the bank's default), made once: the
    snapshot library and the bank share it (one ONNX session)."""
    if "embedding" in made:
        return made["embedding"]
    embedding = None
    choice = os.environ.get("SKILLBANK_EMBEDDING", "").strip().lower()
    if choice == "hash":
        from skillbank.embeddings import HashEmbedding

        embedding = HashEmbedding()
    elif choice not in ("", "default", "minilm"):
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"SKILLBANK_EMBEDDING={choice!r} is not known; use 'hash' or 'minilm'")
    made["embedding"] = embedding
    return embedding


def settings_for(options: Any) -> Any:
    """The settings the options describe (what the opened bank will have)."""
    return _settings(options)


def _settings(options: Any) -> Any:
    from skillbank.settings import load_settings

    roots = _skill_roots(options)
    return load_settings(options.root, skill_roots=tuple(roots) if roots is not None else None,
                         chroma_url=options.chroma_url, namespace=options.namespace,
                         model_dir=options.model_dir)


SNAPSHOT_ENV = "SKILLBANK_MCP_SNAPSHOT"


def early_for(options: Any, made: dict[str, Any]) -> Callable[[], Any] | None:
    """A function that builds the skill library over the root's snapshot (or returns None; see
    skillbank.snapshot_search); None when SKILLBANK_MCP_SNAPSHOT=0 turns this off."""
    if os.environ.get(SNAPSHOT_ENV, "1").strip().lower() in ("0", "false", "no"):
        return None

    def open_early() -> Any:
        from pathlib import Path

        from skillbank.bank import bundled_skills_dir
        from skillbank.snapshot_search import open_library

        settings = _settings(options)
        embedding = _embedding(options, made)
        if embedding is None:
            from skillbank.embeddings import MiniLMEmbedding

            embedding = made["embedding"] = MiniLMEmbedding(
                model_dir=str(settings.model_dir) if settings.model_dir else None)
        bundled = bundled_skills_dir() if _bundled(options) else None
        roots = [Path(r).expanduser() for r in settings.skill_roots]
        return open_library(settings, roots + ([bundled] if bundled and bundled not in roots
                                               else []), embedding)

    return open_early


def opener_for(options: Any, made: dict[str, Any] | None = None) -> Callable[[], Any]:
    """A function that opens the bank the options describe (without syncing)."""
    made = {} if made is None else made

    def open_bank() -> Any:
        from skillbank.bank import Skillbank

        embedding = _embedding(options, made)
        return Skillbank.open(
            options.root,
            skill_roots=_skill_roots(options),
            chroma_url=options.chroma_url,
            namespace=options.namespace,
            model_dir=options.model_dir,
            embedding_function=embedding,
            include_bundled=_bundled(options),
            sync=False,
            start_without_chroma=True,  # a server: by keyword until a Chroma server answers
            # --no-watch: skill files changed are not synced, neither by reads (freshness.py)
            skills_recheck_seconds=None if getattr(options, "watch", True) else 0,
        )

    return open_bank


#: At most this many "not served" lines per sync at WARNING; the rest are one count line.
LOGGED_ERRORS = 50


def log_sync_findings(report: Any, logged: set[str]) -> None:
    """Log a startup sync's report: each skill file it could not load (too large, not UTF-8,
    no frontmatter, unreadable) and each error at WARNING, errors first; warnings at INFO.

    Why (hunt-mcpcorpus #1, session 38): only the first 20 findings were logged, all at INFO
    and in no order, so at the default WARNING level a 1.6 MB or Latin-1 SKILL.md vanished
    without a word, and at INFO a library's unknown-key warnings pushed its errors out. Bounded
    (`LOGGED_ERRORS`, then a count) so a corpus of broken files does not flood stderr; a line
    already logged (`logged`) is not repeated by the next sync."""
    errors = [str(f) for f in report.findings if f.severity == "error"]
    named = {f.path for f in report.findings if f.severity == "error"}
    errors += [f"{path}: not loaded; the skill is not served" for path in report.skipped
               if path not in named]
    warnings = [str(f) for f in report.findings if f.severity != "error"]
    fresh = [line for line in dict.fromkeys(errors) if line not in logged]
    for line in fresh[:LOGGED_ERRORS]:
        log.warning("skill sync: %s", line)
    if len(fresh) > LOGGED_ERRORS:
        log.warning("skill sync: %d more skill files not served; `skillbank skills sync` lists "
                    "them all", len(fresh) - LOGGED_ERRORS)
    logged.update(fresh)
    shown = [line for line in warnings if line not in logged]
    for line in shown[:20]:
        log.info("skill sync: %s", line)
    if len(shown) > 20:
        log.info("skill sync: %d more warnings; `skillbank skills sync` lists them all",
                 len(shown) - 20)
    logged.update(shown)
