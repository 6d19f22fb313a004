"""Whether the embedding model is known to be unavailable, without loading it.

`Skillbank.search_mode()` said "hybrid" on a machine with no model until a search had tried a
dense query and failed (hunt-ops #9): an operator checking it after start-up was misled. This is
the cheap check it now makes: a load that already failed, or a named model folder that holds no
model (a stat or two). A model that might still be downloaded is not known to be missing.
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
