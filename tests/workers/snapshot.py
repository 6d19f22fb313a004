"""Reindex worker: write a fixed data set, or print what searches return, as JSON.

    python snapshot.py write ROOT       # fixed experiences, guidelines and skills
    python snapshot.py query ROOT OUT   # search results for fixed queries -> OUT (JSON)

Used across processes: chroma/ is deleted between them and rebuilt by `skillbank reindex`.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import VOCAB, open_bank, words  # noqa: E402


def dataset() -> dict[str, list]:
    rng = random.Random(1234)
    experiences = [dict(task=f"snapshot task {i} {words(rng, 5)}",
                        outcome=rng.choice(["success", "failure", "partial"]),
                        feedback=f"snapshot feedback {i} {words(rng, 3)}",
                        lessons=[f"Remember to {words(rng, 3)} first"] if i % 5 == 0 else [],
                        tags=[rng.choice(["alpha", "beta"])]) for i in range(30)]
    rules = [(f"Always {words(rng, 4)} before {words(rng, 2)} number {i}.", f"When case {i}")
             for i in range(10)]
    # Twins: two rules of the same shape sharing one word. A search for that word finds both
    # with exactly equal evidence, so their order must not depend on how the index was built.
    twins = []
    for i in range(8):
        taken = " ".join(r for r, _ in rules)
        shared, *rest = rng.sample([w for w in VOCAB if w not in taken], 9)
        twins.append(shared)
        rules.append((f"Always {shared} {' '.join(rest[:4])} twin{i}a.", f"When {shared} case {i}a"))
        rules.append((f"Always {shared} {' '.join(rest[4:])} twin{i}b.", f"When {shared} case {i}b"))
    skills = [(f"snap-skill-{i}", f"Use to {words(rng, 5)} for case {i}.") for i in range(8)]
    queries = [words(rng, 3) for _ in range(12)] + [e["task"] for e in experiences[:5]] \
        + [r for r, _ in rules[:3]] + [d for _, d in skills[:3]] + twins
    return {"experiences": experiences, "rules": rules, "skills": skills, "queries": queries}


def write(root: str) -> None:
    data = dataset()
    bank = open_bank(root)
    for e in data["experiences"]:
        bank.experiences.record(**e)
    for rule, when in data["rules"]:
        bank.guidelines.add(rule, topic="snapshot", when_to_use=when)
    for name, description in data["skills"]:
        bank.skills.create(name, description, f"# Steps\n\nDo {name}.\n")
    bank.close()


def query(root: str, out: str) -> None:
    data = dataset()
    bank = open_bank(root)
    result: dict[str, object] = {"queries": {}}
    for q in data["queries"]:
        result["queries"][q] = {
            "experiences": [(h.id, h.score) for h in
                            bank.experiences.recall(q, k=5, count_use=False)],
            "guidelines": [(h.id, h.score) for h in bank.guidelines.search(q, k=5)],
            "skills": [(h.name, h.score) for h in bank.skills.search(q, k=5)],
        }
    result["counts"] = {"experiences": bank.experiences.count(namespace="*"),
                        "guidelines": bank.guidelines.counts(),
                        "skills": sorted(bank.skills.names())}
    bank.close()
    Path(out).write_text(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "query":
        query(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
