"""Versioned schema migrations: each runs once, in order, in its own transaction.

`migrate()` takes a transaction-scoped advisory lock first, so two workers starting together
do not race (the second waits, then finds nothing to do), and records each applied version in
`skillbank_schema`. Running it again is a no-op. A database migrated by a newer skillbank (a
version this one does not know) is refused with a clear error instead of being used half-known.
"""

from __future__ import annotations

from skillbank.store.base import StoreUnavailableError
from skillbank.store.postgres.db import Database, lock_key, masked

#: (version, name, SQL). Append only: never edit a migration that has shipped.
MIGRATIONS: list[tuple[int, str, str]] = [
    (1, "change feed, usage counters, experience events, audit", """
        CREATE TABLE sb_changes (
            seq bigserial PRIMARY KEY,
            deployment text NOT NULL,
            kind text NOT NULL,
            token text NOT NULL,
            at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX sb_changes_by_kind ON sb_changes (deployment, kind, seq);
        CREATE TABLE sb_usage (
            deployment text NOT NULL,
            memory text NOT NULL,
            item_id text NOT NULL,
            trusted boolean NOT NULL,
            uses bigint NOT NULL DEFAULT 0,
            successes bigint NOT NULL DEFAULT 0,
            failures bigint NOT NULL DEFAULT 0,
            last_used timestamptz,
            PRIMARY KEY (deployment, memory, item_id, trusted)
        );
        CREATE TABLE sb_experience_events (
            seq bigserial PRIMARY KEY,
            deployment text NOT NULL,
            event jsonb NOT NULL,
            at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX sb_experience_events_by_deployment ON sb_experience_events (deployment, seq);
        CREATE TABLE sb_audit (
            seq bigserial PRIMARY KEY,
            deployment text NOT NULL,
            at timestamptz NOT NULL,
            principal text NOT NULL,
            role text NOT NULL,
            face text NOT NULL,
            namespace text NOT NULL,
            action text NOT NULL,
            kind text NOT NULL,
            item_id text NOT NULL
        );
        CREATE INDEX sb_audit_by_deployment ON sb_audit (deployment, seq);
        CREATE INDEX sb_audit_by_item ON sb_audit (deployment, item_id);
    """),
    (2, "experience records and index checkpoints, skill drafts, forgotten ids", """
        ALTER TABLE sb_experience_events ADD COLUMN IF NOT EXISTS record_id text;
        ALTER TABLE sb_experience_events ADD COLUMN IF NOT EXISTS digest text;
        CREATE INDEX IF NOT EXISTS sb_experience_events_by_record
            ON sb_experience_events (deployment, record_id);
        CREATE TABLE IF NOT EXISTS sb_experiences (
            deployment text NOT NULL,
            id text NOT NULL,
            record jsonb NOT NULL,
            loc text NOT NULL,
            digest text NOT NULL,
            status text NOT NULL DEFAULT 'active',
            duplicates integer NOT NULL DEFAULT 0,
            search tsvector NOT NULL,
            PRIMARY KEY (deployment, id)
        );
        CREATE INDEX IF NOT EXISTS sb_experiences_search ON sb_experiences USING gin (search);
        CREATE TABLE IF NOT EXISTS sb_index_checkpoints (
            deployment text NOT NULL,
            memory text NOT NULL,
            data jsonb NOT NULL,
            PRIMARY KEY (deployment, memory)
        );
        CREATE TABLE IF NOT EXISTS sb_drafts (
            deployment text NOT NULL,
            name text NOT NULL,
            closed boolean NOT NULL DEFAULT false,
            files jsonb NOT NULL,
            sources text[] NOT NULL DEFAULT '{}',
            at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (deployment, name, closed)
        );
        CREATE TABLE IF NOT EXISTS sb_draft_ledger (
            seq bigserial PRIMARY KEY,
            deployment text NOT NULL,
            entry jsonb NOT NULL
        );
        CREATE INDEX IF NOT EXISTS sb_draft_ledger_by_deployment
            ON sb_draft_ledger (deployment, seq);
        CREATE TABLE IF NOT EXISTS sb_forgotten (
            deployment text NOT NULL,
            id text NOT NULL,
            kind text NOT NULL,
            at timestamptz NOT NULL,
            principal text NOT NULL DEFAULT '',
            PRIMARY KEY (deployment, id)
        );
    """),
    (3, "guideline records, their links; pending ones are the proposal queue", """
        CREATE SEQUENCE IF NOT EXISTS sb_guidelines_rev;
        CREATE TABLE IF NOT EXISTS sb_guidelines (
            deployment text NOT NULL,
            id text NOT NULL,
            namespace text NOT NULL,
            topic text NOT NULL,
            status text NOT NULL,
            helpful integer NOT NULL DEFAULT 0,
            harmful integer NOT NULL DEFAULT 0,
            untrusted_helpful integer NOT NULL DEFAULT 0,
            untrusted_harmful integer NOT NULL DEFAULT 0,
            superseded_by text,
            record jsonb NOT NULL,
            digest text NOT NULL,
            document text NOT NULL DEFAULT '',
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', document)) STORED,
            rev bigint NOT NULL,
            updated timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (deployment, id)
        );
        CREATE INDEX IF NOT EXISTS sb_guidelines_by_rev ON sb_guidelines (deployment, rev);
        CREATE INDEX IF NOT EXISTS sb_guidelines_pending
            ON sb_guidelines (deployment, namespace) WHERE status = 'pending';
        CREATE INDEX IF NOT EXISTS sb_guidelines_search ON sb_guidelines USING gin (tsv);
        CREATE TABLE IF NOT EXISTS sb_guideline_links (
            deployment text NOT NULL,
            id text NOT NULL,
            link text NOT NULL CHECK (link IN ('supersedes', 'related')),
            other text NOT NULL,
            PRIMARY KEY (deployment, id, link, other)
        );
    """),
    (4, "what `skillbank migrate` imported from each embedded root (so a rerun adds nothing)", """
        CREATE TABLE IF NOT EXISTS sb_imports (
            deployment text NOT NULL,
            source text NOT NULL,
            part text NOT NULL,
            position jsonb NOT NULL,
            at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (deployment, source, part)
        );
    """),
    (5, "the change feed is NOTIFY only: empty the rows every write used to add", """
        DELETE FROM sb_changes;
    """),
    (6, "audit events say whether the call was trusted (skillbank.audit.AuditEvent.trusted)", """
        ALTER TABLE sb_audit ADD COLUMN IF NOT EXISTS trusted boolean NOT NULL DEFAULT true;
    """),
    (7, "outsiders' net votes per item (skillbank.outside_votes: each counts once)", """
        CREATE TABLE IF NOT EXISTS sb_usage_votes (
            deployment text NOT NULL,
            memory text NOT NULL,
            item_id text NOT NULL,
            principal text NOT NULL,
            net integer NOT NULL,
            PRIMARY KEY (deployment, memory, item_id, principal)
        );
    """),
    (8, "untrusted votes' net per principal (skillbank.outside_votes.merge on accept)", """
        CREATE TABLE IF NOT EXISTS sb_usage_untrusted_votes (
            deployment text NOT NULL,
            memory text NOT NULL,
            item_id text NOT NULL,
            principal text NOT NULL,
            net integer NOT NULL,
            PRIMARY KEY (deployment, memory, item_id, principal)
        );
    """),
    (9, "outsiders whose use of an item is counted (once each, as their votes)", """
        CREATE TABLE IF NOT EXISTS sb_usage_users (
            deployment text NOT NULL,
            memory text NOT NULL,
            item_id text NOT NULL,
            principal text NOT NULL,
            trusted boolean NOT NULL DEFAULT true,
            PRIMARY KEY (deployment, memory, item_id, principal)
        );
    """),
    (10, "secrets every worker of a deployment shares (the MCP requestState key)", """
        CREATE TABLE IF NOT EXISTS sb_secrets (
            deployment text NOT NULL,
            name text NOT NULL,
            value text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (deployment, name)
        );
    """),
]

