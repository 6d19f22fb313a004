"""The `skillbank` command line's typer app: the root options and the whole-bank commands.

`skillbank.cli` (the package) is the light front: its `main()` starts `skillbank serve` without
this module (`skillbank.cli.fast`) and loads it for everything else; `from skillbank.cli import
app` still works (the package forwards the names). The command groups (`skills`, `guidelines`,
`experiences`, `config`, `tokens`) and the single commands that live in their own modules (`ui`,
`audit`, `server`, `migrate`) are imported when a command line names them (`LazyCommands`), not
at start: a command pays only for its own module (#27: an attached `stats` spent ~0.3 s
importing every command module).

The commands, exit codes and environment are listed in `skillbank.cli`'s docstring.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Iterator, MutableMapping, Optional

import typer
from typer.core import TyperGroup

from skillbank.cli.common import State, bundled_words, debug_logging, key_values, state, text
from skillbank.cli.parsing import hoist_global_options, tidy_metavars
from skillbank.cli.hints import cli_terms
from skillbank.cli.reporting import INTERRUPTED, _error_details, echo_err, report_error
from skillbank.cli.serve import SERVE_SETTINGS, serve, serve_argv


class SkillbankGroup(TyperGroup):
    """Turns every error a command raises into a clear line on stderr and its exit code, takes
    global options after the subcommand too, keeps type placeholders out of the help, and
    imports a command's module only when it is asked for (`LazyCommands`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names only: TyperGroup's would import every module

    def make_context(self, info_name: Any, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        tidy_metavars(self)  # here, not in __init__: Typer adds the completion options later
        if parent is None and any(a in ("--help", "-h") for a in args):
            self.epilog = _remembered_epilog(args)
        return super().make_context(info_name, args, parent=parent, **extra)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(self, ctx, args))

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        """With --json, a usage error (an unknown command, a bad option value, a missing file)
        is one JSON line on stderr like every other error; click printed a usage box."""
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "--json" not in argv[:argv.index("--")
                                                        if "--" in argv else None]:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            done = super().main(args, prog_name, complete_var, False, **extra)
        except (typer.Abort, KeyboardInterrupt):
            echo_err(json.dumps({"error": "interrupted", "type": "Abort",
                                 "exit_code": INTERRUPTED}))
            sys.exit(INTERRUPTED)
        except typer.TyperException as exc:  # click's usage errors (typer vendors click)
            if not hasattr(exc, "format_message"):
                raise
            code = int(getattr(exc, "exit_code", 2))
            message = exc.format_message() or (  # a group named without its command
                "a command is missing: `skillbank " + " ".join(a for a in argv if a != "--json")
                + " --help` lists them")
            echo_err(json.dumps({"error": cli_terms(message),
                                 "type": "UsageError", "exit_code": code}, ensure_ascii=False))
            sys.exit(code)
        # click returns an exit's code when not standalone; a command's own return is no code
        sys.exit(done if isinstance(done, int) and not isinstance(done, bool) else 0)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(INTERRUPTED) from None
        except BrokenPipeError:
            # `skillbank … | head`: the reader left; say nothing more, and keep Python's exit
            # flush from failing on the closed pipe.
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
                pass
            raise typer.Exit(1) from None
        except Exception as exc:
            st = ctx.obj if isinstance(ctx.obj, State) else State()
            if st.debug:
                raise
            raise typer.Exit(report_error(exc, st.json, st.root)) from None


