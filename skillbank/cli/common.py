"""What every `skillbank` command shares: the per-run state, opening the bank, and output.

The CLI is a thin face over `skillbank.Skillbank`: commands parse arguments, call the facade and
print what comes back, as rich tables for people or as one JSON document (`--json`) for scripts.
Nothing heavy is imported here, so `skillbank --help` and `skillbank skills validate` stay fast;
not even typer: `skillbank serve` builds a `State` without it (`skillbank.cli.fast`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import asdict, dataclass, field, is_dataclass
from datetime import date, datetime, timezone
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from skillbank.moments import stored_utc

if TYPE_CHECKING:
    import typer

#: `SKILLBANK_EMBEDDING=hash` opens banks with `skillbank.embeddings.HashEmbedding` instead of
#: the MiniLM model: for tests and benchmarks that must not load a model. Not for real memory —
#: a root built with one embedding refuses the other.
EMBEDDING_ENV = "SKILLBANK_EMBEDDING"


def embedding_from_env() -> Any:
    """The embedding function `SKILLBANK_EMBEDDING` asks for (None: the bank's default)."""
    choice = os.environ.get(EMBEDDING_ENV, "").strip().lower()
    if choice in ("", "default", "minilm"):
        return None
    if choice == "hash":
        from skillbank.embeddings import HashEmbedding

        return HashEmbedding()
    from skillbank.errors import InvalidInputError

    raise InvalidInputError(f"{EMBEDDING_ENV}={choice!r} is not known; use 'hash' (tests and "
                            "benchmarks) or 'minilm' (the default)")


def skip_httpx_cli() -> None:
    """Keep httpx from importing its own command line. httpx's package imports it whenever click
    and rich are installed (`from ._main import main` in httpx/__init__.py): click, rich.syntax
    and pygments, ~13 % of an attached `skillbank stats`' CPU under py-spy (#27). No skillbank
    command runs httpx's command line; with the module marked absent httpx defines its stub
    `main` instead. Called before the bank (the owner's client, or Chroma) imports httpx."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[assignment]


@dataclass
class State:
    """The root callback's options, and the bank, opened on first use and closed at exit."""

    root: Path | None = None
    skills_dirs: list[Path] = field(default_factory=list)
    chroma_url: str | None = None
    namespace: str | None = None
    model_dir: Path | None = None
    json: bool = False
    include_bundled: bool = True  # False: --no-bundled was given (see `bundled`)
    remember: bool = True  # False: --no-remember, the options above are for this command only
    debug: bool = False
    root_explicit: bool = False  # --root given on the command line (not from SKILLBANK_ROOT)
    #: Folders this command takes out of the index on purpose (`config remove-skills-dir`,
    #: `config bundled off`): their sync's "root-not-served" note is not shown (see `bank`).
    left_out: set[str] = field(default_factory=set)
    #: The skill sync's report of this command (`bank(sync="skills")` in this process), so a
    #: command can say what entered or left the index (`config add-skills-dir`).
    skills_report: Any = None
    _bank: Any = None
    _out: "Output | None" = None

    @property
    def out(self) -> "Output":
        if self._out is None:
            self._out = Output(self.json)
        return self._out

    def bank(self, sync: str | Sequence[str] | None = "all", **overrides: Any) -> Any:
        """Open the bank (once per run) and bring the named memories' indexes up to date.

        `sync` is "all", None, or memory names ("skills", "guidelines", "experiences"): a
        command syncs only what it reads, so it neither pays for nor depends on the others.
        """
        if self._bank is None:
            skip_httpx_cli()
            from skillbank.bank import Skillbank
            from skillbank.quick_chroma import skip_override_checks

            skip_override_checks()  # a command opening the root imports Chroma ~0.25 s faster

            options: dict[str, Any] = dict(
                skill_roots=self.skill_roots(),
                chroma_url=self.chroma_url,
                namespace=self.namespace,
                model_dir=self.model_dir,
                embedding_function=embedding_from_env(),
                include_bundled=self.bundled(),
            )
            options.update(overrides)
            self._attach_to_background_owner(options)
            # A command syncs what it reads (below), once: no read re-checks the skill folders
            # (hunt-author #4, session 24), so none leaves an embedding thread behind.
            self._bank = Skillbank.open(self.root, sync=False, skills_recheck_seconds=0,
                                        **options)
        kinds = (["skills", "guidelines", "experiences"] if sync == "all"
                 else [sync] if isinstance(sync, str) else list(sync or []))
        for kind in kinds:
            if kind == "skills" and getattr(self._bank, "is_remote", False):
                continue  # another process owns the root and watches its skill folders
            report = getattr(self._bank, kind).sync()
            if kind == "skills":
                self.skills_report = report
            for finding in getattr(report, "findings", None) or []:
                if getattr(finding, "code", None) == "root-not-served" and \
                        not self._left_out(getattr(finding, "path", None)):  # never silently
                    self.out.note(f"note: {finding.message}")
        return self._bank

    def _left_out(self, folder: Any) -> bool:
        """Whether `folder` is one this command removed on purpose. `config remove-skills-dir`
        said its skills leave the index, then the sync's note advised adding the folder back
        (for the bundled skills, advice that does not even apply: hunt-docs #3, session 23).
        Folders that left the index any other way are still named."""
        if not folder or not self.left_out:
            return False
        try:
            return str(Path(folder).expanduser().resolve()) in self.left_out
        except (OSError, RuntimeError, ValueError):
            return False

    def _attach_to_background_owner(self, options: dict[str, Any]) -> None:
        """Interactive commands attach to a short-lived background owner of the root instead
        of opening Chroma and the model themselves (see `skillbank.cli.owner`)."""
        from skillbank.cli import owner

        if options.get("chroma_url") or not owner.wanted(self.json):
            return
        from skillbank import remember

        root = remember.resolve_root(self.root)
        if owner.ensure(root, options, announce=self.out.note):
            self._owner_root = root

    def skill_roots(self) -> list[str] | None:
        """The skill folders to open the bank with: those the root remembers plus any new
        `--skills-dir` (recorded now, said on stderr); see `skillbank.remember`."""
        from skillbank import remember

        root = remember.resolve_root(self.root)
        roots, new = remember.effective(root, self.skills_dirs, keep=self.remember)
        for folder in new:
            self.out.note(f"Indexing the skills in {folder} and remembering it in "
                          f"{root / remember.CONFIG}: later commands keep it without "
                          "--skills-dir (`skillbank config` changes it; --no-remember uses a "
                          "folder for one command only).")
        return roots or None

    def bundled(self) -> bool:
        """Whether the bank serves the skills that ship with skillbank: `--no-bundled` says
        no (and is remembered in the root, unless --no-remember), else what the root
        remembers (`skillbank config bundled on|off`), else yes."""
        from skillbank import remember

        root = remember.resolve_root(self.root)
        if not self.include_bundled:
            indexed = (root / "chroma").exists()  # a new root has nothing to take out yet
            if self.remember and remember.set_bundled(root, False) is not False and indexed:
                self.out.note(f"Leaving out the skills that ship with skillbank and remembering "
                              f"it in {root / remember.CONFIG}: later commands keep them out "
                              "without --no-bundled (`skillbank config bundled on` brings them "
                              "back).")
            return False
        return remember.bundled(root) is not False

    def abandon(self) -> None:
        """Forget a bank that a helper thread is still opening (Ctrl-C during
        `signals.interruptible`): closing it would wait for that thread, which holds the bank's
        lock while a server hangs. The index follows the files, so a sync cut short is redone by
        the next open; the OS releases the root's locks as the process exits."""
        self._abandoned = True
        self._bank = None

    def close(self) -> None:
        if getattr(self, "_abandoned", False):
            return  # a helper may still be opening it (and set `_bank` after `abandon`)
        if getattr(self, "_owner_root", None) is not None:
            from skillbank.cli import owner

            owner.touch(self._owner_root)
        if self._bank is not None:
            bank, self._bank = self._bank, None
            bank.close()


def bundled_words(served: bool, recorded: bool | None) -> str:
    """How `stats`, `config` and `--help` say whether the bundled skills are served, and
    whether the root remembers it."""
    if served:
        return "served" + (" (remembered)" if recorded else "")
    if recorded is False:
        return "left out (remembered; `skillbank config bundled on` serves them again)"
    return "left out for this command (--no-bundled --no-remember)"


def debug_logging() -> None:
    """`--debug`: skillbank's debug log on stderr."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("skillbank")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def state(ctx: "typer.Context") -> State:
    """The run's state (a command invoked without the root callback gets a default one)."""
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State()
        root.call_on_close(root.obj.close)
    return root.obj


# ----------------------------------------------------------------------------------------- JSON


def jsonable(value: Any) -> Any:
    """Records, dataclasses, paths and datetimes as plain JSON values."""
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(mode="json"))
    if is_dataclass(value) and not isinstance(value, type):
        data = asdict(value)
        # Derived properties people and scripts expect (e.g. Catalog.text) ride along.
        for name in ("text",):
            if name not in data and isinstance(getattr(type(value), name, None), property):
                data[name] = getattr(value, name)
        return jsonable(data)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


