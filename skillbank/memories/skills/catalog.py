"""The catalog: the first step of progressive disclosure, a line per skill within a budget."""

from __future__ import annotations

from dataclasses import dataclass, field

from skillbank.prompt_text import defang, shown_name


@dataclass
class CatalogEntry:
    name: str
    description: str
    path: str
    note: str = ""  # trust level and scan notes of a skill not the bank's own (trust.py)


@dataclass
class Catalog:
    """The first step of progressive disclosure: what skills exist, within a token budget."""

    entries: list[CatalogEntry] = field(default_factory=list)
    omitted: int = 0
    tokens: int = 0

    @property
    def text(self) -> str:
        return "\n".join(catalog_line(e) for e in self.entries)


def catalog_line(entry: CatalogEntry) -> str:
    """One catalog line, as prompts hold it: a name and description cannot add lines or close
    the block around it (`prompt_text`; a name with newlines wrote a fake section)."""
    description = " ".join(f"{entry.description}{entry.note}".split())
    return defang(f"- **{shown_name(entry.name)}**: {description}")
