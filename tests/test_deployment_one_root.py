"""One deployment's index belongs to one root folder (hunt-chroma #1, session 24).

docs/operating.md advised the same `deployment` for "machines of one team", and the copy
refusal for a copy "to share one index on purpose". Two root folders holding different files
shared nothing that way: each open synced the deployment's Chroma entries to its own files, so
a long-lived bank on root C lost the dense side of its rule, skill and experience the moment a
CLI command ran on root D. A root folder whose deployment another root folder already holds is
now refused before anything is synced, naming that root; a moved or restored root, one root at
two paths and a switch between embedded and server mode open as before. Real `chroma run`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
from skillbank.index_ownership import IDENTITY_FILE

RULE = "Always sign release tarballs with the ocelot key."


def _open(root: Path, **kw) -> Skillbank:
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False, **kw)


def _indexed(root: Path, **kw) -> dict[str, list[str]]:
    """What Chroma holds for a root, read by a bank that does not sync (no repair)."""
    with _open(root, sync=False, share=False, **kw) as view:
        return {kind: sorted(view.index(kind).ids())
                for kind in ("skills", "guidelines", "experiences")}


def _fill(bank: Skillbank) -> dict[str, list[str]]:
    bank.skills.save("key-rotation", "Rotate the signing keys safely.", "# Steps\n")
    gids = bank.guidelines.learn(RULE).ids()
    eid = bank.experiences.record(task="Rotate the zanzibar signing keys", outcome="failure")
    return {"skills": ["key-rotation"], "guidelines": sorted(gids), "experiences": [eid]}


def _cli(root: Path, url: str, deployment: str, *args: str,
         **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    env.update(SKILLBANK_EMBEDDING="hash", SKILLBANK_CHROMA_URL=url,
               SKILLBANK_DEPLOYMENT=deployment, ANONYMIZED_TELEMETRY="False", **extra)
    return subprocess.run([sys.executable, "-m", "skillbank.cli", "--root", str(root), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_a_second_root_folder_on_one_deployment_is_refused_and_deletes_nothing(
        tmp_path, chroma_server):
    c_root, d_root = tmp_path / "C", tmp_path / "D"
    kw = {"chroma_url": chroma_server, "deployment": "team-cd"}
    with _open(c_root, **kw) as c:  # a long-lived bank on C (an MCP server, an agent)
        expected = _fill(c)
        # Before: this opened, synced the deployment's entries to D's (empty) files and
        # deleted C's rule, skill and experience from Chroma.
        with pytest.raises(InvalidInputError) as refused:
            _open(d_root, **kw).close()
        said = str(refused.value)
        assert "'team-cd' belongs to the root at" in said and str(c_root.resolve()) in said
        assert "team mode" in said and "deployment of its own" in said
        # The CLI, as in the hunt: one clear line, exit 2, nothing written to D.
        done = _cli(d_root, chroma_server, "team-cd", "guidelines", "learn",
                    "Write tests for every bug fix.")
        assert done.returncode == 2, done.stderr
        assert "belongs to the root at" in done.stderr and "Traceback" not in done.stderr
        assert not (d_root / "guidelines").exists()
        hits = c.guidelines.search("sign the ocelot release tarballs")
        assert [(h.id, h.why) for h in hits][:1] == [(expected["guidelines"][0], "both")]
    assert _indexed(c_root, **kw) == expected
    # The named fix: a deployment of its own opens, and C still keeps every entry.
    with _open(d_root, chroma_url=chroma_server, deployment="team-d") as d:
        d.guidelines.learn("Write tests for every bug fix.")
    assert _indexed(c_root, **kw) == expected


def test_a_copy_given_the_originals_deployment_is_refused(tmp_path, chroma_server):
    """A `cp -r` copy carries the original's `.skillbank-id`: with the original's deployment
    set by hand it was never checked, and the two deleted each other's entries."""
    a, copy = tmp_path / "a", tmp_path / "copy"
    kw = {"chroma_url": chroma_server, "deployment": "team-copy"}
    with _open(a, **kw) as bank:
        expected = _fill(bank)
    shutil.copytree(a, copy)
    with pytest.raises(InvalidInputError, match="holds the same .skillbank-id"):
        with _open(copy, **kw) as bank:
            bank.skills.delete("key-rotation")
    assert _indexed(a, **kw) == expected
    with _open(copy, chroma_url=chroma_server, deployment="team-copy-2") as bank:
        assert bank.index("skills").ids() == ["key-rotation"]  # its own index, from its files
    assert _indexed(a, **kw) == expected


