"""Memory text as safe HTML, and the small formatting helpers the templates use.

Skill bodies, critiques and feedback were written by models and strangers: raw HTML in them is
shown as text (markdown-it with `html=False` escapes it) and links may only use web, mail or
relative targets (markdown-it refuses `javascript:`, `vbscript:`, `file:` and non-image `data:`).
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any

from markupsafe import Markup


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable("table")
    md.enable("strikethrough")
    return md


def markdown(text: str | None) -> Markup:
    """Markdown to HTML with every tag in the source escaped (never trusted)."""
    return Markup(_markdown().render(text or ""))


def when(value: Any) -> str:
    """A timestamp as people read it (UTC, minutes)."""
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    return "" if value is None else str(value)


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def help_rate(good: int, bad: int) -> float | None:
    """Share of judged uses that helped; None until someone judged one."""
    judged = good + bad
    return None if judged == 0 else good / judged


def score(value: Any) -> str:
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return "–"


FILTERS = {"markdown": markdown, "when": when, "percent": percent, "score": score}
