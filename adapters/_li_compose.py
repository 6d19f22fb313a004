"""Several ``SkillbankMemoryBlock``s in one LlamaIndex ``Memory`` compose into one prompt where
each skill, rule and experience appears once, as several LangChain middleware instances do.

Users met (LlamaIndex hunt, session 21, #5): a personal root's block beside a team's block both
showed ``**release-notes** [skill:release-notes]`` with other instructions, the same rule twice
and two preambles, and nothing said which one counted. ``Memory`` asks its blocks one after
another, highest ``priority`` first and in list order among equals, with the session id
(``Memory._get_memory_blocks_content``). So each block notes what it rendered for the session in
this read, and a later block leaves out what an earlier one already shows
(``skillbank.context.without_shown``): the block asked first wins where two hold the same item.
A new read (the next turn, a new Memory on the same session id) starts afresh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from skillbank.context import without_shown

#: Sessions whose last read is remembered: reads under way at one moment, with room to spare.
#: Each holds that read's messages list, so the bound is kept small: a server with thousands
#: of sessions would otherwise keep a chat history per session it no longer serves. A read
#: evicted mid-way only misses the deduplication (its later blocks repeat an item).
MAX_SESSIONS = 64


class ShownThisRound:
    """Per session: the blocks asked in the current read of the memory, with their text."""

    def __init__(self) -> None:
        # session -> (the messages list of the read, [(block id, its text)])
        self._rounds: OrderedDict[Any, tuple[Any, list[tuple[int, str]]]] = OrderedDict()
        self._lock = threading.Lock()

    def compose(self, block: object, session: Any, read: Any, text: str) -> str:
        """`text` (the block's whole rendered memory) without what blocks asked before it in
        this read already show; `block` is then noted as shown with all of `text`.

        `read` is the messages list ``Memory`` hands every block of one read (the same object,
        held here so no later list takes its id): a new Memory of the same session id, or the
        next turn, is a new read even when its request is the same."""
        me = id(block)
        with self._lock:
            current = self._rounds.get(session)
            if current is None or current[0] is not read or any(b == me for b, _ in current[1]):
                current = self._rounds[session] = (read, [])  # the first block of a new read
            self._rounds.move_to_end(session)
            while len(self._rounds) > MAX_SESSIONS:
                self._rounds.popitem(last=False)
            shown = "\n".join(earlier for _, earlier in current[1])
            current[1].append((me, text))
        return without_shown(text, shown) if shown and text else text


#: One for the process: blocks of one Memory are separate objects that must see each other.
SHOWN = ShownThisRound()
