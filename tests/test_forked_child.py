"""A child forked from a process holding an embedded bank (multiprocessing's default start on
Linux, handed the parent's bank) waited for ever on its first search: chromadb's engine does
not survive a fork. Every use of the parent's Chroma in the child now raises ForkedError,
which says what works instead; a bank the child opens itself works."""

from __future__ import annotations

import subprocess
import sys

FORKS = r"""
import multiprocessing, sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import ForkedError

def child(bank, root, out, kept):
    said = []
    for name, call in [
        ("search", lambda: bank.skills.search("slide deck")),
        ("save", lambda: bank.skills.save("other", "Another skill.", "# Steps\n\nDo it.\n")),
        ("record", lambda: bank.experiences.record(task="Make slides", outcome="success")),
        ("guideline", lambda: bank.guidelines.add("Keep one idea per slide.")),
        ("guidelines", lambda: bank.guidelines.search("slides")),
        ("kept", lambda: kept.search("slide deck")),  # a memory taken before the fork
    ]:
        try:
            call()
            said.append(f"{name}: answered")
        except ForkedError as exc:
            said.append(f"{name}: ForkedError {'spawn' in str(exc)}")
        except Exception as exc:
            said.append(f"{name}: {type(exc).__name__}: {exc}")
    with Skillbank.open(root, embedding_function=HashEmbedding(), lock_timeout=60) as own:
        said.append("own: " + ",".join(hit.id for hit in own.skills.search("slide deck")))
    out.put(said)

if __name__ == "__main__":
    root = sys.argv[1]
    with Skillbank.open(root, embedding_function=HashEmbedding(), sync=False) as bank:
        bank.skills.save("slide-deck", "Turn meeting notes into a short slide deck.",
                         "# Steps\n\n1. One idea per slide.\n")
        bank.guidelines.add("Cite the source of every figure.")
        bank.skills.search("slide deck")  # the parent's engine is running before the fork
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        worker = ctx.Process(target=child, args=(bank, root, out, bank.skills))
        worker.start()
        print("\n".join(out.get(timeout=240)), flush=True)
        worker.join(60)
        print("parent:", ",".join(hit.id for hit in bank.skills.search("slide deck")), flush=True)
"""


def test_a_forked_child_is_told_to_open_its_own_bank(tmp_path):
    done = subprocess.run([sys.executable, "-c", FORKS, str(tmp_path / "root")],
                          capture_output=True, text=True, timeout=300)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr[-3000:]
    for call in ("search", "save", "record", "guideline", "guidelines", "kept"):
        assert f"{call}: ForkedError True" in lines, (call, lines, done.stderr[-2000:])
    assert "own: slide-deck" in lines, lines
    assert "parent: slide-deck" in lines, lines


ON_A_SERVER = r"""
import multiprocessing, sys
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding

def child(bank, out):
    out.put(",".join(hit.id for hit in bank.skills.search("slide deck")))

if __name__ == "__main__":
    root, url = sys.argv[1], sys.argv[2]
    with Skillbank.open(root, embedding_function=HashEmbedding(), chroma_url=url,
                        collection_prefix="forked") as bank:
        bank.skills.save("slide-deck", "Turn meeting notes into a short slide deck.",
                         "# Steps\n\n1. One idea per slide.\n")
        bank.skills.search("slide deck")
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        worker = ctx.Process(target=child, args=(bank, out))
        worker.start()
        print("child:", out.get(timeout=240), flush=True)
        worker.join(60)
"""


def test_a_bank_on_a_chroma_server_alone_works_in_a_forked_child(tmp_path, chroma_server):
    """Review 1, session 36: the refusal covered every bank, and a pre-forking server (gunicorn
    --preload) over a Chroma server, which worked, got ForkedError."""
    done = subprocess.run([sys.executable, "-c", ON_A_SERVER, str(tmp_path / "root"),
                           chroma_server], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "child: slide-deck" in done.stdout.splitlines(), (done.stdout, done.stderr[-2000:])