def test_moved_restored_and_two_path_roots_keep_their_deployment(tmp_path, chroma_server):
    kw = {"chroma_url": chroma_server, "deployment": "team-moves"}
    first = tmp_path / "first"
    with _open(first, **kw) as bank:
        expected = _fill(bank)
    moved = tmp_path / "moved"
    os.rename(first, moved)  # `mv` on one file system
    assert _indexed(moved, **kw) == expected
    with pytest.raises(InvalidInputError, match="another root folder"):
        _open(first, **kw).close()  # a new root where the moved one was is not that root
    restored = tmp_path / "restored"
    shutil.copytree(moved, restored)  # `cp -a` from a backup after the old folder was removed
    shutil.rmtree(moved)
    with _open(restored, **kw) as bank:
        assert bank.index("guidelines").ids() == expected["guidelines"]
    # One root at two paths (a symlink here; a bind mount below) is one root: it shares the
    # index, nothing embedded again.
    link = tmp_path / "link"
    link.symlink_to(restored)
    embedding = HashEmbedding()
    with Skillbank.open(link, embedding_function=embedding, include_bundled=False, sync=False,
                        **kw) as bank:
        assert bank.index("skills").ids() == ["key-rotation"] and embedding.calls == 0
    # The claimed folder gone on this machine: the root that claims it now is its root.
    shutil.rmtree(restored)
    with _open(tmp_path / "new", **kw) as bank:
        assert bank.index("skills").ids() == []


