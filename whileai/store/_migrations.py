"""Ordered store migrations, each recorded by name in ``_wai_migrations`` once applied.

A fresh store and an old one are handled the same way: on every open, each migration whose name
is not yet recorded runs, in order, inside one transaction with the insert of its name (the
pattern of simonw/llm ``migrations.py``). Add a migration by appending a function named
``mNNN_what_it_does``; never edit or reorder one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

__all__ = ["MIGRATIONS", "migrate", "migration", "recorded", "written_by"]

Migration = Callable[[Any], None]

#: Every migration, in the order it runs.
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration; its name must be new and start with ``mNNN_``."""
    name = fn.__name__
    if any(m.__name__ == name for m in MIGRATIONS):
        raise ValueError(f"migration {name!r} is already registered")
    if not (name[:1] == "m" and name[1:4].isdigit() and name[4:5] == "_"):
        raise ValueError(f"migration names look like m001_what, got {name!r}")
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(con: Any) -> None:
    """Datasets (with lineage and content hash), runs, and eval sets pinned by task ids."""
    con.execute(
        """
        CREATE TABLE datasets (
            id VARCHAR PRIMARY KEY,            -- name@version
            name VARCHAR NOT NULL,
            version INTEGER NOT NULL,
            purpose VARCHAR NOT NULL CHECK (purpose IN ('train', 'holdout', 'eval')),
            content_hash VARCHAR NOT NULL,     -- rows-v1-sha256:<hex>
            n_rows BIGINT NOT NULL,
            n_tasks BIGINT NOT NULL,
            k INTEGER NOT NULL,                -- most rollouts any task has
            n_graded BIGINT NOT NULL,          -- rows with a reward
            parent_id VARCHAR,                 -- the dataset this one was made from
            created_at TIMESTAMP NOT NULL,     -- UTC
            file VARCHAR NOT NULL,             -- Parquet file, relative to the store folder
            columns VARCHAR NOT NULL,          -- JSON list of column names
            meta VARCHAR NOT NULL,             -- JSON object
            UNIQUE (name, version)
        )
        """
    )
    con.execute(
        """
        CREATE TABLE eval_sets (
            id VARCHAR PRIMARY KEY,            -- name@version
            name VARCHAR NOT NULL,
            version INTEGER NOT NULL,
            content_hash VARCHAR NOT NULL,     -- tasks-v1-sha256:<hex>
            n_tasks BIGINT NOT NULL,
            dataset_id VARCHAR,
            created_at TIMESTAMP NOT NULL,
            UNIQUE (name, version)
        )
        """
    )
    con.execute(
        """
        CREATE TABLE eval_set_tasks (
            eval_set_id VARCHAR NOT NULL,
            task_key VARCHAR NOT NULL,
            PRIMARY KEY (eval_set_id, task_key)
        )
        """
    )
    con.execute(
        """
        CREATE TABLE runs (
            id VARCHAR PRIMARY KEY,
            name VARCHAR,
            created_at TIMESTAMP NOT NULL,
            policy VARCHAR,
            judge VARCHAR,
            harness VARCHAR,                   -- fingerprint of instructions, tools and model
            seed BIGINT,
            dataset_id VARCHAR,
            eval_set_id VARCHAR,
            n_rows BIGINT NOT NULL,
            n_tasks BIGINT NOT NULL,
            k INTEGER NOT NULL,
            n_graded BIGINT NOT NULL,
            pass_at_1 DOUBLE,
            pass_at_1_low DOUBLE,
            pass_at_1_high DOUBLE,
            metrics VARCHAR NOT NULL,          -- JSON: every number of the pass_at report
            markers VARCHAR NOT NULL,          -- JSON: {name: {mean, ci95}}
            baseline_id VARCHAR,               -- the run a delta_report compared against
            verdict VARCHAR,                   -- its headline_verdict
            delta VARCHAR,                     -- JSON: the delta report
            meta VARCHAR NOT NULL,             -- JSON object
            warnings VARCHAR NOT NULL          -- JSON list
        )
        """
    )


@migration
def m002_store_meta(con: Any) -> None:
    """Facts about the file itself: ``written_by``, the whileai version that last migrated it."""
    con.execute("CREATE TABLE _wai_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)")


