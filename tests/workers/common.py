"""Shared by the worker scripts and the tests that drive them: words, texts, bank opening."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKERS = Path(__file__).resolve().parent

#: Plain words, so that every generated text is distinct enough that nothing merges or folds.
VOCAB = """
amber anchor apricot arbor atlas aurora badger bamboo banjo basalt beacon bison blossom boulder
bramble breeze bronze cactus canyon caramel cedar cello cherry cinder citadel clover cobalt comet
copper coral cosmos cricket crystal cypress dahlia delta desert dolphin dragon drizzle dune eagle
ebony echo eclipse ember emerald falcon feather fern fjord flame flint forest fossil fox galaxy
garnet geyser ginger glacier granite grove harbor hazel heron horizon iris island ivory jade
jaguar jasmine jungle kayak kelp kestrel lagoon lantern lava lemon lilac lotus lynx magma maple
marble meadow meteor mint mist monsoon moss nebula nectar nutmeg oasis obsidian ocean olive onyx
orchid otter owl paprika pebble pepper pine plume polar poppy prairie prism quartz quill raven
reef ridge river robin saffron sage sapphire savanna sequoia shadow shell sierra silver sparrow
spruce summit sunset tango thistle thunder tiger timber topaz tulip tundra turtle umber valley
velvet violet volcano walnut willow winter wolf zephyr zinc
""".split()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.sample(VOCAB, n))


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a worker: no inherited SKILLBANK_* except the model dir."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SKILLBANK_") or k == "SKILLBANK_MODEL_DIR"}
    env["ANONYMIZED_TELEMETRY"] = "False"
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def worker_cmd(script: str, *args: object) -> list[str]:
    return [sys.executable, str(WORKERS / script), *[str(a) for a in args]]


def open_bank(root: str | os.PathLike, *, chroma_url: str | None = None,
              prefix: str | None = None, lock_timeout: float | None = None, sync: bool = True,
              write_lock_timeout: float | None = None):
    """A bank with the hash embedding and no bundled skills."""
    from skillbank import Skillbank
    from skillbank.embeddings import HashEmbedding

    extra = {} if lock_timeout is None else {"lock_timeout": lock_timeout}
    if write_lock_timeout is not None:
        extra["write_lock_timeout"] = write_lock_timeout
    return Skillbank.open(root, embedding_function=HashEmbedding(), include_bundled=False,
                          sync=sync, chroma_url=chroma_url, collection_prefix=prefix, **extra)
