"""`Skillbank.open`: open a memory root in this process, or share it with the process that owns it.

This sits above both the facade (`skillbank.bank`) and the sharing layer (`skillbank.sharing`):
it makes the facade, makes the facade's owner serve it to other processes, or makes this
process a client of that owner. So the facade never imports the sharing layer, and the sharing
layer (owner and client) only ever sees a finished facade — the arrows point one way.
`Skillbank.open` is the public API; it calls `open_bank` here.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from skillbank import root_format
from skillbank.settings import load_settings

if TYPE_CHECKING:
    from skillbank.bank import Skillbank
    from skillbank.distill import Distiller


# Set by `skillbank server` while it opens its bank: it records the deployment itself once the
# worker can serve, so that a failed start (a setting to fix, a typo'd --deployment) records
# none (see `_mark_team_root`).
_DEPLOYMENT_RECORDED_LATER: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "skillbank_deployment_recorded_later", default=False)


@contextlib.contextmanager
def deployment_recorded_later() -> Any:
    """Opens inside this block leave the root's `deployment` line to the caller."""
    token = _DEPLOYMENT_RECORDED_LATER.set(True)
    try:
        yield
    finally:
        _DEPLOYMENT_RECORDED_LATER.reset(token)


def open_bank(
    cls: "type[Skillbank]",
    root: str | os.PathLike | None = None,
    *,
    skill_roots: Sequence[str | os.PathLike] | None = None,
    chroma_url: str | None = None,
    namespace: str | None = None,
    model_dir: str | os.PathLike | None = None,
    embedding_function: Any = None,
    distiller: "Distiller | None" = None,
    client: Any = None,
    include_bundled: bool = False,
    sync: bool = True,
    lock_timeout: float = 10.0,
    write_lock_timeout: float = 60.0,
    share: bool = True,
    **overrides: Any,
) -> "Skillbank":
    """See `Skillbank.open`."""
    settings = load_settings(
        root,
        skill_roots=tuple(skill_roots) if skill_roots is not None else None,
        chroma_url=chroma_url,
        namespace=namespace,
        model_dir=model_dir,
        **overrides,
    )
    _refuse_embedded_team_root(settings)
    _refuse_another_deployment(settings)
    root_format.refuse_newer(settings.root)
    if share and client is None and not settings.chroma_url:
        from skillbank.sharing import open_shared, served

        def owner(lock: Any, chosen: Any, bundled: bool, embedding: Any = embedding_function,
                  wanted: str | None = None) -> "Skillbank":
            # Imported here: a client (a CLI command attached to an owner) never serves, and
            # the server's asyncio/orjson imports cost it ~0.1 s of its second (#27).
            from skillbank.sharing.owner import OwnerServer

            bank = cls(chosen, embedding_function=embedding, distiller=distiller,
                       include_bundled=bundled, write_lock_timeout=write_lock_timeout,
                       owner_lock=lock)
            mine = served.request(chosen, bundled, bank.embedding_function)["embedding"]
            if wanted and mine and mine != wanted:
                bank.close()  # never serve (nor record) an embedding the root's index refuses
                from skillbank.errors import EmbeddingMismatchError

                raise EmbeddingMismatchError(
                    f"{chosen.root} was served with the embedding {wanted!r} and its owner went "
                    f"away; this process embeds with {mine!r}, so it cannot take over: open "
                    f"the root with that embedding_function (or reindex it with this one)")
            # What this owner serves, so that a process taking over serves the same.
            served.record(chosen.root, served.request(chosen, bundled, bank.embedding_function))
            bank._server = OwnerServer(bank).start()  # closed (stopped) by bank.close()
            return bank

        def become_owner(lock: Any) -> "Skillbank":
            return owner(lock, settings, include_bundled)

        def take_over(lock: Any) -> "Skillbank":
            """The owner went away: serve what it served (the other clients rely on it), and
            what this process asked for too. A background owner started for a new skill folder
            could find the old one's endpoint still there, take over, and serve the old folders
            only: the command that asked for the new one was told it is not served."""
            recorded = served.read(settings.root)
            if not recorded:
                return become_owner(lock)
            roots = [Path(p) for p in recorded.get("skill_roots") or ()]
            known = {str(p) for p in roots}
            roots += [p for p in settings.skill_roots
                      if str(Path(p).expanduser().resolve()) not in known]
            chosen = dataclasses.replace(
                settings, skill_roots=tuple(roots),
                model_dir=Path(recorded["model_dir"]) if recorded.get("model_dir")
                else settings.model_dir)
            wanted = recorded.get("embedding")
            embedding = embedding_function
            if embedding is None and wanted:  # serve the recorded one where it is ours
                from skillbank.embeddings import HashEmbedding

                if wanted == HashEmbedding.name():
                    embedding = HashEmbedding()
            return owner(lock, chosen, bool(recorded.get("include_bundled")) or include_bundled,
                         embedding, wanted if isinstance(wanted, str) else None)

        bank = open_shared(settings, become_owner, take_over=take_over, sync=sync,
                           connect_timeout=lock_timeout, distiller=distiller,
                           asked=served.request(settings, include_bundled, embedding_function))
        if getattr(bank, "is_remote", False):
            root_format.stamp(settings.root)
            return bank  # type: ignore[return-value] - the owner keeps the index in sync
    else:
        bank = cls(settings, embedding_function=embedding_function, distiller=distiller,
                   client=client, include_bundled=include_bundled,
                   lock_timeout=lock_timeout, write_lock_timeout=write_lock_timeout)
    root_format.stamp(settings.root)
    if sync:
        try:
            bank.sync(asked=False)  # no one reads it: a later sync tells its skill changes
        except BaseException:
            bank.close()  # the caller never gets the bank: let go of the root now
            raise
    recorded = _mark_team_root(settings)
    if recorded is not None:
        bank.close()
        from skillbank.errors import InvalidInputError

        raise InvalidInputError(_another_deployment(settings, recorded))
    return bank


