"""A team deployment's Chroma database belongs to one PostgreSQL database (hunt-teamport #1,
session 35).

In team mode the records are in PostgreSQL and the deployment's Chroma database
(`skillbank-<deployment>`, `index_ownership.place`) indexes them: every open syncs the index to
its database's records, and `reindex` deletes the deployment's entries first. A second
PostgreSQL database opened under the same deployment name on the same Chroma server (a restore
drill into a fresh database, staging pointed at production's Chroma) therefore deleted every
entry of the live deployment that its own records lacked. The live workers went on answering
`search_mode: "hybrid"` with no hits and no note, their index checkpoint saying they were up to
date, so nothing repaired it. `index_ownership.claim_deployment` refuses a second root folder,
but team mode never called it (workers on roots of their own share one deployment through
PostgreSQL).

So the first PostgreSQL database to open a deployment on a Chroma is recorded there (the
collection `skillbank-deployment-databases` of the deployment's Chroma database), and another
database is refused at open, before anything is synced. A database is its cluster's system
identifier and its oid: every worker of it, on any machine, after any restart, is admitted, and
so is the same database after `pg_restore --clean` into it, a rename, or a failover to a
streaming replica. Any other database is refused, even one restored after the recorded one
was dropped (`dropdb`, `createdb`, `pg_restore`: two databases opened at once both took it
over by themselves; review 2, session 35) or one in another cluster (a copy cannot be told
from a move): moving a deployment (a restore into a new database, a replacement machine, a
major upgrade) is said once by hand, `deployment_takeover`
(`SKILLBANK_DEPLOYMENT_TAKEOVER=1 skillbank reindex`). A physical copy of the cluster
(`pg_basebackup`, a point-in-time restore, a VM snapshot) has the same identifier and oid: it
is the same database to this check, so a drill from one needs a deployment name or a Chroma
server of its own (docs/team.md, step 8). A deployment opened before this check has no
record: the first database to open it is recorded.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("skillbank.index")

#: The collection, in a deployment's Chroma database, that names the PostgreSQL database each
#: team deployment belongs to: one entry per deployment.
DATABASE_CLAIMS = "skillbank-deployment-databases"


def claim_for_database(client: Any, deployment: str, store: Any, root: Any, where: str, *,
                       takeover: bool = False) -> None:
    """Record on `client` (the deployment's placed Chroma) that `deployment` is the database
    of `store`'s, or refuse it if another PostgreSQL database has it, before anything is synced.
    `takeover`: this database claims the deployment whichever database holds it."""
    mine = store.identity()
    record = {key: value for key, value in mine.items() if value is not None}
    claims = client.get_or_create_collection(DATABASE_CLAIMS, embedding_function=None)
    for _ in range(3):  # write, then read back: a database claiming it at the same time may win
        got = claims.get(ids=[deployment], include=["metadatas"])
        claim = got["metadatas"][0] if got["ids"] else None
        if _claimed_by_this_database(claim, mine, store, deployment, root, where, takeover):
            return
        if claim is None:
            _refuse_if_a_roots(client, deployment, mine, root, where, takeover)
            claims.add(ids=[deployment], embeddings=[[0.0]], metadatas=[record])
        else:
            claims.update(ids=[deployment], metadatas=[record])


def _refuse_if_a_roots(client: Any, deployment: str, mine: dict[str, Any], root: Any,
                       where: str, takeover: bool) -> None:
    """Refuse the first team open of a deployment a root folder without a database holds
    (`index_ownership.claim_deployment`): its sync to this database's records deleted the
    root's entries, and the root was then refused its own deployment (review 2, session 35)."""
    from skillbank.index_ownership import CLAIMS

    got = client.get_or_create_collection(CLAIMS, embedding_function=None).get(
        ids=[deployment], include=["metadatas"])
    held = got["metadatas"][0] if got["ids"] else None
    if not isinstance(held, dict):
        return
    if takeover:
        log.warning("skillbank: deployment %r taken over from root %s by the %s "
                    "(deployment_takeover)", deployment, held.get("path") or "?", _named(mine))
        return
    from skillbank.errors import InvalidInputError

    raise InvalidInputError(
        f"deployment {deployment!r} on {where} is the index of root {held.get('path') or '?'} "
        f"(a root without a database), and this is the {_named(mine)}: opening it would sync "
        "that index to this database's records and delete the root's entries. Give this team "
        "a deployment of its own (--deployment / SKILLBANK_DEPLOYMENT); to bring that root's "
        "memory into the team, run `skillbank migrate` from it, then "
        f"SKILLBANK_DEPLOYMENT_TAKEOVER=1 skillbank --root {root} reindex once (docs/team.md)")


def _named(identity: dict[str, Any]) -> str:
    return (f"PostgreSQL database {identity.get('name')!r} at {identity.get('server')} "
            f"(cluster {identity.get('system') or 'unknown'}, oid {identity.get('oid')})")


def _claimed_by_this_database(claim: Any, mine: dict[str, Any], store: Any, deployment: str,
                              root: Any, where: str, takeover: bool) -> bool:
    """True: `claim` is this database's; False: no claim, or one this database takes over; or
    the clear refusal when another PostgreSQL database holds `deployment`."""
    if not isinstance(claim, dict) or claim.get("oid") is None:
        return False
    theirs = claim.get("system")
    # Without a system identifier (a role that may not read it) a database is its oid and
    # name. Oids of fresh clusters repeat (16386 for the first `createdb` on each), so two
    # clusters' `appdb` made alike are one database to this check (review 2, session 35);
    # the server address did not help: the same database reached over a unix socket or
    # another address was refused (review 6). docs/team.md says so.
    same_cluster = theirs is not None and theirs == mine["system"]
    if claim.get("oid") == mine["oid"] and (same_cluster or (
            None in (theirs, mine["system"]) and claim.get("name") == mine["name"])):
        return True
    holder = _named(claim)
    # A recorded database dropped from this cluster is not taken over by itself: two
    # databases opened at once both took it, and so did any database opened before the
    # restore (review 2, session 35). Its restore is a move, said by hand (takeover).
    if takeover:
        log.warning("skillbank: deployment %r taken over from the %s by the %s "
                    "(deployment_takeover): its index entries are replaced by this database's",
                    deployment, holder, _named(mine))
        return False
    from skillbank.errors import InvalidInputError

    raise InvalidInputError(
        f"deployment {deployment!r} belongs to the {holder}: its index on {where} mirrors "
        f"that database's records, and this is the {_named(mine)}, so opening it would sync "
        "that index to this database's records and delete the other's entries (its workers "
        "would find nothing). A restore drill, staging or a second team: give this database a "
        "deployment of its own (--deployment / SKILLBANK_DEPLOYMENT) or another Chroma server "
        "(SKILLBANK_CHROMA_URL). If this database replaces that one (a restore on a new "
        "machine, a major upgrade): stop that database's workers, then run "
        f"SKILLBANK_DEPLOYMENT_TAKEOVER=1 skillbank --root {root} reindex once with this "
        "SKILLBANK_DATABASE_URL; the deployment is this database's from then on "
        "(docs/team.md, step 8)")


def refuse_if_team_deployment(client: Any, deployment: str, root: Any, where: str, *,
                              takeover: bool = False) -> None:
    """Refuse a root without a PostgreSQL database (`database_url`) that names a team's
    deployment on the same Chroma, before anything is synced: its open would sync the team's
    index to this root's files and delete every entry the team's records back (the hole the
    root claim left: it is checked against other roots only; session 35). `takeover`: the
    root opens it all the same (its entries are synced to this root's files), as
    `claim_deployment` lets a root take one over from another."""
    claims = client.get_or_create_collection(DATABASE_CLAIMS, embedding_function=None)
    got = claims.get(ids=[deployment], include=["metadatas"])
    claim = got["metadatas"][0] if got["ids"] else None
    if not isinstance(claim, dict) or claim.get("oid") is None:
        return
    if takeover:
        log.warning("skillbank: deployment %r taken over from the team deployment of the %s by "
                    "root %s (deployment_takeover): its workers' next open syncs it back",
                    deployment, _named(claim), root)
        return
    from skillbank.errors import InvalidInputError

    raise InvalidInputError(
        f"deployment {deployment!r} on {where} is a team deployment of the {_named(claim)}, "
        f"and root {root} has no database_url: opening it would sync that index to this "
        "root's files and delete the team's entries (its workers would find nothing). Give "
        "this root a deployment of its own (--deployment / SKILLBANK_DEPLOYMENT), or join the "
        "team with its database_url (SKILLBANK_DATABASE_URL; docs/team.md)")
