"""Which requests the memory can search, said once for every search.

Skill search, experience recall, the retrievers and the skill trigger evals each kept their own
copy of the length limit and of the Unicode check (session 26's review found two copies of the
check and three of the figure); a change to one left the others answering differently. Guideline
search still took 80,000 characters with a bare refusal, and only skill search answered a request
of emoji or punctuation alone empty with its reason (recall served unrelated runs for it, and the
memory block showed them): hunt-badinput #2 and #6, session 34.
"""

from __future__ import annotations

#: A request longer than this is refused with a clear error: a pasted document is not a request
#: (skill search reads its first few thousand characters anyway, and recall answered silently on
#: a document's first characters).
MAX_TASK_CHARS = 50_000


#: Why a request with no letters or digits (emoji, punctuation, bidi marks alone) is answered
#: empty: nothing in it to search on, and the model's vector of such text lies near every short
#: record's (recall served an "ok" run to "😀" and four runs to two bidi marks).
#: Worded for any search: "to route on" was skill routing's, said by guideline search and
#: recall too (review 2 #6, session 34).
NO_WORDS = "the request has no letters or digits to search for"


def wordless(query: str) -> str:
    """NO_WORDS when `query` holds no letter or digit, else '': every search answers such a
    request empty with this as its `Hits.reason`, and the memory block as its `reason`."""
    return "" if any(c.isalnum() for c in query) else NO_WORDS


def check_length(query: str, searcher: str) -> None:
    """Raise InvalidInputError, in one wording for every search, for a request over
    MAX_TASK_CHARS (`searcher`: "skill search", "experience recall", "guideline search")."""
    if len(query) > MAX_TASK_CHARS:
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(f"task {unsearchable(query, searcher)}")


def unsearchable(query: str, searcher: str = "the memory") -> str:
    """Why `searcher` cannot search `query` ('' when it can): over MAX_TASK_CHARS, or a lone
    surrogate (what `json.loads` makes of an emoji escape cut in half, "\\ud83d"), which the
    embedding's tokenizer raised on. A reason, not an exception: the retrievers answer it with
    no documents and the trigger evals with an error row, where the searches raise."""
    if len(query) > MAX_TASK_CHARS:
        return (f"is {len(query):,} characters; {searcher} takes requests of at most "
                f"{MAX_TASK_CHARS:,} (describe the task and leave the document out)")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text (it holds a lone surrogate)"
    return ""