# --------------------------------------------------------------------------------------- output


class Output:
    """Human output through rich (tables, progress), or exactly one JSON document on stdout."""

    def __init__(self, json_mode: bool) -> None:
        self.json = json_mode
        self._console: Any = None
        self._err: Any = None

    @property
    def console(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=sys.stdout, highlight=False, emoji=False)
        return self._console

    @property
    def err(self) -> Any:
        if self._err is None:
            from rich.console import Console

            self._err = Console(file=sys.stderr, highlight=False, emoji=False)
        return self._err

    def emit(self, data: Any, human: Callable[[], None]) -> None:
        """Print `data` as JSON in --json mode, else call `human` to render it."""
        if self.json:
            self.write_json(data)
        else:
            human()

    def write_json(self, data: Any, *, compact: bool = False) -> None:
        """One JSON document; `compact` puts it on one line (for event streams such as watch)."""
        indent = None if compact else 2
        sys.stdout.write(json.dumps(jsonable(data), indent=indent, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    def print(self, *renderables: Any, **kwargs: Any) -> None:
        """Rich output; a plain string is text, never markup (a rule holding `[/]` failed
        `guidelines approve` after the approval, review of session 28), and no character that
        drives the terminal (see `printable`); markup only in the renderables a caller builds."""
        self.console.print(*[text(r) if isinstance(r, str) else r for r in renderables],
                           **kwargs)

    def print_at(self, renderable: Any, width: int | None) -> None:
        """`renderable` laid out `width` columns wide, even past the console's width (rich's
        `print(width=…)` never goes past it); None: as `print`. For piped output that must stay
        whole on its line (a path; hunt-clicorpus #2, session 36)."""
        if width is None or width <= self.console.width:
            self.print(renderable)
            return
        from rich.segment import Segments

        lines = self.console.render_lines(renderable, self.console.options.update(width=width),
                                          pad=False, new_lines=True)
        self.console.print(Segments([s for line in lines for s in line]), soft_wrap=True)

    def plain(self, text: str) -> None:
        """User content, printed exactly (no markup, no wrapping games) when piped, so
        `skills show NAME > file` is the body; on a terminal its characters that drive one are
        shown as escapes (`printable`): a third-party body, rule or playbook reached the terminal
        raw in `skills show`, `context` and `playbook` (left from hunt-routing #12, session 28)."""
        shown = printable(text.replace("\r\n", "\n")) if stdout_is_terminal() else text
        self.console.print(shown, markup=False, highlight=False, soft_wrap=True)

    def note(self, message: str, style: str | None = None) -> None:
        """A side remark for people (stderr, so piped stdout stays clean). Plain text, never
        markup: a remark names skills, and a third-party name such as `[/bold]` crashed it or
        `[link=…]` made a hyperlink (noticed by the fix-eval fixer, session 28)."""
        if not self.json:
            self.err.print(printable(message), highlight=False, markup=False, style=style)


def stdout_is_terminal() -> bool:
    """Whether stdout is a terminal, by the OS: rich's `is_terminal` also says yes under
    FORCE_COLOR or TTY_COMPATIBLE (common in CI), where `skills show NAME > file` must still
    write the body as it is (review, session 29)."""
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


#: Characters that drive a terminal instead of printing: the C0 controls but tab and newline,
#: DEL, and the C1 controls (0x9b is a one-byte CSI to some terminals).
_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(value: str) -> str:
    """`value` with every character that drives a terminal shown as an escape (`\\x1b`).
    Third-party skill names and descriptions reached the terminal raw in `skills search`,
    `eval` and `list`: a folder's SKILL.md could clear the screen, set the title or overwrite
    the eval's "missed" lines (rich drops BEL and CR, not ESC; hunt-routing #12, session 28).
    Human output only: `--json` keeps the exact text (JSON escapes it)."""
    return _TERMINAL_CONTROLS.sub(lambda found: f"\\x{ord(found.group()):02x}", value)


def text(value: Any, style: str | None = None) -> Any:
    """A rich Text: user content never becomes markup, nor terminal control (`printable`)."""
    from rich.text import Text

    return Text("" if value is None else printable(str(value)), style=style or "")


def short(value: Any, limit: int = 80) -> str:
    flat = " ".join(str(value or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


NO_WRAP = frozenset({"#", "id", "name", "skill", "kind", "outcome", "status", "action", "score",
                     "votes", "uses", "created", "created (UTC)", "when", "when (UTC)", "why",
                     "writable", "severity", "code",
                     "bytes", "sha256", "topic", "source"})


def table(title: str | None, columns: Sequence[str | tuple[str, dict[str, Any]]],
          rows: Iterable[Sequence[Any]]) -> Any:
    """A rich table whose cells are literal text (no markup from memory content)."""
    from rich.table import Table

    specs = [(column, {}) if isinstance(column, str) else column for column in columns]
    # Columns with a ratio share the width left over; ids and short fields never wrap (people
    # copy ids from here).
    result = Table(title=title, title_justify="left", show_lines=False, pad_edge=False,
                   expand=any("ratio" in options for _, options in specs))
    for name, options in specs:
        if name in NO_WRAP and "no_wrap" not in options:
            options = {**options, "no_wrap": True}
        result.add_column(name, **options)
    for row in rows:
        result.add_row(*[cell if hasattr(cell, "__rich_console__") or hasattr(cell, "__rich__")
                         else text(cell) for cell in row])
    return result


def key_values(pairs: Iterable[tuple[str, Any]]) -> Any:
    """A two-column table for one record's fields."""
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for key, value in pairs:
        if value is None or value == "" or value == []:
            continue
        grid.add_row(text(key, "bold"), value if hasattr(value, "__rich_console__") else text(value))
    return grid


def score(value: Any) -> str:
    try:
        return f"{float(value):.3f}"
    except (TypeError, ValueError):
        return ""


def usage_text(usage: Any) -> str:
    """A record's counters as `show` prints them, with the outsiders behind them: a curator
    could not see why a score moved when one outsider's fifty votes counted once."""
    line = f"{usage.uses} ({usage.successes} helped, {usage.failures} did not)"
    return line + outsiders(getattr(usage, "outside", None) or {})


def outsiders(nets: dict[str, int]) -> str:
    """`; outsiders (each counted once): alice +3, bob -1`, or "" when none voted."""
    if not nets:
        return ""
    shown = ", ".join(f"{who} {net:+d}" for who, net in sorted(nets.items())[:20])
    more = f" and {len(nets) - 20} more" if len(nets) > 20 else ""
    return f"; outsiders (each counted once): {shown}{more}"


def untrusted_votes(helpful: int, harmful: int) -> str:
    """`; untrusted (never counted): 2 helpful, 5 harmful`, or "" when none came. An untrusted
    client is told its vote is "recorded for review", yet `guidelines show` printed 0/0 beside
    `untrusted_harmful = 5` (hunt-teamvotes #3, session 38)."""
    if not helpful and not harmful:
        return ""
    return f"; untrusted (never counted): {helpful} helpful, {harmful} harmful"


def when(value: Any, *, zone: bool = True) -> str:
    """A stored time as shown: in UTC, saying so ("2026-12-02 05:01 UTC"); `zone=False` in a
    table whose column header says "(UTC)". Times were shown in UTC naming no zone, so a user in
    Auckland read yesterday's date for this morning's work (hunt-time #3, session 29)."""
    if isinstance(value, datetime):
        shown = stored_utc(value).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M")
        return f"{shown} UTC" if zone else shown
    return str(value or "")


def findings_table(findings: Sequence[Any], title: str | None = None, limit: int | None = None
                   ) -> Any:
    rows = []
    shown = list(findings) if limit is None else list(findings)[:limit]
    for f in shown:
        style = "red" if f.severity == "error" else "yellow"
        rows.append([f.path or "", text(f.severity, style), f.code, f.message])
    grid = table(title, ["path", "severity", "code", ("message", {"overflow": "fold"})], rows)
    if limit is not None and len(findings) > limit:
        grid.caption = f"… and {len(findings) - limit} more (see --json)"
    return grid


def read_text_arg(value: str | None, path: Path | None, what: str) -> str | None:
    """A text option that may instead come from a file (`-` is stdin), read up to the SKILL.md
    limit only: `-f /dev/zero`, a pipe or a huge file was read whole before the limit was
    checked, until MemoryError."""
    from skillbank.memories.skills.skill_file import MAX_SKILL_BYTES

    if value is not None and path is not None:
        raise invalid(f"give {what} either inline or as a file, not both")
    if path is None:
        return value
    source = "stdin" if str(path) == "-" else str(path)
    try:
        if source == "stdin":
            text = sys.stdin.read(MAX_SKILL_BYTES + 1)
        else:
            with path.open(encoding="utf-8") as handle:
                text = handle.read(MAX_SKILL_BYTES + 1)  # characters: at most 4 bytes each
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid(f"cannot read {path}: {exc}") from None
    if len(text) > MAX_SKILL_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_SKILL_BYTES:
        raise invalid(f"{what} from {source} is over {MAX_SKILL_BYTES} bytes (1 MiB), the most "
                      "a SKILL.md may hold")
    return text


def invalid(message: str) -> Exception:
    from skillbank.errors import InvalidInputError

    return InvalidInputError(message)
