"""A skill write that met a Chroma outage, said in what it did: nothing written, or the file
written but not indexed (the next sync indexes it; the files are the truth).

Why: the outage's own sentence ("... so this memory's index could not be read") read as a
failed read that named neither the skill nor whether it was saved (hunt-chromahttp #3 for
create, review 2 #2 for save and update, session 34). Apart from authoring.py for its size.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from skillbank.index_outage import ChromaUnavailableError


@contextlib.contextmanager
def not_saved(name: str) -> Any:
    """A Chroma outage met before a skill write wrote anything, said so: it read as a failed
    read, of what? (hunt-chromahttp #3 for create; review 2 #2 for save, session 34;
    docs/team.md §5: a skill write's message says what was not written)."""
    try:
        yield
    except ChromaUnavailableError as exc:
        raise ChromaUnavailableError(
            f"skill {name!r} was not saved (nothing was written): {exc}") from exc


def index_written(library: Any, name: str, path: Path) -> None:
    """Index the SKILL.md just written at `path`; a Chroma outage says the file was written
    (create, save and update alike: update's said "the change was not written to the index",
    which read as the change being lost)."""
    try:
        library._index_one(path)
    except ChromaUnavailableError as exc:
        raise ChromaUnavailableError(
            f"skill {name!r} was written to {path} but not indexed: {exc}; the next sync "
            "once it answers indexes it") from exc
