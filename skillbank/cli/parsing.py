"""Command-line conveniences click does not give by itself.

- Global options after the subcommand: `skillbank stats --json` means `skillbank --json stats`.
  People type the option where they think of it; the README promises every command takes
  `--json`. An option the subcommand defines itself (`serve --root`, `demo --root`) stays the
  subcommand's.
- Help without type placeholders: Typer's rich help prints `<bool>`, `<str>`, `<list[Path]>`;
  options get a metavar named after the value (`--task TASK`) and flags none.
"""

from __future__ import annotations

from typing import Any

# Typer 0.29 vendors its own click (`typer._click`), so parameters are told apart by
# click's public attributes, not by class.


def _is_option(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def _is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


#: Root options that only make sense before the subcommand (a subcommand's `--help` is its own).
ROOT_ONLY = frozenset({"--help", "-h", "--version", "--install-completion", "--show-completion"})


def _option_arity(params: list[Any]) -> dict[str, bool]:
    """Each option string of `params` -> whether it takes a value."""
    arity: dict[str, bool] = {}
    for param in params:
        if _is_option(param):
            takes_value = not param.is_flag and not param.count
            for opt in [*param.opts, *param.secondary_opts]:
                arity[opt] = takes_value
    return arity


def _split(token: str) -> tuple[str, bool]:
    """`--root=DIR` -> ("--root", True); `--root` -> ("--root", False)."""
    if token.startswith("--") and "=" in token:
        return token.split("=", 1)[0], True
    return token, False


def hoist_global_options(group: Any, ctx: Any, args: list[str]) -> list[str]:
    """Move the root group's options found after the subcommand to before it.

    Values of the subcommand's own options are skipped (so `--task --json` keeps its value),
    and nothing after `--` moves.
    """
    globals_ = {opt: value for opt, value in _option_arity(group.params).items()
                if opt not in ROOT_ONLY}
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":
        name, inline = _split(args[i])
        i += 2 if globals_.get(name) and not inline else 1
    command = group
    end = i
    while hasattr(command, "get_command") and end < len(args):
        sub = command.get_command(ctx, args[end])
        if sub is None:
            break
        command, end = sub, end + 1
    if command is group:
        return list(args)
    own = _option_arity(command.params)
    moved: list[str] = []
    rest: list[str] = []
    j = end
    while j < len(args):
        token = args[j]
        if token == "--":
            rest += args[j:]
            break
        name, inline = _split(token)
        if name in own:
            target = rest
        elif name in globals_:
            target = moved
        else:
            rest.append(token)
            j += 1
            continue
        target.append(token)
        takes_value = own[name] if name in own else globals_[name]
        if takes_value and not inline and j + 1 < len(args):
            target.append(args[j + 1])
            j += 1
        j += 1
    return args[:i] + moved + args[i:end] + rest


def tidy_metavars(command: Any) -> None:
    """Metavars for the help screens of `command` and everything under it (see module doc)."""
    for param in command.params:
        if _is_option(param):
            if param.metavar is not None:
                continue
            if param.is_flag or param.count:
                param.metavar = ""
            elif _choices(param):
                param.metavar = "|".join(_choices(param))
            else:
                longs = [o for o in param.opts if o.startswith("--")] or [param.name or "value"]
                param.metavar = max(longs, key=len).lstrip("-").strip("_").upper()
        elif _is_argument(param):
            # Typer shows arguments as `{name}` plus a `<str>` type column; NAME is enough.
            if param.metavar is None:
                param.metavar = (param.name or "value").strip("_").upper().replace("_", "-")
            param.display_type_rich = _no_type  # type: ignore[method-assign]
    if not getattr(command, "_skillbank_help_tidied", False):
        make_help = command.get_help_option

        def get_help_option(ctx: Any) -> Any:
            option = make_help(ctx)
            if option is not None and option.metavar is None:
                option.metavar = ""
            return option

        command.get_help_option = get_help_option
        command._skillbank_help_tidied = True
    commands = getattr(command, "commands", {})
    # A lazily built group (skillbank.cli.commands.LazyCommands) tidies each command it builds:
    # going through all of them here would import every command module.
    loaded = getattr(commands, "loaded", None)
    for sub in loaded() if loaded is not None else commands.values():
        tidy_metavars(sub)


def _choices(param: Any) -> list[str]:
    """The allowed values of a choice option ([] for anything else)."""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None and getattr(descriptor, "is_choice", False):
        return [str(getattr(c, "value", c)) for c in descriptor.choices or ()]
    choices = getattr(getattr(param, "type", None), "choices", None)  # plain click
    return [str(c) for c in choices or ()]


def _no_type(*_: Any, **__: Any) -> None:
    return None
