"""A caller that passes the whole transcript on every turn records each step once.

`record_messages(transcript, thread=...)` with the conversation so far (not only the new
messages) appended the earlier turns' steps again each turn: the tool call of turn one twice
after turn two, three times after turn three. In process and through a client.
"""

from __future__ import annotations

from owner_client import client_of_owner
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

TURN1 = [{"role": "user", "content": "Import the orders CSV"},
         {"role": "assistant", "content": "",
          "tool_calls": [{"id": "c1", "name": "load_csv", "args": {"path": "o.csv"}}]},
         {"role": "tool", "content": "120 rows", "tool_call_id": "c1"},
         {"role": "assistant", "content": "Imported 120 rows."}]
TURN2 = [*TURN1, {"role": "user", "content": "Now add an index on email"},
         {"role": "assistant", "content": "Added the index."}]
TURN3 = [*TURN2, {"role": "user", "content": "And rename the column"},
         {"role": "assistant", "content": "", "tool_calls": [
             {"id": "c2", "name": "rename_column", "args": {"to": "mail"}}]},
         {"role": "tool", "content": "renamed", "tool_call_id": "c2"},
         {"role": "assistant", "content": "Renamed it."}]


def _whole_transcript(bank) -> None:
    first = bank.experiences.record_messages(TURN1, thread="t")
    assert bank.experiences.record_messages(TURN2, thread="t", followup=True) == first
    assert bank.experiences.record_messages(TURN3, thread="t", followup=True,
                                            outcome="success") == first
    steps = bank.experiences.get(first).steps
    assert [s.action for s in steps].count("load_csv") == 1
    assert [s.action for s in steps].count("rename_column") == 1
    assert any("add an index on email" in (s.observation or "") for s in steps)
    # Only the new messages each turn (what the adapters send) is recorded as before.
    other = bank.experiences.record_messages(TURN1, thread="u")
    bank.experiences.record_messages(TURN2[len(TURN1):], task="Import the orders CSV",
                                     thread="u", followup=True)
    assert len(bank.experiences.get(other).steps) == 4


def test_whole_transcripts_record_each_step_once(tmp_path):
    with Skillbank.open(tmp_path / "root", embedding_function=HashEmbedding(),
                        include_bundled=False) as bank:
        _whole_transcript(bank)


def test_whole_transcripts_record_each_step_once_through_a_client(tmp_path):
    with client_of_owner(tmp_path / "root") as bank:
        _whole_transcript(bank)
