"""The `skillbank` command line: a thin face over `skillbank.Skillbank`.

    skillbank skills list | show | validate | new | search | sync | watch | delete | rename
    skillbank skills propose | drafts | adopt | discard | history
    skillbank guidelines list | show | learn | search | vote | approve | reject | retire
    skillbank experiences list | show | record | search | pending | approve | reject | distill | prune
                          | export | import
    skillbank reindex | forget | stats | context | serve | ui | demo

People get rich tables; `--json` prints exactly one JSON document on stdout for scripts.
Exit codes: 0 ok, 1 error, 2 invalid input or validation errors, 3 not found, 4 already
exists, 5 read-only, 6 memory root busy (see `skillbank.errors`), 130 interrupted (the
long-running `serve`, `ui` and `skills watch` stop cleanly on Ctrl-C: 0). Errors are one line on
stderr (one JSON line with --json); `--debug` shows the traceback instead.

Environment: SKILLBANK_ROOT, SKILLBANK_SKILL_ROOTS, SKILLBANK_CHROMA_URL, SKILLBANK_NAMESPACE,
SKILLBANK_MODEL_DIR as in `skillbank.settings`; SKILLBANK_EMBEDDING=hash opens banks with the
tiny hash embedding instead of the model, for tests and benchmarks only.

This package is the light front door (#27): `main()` starts `skillbank serve` without typer
(`skillbank.cli.fast`), and loads the typer app (`skillbank.cli.commands`) for everything else.
Its names (`app`, `report_error`, `serve_argv`, ...) are still importable from here: they are
forwarded to `skillbank.cli.commands` on first use. A name that is also a submodule's (`serve`,
`ui`, `audit`...) is the module: `from skillbank.cli.serve import serve` for the command.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillbank.cli.commands import SkillbankGroup, app, report_error, serve_argv  # noqa: F401


def main(argv: list[str] | None = None) -> Any:
    """Console-script entry point."""
    from skillbank.cli import fast

    plan = fast.serve_plan(sys.argv[1:] if argv is None else list(argv))
    if plan is not None:
        fast.serve(plan)  # exits, as typer would
    from skillbank import scope as scopes

    scopes.set_process_face("cli")  # the audit log names the CLI, not `python`
    from skillbank.cli.commands import app

    return app(args=argv, prog_name="skillbank")


def __getattr__(name: str) -> Any:
    """`from skillbank.cli import app` (and the typer module's other names), loaded on use.
    A submodule's name is not forwarded: `from skillbank.cli import owner` must not import the
    typer app to find out it is a module."""
    if name.startswith("__") or os.path.exists(os.path.join(__path__[0], name + ".py")):
        raise AttributeError(f"module 'skillbank.cli' has no attribute {name!r}")
    from skillbank.cli import commands

    try:
        return getattr(commands, name)
    except AttributeError:
        raise AttributeError(f"module 'skillbank.cli' has no attribute {name!r}") from None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
