"""Moved to `skillbank.changes` (the facade uses it, and the facade does not import sharing)."""

from skillbank.changes import FOLDER, ChangeFeed

__all__ = ["ChangeFeed", "FOLDER"]