def utcnow() -> datetime:
    """Now, in UTC, without a zone (the store's TIMESTAMP columns hold UTC)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def recorded(con: Any) -> set[str]:
    """The migration names a store records (none for a new, empty file)."""
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_wai_migrations' "
                         "AND database_name = current_database()").fetchone()[0]
    if not exists:
        return set()
    return {row[0] for row in con.execute("SELECT name FROM _wai_migrations").fetchall()}


def written_by(con: Any) -> str | None:
    """The whileai version that last migrated the store, when it recorded one."""
    exists = con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '_wai_meta' "
                         "AND database_name = current_database()").fetchone()[0]
    if not exists:
        return None
    row = con.execute("SELECT value FROM _wai_meta WHERE key = 'written_by'").fetchone()
    return None if row is None else str(row[0])


def migrate(con: Any) -> list[str]:
    """Apply every migration not yet recorded, in order; return the names applied now.

    After any migration ran, ``_wai_meta.written_by`` records this whileai's version, so a
    whileai too old for the file can say which version wrote it.
    """
    from whileai._version import __version__

    con.execute(
        "CREATE TABLE IF NOT EXISTS _wai_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP NOT NULL)"
    )
    done = recorded(con)
    applied: list[str] = []
    for fn in MIGRATIONS:
        if fn.__name__ in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            fn(con)
            con.execute("INSERT INTO _wai_migrations VALUES (?, ?)", [fn.__name__, utcnow()])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        applied.append(fn.__name__)
    if applied and "m002_store_meta" in {*done, *applied}:
        con.execute("INSERT OR REPLACE INTO _wai_meta VALUES ('written_by', ?)", [__version__])
    return applied


@migration
def m003_platform(con: Any) -> None:
    """Tracked agents, their behaviors, runs, points, scores and graded rows; accounts and API keys.

    Every record belongs to an account (``local`` when no key is in use); ``batches`` remembers the
    client batch ids already stored, so a retried send is acknowledged and not stored twice.
    """
    con.execute("CREATE TABLE accounts (id VARCHAR PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, created_at TIMESTAMP NOT NULL)")
    con.execute(
        """
        CREATE TABLE api_keys (
            id VARCHAR PRIMARY KEY,            -- the key's public id, the only part ever logged
            account_id VARCHAR NOT NULL,
            key_hash VARCHAR NOT NULL,         -- sha256 hex of the whole key; the key itself is never stored
            created_at TIMESTAMP NOT NULL
        )
        """
    )
    con.execute(
        """
        CREATE TABLE agents (
            account_id VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            model VARCHAR,
            instructions VARCHAR,
            tools VARCHAR NOT NULL,            -- JSON list of tool names
            served VARCHAR,                    -- the version in production
            experiment VARCHAR,                -- JSON: question, hypothesis, method, measure, decide, notes
            created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (account_id, name)
        )
        """
    )
    con.execute(
        """
        CREATE TABLE behaviors (
            account_id VARCHAR NOT NULL,
            agent VARCHAR NOT NULL,
            name VARCHAR NOT NULL,
            spec VARCHAR NOT NULL,             -- JSON: the Behavior model
            updated_at TIMESTAMP NOT NULL,
            PRIMARY KEY (account_id, agent, name)
        )
        """
    )
    con.execute(
        """
        CREATE TABLE tracked_runs (
            id VARCHAR PRIMARY KEY,
            account_id VARCHAR NOT NULL,
            agent VARCHAR,
            version VARCHAR,
            name VARCHAR,
            dataset_id VARCHAR,
            base_model VARCHAR,
            total_steps BIGINT,
            status VARCHAR NOT NULL,
            created_at TIMESTAMP NOT NULL,
            finished_at TIMESTAMP,
            record VARCHAR NOT NULL,           -- JSON
            summary VARCHAR NOT NULL,          -- JSON
            hours DOUBLE,
            cost_usd DOUBLE,
            cost_basis VARCHAR,
            adapter VARCHAR,
            notes VARCHAR,
            archived BOOLEAN NOT NULL,
            delta VARCHAR                      -- JSON: the delta report
        )
        """
    )
    con.execute("CREATE SEQUENCE platform_seq START 1")
    con.execute(
        """
        CREATE TABLE run_points (
            run_id VARCHAR NOT NULL,
            step BIGINT NOT NULL,
            loss DOUBLE,
            lr DOUBLE,
            metrics VARCHAR,                   -- JSON object of the other numbers
            seq BIGINT NOT NULL
        )
        """
    )
    con.execute(
        """
        CREATE TABLE scores (
            id VARCHAR PRIMARY KEY,
            run_id VARCHAR NOT NULL,
            behavior VARCHAR NOT NULL,
            value DOUBLE NOT NULL,             -- points out of 100
            ci DOUBLE,
            n BIGINT,
            examples VARCHAR NOT NULL,         -- JSON list of Example
            seq BIGINT NOT NULL,
            created_at TIMESTAMP NOT NULL
        )
        """
    )
    con.execute(
        """
        CREATE TABLE score_rows (
            score_id VARCHAR NOT NULL,
            seq BIGINT NOT NULL,
            prompt VARCHAR,
            reply VARCHAR,
            ok BOOLEAN NOT NULL,
            why VARCHAR,
            reference VARCHAR,
            detail VARCHAR,
            tags VARCHAR                       -- JSON object
        )
        """
    )
    con.execute("CREATE TABLE batches (run_id VARCHAR NOT NULL, batch_id VARCHAR NOT NULL, PRIMARY KEY (run_id, batch_id))")
    con.execute(
        """
        CREATE TABLE figures (
            account_id VARCHAR NOT NULL, agent VARCHAR NOT NULL, name VARCHAR NOT NULL,
            caption VARCHAR, figure VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL,
            PRIMARY KEY (account_id, agent, name)
        )
        """
    )
    con.execute(
        """
        CREATE TABLE live_days (
            account_id VARCHAR NOT NULL, agent VARCHAR NOT NULL, day VARCHAR NOT NULL, version VARCHAR NOT NULL,
            replies BIGINT NOT NULL, flagged BIGINT NOT NULL,
            PRIMARY KEY (account_id, agent, day, version)
        )
        """
    )


@migration
def m004_score_row_transcripts(con: Any) -> None:
    """A graded row's task key (two versions' rows pair on it) and its conversation (JSON messages)."""
    con.execute("ALTER TABLE score_rows ADD COLUMN task VARCHAR")
    con.execute("ALTER TABLE score_rows ADD COLUMN messages VARCHAR")