def test_one_root_bind_mounted_at_a_second_path_is_the_same_root(tmp_path, chroma_server):
    kw = {"chroma_url": chroma_server, "deployment": "team-mount"}
    root, mount = tmp_path / "root", tmp_path / "mount"
    with _open(root, **kw) as bank:
        expected = _fill(bank)
    mount.mkdir()
    if subprocess.run(["mount", "--bind", str(root), str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("no bind mounts here (not root)")
    try:
        assert (mount / IDENTITY_FILE).stat().st_ino == (root / IDENTITY_FILE).stat().st_ino
        assert _indexed(mount, **kw) == expected  # its path differs, its id file is the same
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_switching_embedded_server_embedded_keeps_opening(tmp_path, chroma_server):
    root = tmp_path / "root"
    with _open(root, deployment="team-switch") as bank:
        _fill(bank)
    with _open(root, chroma_url=chroma_server, deployment="team-switch") as bank:
        assert bank.index("skills").ids() == ["key-rotation"]
    with _open(root, deployment="team-switch") as bank:
        assert bank.index("skills").ids() == ["key-rotation"]
    with _open(root, chroma_url=chroma_server, deployment="team-switch") as bank:
        assert bank.index("skills").ids() == ["key-rotation"]


#: Opens a root as another machine would: `socket.gethostname` (what the claim records as the
#: machine) patched in a child process, as the review's repro did (review F2, session 24).
ON_MACHINE = r"""
import json, socket, sys
host, root, url, deployment, seed = sys.argv[1:6]
socket.gethostname = lambda: host
from skillbank import Skillbank
from skillbank.embeddings import HashEmbedding
from skillbank.errors import InvalidInputError
try:
    with Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                        chroma_url=url, deployment=deployment) as bank:
        if seed:
            bank.guidelines.learn(seed)
        print(json.dumps({"guidelines": sorted(bank.index("guidelines").ids())}))
except InvalidInputError as exc:
    print(json.dumps({"refused": str(exc)}))
"""


def _on_machine(host: str, root: Path, url: str, deployment: str, seed: str = "") -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLBANK_")}
    done = subprocess.run([sys.executable, "-c", ON_MACHINE, host, str(root), url, deployment,
                           seed], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_root_restored_on_a_replacement_machine_keeps_its_deployment(tmp_path, chroma_server):
    """Review F2, session 24: the first machine is dead and a backup of its root is restored on
    a new one (same .skillbank-id, another machine, another inode). It was refused as "a copy"
    forever; the only way out was a new deployment name, re-embedding everything."""
    first, restored = tmp_path / "machine-a" / "root", tmp_path / "machine-b" / "root"
    seeded = _on_machine("machine-a", first, chroma_server, "prod-restore", seed=RULE)
    assert len(seeded["guidelines"]) == 1, seeded
    shutil.copytree(first, restored)  # the backup, restored on the replacement machine
    shutil.rmtree(tmp_path / "machine-a")  # machine a is gone
    opened = _on_machine("machine-b", restored, chroma_server, "prod-restore")
    assert opened == seeded  # admitted, and its index is the one it had
    # The claim moved to the replacement machine: it keeps opening there, and another root
    # folder is still refused, naming the root on machine b.
    assert _on_machine("machine-b", restored, chroma_server, "prod-restore") == seeded
    other = _on_machine("machine-b", tmp_path / "machine-b" / "other", chroma_server,
                        "prod-restore")
    assert "refused" in other and "(on machine-b)" in other["refused"], other


def test_a_second_root_takes_the_deployment_over_by_hand_and_the_first_is_refused(
        tmp_path, chroma_server):
    """Review F2, session 24: nothing released or took over a claim, so a fresh CI root per
    run, or the prod root after a laptop opened `prod` first, was refused forever.
    `deployment_takeover` lets a root claim the deployment; the one it took it from is then
    the one refused, until it takes it back."""
    c_root, d_root = tmp_path / "C", tmp_path / "D"
    kw = {"chroma_url": chroma_server, "deployment": "team-takeover"}
    with _open(c_root, **kw) as c:
        expected_c = _fill(c)
    with pytest.raises(InvalidInputError) as refused:
        _open(d_root, **kw).close()
    said = str(refused.value)
    assert "deployment_takeover = true" in said and "SKILLBANK_DEPLOYMENT_TAKEOVER=1" in said
    assert "index entries are replaced by this root's" in said
    assert "deployment of its own" in said and "team mode" in said and "one network" in said
    assert _indexed(c_root, **kw) == expected_c
    with _open(d_root, deployment_takeover=True, **kw) as d:  # the index is D's files now
        d_rule = d.guidelines.learn("Write tests for every bug fix.").ids()
        assert d.index("guidelines").ids() == d_rule and d.index("skills").ids() == []
    with _open(d_root, **kw) as d:  # D holds it now: no setting needed any more
        assert d.index("guidelines").ids() == d_rule
    # C is the one refused now, naming D; its files are untouched.
    done = _cli(c_root, chroma_server, "team-takeover", "guidelines", "learn",
                "Never print the signing key.")
    assert done.returncode == 2, done.stderr
    assert str(d_root.resolve()) in done.stderr and "deployment_takeover" in done.stderr
    assert "Traceback" not in done.stderr
    # ... until it takes it back (the environment variable this time): its entries return.
    done = _cli(c_root, chroma_server, "team-takeover", "guidelines", "learn",
                "Never print the signing key.", SKILLBANK_DEPLOYMENT_TAKEOVER="1")
    assert done.returncode == 0, done.stderr
    with _open(c_root, **kw) as c:  # C holds it again; each memory syncs when first used
        back = {kind: sorted(c.index(kind).ids())
                for kind in ("skills", "guidelines", "experiences")}
    assert back["skills"] == expected_c["skills"]
    assert back["experiences"] == expected_c["experiences"]
    assert set(expected_c["guidelines"]) <= set(back["guidelines"])
    assert not set(d_rule) & set(back["guidelines"])
    with pytest.raises(InvalidInputError, match="belongs to the root at"):
        _open(d_root, **kw).close()