#: Commands whose module is imported when a command line names one: name -> (module, attribute,
#: the module's context-settings attribute for a single command, whether it is a group).
LAZY: dict[str, tuple[str, str, str | None, bool]] = {
    "ui": ("skillbank.cli.ui", "ui", None, False),
    "audit": ("skillbank.cli.audit", "audit", None, False),
    # Team mode's worker (issue 24): skillbank/team/cli.py, a thin door to skillbank.team.server.
    "server": ("skillbank.team.cli", "server", "SETTINGS", False),
    "migrate": ("skillbank.cli.migrate", "migrate", None, False),  # team mode (issue 24)
    "skills": ("skillbank.cli.skills", "app", None, True),
    "guidelines": ("skillbank.cli.memory", "guidelines_app", None, True),
    "experiences": ("skillbank.cli.memory", "experiences_app", None, True),
    "config": ("skillbank.cli.config", "app", None, True),
    "tokens": ("skillbank.cli.tokens", "app", None, True),
}
#: The order `skillbank --help` lists them in (typer's: single commands first, then groups).
ORDER = ("ui", "audit", "serve", "server", "migrate", "reindex", "forget", "stats", "context",
         "demo", "skills", "guidelines", "experiences", "config", "tokens")


def _load(name: str) -> Any:
    """The click command for LAZY[name], built as `app.add_typer`/`app.command` would have."""
    import importlib

    import typer.main

    module_name, attribute, settings, group = LAZY[name]
    module = importlib.import_module(module_name)
    target = getattr(module, attribute)
    holder = typer.Typer()
    options: dict[str, Any] = {"pretty_exceptions_short": app.pretty_exceptions_short,
                               "rich_markup_mode": app.rich_markup_mode}
    if group:
        holder.add_typer(target, name=name)
        command = typer.main.get_group_from_info(holder.registered_groups[0],
                                                 suggest_commands=app.suggest_commands, **options)
    else:
        holder.command(name=name, context_settings=getattr(module, settings) if settings
                       else None)(target)
        command = typer.main.get_command_from_info(holder.registered_commands[0], **options)
    tidy_metavars(command)
    return command


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands, the LAZY ones built on first access. Iterating gives the names
    without importing anything; `loaded()` is what has been built so far."""

    def __init__(self, eager: MutableMapping[str, Any]) -> None:
        self._built: dict[str, Any] = dict(eager)
        self._names = [n for n in ORDER if n in eager or n in LAZY]
        self._names += [n for n in eager if n not in self._names]

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in self._names or name not in LAZY:
                raise KeyError(name)
            self._built[name] = _load(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command
        if name not in self._names:
            self._names.append(name)

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def loaded(self) -> list[Any]:
        return [self._built[n] for n in self._names if n in self._built]



def _remembered_epilog(args: list[str]) -> str | None:
    """What the root of this command line remembers, for `skillbank --help` (#27): its skill
    folders, read from `<root>/skillbank.toml` without opening the bank."""
    from skillbank import remember

    root_arg = None
    for i, arg in enumerate(args):
        if arg == "--root" and i + 1 < len(args):
            root_arg = Path(args[i + 1])
        elif arg.startswith("--root="):
            root_arg = Path(arg.split("=", 1)[1])
    root = remember.resolve_root(root_arg)
    try:
        folders = remember.recorded(root) or []
    except Exception:  # noqa: BLE001 - help must print whatever the file holds
        return None
    kept = ", ".join(folders) if folders else "none yet"
    try:
        bundled = bundled_words(remember.bundled(root) is not False, remember.bundled(root))
    except Exception:  # noqa: BLE001
        bundled = "served"
    return (f"Memory root {root}: skill folders remembered in {root / remember.CONFIG}: {kept}; "
            f"bundled skills: {bundled} (`skillbank config` changes them).")



app = typer.Typer(
    cls=SkillbankGroup,
    help="Durable memory for AI agents: skills, experiences and guidelines, backed by Chroma.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command(context_settings=SERVE_SETTINGS)(serve)


def _version(value: bool) -> None:
    if value:
        from skillbank import __version__

        typer.echo(f"skillbank {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    root_dir: Annotated[Optional[Path], typer.Option(
        "--root", envvar="SKILLBANK_ROOT", metavar="DIR",
        help="Memory root (default ~/.skillbank).")] = None,
    skills_dir: Annotated[Optional[list[Path]], typer.Option(
        "--skills-dir", metavar="DIR", exists=True, file_okay=False,
        help="Extra read-only skill root (repeatable; earlier roots win). Remembered in "
             "<root>/skillbank.toml: later commands keep indexing it without the flag "
             "(`skillbank config` shows and changes the folders; --no-remember: this command "
             "only).")] = None,
    chroma_url: Annotated[Optional[str], typer.Option(
        envvar="SKILLBANK_CHROMA_URL", metavar="URL",
        help="Chroma server URL (default: embedded index).")] = None,
    namespace: Annotated[Optional[str], typer.Option(
        envvar="SKILLBANK_NAMESPACE", metavar="NAME",
        help="Act for this namespace alone, as its admin: experiences and guidelines are "
             "read from and written to it; ids in other namespaces are not found.")] = None,
    model_dir: Annotated[Optional[Path], typer.Option(
        envvar="SKILLBANK_MODEL_DIR", metavar="DIR",
        help="Folder with onnx/model.onnx (all-MiniLM-L6-v2).")] = None,
    json_mode: Annotated[bool, typer.Option(
        "--json", help="Machine output: one JSON document on stdout.")] = False,
    no_bundled: Annotated[bool, typer.Option(
        "--no-bundled", help="Do not serve the skills that ship with skillbank. Remembered in "
                             "<root>/skillbank.toml (`skillbank config bundled on` undoes it).")
    ] = False,
    no_remember: Annotated[bool, typer.Option(
        "--no-remember", help="Use this command's --skills-dir and --no-bundled for this "
                              "command only: nothing is written to <root>/skillbank.toml (the "
                              "next command without them leaves those skills out again).")
    ] = False,
    debug: Annotated[bool, typer.Option(
        "--debug", help="Show tracebacks on errors and skillbank's debug log.")] = False,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version.")] = False,
) -> None:
    """Durable memory for AI agents: skills, experiences and guidelines, backed by Chroma."""
    st = State(root=root_dir, skills_dirs=list(skills_dir or []), chroma_url=chroma_url,
               namespace=namespace, model_dir=model_dir, json=json_mode,
               include_bundled=not no_bundled, remember=not no_remember, debug=debug)
    if debug:
        debug_logging()
    source = ctx.get_parameter_source("root_dir")
    st.root_explicit = root_dir is not None and getattr(source, "name", "") == "COMMANDLINE"
    ctx.obj = st
    ctx.call_on_close(st.close)
    _act_for_namespace(ctx, st)


#: Commands that do not run as the CLI's `--namespace` scope: `serve` and `ui` run each session
#: in the scope of the same `--namespace` themselves (`skillbank.local_scope`), `server` serves
#: per-request identities, `migrate` and `demo` work on a root of their own.
OWN_SCOPE = frozenset({"serve", "ui", "server", "migrate", "demo"})


def _act_for_namespace(ctx: typer.Context, st: State) -> None:
    """`--namespace NS`: the command runs as the local user, admin of NS alone, as `serve
    --namespace NS` and the browser run their sessions. It was only the bank's default
    namespace, so `skillbank --namespace bob forget <alice's id>` erased alice's experience,
    `guidelines retire` retired her rule and `experiences show` showed it, where the README
    says an id outside the scope is "not found" (hunt-docs #5, session 23). Without it the
    local user's default scope applies, as before. An invalid namespace sets no scope: a
    command that opens the bank refuses it there, as before; one that opens none is unaffected."""
    if not st.namespace or ctx.invoked_subcommand in OWN_SCOPE:
        return
    from skillbank import scope as scopes
    from skillbank.errors import InvalidInputError
    from skillbank.local_scope import local_session_scope

    try:
        scope = local_session_scope(st.namespace, "cli")
    except InvalidInputError:
        return
    ctx.with_resource(scopes.using(scope))  # until the command ends (before the bank closes)


# ---------------------------------------------------------------------------------- whole bank


def _render_memory_sync(st: State, name: str, result: Any) -> None:
    if hasattr(result, "added") and hasattr(result, "findings"):
        from skillbank.cli.skills import render_sync_report

        if name == "skills":
            render_sync_report(st.out, result, title=name)
        else:
            render_memory_report(st.out, result, title=name)
        return
    if hasattr(result, "model_dump"):
        result = result.model_dump(mode="json")
    if isinstance(result, dict):
        summary = ", ".join(f"{k} {len(v) if isinstance(v, list) else v}" for k, v in result.items()
                            if not isinstance(v, dict))
        st.out.print(text(f"{name}: {summary}", "bold"))
    else:
        st.out.print(text(f"{name}: {result}", "bold"))


#: Findings a `reindex` shows per memory; `--json` has them all.
SHOWN_FINDINGS = 10


def render_memory_report(out: Any, report: Any, title: str) -> None:
    """A guideline or experience sync report: the counts, then each finding under its file
    (what was ignored in it, or why it was not read). The skills' renderer read every
    guideline warning as "N skills break the Agent Skills spec …: python, python", naming
    topic folders and never the file nor the warning (hunt-curator #3, session 25)."""
    from skillbank.cli.skills import print_changes, print_findings

    print_changes(out, report, title)
    left = print_findings(out, report.findings, limit=SHOWN_FINDINGS)
    if left:
        out.print(text(f"  … and {left} more (all of them: `skillbank --json reindex`)", "dim"))


@app.command()
def reindex(
    ctx: typer.Context,
    fresh: Annotated[bool, typer.Option(
        "--fresh", help="Delete the embedded index folder (chroma/) first and build it anew: "
                        "the repair for a damaged index, which the plain rebuild cannot open.")
    ] = False,
) -> None:
    """Drop every index and rebuild it from the files (the files are the truth)."""
    st = state(ctx)
    if fresh:
        _drop_embedded_index(st)
    result = st.bank(sync=None).reindex()

    def human() -> None:
        for name, report in result.items():
            _render_memory_sync(st, name, report)

    st.out.emit(result, human)


def _drop_embedded_index(st: State) -> None:
    """`reindex --fresh`: end this root's background owner (it has the index open), then
    delete the embedded index; refused on a Chroma server (reindex rebuilds it there)."""
    from skillbank import remember
    from skillbank.cli import owner
    from skillbank.index_repair import drop_index

    if st.chroma_url:
        raise typer.BadParameter("--fresh deletes the embedded index folder; with a Chroma "
                                 "server, plain `reindex` rebuilds its collections")
    root = remember.resolve_root(st.root)
    owner.retire(root)  # if it does not end, drop_index refuses: the root is still served
    if drop_index(root):
        st.out.note(f"deleted the index under {root / 'chroma'}; building it from the files")


def _confirmed(question: str) -> bool:
    """A yes/no asked on stderr and read from stdin: stdout carries only the command's output
    (with `--json` one JSON document; `typer.confirm` wrote the prompt, or with `err=True` its
    last space, to stdout). A stdin with no answer (a script's /dev/null) is invalid input that
    names `--yes`: the exit code was 130 ("interrupted") and nothing said why (hunt-docs #1,
    session 38)."""
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    answer = sys.stdin.readline() if sys.stdin is not None else ""
    if not answer:
        sys.stderr.write("\n")
        if sys.stdin is not None and sys.stdin.isatty():
            return False  # Ctrl-D at a terminal: no, as [y/N] says (review 1, session 38)
        from skillbank.errors import InvalidInputError

        raise InvalidInputError("no answer on stdin (not a terminal) to confirm it: pass --yes "
                                "to run it without asking")
    return answer.strip().lower() in ("y", "yes")


@app.command()
def forget(
    ctx: typer.Context,
    item_id: Annotated[str, typer.Argument(
        metavar="ID", help="What memory_context, a search or a list shows: gl-…, exp-…, lsn-… "
        "or skill:<name>.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask first (scripts).")] = False,
) -> None:
    """Delete a remembered item for good (a rule, an experience with its lessons, a skill of
    the bank's own): its text leaves the files and the index; only its id stays in the audit
    log. Nothing is kept to restore it."""
    st = state(ctx)
    if not yes and not _confirmed(f"Forget {item_id} for good? This cannot be undone"):
        raise typer.Exit(1)
    result = st.bank(sync=None).forget(item_id)

    def human() -> None:
        st.out.print(text(f"forgot {result.get('id', item_id)} ({result.get('kind', '')}) for "
                          "good", "green"))
        if result.get("kind") == "guideline" and result.get("detail"):
            st.out.print(result["detail"])  # the rules it had replaced (hunt-ui #6, s. 27)

    st.out.emit(result, human)


@app.command()
def stats(ctx: typer.Context) -> None:
    """Counts: skills, guidelines by status, experiences; where memory lives."""
    st = state(ctx)
    bank = st.bank(sync="all")
    data = bank.stats()
    from skillbank import remember

    config_file = remember.resolve_root(st.root) / remember.CONFIG
    data["remembered_skill_roots"] = remember.recorded(config_file.parent) or []
    data["bundled_skills"] = bundled_words(st.bundled(), remember.bundled(config_file.parent))
    if getattr(bank, "is_remote", False):  # what the process serving the root serves
        from skillbank.sharing import served as serving

        owner = serving.read(config_file.parent) or {}
        if "include_bundled" in owner:
            data["bundled_skills"] = ("served" if owner["include_bundled"] else "not served") \
                + " by the process that serves this root"
    data["config"] = str(config_file)

    def human() -> None:
        pairs = []
        for key, value in data.items():
            if isinstance(value, dict):
                value = ", ".join(f"{k} {v}" for k, v in value.items()) or "0"
            elif isinstance(value, list):
                value = "\n".join(str(v) for v in value)
            pairs.append((key.replace("_", " "), value))
        st.out.print(key_values(pairs))

    st.out.emit(data, human)


@app.command()
def context(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="The task a model is about to do.")],
    budget: Annotated[int, typer.Option(min=0, help="Token budget (tiktoken cl100k).")] = 1500,
    topic: Annotated[Optional[str], typer.Option(
        help="The task's topic (e.g. python): only that topic's guidelines.")] = None,
) -> None:
    """The memory block a model should see for a task, within a token budget."""
    st = state(ctx)
    memory = st.bank(sync="all").context_for(task, budget_tokens=budget, topic=topic)

    def human() -> None:
        if not memory.text and (memory.omitted or memory.missing_tools or memory.reason):
            from skillbank.tool_text import empty_memory_note

            st.out.note(empty_memory_note(budget, memory.omitted, memory.missing_tools,
                                          "raise --budget", memory.reason))
            return
        if not memory.text:
            st.out.note("No memory is relevant to this task.")
            return
        st.out.plain(memory.text)
        st.out.note(f"{memory.tokens}/{budget} tokens · ids: {', '.join(memory.ids)}"
                    + (f" · {memory.omitted} omitted for budget" if memory.omitted else ""),
                    style="dim")

    st.out.emit(memory.to_dict(), human)


# ---------------------------------------------------------------------------------------- demo


@app.command()
def demo(
    ctx: typer.Context,
    root_dir: Annotated[Optional[Path], typer.Option(
        "--root", metavar="DIR",
        help="Use this memory root (default: a fresh temporary one).")] = None,
    skills_dir: Annotated[Optional[list[Path]], typer.Option(
        "--skills-dir", metavar="DIR", exists=True, file_okay=False,
        help="More skill roots to include (repeatable).")] = None,
) -> None:
    """A tour on the embedded default: routing, disclosure, then learning from feedback."""
    from rich.console import Console

    from skillbank.cli.common import embedding_from_env
    from skillbank.demo import run_demo

    st = state(ctx)
    # With --json the tour is not printed; its summary is the one JSON document.
    console = Console(file=io.StringIO()) if st.json else st.out.console
    # SKILLBANK_ROOT must not pull the demo into a real memory: only an explicit --root does.
    summary = run_demo(root=root_dir or (st.root if st.root_explicit else None),
                       skill_roots=list(skills_dir or []) + st.skills_dirs,
                       model_dir=st.model_dir, include_bundled=st.include_bundled,
                       embedding_function=embedding_from_env(), console=console)
    if st.json:
        st.out.write_json(summary)
