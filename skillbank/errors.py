"""Errors every face can turn into a clear message (CLI exit codes, MCP ToolError, exceptions)."""

from __future__ import annotations

from typing import Any


class SkillbankError(Exception):
    """Base class: the message is written for the person or model that made the call."""

    exit_code = 1


class NotFoundError(SkillbankError, KeyError):
    exit_code = 3

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "not found"


class HeldError(NotFoundError):
    """A skill kept out of disclosure until a reviewer accepts it (a NotFoundError to callers
    that route: for them it is not there; the message says why, for the person;
    `skillbank.memories.skills.trust` holds skills).

    The CLI exits 7 (refused), not 3: users met `skills show NAME -r scripts/clean.py` of a
    held skill exiting "not found", though `skills list` shows the skill."""

    exit_code = 7


class UnreadableError(NotFoundError):
    """A skill whose SKILL.md is there but cannot be read (permission denied, not a regular
    file) or does not load (too large, not UTF-8: hunt-mcpcorpus #1, session 38): a
    NotFoundError to callers that route (it cannot be served), named for the person.

    Why (hunt-disk #5, session 29): `skills show/update/delete` of a 0600 SKILL.md owned by
    another user said "no skill named ...", `skills new` "already exists; change it with
    update", and `skills list` left it out without a word. Exit 5, as a permission error."""

    exit_code = 5


class AlreadyExistsError(SkillbankError):
    exit_code = 4


class ReadOnlyError(SkillbankError):
    exit_code = 5


class InvalidInputError(SkillbankError, ValueError):
    """Input that breaks a rule; `findings` lists each problem when there are several."""

    exit_code = 2

    def __init__(self, message: str, findings: list[Any] | None = None) -> None:
        super().__init__(message)
        self.findings = list(findings or [])


class PathBlockedError(InvalidInputError):
    """A folder that cannot be made: a file, or a broken link, stands where it must be
    (`fsutil.make_folder`; `<root>/skills` a dangling link: hunt-disk #6, session 29)."""


class UnsafePathError(InvalidInputError):
    """A name or relative path that would escape its root, or is not allowed as a file name."""


class PermissionDeniedError(SkillbankError):
    """The caller is not trusted for this operation (e.g. an untrusted client asking to forget)."""

    exit_code = 7


class QueueFullError(PermissionDeniedError):
    """A namespace's review queue is at its cap: an untrusted write waits for a reviewer
    (`skillbank.review_queue.check_room`)."""


class BusyError(SkillbankError):
    """Another process holds the memory root (embedded mode allows one process at a time)."""

    exit_code = 6


class ClosedError(SkillbankError):
    """A bank used after `close()` (or after its `with Skillbank.open(...)` block).

    A closed bank kept answering: retrievers, tools and middleware built inside the `with`
    block, and `bank.experiences.record(...)`, reopened Chroma and wrote into a root that
    another process owned by then, whose next guideline search crashed in Chroma ("Error
    finding id"; hunt-rag #6, session 24). Its message says how to get a working bank."""

    @classmethod
    def for_root(cls, root: Any) -> "ClosedError":
        return cls(f"this Skillbank on {root} was closed; open the root again: "
                   "Skillbank.open(root)")


class ForkedError(SkillbankError):
    """An embedded or team bank opened in one process used in a child forked from it (a bank
    on a Chroma server alone works in a child).

    chromadb's engine (a Rust runtime with its own threads) does not survive `fork`: the
    child's first call into the parent's Chroma client waited for ever (a `multiprocessing`
    worker on Linux's default 'fork' start method, handed the parent's bank). Its message says
    how to get a working bank in the child."""

    @classmethod
    def for_pid(cls, opened_in: int) -> "ForkedError":
        return cls(f"this Skillbank was opened in process {opened_in}, and this process is a "
                   "child forked from it: its embedded Chroma engine, or its database "
                   "connections, stay with the parent (a search would hang). Open the root in "
                   "the child "
                   "(Skillbank.open(root) shares it with the process that owns it), or start "
                   "the child with multiprocessing's 'spawn' or 'forkserver' method")


class IndexError_(RuntimeError):
    """Base for index problems the caller should see as a clear message."""


class EmbeddingMismatchError(IndexError_, SkillbankError):
    """The collection was built with another embedding; mixing vectors would corrupt search.

    `skillbank reindex` (`Skillbank.reindex()`) drops the collections and rebuilds them from the
    files with the embedding in use now: the way to switch embeddings.
    """

    @classmethod
    def for_collection(cls, name: str, recorded: str, wanted: str) -> "EmbeddingMismatchError":
        return cls(f"collection {name!r} was built with embedding {recorded}, not {wanted}; "
                   "open it with the same embedding, or run `skillbank reindex` to rebuild it")
