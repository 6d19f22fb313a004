"""Which requests the memory can search, said once for every search.

Skill search, experience recall, the retrievers and the skill trigger evals each kept their own
copy of the length limit and of the Unicode check (session 26's review found two copies of the
check and three of the figure); a change to one left the others answering differently.
"""

from __future__ import annotations

#: A request longer than this is refused with a clear error: a pasted document is not a request
#: (skill search reads its first few thousand characters anyway, and recall answered silently on
#: a document's first characters).
MAX_TASK_CHARS = 50_000


def unsearchable(query: str, searcher: str = "the memory") -> str:
    """Why `searcher` cannot search `query` ('' when it can): over MAX_TASK_CHARS, or a lone
    surrogate (what `json.loads` makes of an emoji escape cut in half, "\\ud83d"), which the
    embedding's tokenizer raised on. A reason, not an exception: the retrievers answer it with
    no documents and the trigger evals with an error row, where the searches raise."""
    if len(query) > MAX_TASK_CHARS:
        return (f"is {len(query):,} characters; {searcher} searches requests of at most "
                f"{MAX_TASK_CHARS:,} (a pasted document is not a request)")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text (it holds a lone surrogate)"
    return ""
