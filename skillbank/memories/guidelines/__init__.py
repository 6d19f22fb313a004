"""Guideline memory: critiques in, durable de-duplicated rules out (see ``memory``)."""

from skillbank.memories.guidelines.files import parse_guideline, render_guideline
from skillbank.memories.guidelines.matching import more_specific
from skillbank.memories.guidelines.memory import GuidelineMemory
from skillbank.records import LearnEntry, LearnReport

__all__ = ["GuidelineMemory", "LearnEntry", "LearnReport", "more_specific", "parse_guideline",
           "render_guideline"]
