"""Forget means gone, for the names of skill drafts: a draft is named after its experiences'
words ('repair-zanzibar-pipeline'), and that name was kept by the drafts ledger and the audit
log's propose/discard events after the experiences and the draft itself were forgotten."""

from __future__ import annotations

import json
from pathlib import Path

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

WORD = b"zanzibarquokka"


def holders(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and WORD in p.read_bytes().lower())


def test_forgotten_experiences_leave_no_draft_name_in_the_ledger_or_the_audit_log(tmp_path):
    root = tmp_path / "root"
    bank = Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False)
    try:
        ids = [bank.experiences.record(
            task=f"Repair the zanzibarquokka pipeline run {n}", outcome="success",
            when_to_use="When repairing the zanzibarquokka pipeline",
            steps=[{"action": "inspect"}, {"action": "restart"}]) for n in range(4)]
        other = [bank.experiences.record(
            task=f"Export the monthly invoices to CSV for client {n}", outcome="success",
            steps=[{"action": "query_invoices"}, {"action": "write_csv"}]) for n in range(4)]
        drafts = bank.skills.propose(min_support=3)
        names = {d.name for d in drafts}
        assert any(WORD.decode() in n for n in names), names  # the name holds the word
        kept = [n for n in names if WORD.decode() not in n]
        for record_id in ids:
            bank.forget(record_id)
        # The ledger still reads (nothing is proposed again from the remaining experiences).
        assert bank.skills.propose(min_support=3) == []
        assert {d.name for d in bank.skills.drafts()} == set(kept)
    finally:
        bank.close()
    assert holders(root) == []
    for path in (root / "audit").glob("*.jsonl"):  # every audit line still parses
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        assert all(set(r) >= {"principal", "action", "id"} for r in rows)
        assert any(r["action"] == "forget" for r in rows)
    assert other
