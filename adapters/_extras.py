"""A missing framework extra named as such, not as a bare ModuleNotFoundError.

`from skillbank.adapters.langchain import ...` in a core-only install used to fail with
"No module named 'langchain_core'", naming neither the extra nor how to get it, unlike team
mode's '.[team]' message (hunt-wheel #2, session 38).
"""

from __future__ import annotations

import importlib.util


def _installed(name: str) -> bool:
    """Whether `name` can be found. find_spec imports `name`'s parent packages: a parent that
    is missing is "not installed", but a parent that is there and fails on an import of its
    own raises that error, naming the module it lacks (it was reported as the extra missing,
    the real cause hidden; review 2, session 38)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError as exc:
        parents = {".".join(name.split(".")[:n]) for n in range(1, name.count(".") + 2)}
        if exc.name in parents:
            return False
        raise
    except ValueError:  # a module with no spec (`__spec__` None)
        return False


def require_extra(extra: str, modules: tuple[str, ...]) -> None:
    """Raise ModuleNotFoundError (an ImportError) naming `extra` when one of `modules` is absent.

    Checked before the adapter imports its framework (find_spec imports no top-level module),
    so the user learns the extra to install, not only the first module that happened to be missing.
    """
    for name in modules:
        if not _installed(name):
            raise ModuleNotFoundError(
                f"skillbank.adapters.{extra} needs the '{extra}' extra ({name} is not installed): "
                f"pip install -e '.[{extra}]' in your skillbank clone, or "
                f"pip install '/path/to/skillbank-<version>-py3-none-any.whl[{extra}]' "
                "(skillbank is on no package index)", name=name)
