"""Experience memory: what agents tried, how it went, and the lessons drawn from it.

`ExperienceMemory` wires together modules with one job each:

- `transcript`: a raw chat trajectory (LangChain, LlamaIndex, OpenAI, Anthropic) -> steps;
- `validation`: what callers pass -> a valid `Experience`, or a clear InvalidInputError;
- `indexing`: what the index sees of a record (embedded text, keyword text, metadata);
- `folding`: the write path, near-duplicates folded, one journal append and one upsert a batch;
- `journal`: the append-only journal (the truth), its checkpoint and `sync` into the index;
- `recall`: filtered hybrid search ranked with a usage-aware prior;
- `text_recall`: recall by the journal's own full-text search while the index does not answer;
- `portability`: export to and import from JSONL;
- `review`: the quarantine of untrusted records (pending, approve, reject) and `forget`.

This module keeps the public methods that are not one of those jobs: recording, reading and
listing, marking, distilling and pruning.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from skillbank.audit import kind_of, note
from skillbank import scope as scopes
from skillbank.errors import InvalidInputError, NotFoundError
from skillbank.index import HybridIndex
from skillbank.index_outage import (CHROMA_DOWN, INDEX_GONE, INDEX_RETRY_SECONDS,
                                    ChromaUnavailableError, is_outage, keyword_only)
from skillbank.records import Distilled, Experience, Hits, Lesson, RecordedId, Step, utcnow
from skillbank.usage import UsageLog
from skillbank.memories.experiences.folding import FoldingMixin
from skillbank.memories.experiences.journal import CHECKPOINT, JournalMixin, _index_failure
from skillbank.memories.experiences.portability import PortabilityMixin
from skillbank.memories.experiences.recall import RecallMixin
from skillbank.memories.experiences.text_recall import recall_by_journal_text
from skillbank.distill.lessons import same_task
from skillbank.distill.llm import distilled_by
from skillbank.memories.experiences.review import ReviewMixin
from skillbank.memories.experiences.transcript import steps_from_messages
from skillbank.memories.experiences.validation import (
    _ID,
    MAX_LESSONS,
    _coerce_lesson,
    check_namespace,
    prepare,
)

log = logging.getLogger("skillbank.experiences")

__all__ = ["ExperienceMemory", "steps_from_messages", "CHECKPOINT"]

STATUSES = ("active", "retired", "pending")
OPPOSITE = {"success": ["failure", "partial"], "failure": ["success"], "partial": ["success"]}


class ExperienceMemory(JournalMixin, FoldingMixin, RecallMixin, PortabilityMixin, ReviewMixin):
    """Experiences and lessons: journal on disk, hybrid index in Chroma, usage-aware recall."""

    def __init__(
        self,
        folder: Path,
        index: HybridIndex,
        usage: UsageLog,
        *,
        settings: Any = None,
        distiller: Callable[[], Any] | Any = None,
        write_lock: Any = None,
        journal: Any = None,
    ) -> None:
        from skillbank.settings import Settings

        self.folder = Path(folder)
        if journal is None:  # the embedded default: the month files in `folder`
            from skillbank.store.files.experiences import FileExperienceLog

            journal = FileExperienceLog(self.folder)
        #: The journal, the truth this memory indexes: whichever column of `skillbank.store`
        #: the bank opened (the root's month files, or PostgreSQL in team mode).
        self.journal = journal
        #: Whether the last recall fell back to the journal's own full-text search.
        self._recalled_by_text = False
        self._shared_checked = 0.0  # monotonic time of the last `_shared_index_behind` look
        #: The note of the last catch-up the index refused (`_catch_up_failed`), kept on the
        #: recalls until the next catch-up is tried.
        self._catch_up_note: str | None = None
        self.index = index
        self.usage = usage
        self.settings = settings or Settings()
        self._distiller = distiller
        self.write_lock = write_lock or threading.RLock()
        #: Held while journal events are applied to the index, taken before the write lock is
        #: let go (so the index sees events in journal order). Embedded: the write lock itself
        #: (nothing changes); team mode gives its own advisory lock, so the deployment's write
        #: lock is not held across Chroma's upsert (`JournalMixin._append`).
        self.index_lock = self.write_lock
        self._cache: OrderedDict[str, tuple[tuple[str, str], Experience]] = OrderedDict()
        self._cache_lock = threading.Lock()
        self.folder.mkdir(parents=True, exist_ok=True)

    # Properties ---------------------------------------------------------------------------------
    @property
    def distiller(self) -> Any:
        """The bank's distiller (the bank passes a callable so it is built only when used)."""
        value = self._distiller
        if value is None:
            from skillbank.distill import RuleDistiller

            return RuleDistiller()
        if callable(value) and not hasattr(value, "lessons_from_experience"):
            return value()
        return value

    def _namespace(self, namespace: str | None) -> str:
        return check_namespace(self.settings.namespace if namespace is None else namespace)

    # The caller's scope (skillbank.scope): every read, write and id is checked against it ----
    def _scope(self, trusted: Any = True) -> scopes.Scope:
        """The caller's scope; the bank's own default is the local user (admin)."""
        return scopes.caller(self.settings.namespace, trusted)

    def _read_spaces(self, namespace: str | None, scope: scopes.Scope | None = None
                     ) -> tuple[str, ...]:
        """What a read covers: `scope.read_namespaces` after the memory's own checks ("*" is
        valid here: it means every namespace the caller may read)."""
        if namespace is not None and namespace != scopes.ALL:
            check_namespace(namespace)
        return (scope or self._scope()).read_namespaces(namespace)

    def _visible(self, record_id: str, meta: Mapping[str, Any] | None,
                 scope: scopes.Scope | None = None) -> Mapping[str, Any]:
        """The index entry of an id the caller may read, else NotFoundError exactly as for an
        id that does not exist (no existence oracle)."""
        if meta is None or not (scope or self._scope()).can_read(meta.get("namespace")):
            raise NotFoundError(f"no experience or lesson with id {record_id!r}")
        return meta

    # Recording ----------------------------------------------------------------------------------
    def record(
        self,
        task: str | None = None,
        outcome: str = "unknown",
        steps: Sequence[Step | Mapping[str, Any]] | None = None,
        score: float | None = None,
        feedback: str | None = None,
        lessons: Sequence[str | Lesson | Mapping[str, Any]] | None = None,
        when_to_use: str = "",
        tags: Sequence[str] | None = None,
        namespace: str | None = None,
        messages: Sequence[Any] | None = None,
        distill: bool = False,
        trusted: bool = True,
    ) -> RecordedId:
        """Store one experience; returns its id (`exp-…`), or the id of the one it duplicates
        (a `str` whose `folded` and `note` say so: "folded into exp-…").

        `steps` are Step objects or dicts; `messages` is a raw chat trajectory instead (see
        `steps_from_messages`), whose first user message is the task when `task` is None.
        `lessons` are stored on the experience and also as lesson records (`lsn-…`, kind
        "lesson", source = the experience) so recall finds them on their own. `distill=True`
        asks the distiller for lessons as well.

        Near-duplicates are folded, not stored twice: when an active record of the same namespace
        has the same outcome, a cosine of at least `settings.duplicate_threshold` on the embedded
        text (task + when_to_use) and the same feedback and lessons (compared after lower-casing
        and dropping punctuation), a `duplicate` event counts one more on it and its id is
        returned. Differing feedback or lessons are new knowledge, so they are kept.
        To store many at once, `record_many` is the same in one journal write and one upsert.

        `trusted=False` (an untrusted caller, e.g. an MCP client without trust): the experience
        and its lessons are stored quarantined, status "pending": never folded, never recalled
        or put in a context, listed by `pending()`, until a trusted `approve()` (or `reject()`).
        """
        if not isinstance(distill, bool) or not isinstance(trusted, bool):
            raise InvalidInputError("distill and trusted must be true or false")
        experience = self._prepare(task=task, outcome=outcome, steps=steps, score=score,
                                   feedback=feedback, lessons=lessons, when_to_use=when_to_use,
                                   tags=tags, namespace=namespace, messages=messages)
        trusted = self._scope(trusted).trusted
        eid = self._commit([experience], statuses=["active" if trusted else "pending"],
                           capped=not trusted)[0]
        note(self, "record", "experience", eid, namespace=experience.namespace, trusted=trusted)
        if distill:
            self._distill_quietly(eid, trusted)
        return RecordedId.folded_into(eid) if eid != experience.id else \
            RecordedId(eid, status="active" if trusted else "pending")

    def record_many(self, records: Iterable[Mapping[str, Any]], *, trusted: bool = True
                    ) -> list[str]:
        """Store many experiences at once; returns their ids in input order.

        Each item is a dict of `record`'s keyword arguments (task, outcome, steps, score,
        feedback, lessons, when_to_use, tags, namespace, messages, distill, trusted); an item
        is trusted only when both it and the call are (`trusted=False` quarantines the whole
        batch, whatever its items say). The result is what
        calling `record` on each in turn gives (near-duplicates fold the same way, into earlier
        records of the same batch too, and a folded item returns the id it was counted into),
        but every item is validated before anything is written (an invalid one raises
        `InvalidInputError` naming `records[i]`, and nothing is stored), all texts are embedded
        in one call, and the batch is one journal append and one index upsert: 3-4x the rate of
        `record` in a loop with the real model, which is then most of the cost, and 15x with
        the hash embedding (docs/benchmarks.md). The whole batch is held in memory: pass
        batches of a few hundred to a few thousand.
        """
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise InvalidInputError("records must be a list of dicts of `record` arguments "
                                    "(task, outcome, steps, …)")
        if not isinstance(trusted, bool):
            raise InvalidInputError("trusted must be true or false")
        trusted = self._scope(trusted).trusted  # the caller's scope, as in `record`
        signature = inspect.signature(ExperienceMemory.record)
        prepared: list[Experience] = []
        distill: list[bool] = []
        statuses: list[str] = []
        for number, item in enumerate(records):
            try:
                if not isinstance(item, Mapping):
                    raise InvalidInputError(
                        f"is {type(item).__name__}, not a dict of `record` arguments")
                try:
                    bound = signature.bind(self, **item)
                except TypeError as exc:  # an unknown or non-string key
                    raise InvalidInputError(
                        f"{exc}; `record` takes "
                        f"{', '.join(p for p in signature.parameters if p != 'self')}") from None
                bound.apply_defaults()
                arguments = dict(bound.arguments)
                del arguments["self"]
                wanted = arguments.pop("distill")
                item_trusted = arguments.pop("trusted")
                if not isinstance(wanted, bool) or not isinstance(item_trusted, bool):
                    raise InvalidInputError("distill and trusted must be true or false")
                distill.append(wanted)
                statuses.append("active" if trusted and item_trusted else "pending")
                prepared.append(self._prepare(**arguments))
            except InvalidInputError as exc:
                raise InvalidInputError(f"records[{number}]: {exc}", exc.findings) from None
        ids = self._commit(prepared, statuses=statuses, capped=not trusted)
        for status in ("active", "pending"):  # the audit says which ones came in untrusted
            note(self, "record", "experience", [i for i, s in zip(ids, statuses) if s == status],
                 trusted=status == "active")
        for eid, wanted, status in zip(ids, distill, statuses):
            if wanted:
                self._distill_quietly(eid, status == "active")
        return ids

    def open_thread(self, thread: str, namespace: str | None = None) -> Experience | None:
        """A conversation's open episode (its goal is the task), or None: for a face that lost
        its own memory of the conversation — a restarted process whose chat history was
        saved recorded the thread's "yes, go ahead" as a task of its own, the goal's record
        left open for good (agents hunt, session 18).

        Only while its last turn is at most `settings.thread_pickup_seconds` old: a thread id
        reused for a new conversation later (``"1"``, as in every LangGraph example) is a new
        goal, not a follow-up of a task left open (review 1 #2, session 32)."""
        from skillbank.memories.experiences.threads import check_thread, open_episode

        scope = self._scope()  # type: ignore[attr-defined]
        space = scope.write_namespace(namespace)
        return open_episode(self, check_thread(thread), space,
                            "active" if scope.trusted else "pending",
                            within=float(self.settings.thread_pickup_seconds))

    def record_messages(self, messages: Sequence[Any], task: str | None = None,
                        outcome: str = "unknown", *, thread: str | None = None,
                        followup: bool = False, **kw: Any) -> RecordedId:
        """`record` from a raw chat trajectory (LangChain, LlamaIndex or OpenAI-style messages).

        `thread` (a conversation's id: a LangChain thread id, a LlamaIndex session) makes each
        turn of the conversation update one experience: its steps are appended, its outcome and
        feedback set when given; returns that record's id (see `threads`), whose `note` says how
        many new lessons its full list left off (each is stored as a lesson item all the same).
        An outcome closes the episode: a later turn with the same task starts a new record. `followup` says the turn
        continues an earlier one, so a missing open record is logged (a new one starts).
        """
        if thread is None:
            return self.record(task=task, outcome=outcome, messages=messages, **kw)
        from skillbank.memories.experiences.threads import check_thread, record_turn

        thread = check_thread(thread)
        distill, trusted = kw.pop("distill", False), kw.pop("trusted", True)
        if not isinstance(distill, bool) or not isinstance(trusted, bool) \
                or not isinstance(followup, bool):
            raise InvalidInputError("distill, trusted and followup must be true or false")
        fields = {"steps": None, "score": None, "feedback": None, "lessons": None,
                  "when_to_use": "", "tags": None, "namespace": None, **kw}
        experience = self._prepare(task=task, outcome=outcome, messages=messages, **fields)
        status = "active" if self._scope(trusted).trusted else "pending"
        eid, updated, left_out = record_turn(self, experience, thread=thread, status=status,
                                             followup=followup)
        note(self, "update" if updated else "record", "experience", eid,
             namespace=experience.namespace, trusted=status == "active")
        if distill:
            self._distill_quietly(eid, status == "active")
        return RecordedId(eid, note=left_out, status=status)

    def _distill_quietly(self, eid: str, trusted: bool) -> None:
        """Distill right after a write, as part of it: `trusted` is that write's own trust."""
        try:
            self._distill(eid, trusted)
        except Exception as exc:  # the experience is stored; a distiller failure must not lose it
            log.warning("distilling %s failed: %s", eid, exc)

    def _prepare(self, **fields: Any) -> Experience:
        """Validate one record's fields (see `validation.build`) so it can be journaled.

        The namespace is the caller's (`scope.write_namespace`: None is its own, another one
        needs the reviewer role for it, a reader writes nothing)."""
        namespace = fields.get("namespace")
        if namespace is not None:
            check_namespace(namespace)  # this memory's own messages first ("*" is not one)
        fields["namespace"] = self._scope().write_namespace(namespace)
        return prepare(default_namespace=self.settings.namespace, **fields)

    # While the index does not answer -------------------------------------------------------------
    def _commit(self, records: Sequence[Experience], *, with_lessons: bool = True,
                statuses: Sequence[str] | None = None, capped: bool = False) -> list[str]:
        """`FoldingMixin._commit`; when the index cannot be reached to look for near-duplicates
        (a Chroma server down), the records are journaled unfolded and indexed when it is back
        (`_append`): the journal is the truth, so an acknowledged write is never lost."""
        try:
            return FoldingMixin._commit(self, records, with_lessons=with_lessons,
                                        statuses=statuses, capped=capped)
        except Exception as exc:  # noqa: BLE001 - only an index outage is handled here
            if not self._outage(exc):
                raise
            log.warning("skillbank: the index does not answer, so near-duplicates were not "
                        "checked (%s); the records are kept in the journal", exc)
        from skillbank.memories.experiences.folding import _Batch

        statuses = list(statuses) if statuses is not None else ["active"] * len(records)
        vectors = self._embed([(record, with_lessons) for record in records])
        with self.write_lock:
            batch = _Batch(self, vectors)
            # The review queue is counted on the index, which does not answer: the cap waits
            # for it (an acknowledged write is never lost for want of a count).
            batch.threshold = 2.0  # nothing is compared with the index it cannot read
            ids = [batch.store(record, with_lessons=with_lessons, status=status)
                   for record, status in zip(records, statuses)]
            index_them = batch.flush(defer=True)
        if index_them is not None:
            index_them()
        return ids

    def _shared_index_behind(self) -> bool:
        """A shared index (team mode, or a Chroma server), checked at most every
        ``INDEX_RETRY_SECONDS``: whether the journal holds events its shared checkpoint does not
        cover. Another worker's writes during a Chroma outage were indexed only by a recall on
        that worker; a team behind a load balancer never recalled them elsewhere."""
        if not getattr(self.index, "shared", False):
            return False
        now = time.monotonic()  # nor within 30 s of a timed-out request (hunt-chroma #2)
        if now - self._shared_checked < INDEX_RETRY_SECONDS or \
                now < getattr(self.index, "_dense_quiet_until", 0.0):
            return False
        self._shared_checked = now
        try:
            done = {str(k): int(v) for k, v in self._read_checkpoint().get("files", {}).items()}
            return any(done.get(name, 0) < size for name, size in self.journal.positions().items())
        except Exception as exc:  # noqa: BLE001 - a store that does not answer: recall says so
            log.debug("could not compare the experience index with its journal: %s", exc)
            return False

    def _outage(self, exc: BaseException) -> bool:
        """Whether `exc` says the index (a Chroma server) does not answer."""
        return isinstance(exc, ChromaUnavailableError) or (
            bool(getattr(self.index, "shared", False)) and is_outage(exc))

    def _sync_due(self) -> bool:
        """The index is behind the journal, and a sync may catch it up: not while all that is
        behind is vectors and the model's last load failed less than `MODEL_RETRY_SECONDS`
        ago (the sync's fill would only meet the same failure), nor within
        INDEX_RETRY_SECONDS of a sync its Chroma server did not answer."""
        if not self.index_behind:
            return False
        if not self.only_vectors_behind:  # a server that did not answer: asked every 2 s,
            quiet = getattr(self.index, "_dense_quiet_until", 0.0)  # 30 s after a timeout
            # never unreached (an index that refused a write, a full disk): due now, not
            # INDEX_RETRY_SECONDS after the machine started (`monotonic`'s zero; session 36)
            since = self.unreached_at + INDEX_RETRY_SECONDS if self.unreached_at else 0.0
            return time.monotonic() >= max(since, quiet)
        from skillbank import embeddings

        failed = getattr(self.index.embedding_function, "_failed", None)
        return failed is None or time.monotonic() - failed[0] >= embeddings.MODEL_RETRY_SECONDS

    @functools.wraps(RecallMixin.recall)
    def recall(self, task: str, *args: Any, **kwargs: Any) -> Hits:
        """`RecallMixin.recall`; while the index does not answer, the journal's own full-text
        search (PostgreSQL's, in team mode) answers instead, with a note in the result
        (`Hits.note`, `dense_complete` False). Records written during an outage are indexed
        by the first recall after it (a sync)."""
        from skillbank.index_rebuild import wait_rebuilt

        wait_rebuilt(self.index)  # never from indexes a reindex emptied
        behind: str | None = None  # why the records waiting in the journal are not indexed
        if self._sync_due() or self._recalled_by_text or self._shared_index_behind():
            self._catch_up_note = None
            try:
                self.sync()
            except Exception as exc:  # noqa: BLE001 - still down: the fallback answers
                from skillbank.storage_errors import no_room

                # A full disk only: a damaged index or another embedding still raises, with
                # its repair, rather than a note promising a catch-up that never comes.
                if not (self._outage(exc) or (_index_failure(exc) and no_room(exc))):
                    raise
                if not self._outage(exc):
                    behind = self._catch_up_failed(exc)
        elif self.index_behind and self._catch_up_note is not None:
            # Not retried yet (INDEX_RETRY_SECONDS): the records are still waiting, so the
            # note stays; a second recall (memory_context after recall_experiences) said
            # nothing of them (session 33).
            behind = self._catch_up_note
        failed: Exception | None = None
        try:
            hits = RecallMixin.recall(self, task, *args, **kwargs)
            down = keyword_only(getattr(self.index, "dense_error", None))
        except Exception as exc:  # noqa: BLE001 - only an index outage is handled here
            if not self._outage(exc):
                raise
            hits, down, failed = None, True, exc
        if not down:
            self._recalled_by_text = False
            if behind is not None:
                hits.note = "; ".join(filter(None, (hits.note, behind)))
            return hits  # type: ignore[return-value]  # a keyword-only answer says so itself
        found = recall_by_journal_text(self, task, *args, **kwargs)
        if found is None:  # this column has no search of its own: the index's keyword side
            if failed is not None:
                raise failed
            found = hits if hits is not None else Hits()
            found.dense_complete = False
            found.note = f"{self.index.dense_error}; these were found by keyword"
            return found
        self._recalled_by_text = True
        found.dense_complete = False  # its empty answers too: nothing was searched densely
        why = getattr(self.index, "dense_error", None) or (
            (str(failed).strip().splitlines() or [""])[0] if failed is not None else "")
        found.note = (  # a collection gone from a server that answers: its own words, as
            # guideline search says (review 2 #5, session 34), not "does not answer"
            f"{why}; these were found by the journal's own full-text search (keyword only)"
            if why.startswith(INDEX_GONE) else
            f"{CHROMA_DOWN}; these were found by the journal's own full-text search "
            "(keyword only), and records written meanwhile are indexed when it is back")
        return found

    def _catch_up_failed(self, exc: BaseException) -> str:
        """A sync before a recall that the index refused (its disk full, its files damaged):
        the read answers from what the index holds, the journal keeps the records for a later
        sync (not before INDEX_RETRY_SECONDS), and the note says so. A full disk made every
        recall raise Chroma's "database or disk is full" from the catch-up's upsert, and the MCP
        tools answer it as a refused write (hunt-disk #1, session 32)."""
        self.index_behind, self.only_vectors_behind = True, False
        self.unreached_at = time.monotonic()
        said = " ".join(str(exc).split())
        log.warning("skillbank: the index could not take the experience events waiting in the "
                    "journal (%s); recall answers from what it holds", said)
        self._catch_up_note = (
            f"records kept in the journal are not in the index yet, which refused them "
            f"({type(exc).__name__}: {said}); these were found among the records it holds, "
            "and the rest are indexed by a later recall")
        return self._catch_up_note

    # Reading ----------------------------------------------------------------------------------
    def get(self, record_id: str) -> Experience:
        """One experience or lesson by id, with its status, duplicate count and usage.

        Pending only to whoever may review its namespace (`skillbank.scope`); to anyone else
        it is not found, the answer for an unknown id (another untrusted client's pending run,
        its task and feedback, was read by id)."""
        return self._get_as(record_id, self._scope())

    def _get_as(self, record_id: str, scope: scopes.Scope) -> Experience:
        """`get` as `scope` sees it (a call's `trusted=False` narrows the caller's)."""
        record = self._get(record_id)
        if record.status == "pending" and not scope.can_review(record.namespace):
            raise NotFoundError(f"no experience or lesson with id {record_id.strip()!r}")
        return record

    def _get(self, record_id: str) -> Experience:
        """`get` for the memory's own reads inside a write (distilling the run just recorded,
        approve/reject/forget checking the record they change): any status, in a namespace
        the caller reads."""
        if not isinstance(record_id, str) or not _ID.match(record_id.strip()):
            raise NotFoundError(
                f"no experience {record_id!r}: ids look like 'exp-' or 'lsn-' and 12 hex digits")
        record_id = record_id.strip()
        try:
            found = self.index.metadata(record_id)
            # A write the journal kept when the index failed: `record` answered its id, and
            # MCP's record_experience, reading it back, an error (hunt-mcpmany #1b, session 24).
            behind = found is None and self.index_behind
        except Exception as exc:  # noqa: BLE001 - only the index's own failures are handled
            if not (self._outage(exc) or _index_failure(exc)):
                raise
            behind = True
        record = self._get_from_journal(record_id) if behind else \
            self._read_record(record_id, self._visible(record_id, found))
        # The detail shows the outsiders' nets behind its counters (Usage.outside).
        usage = record.usage.model_copy(update={"outside": self.usage.outside(record_id)})
        return record.model_copy(update={"usage": usage})

    def _get_from_journal(self, record_id: str) -> Experience:
        """`get` while the index does not answer: the record as the journal (the truth) holds
        it, with the status it was written with. A write acknowledged during a Chroma outage
        was answered with an error by every face that read it back (MCP record_experience),
        and a client that retried as told stored it twice."""
        raw = self.journal.load(record_id, "")
        try:
            record = Experience.model_validate(raw) if raw is not None else None
        except (ValueError, TypeError):
            record = None
        meta = None if record is None else {"namespace": record.namespace}
        self._visible(record_id, meta)
        return record.model_copy(update={"usage": self.usage.get(record_id)})  # type: ignore[union-attr]

    def __contains__(self, record_id: object) -> bool:
        if not isinstance(record_id, str):
            return False
        meta = self.index.metadata(record_id)
        scope = self._scope()
        return meta is not None and scope.can_read(meta.get("namespace")) and (
            meta.get("status") != "pending" or scope.can_review(meta.get("namespace")))

    def _selected(self, namespace: str | None, kind: str | None,
                  include_retired: bool = False, status: str | None = None
                  ) -> list[tuple[str, dict[str, Any]]]:
        """Index entries of a namespace ("*": all) and kind: active ones, every status with
        `include_retired`, or exactly `status`.

        Only what the caller's scope reads ("*": every namespace it may read; None: its own
        and shared ones), and pending records only where it reviews (`skillbank.scope`)."""
        scope = self._scope()
        spaces = self._read_spaces(namespace, scope)
        if kind not in (None, "experience", "lesson"):
            raise InvalidInputError(f"unknown kind {kind!r}; use 'experience' or 'lesson'")
        if status not in (None, *STATUSES):
            raise InvalidInputError(f"unknown status {status!r}; use one of {', '.join(STATUSES)}")
        if status is None and not include_retired:
            status = "active"
        out = []
        for record_id in self.index.ids():
            meta = self.index.metadata(record_id) or {}
            if not scopes.covers(spaces, meta.get("namespace")):
                continue
            if kind is not None and meta.get("kind") != kind:
                continue
            if status is not None and meta.get("status", "active") != status:
                continue
            if meta.get("status") == "pending" and not scope.can_review(meta.get("namespace")):
                continue  # pending items are shown only to whoever may decide on them
            out.append((record_id, meta))
        return out

    def list(self, namespace: str | None = None, kind: str | None = None, limit: int = 50,
             *, include_retired: bool = False, status: str | None = None) -> list[Experience]:
        """Newest first. `namespace=None` is the bank's namespace; "*" lists every namespace.

        Active records by default; `include_retired=True` every status, `status` ("active",
        "retired" or "pending") exactly that one.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidInputError("limit must be a non-negative integer")
        if not isinstance(include_retired, bool):
            raise InvalidInputError("include_retired must be true or false")
        selected = self._selected(namespace, kind, include_retired, status)
        selected.sort(key=lambda item: (float(item[1].get("created", 0.0)), item[0]), reverse=True)
        return [self._read_record(i, m) for i, m in selected[:limit]]

    def count(self, namespace: str | None = None, kind: str | None = None, *,
              include_retired: bool = False, status: str | None = None) -> int:
        """Active records (experiences and lessons unless `kind`; every status with
        `include_retired`, exactly `status` with it: the UI's review queue says "of N", hunt-ui
        #3, session 37) the caller may read; "*" counts every namespace it reads."""
        if not isinstance(include_retired, bool):
            raise InvalidInputError("include_retired must be true or false")
        return len(self._selected(namespace, kind, include_retired, status))

    # Learning -----------------------------------------------------------------------------------
    def mark(self, record_id: str, helped: bool = True, *, trusted: bool = True) -> Experience:
        """Say whether a recalled experience or lesson helped; feeds ranking and pruning.

        An untrusted mark (`trusted=False`, or an untrusted scope) is kept apart: it moves no
        ranking and makes no prune candidate until a reviewer accepts it (`UsageLog.accept`).
        A trusted caller who may not change the record's namespace (a contributor who only
        reads the team's) is an outsider there: users met fifty "not helpful" marks of his
        all counted, and a team lesson sank for everyone and became a prune candidate. His
        marks now count once, as his net judgement (`skillbank.outside_votes`); the namespace's
        own people and the single local user count each mark, as before.
        An id outside the caller's scope is not found; a reader may not mark."""
        if not isinstance(helped, bool):  # "no" is truthy: it must not count as helpful
            raise InvalidInputError(f"helped must be true or false, not {helped!r}")
        scope = self._scope(trusted)
        record = self._get_as(record_id, scope)  # trusted=False: pending is not found (review 2)
        scope.require(scopes.Role.CONTRIBUTOR, "rating memory")
        if scope.trusted and not scope.can_change(record.namespace):
            self.usage.vote(record.id, scope.principal, helped)
        else:
            self.usage.record(record.id, use=0, ok=helped, trusted=scope.trusted,
                              principal=scope.principal)  # (untrusted: one net each)
        note(self, "vote", kind_of(record.id), record.id, trusted=scope.trusted)
        return self.get(record_id)

    def distill(self, record_id: str) -> Distilled:
        """Ask the distiller for lessons from one experience and store them; returns their ids
        (a `Distilled`: a list whose `distilled_by` / `distill_error` say who wrote the lessons,
        the model or the model-free distiller, and why a model's were not used).

        The distiller sees a few similar experiences of the same namespace with the opposite
        outcome, so it can write comparisons. Lessons it repeats are folded into the existing
        lesson records (their ids are returned), so distilling twice stores nothing new. The
        lessons of a pending (untrusted) experience are pending too, and never folded. A
        pending experience is distilled only by whoever may review it: to anyone else it is not
        found, as to `get` (another client's pending run answered with lesson ids, session 33).
        """
        self.get(record_id)
        return self._distill(record_id, True)

    def _distill(self, record_id: str, trusted: bool) -> Distilled:
        """`distill`, with `trusted=False` when it is part of an untrusted write: the audit
        event says whether the call was untrusted, not whether the experience is pending (a
        trusted person distilling an untrusted client's record is not that client)."""
        experience = self._get(record_id)
        if experience.kind != "experience":
            raise InvalidInputError(f"{record_id} is a lesson; distill experiences (exp-…)")
        caller = self._scope()
        caller.write_namespace(experience.namespace)  # lessons go where the experience is
        similar: list[Experience] = []
        opposite = OPPOSITE.get(experience.outcome)
        if opposite:
            hits = self.recall(experience.task, k=4, outcome=opposite,
                               namespace=experience.namespace, kind="experience", count_use=False)
            # Runs of the same task only, for every distiller: a model was given "Import the
            # refunds CSV" as a similar attempt at "Import the orders CSV" and compared them.
            similar = [h.record for h in hits if h.id != experience.id
                       and same_task(experience.task, h.record.task)][:3]
        distiller = self.distiller
        raw = distiller.lessons_from_experience(experience, similar=similar) or []
        said = distilled_by(distiller, raw)  # who wrote them, from this call's own result
        lessons = [_coerce_lesson(l, i, experience.when_to_use) for i, l in enumerate(raw)]
        records = [self._lesson_records(experience, [lesson])[0] for lesson in lessons[:MAX_LESSONS]]
        trusted = caller.trusted and trusted
        status = "pending" if experience.status == "pending" or not trusted else "active"
        ids = list(dict.fromkeys(self._commit(records, with_lessons=False,
                                              statuses=[status] * len(records))))
        note(self, "distill", "lesson", ids, namespace=experience.namespace, trusted=trusted)
        return Distilled(ids, **said)

    def prune(self, dry_run: bool = True, namespace: str | None = "*") -> list[Experience]:
        """Retire what keeps being recalled without helping; returns what is (or would be) retired.

        Rule: a record recalled at least `settings.prune_min_uses` times (default 5) whose help
        rate, helped marks / uses, is at most `settings.prune_max_help_rate` (default 0.2), and
        which someone has judged at least once. Why these defaults: five uses is the fewest at
        which a share says anything (one help in five is 20 %); a memory that helps less than
        once in five recalls spends context tokens four times for each time it pays off (ReMe
        prunes on the same used-often-but-rarely-useful signal). The judged-at-least-once guard
        keeps a bank whose agents never mark anything from pruning its most recalled, i.e. most
        relevant, records. Retiring journals a `retire` event and flags the index entry, so the
        record stays readable with `get` and in `export`; recall no longer returns it.
        """
        if not isinstance(dry_run, bool):
            raise InvalidInputError("dry_run must be true or false")
        min_uses = int(self.settings.prune_min_uses)
        max_rate = float(self.settings.prune_max_help_rate)
        counts = self.usage.all()  # trusted counts only: untrusted signals never prune
        doomed: list[tuple[str, dict[str, Any]]] = []
        scope = self._scope()
        for record_id, meta in self._selected(namespace, None):
            if not scope.can_review(meta.get("namespace")):
                continue  # pruning retires memory: only where the caller reviews
            usage = counts.get(record_id)
            if usage is None or usage.uses < min_uses or usage.uses == 0:
                continue
            if usage.successes + usage.failures == 0:
                continue
            if usage.successes / usage.uses <= max_rate:
                doomed.append((record_id, meta))
        records = [self._read_record(i, m) for i, m in doomed]
        if dry_run or not doomed:
            return records
        with self.write_lock:
            now = utcnow().isoformat()
            events = [{"op": "retire", "id": record_id, "reason": "prune", "at": now}
                      for record_id, _ in doomed]
            self._append(events)
        note(self, "prune", "experience", [record_id for record_id, _ in doomed])
        return [r.model_copy(update={"status": "retired"}) for r in records]
