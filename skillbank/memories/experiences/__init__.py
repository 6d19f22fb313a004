"""Experience memory: what agents tried, how it went, and the lessons drawn from it.

`ExperienceMemory` (in `memory`) is the public class; the other modules each do one job for it
(see `memory`'s docstring).
"""

from skillbank.memories.experiences.indexing import embed_text
from skillbank.memories.experiences.journal import CHECKPOINT
from skillbank.memories.experiences.memory import ExperienceMemory
from skillbank.memories.experiences.transcript import steps_from_messages
from skillbank.memories.experiences.validation import MAX_RECORD_BYTES

__all__ = ["ExperienceMemory", "steps_from_messages", "embed_text", "CHECKPOINT",
           "MAX_RECORD_BYTES"]
