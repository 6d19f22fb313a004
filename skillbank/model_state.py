"""Whether the embedding model is known to be unavailable, without loading it.

`Skillbank.search_mode()` said "hybrid" on a machine with no model until a search had tried a
dense query and failed (hunt-ops #9): an operator checking it after start-up was misled. This is
the cheap check it now makes: a load that already failed, or a named model folder that holds no
model (a stat or two). A model that might still be downloaded is not known to be missing.
`keyword_reason` says why searches are keyword-only, whatever the cause.
"""

from __future__ import annotations

import os
from typing import Any


def known_unavailable(function: Any) -> str | None:
    """Why `function` (the bank's embedding function) cannot embed, when that is known without
    loading the model; None when it is loaded, may load, or is not the bundled MiniLM."""
    from skillbank.embeddings import MiniLMEmbedding
    from skillbank.onnx_model import local_model_dir

    if not isinstance(function, MiniLMEmbedding) or function._session is not None:
        return None
    failed = function._failed
    if failed is not None:  # the last load failed: keyword-only until one succeeds
        return str(failed[1])
    named = function._model_dir_arg or os.environ.get("SKILLBANK_MODEL_DIR")
    if named and local_model_dir(function._model_dir_arg) is None:
        return f"no embedding model in {named}"
    return None


#: `keyword_reason` when no embedding model can be loaded.
MODEL_MISSING = ("the embedding model is unavailable, so matches rely on shared words (set "
                 "SKILLBANK_MODEL_DIR to a folder with the model, or allow its download, for "
                 "meaning-based search)")


def keyword_reason(function: Any, skills_index: Any) -> str:
    """Why skill searches answer by keyword alone just now, '' when they do not: no embedding
    model, a Chroma server that does not answer, or a first index still embedding. The MCP
    face's hint blamed a missing model for a Chroma server that did not answer (session 24).
    The skill index speaks for the bank, as `Skillbank.search_mode` always did (another
    memory's index keeps its outage note until it is searched again); guidelines and
    experiences say per search (`Hits.note`)."""
    from skillbank.index_outage import CHROMA_DOWN, keyword_only

    if known_unavailable(function):  # no model: no search is hybrid
        return MODEL_MISSING
    why = getattr(skills_index, "dense_error", None) or ""
    if why.startswith(CHROMA_DOWN):
        return f"{why} until it answers again"
    if keyword_only(why):  # its collection was gone: rebuilt at the next call
        return why
    if why:
        return MODEL_MISSING
    if getattr(skills_index, "pending", 0):  # a first index embedding behind keyword search
        return "the skills are still being indexed: matches rely on shared words until then"
    return ""
