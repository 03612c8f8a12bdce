"""The agent server's tables in PostgreSQL (component "server" of `graphrun_schema`).

Every record is a JSON body plus the columns the database must see: creation order (`seq`),
what searches filter on, and the run queue's state. A run's `status` column wins over the
status inside its body; the queue's columns (attempt, token, owner, lease_until, cancel_action,
not_before, outcome) belong to the queue alone (`cluster/ledger.py`).

At most one running run per thread is enforced by the database (a partial unique index), not
by any process (issue 19 §2). Append only: a change is a new migration step.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["COMPONENT", "MIGRATIONS"]

COMPONENT = "server"

MIGRATIONS: list[Sequence[str]] = [
    (
        """CREATE TABLE server_assistants (
            assistant_id text PRIMARY KEY,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            graph_id text NOT NULL,
            body jsonb NOT NULL)""",
        """CREATE TABLE server_assistant_versions (
            assistant_id text NOT NULL,
            version integer NOT NULL,
            body jsonb NOT NULL,
            PRIMARY KEY (assistant_id, version))""",
        """CREATE TABLE server_threads (
            thread_id text PRIMARY KEY,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            status text NOT NULL,
            updated_at text NOT NULL,
            body jsonb NOT NULL)""",
        "CREATE INDEX server_threads_status ON server_threads (status)",
        """CREATE TABLE server_runs (
            run_id text PRIMARY KEY,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            thread_id text NOT NULL,
            status text NOT NULL,
            body jsonb NOT NULL,
            not_before timestamptz NOT NULL DEFAULT now(),
            attempt integer NOT NULL DEFAULT 0,
            token uuid,
            owner text,
            lease_until timestamptz,
            cancel_action text,
            outcome jsonb)""",
        "CREATE INDEX server_runs_thread ON server_runs (thread_id, seq)",
        "CREATE INDEX server_runs_pending ON server_runs (seq) WHERE status = 'pending'",
        "CREATE INDEX server_runs_leases ON server_runs (lease_until) WHERE status = 'running'",
        """CREATE UNIQUE INDEX server_runs_one_running ON server_runs (thread_id)
            WHERE status = 'running'""",
        """CREATE TABLE server_extras (
            kind text NOT NULL,
            key text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            body jsonb NOT NULL,
            PRIMARY KEY (kind, key))""",
    ),
    # 2: thread searches by metadata (`PgRecords.search_threads`: `body->'metadata' @> $n`)
    # use an index instead of reading every thread; 5,000 threads: 0.95 -> 0.44 ms a search.
    (
        """CREATE INDEX server_threads_metadata ON server_threads
            USING gin ((body->'metadata') jsonb_path_ops)""",
    ),
]
