"""Drafting skills without a model is deterministic, names included: the same experiences gave
`csv-database-table` or `import-csv-database` depending on the process's hash seed (the
grouping's vocabulary was built by iterating a set)."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = r'''
import sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
bank = Skillbank.open(sys.argv[1], embedding_function=HashEmbedding(), include_bundled=False,
                      share=False)
for table in ("orders", "users", "invoices"):
    bank.experiences.record(task=f"Import the {table} CSV file into a database table",
                            outcome="success", when_to_use="Loading CSV exports into a database",
                            steps=[{"action": "inspect the CSV header"},
                                   {"action": "COPY the rows"}])
print(",".join(d.name for d in bank.skills.propose()))
bank.close()
'''


def test_draft_names_do_not_depend_on_the_hash_seed(tmp_path):
    names = set()
    for seed in ("0", "1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed, ANONYMIZED_TELEMETRY="False")
        out = subprocess.run([sys.executable, "-c", CODE, str(tmp_path / f"root-{seed}")],
                             env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        names.add(out.stdout.strip().splitlines()[-1])
    assert len(names) == 1 and names != {""}, names