LATEST = max(version for version, _, _ in MIGRATIONS)


def migrate(db: Database) -> list[int]:
    """Apply the migrations this database lacks; returns the versions applied (none: [])."""
    applied_now: list[int] = []
    with db.transaction(unbounded=True) as conn:  # a migration may rewrite a big table
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key("skillbank", "migrate"),))
        conn.execute("""CREATE TABLE IF NOT EXISTS skillbank_schema (
                            version integer PRIMARY KEY,
                            name text NOT NULL,
                            applied_at timestamptz NOT NULL DEFAULT now())""")
        done = {row[0] for row in conn.execute("SELECT version FROM skillbank_schema")}
        unknown = sorted(v for v in done if v > LATEST)
        if unknown:
            raise StoreUnavailableError(
                f"the database at {masked(db.url)} "
                f"has schema version {unknown[-1]}, newer than this skillbank knows ({LATEST}); "
                "upgrade skillbank on this machine")
        for version, name, sql in MIGRATIONS:
            if version in done:
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO skillbank_schema (version, name) VALUES (%s, %s)",
                         (version, name))
            applied_now.append(version)
    return applied_now


def schema_version(db: Database) -> int:
    rows = db.execute("SELECT coalesce(max(version), 0) FROM skillbank_schema")
    return int(rows[0][0])
