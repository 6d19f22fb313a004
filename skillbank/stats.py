"""The bank's counts for dashboards: `Skillbank.stats()`, the MCP `skillbank://stats`
resource, `skillbank stats` and the memory browser all show this one dictionary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillbank.bank import Skillbank


def bank_stats(bank: "Skillbank") -> dict[str, Any]:
    """Where the memory lives and how much of each kind it holds (no secrets: a Chroma URL's
    password is hidden)."""
    from skillbank.index_outage import without_credentials

    settings = bank.settings
    return {
        "root": str(bank.root),
        "chroma": without_credentials(settings.chroma_url) if settings.chroma_url
        else str(settings.chroma_path),
        "skills": bank.index("skills").count(),
        **_skill_parts(bank),
        "guidelines": bank.guidelines.counts(namespace="*"),
        # What the caller may read, every status (the bank's own admin view: the whole index,
        # as before); never other users' records.
        "experiences": bank.experiences.count("*", include_retired=True),
        "embedding": getattr(bank.embedding_function, "name", lambda: "custom")(),
        "recording_failures": getattr(getattr(bank, "recording_failures", None), "count", 0),
    }


def _skill_parts(bank: "Skillbank") -> dict[str, Any]:
    """The skill library's rows; a library that cannot be used (`<root>/skills` a broken link)
    says why in them, and the other memories' counts are still given (the whole of `stats`
    failed on it; review of hunt-disk #6, session 29)."""
    from skillbank.errors import PathBlockedError

    try:
        skills = bank.skills
        return {"skill_roots": [str(r) for r, _ in skills.roots],
                # Skills by trust level, held for review, worse since a change (skills/trust.py).
                "skill_trust": skills.trust_summary(),
                # Skills in git: the branch and commit served (None: the embedded default).
                "skills_repo": skills.repo_status()}
    except PathBlockedError as exc:
        return {"skill_roots": [], "skill_trust": {}, "skills_repo": None,
                "skills_error": str(exc)}
