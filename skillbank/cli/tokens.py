"""`skillbank tokens`: the principals an HTTP server maps bearer tokens to.

    skillbank tokens add alice --namespace alice --role contributor [--reads team]
    skillbank tokens list
    skillbank tokens remove alice

The file (default `<root>/tokens.toml`, or --file) stores only SHA-256 hashes; `add` prints the
new token once, and nothing can show it again. Serve with
`skillbank serve --transport http --tokens FILE` (see `skillbank.mcp_server.identity`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from skillbank.cli.common import state, table

app = typer.Typer(help="Bearer tokens for `skillbank serve --transport http --tokens FILE`.",
                  no_args_is_help=True)

FileOption = Annotated[Optional[Path], typer.Option(
    "--file", metavar="FILE", help="Tokens file (default <root>/tokens.toml).")]


def _file(ctx: typer.Context, given: Path | None) -> Path:
    if given is not None:
        return given.expanduser()
    from skillbank.settings import load_settings

    st = state(ctx)
    return load_settings(Path(st.root) if st.root else None).root / "tokens.toml"


def _refuse_outside_scope(ctx: typer.Context, what: str, namespaces: list[str]) -> None:
    """`skillbank --namespace NS` (or SKILLBANK_NAMESPACE) acts as the admin of NS alone
    (`commands._act_for_namespace`), yet `tokens add` minted a token that writes another
    namespace, and `remove` / `add --replace` revoked another namespace's principal (last
    read of session 23). Tokens of other namespaces are managed without --namespace."""
    from skillbank.errors import InvalidInputError

    scope = state(ctx).namespace
    outside = sorted({n for n in namespaces if n != scope})
    if scope and outside:
        raise InvalidInputError(
            f"--namespace {scope} acts for that namespace alone; {what} "
            f"{', '.join(repr(n) for n in outside)} is managed without --namespace")


@app.command("add")
def add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The principal (a person or an agent).")],
    namespace: Annotated[str, typer.Option(
        "--namespace", metavar="NS", help="The namespace it writes (and reads).")],
    role: Annotated[str, typer.Option(
        "--role", metavar="ROLE", help="reader, contributor, reviewer or admin.")
    ] = "contributor",
    reads: Annotated[Optional[list[str]], typer.Option(
        "--reads", metavar="NS", help="A shared namespace it also reads (repeatable).")] = None,
    reviews: Annotated[Optional[list[str]], typer.Option(
        "--reviews", metavar="NS",
        help="A namespace it reviews (repeatable; default: the ones it reads).")] = None,
    untrusted: Annotated[bool, typer.Option(
        "--untrusted", help="Its writes wait for review and its votes are kept apart.")] = False,
    replace: Annotated[bool, typer.Option(
        "--replace", help="Issue a new token for an existing principal.")] = False,
    file: FileOption = None,
) -> None:
    """Add a principal and print its new token (shown once; only its hash is stored)."""
    from skillbank.mcp_server.identity import add_principal

    from skillbank.mcp_server.identity import read_for_change

    st = state(ctx)
    path = _file(ctx, file)
    _refuse_outside_scope(ctx, "a token for namespace",
                          [namespace, *(reads or []), *(reviews or [])])
    if replace and path.is_file() and name in (current := read_for_change(path)):
        _refuse_outside_scope(ctx, "the principal it replaces is of namespace",
                              [current[name].namespace])
    token = add_principal(path, name, namespace=namespace, role=role, reads=list(reads or []),
                          reviews=list(reviews or []), trusted=not untrusted, replace=replace)
    data = {"name": name, "token": token, "file": str(path), "namespace": namespace,
            "role": role, "reads": list(reads or []), "reviews": list(reviews or []),
            "trusted": not untrusted}

    def human() -> None:
        import shlex

        # the root too when one was named: the hint served ~/.skillbank with this root's
        # tokens when copied as printed (hunt-docs #3, session 38)
        root = f"--root {shlex.quote(str(st.root))} " if st.root else ""
        st.out.plain(token)
        st.out.note(f"Token for {name} ({role} of {namespace!r}) — shown only now; {path} "
                    f"keeps its sha256. Serve with: skillbank serve {root}--transport http "
                    f"--tokens {shlex.quote(str(path))}")

    st.out.emit(data, human)


@app.command("list")
def list_(ctx: typer.Context, file: FileOption = None) -> None:
    """The principals in the tokens file (never the tokens)."""
    from skillbank.mcp_server.identity import TokensFile, read_for_change

    st = state(ctx)
    path = _file(ctx, file)
    if not path.is_file():
        TokensFile(path)  # refused, saying how to create it
    principals = sorted((p for p in read_for_change(path).values()
                         if not st.namespace or p.namespace == st.namespace),
                        key=lambda p: p.name)  # --namespace NS: NS's principals alone
    rows = [{"name": p.name, "namespace": p.namespace, "reads": list(p.reads), "role": p.role,
             "reviews": list(p.reviews), "trusted": p.trusted, "sha256": p.sha256[:12] + "…",
             **({"ignored_reviews": list(p.ignored_reviews)} if p.ignored_reviews else {})}
            for p in principals]

    def human() -> None:
        st.out.print(table(f"Principals in {path}", ["name", "namespace", "reads",
                                                             "role", "reviews", "trusted"],
                           [[r["name"], r["namespace"], ", ".join(r["reads"]), r["role"],
                             ", ".join(r["reviews"]) or _ignored(r),
                             "yes" if r["trusted"] else "no"]
                            for r in rows]))

    st.out.emit(rows, human)


def _ignored(row: dict) -> str:
    """`reviews` the file gives a role below reviewer: they grant nothing (older `tokens add`
    wrote them); shown so the operator sees them, dropped by the next add or remove."""
    ignored = row.get("ignored_reviews")
    return f"(ignored: {', '.join(ignored)}; a {row['role']} reviews nothing)" if ignored else ""


@app.command("remove")
def remove(ctx: typer.Context,
           name: Annotated[str, typer.Argument(help="The principal whose token stops working.")],
           file: FileOption = None) -> None:
    """Remove a principal: its token stops working (a running server re-reads the file)."""
    from skillbank.mcp_server.identity import read_for_change, remove_principal

    st = state(ctx)
    path = _file(ctx, file)
    # An entry refused for its reviews can still be removed (how the operator fixes it).
    if path.is_file() and name in (current := read_for_change(path, problems={})):
        _refuse_outside_scope(ctx, "the principal is of namespace", [current[name].namespace])
    remove_principal(path, name)
    st.out.emit({"removed": name, "file": str(path)},
                lambda: st.out.note(f"Removed {name} from {path}."))
