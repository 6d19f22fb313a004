"""Server mode: the skill vectors a process holds in memory (dense_live) follow other processes'
writes, which reach it through the change feed (refresh of the written ids, or invalidate)."""

from __future__ import annotations

import os
import time

import pytest

from conftest import write_skill
from test_multiprocess import in_other_process, server_bank


@pytest.fixture
def server_root(tmp_path, chroma_server):
    prefix = f"dl{os.getpid()}x{time.monotonic_ns() % 10**9}"
    return tmp_path / "root", chroma_server, prefix


def held(bank) -> set[str]:
    return {text_id.split("#", 1)[0] for text_id in bank.index("skills")._dense.ids}


def test_server_mode_held_vectors_follow_another_processes_writes(server_root):
    root, url, prefix = server_root
    write_skill(root / "skills", "pdf-tables", "Extract tables from PDF files")
    bank = server_bank(root, url, prefix)
    try:
        for _ in range(2):  # the first search is Chroma's; the second reads the vectors
            assert [h.name for h in bank.skills.search("tables in a pdf")] == ["pdf-tables"]
        assert bank.index("skills")._dense.matrix is not None and held(bank) == {"pdf-tables"}
        in_other_process(root, url, prefix, "    bank.skills.create('csv-totals', "
                         "'Total the columns of CSV spreadsheets', 'Sum each column.')")
        hits = bank.skills.search("total the columns of csv spreadsheets")
        assert hits and hits[0].name == "csv-totals"
        assert held(bank) == {"pdf-tables", "csv-totals"}
        in_other_process(root, url, prefix, "    bank.skills.delete('pdf-tables')")
        assert bank.skills.search("tables in a pdf") == []
        assert held(bank) == {"csv-totals"}
    finally:
        bank.close()