def _mark_team_root(settings: Any) -> str | None:
    """Record `team = true` in the root's skillbank.toml once a bank opened it in team mode (a
    `database_url`), as `skillbank server` does: an app opening its team bank in-process
    (LlamaIndex workers, no `skillbank server`) left the root unmarked, so the CLI in a shell
    without SKILLBANK_DATABASE_URL opened it embedded, said "No guidelines" and learnt rules no
    agent saw (hunt-lxteam #4, session 37). Never fatal: a read-only root or settings file that
    cannot be changed is logged and the bank still opens. A root that already holds embedded
    memory (`<root>/guidelines`, `<root>/experiences` files) is left unmarked, with a warning:
    marked, its own memory could no longer be opened, nor migrated (`skillbank migrate`
    refuses a team root). Returns the deployment the root records when it is not the one
    this open serves (another open recorded its own first), else None."""
    if not getattr(settings, "database_url", None):
        return None
    import logging

    from skillbank import remember
    from skillbank.errors import InvalidInputError

    root = Path(settings.root)
    log = logging.getLogger("skillbank")
    try:
        if not remember.is_team(root):
            if _holds_embedded_memory(root):
                log.warning("skillbank: %s holds embedded memory and is opened in team mode: "
                            "not recorded as a team root (an embedded open still reads that "
                            "memory); `skillbank migrate` brings it into the team "
                            "(docs/team.md)", root)
                return None
            remember.mark_team(root)  # under the settings file's lock: two opens both land
        # The deployment too, as `skillbank server` records it: with `team = true` alone the
        # CLI on this root (same SKILLBANK_DATABASE_URL) opened the root-id deployment, said
        # "No guidelines" and learnt rules the app never saw (hunt-teamvotes #2, session 38).
        if settings.deployment and not _DEPLOYMENT_RECORDED_LATER.get() and \
                remember.deployment(root) != settings.deployment:
            # Checked again under the settings file's lock: two first opens of a new root with
            # different deployments both passed `_refuse_another_deployment` and the one that
            # recorded second served a deployment the file does not name (review 2, session 38).
            before = remember.keep_setting(root, remember.DEPLOYMENT, settings.deployment)
            if before is not None and before != settings.deployment:
                return before
    except (OSError, InvalidInputError) as exc:
        log.warning("skillbank: could not record team = true (deployment %r) in %s: %s; a "
                    "shell without SKILLBANK_DATABASE_URL may open this root embedded, and the "
                    "CLI on it needs SKILLBANK_DEPLOYMENT", settings.deployment,
                    root / remember.CONFIG, exc)
    return None


def _refuse_another_deployment(settings: Any) -> None:
    """One root is one deployment, in-process as on a worker (`skillbank server` refuses to
    start with another `--deployment`): a team open given a deployment other than the one the
    root's skillbank.toml records (an argument or SKILLBANK_DEPLOYMENT override the file) would
    read and write where the root's other processes never look (hunt-teamvotes #2, session 38).
    Settings merge the file under the environment and arguments, so a differing value can only
    come from one of those."""
    if not getattr(settings, "database_url", None) or not settings.deployment:
        return
    from skillbank import remember
    from skillbank.errors import InvalidInputError

    recorded = remember.deployment(settings.root)
    if recorded is not None and recorded != settings.deployment:
        raise InvalidInputError(_another_deployment(settings, recorded))


def _another_deployment(settings: Any, recorded: str) -> str:
    from skillbank import remember

    return (f"{Path(settings.root) / remember.CONFIG} says deployment = {recorded!r}, and this "
            f"process was given {settings.deployment!r}; one root is one deployment (the CLI, "
            f"every worker and every in-process bank on it open the same one): open it with "
            f"deployment {recorded!r} (SKILLBANK_DEPLOYMENT={recorded}), or change that line "
            "by hand")


def _holds_embedded_memory(root: Path) -> bool:
    """Whether the root's folders hold guidelines or experiences written by an embedded bank."""
    return any(True for _ in root.glob("guidelines/**/*.md")) or \
        any(True for _ in root.glob("experiences/**/*.jsonl"))


def _refuse_embedded_team_root(settings: Any) -> None:
    """A root that team workers serve (`team = true` in its skillbank.toml) opens only in team
    mode. A shell without the team's variables (a new terminal, a cron job, the restore's
    `reindex`) opened it embedded: it wrote `<root>/guidelines`, `<root>/chroma` and
    `<root>/audit` beside the workers, exited 0, and the team never saw the write (team hunt,
    session 19). A worker given another deployment is refused the same way."""
    if getattr(settings, "database_url", None):
        return
    from skillbank import remember
    from skillbank.errors import InvalidInputError

    if remember.is_team(settings.root):
        raise InvalidInputError(
            f"{settings.root} is a team deployment's root (team = true in its "
            f"{remember.CONFIG}) and this process has no database_url: set "
            "SKILLBANK_DATABASE_URL and SKILLBANK_CHROMA_URL as the workers have them (or pass "
            "database_url/chroma_url); opening it embedded would write where no worker sees it")
