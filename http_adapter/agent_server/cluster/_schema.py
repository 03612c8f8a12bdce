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
    # 3: how many times a run was claimed, drain releases included (`attempt` gives a released
    # claim back): a run claimed before may have checkpoints to resume from (cluster/ledger.py);
    # a first claim skips that look-up.
    ("ALTER TABLE server_runs ADD COLUMN claims integer NOT NULL DEFAULT 0",),
    # 4: a run's enqueue and an attempt's end, each one round trip instead of four (BEGIN, the
    # thread row's lock, the statement, COMMIT). Each statement of a VOLATILE PL/pgSQL function
    # takes a fresh snapshot under READ COMMITTED, so the statement after the lock sees every
    # run committed before the lock was granted, as the separate statements did
    # (`cluster/ledger.py` calls them).
    (
        """CREATE FUNCTION graphrun_enqueue(p_run_id text, p_thread_id text, p_run jsonb,
                p_after float8, p_stamp text, p_metadata jsonb, p_enqueue boolean,
                p_thread jsonb, p_started jsonb, p_owner text, p_lease float8)
            RETURNS TABLE (found_id text, found_status text, found_body text, found_token uuid)
            LANGUAGE plpgsql VOLATILE AS $fn$
        DECLARE
            v_token uuid;
        BEGIN
            -- creates the thread's row if need be and locks it either way (DO UPDATE locks)
            INSERT INTO server_threads AS t (thread_id, status, updated_at, body)
                VALUES (p_thread_id, 'busy', p_stamp, p_thread)
                ON CONFLICT (thread_id) DO UPDATE SET status = t.status;
            -- `p_started` (the run as its first attempt starts it): the caller has a free
            -- worker and runs the run at once, claimed here, when nothing else is due (no run
            -- jumps the queue) and its thread has nothing in flight. Saves the claim and the
            -- attempt's first write (two round trips) on an idle host.
            IF p_started IS NOT NULL AND p_after <= 0 AND NOT EXISTS (
                    SELECT 1 FROM server_runs r WHERE r.status = 'pending'
                        AND r.not_before <= now())
                AND NOT EXISTS (
                    SELECT 1 FROM server_runs r WHERE r.thread_id = p_thread_id
                        AND r.status IN ('pending', 'running')) THEN
                v_token := gen_random_uuid();
                INSERT INTO server_runs (run_id, thread_id, status, body, not_before, attempt,
                        token, owner, lease_until, claims)
                    VALUES (p_run_id, p_thread_id, 'running', p_started, now(), 1, v_token,
                        p_owner, now() + make_interval(secs => p_lease), 1);
                UPDATE server_threads t SET status = 'busy', updated_at = p_stamp,
                    body = t.body || jsonb_build_object('status', 'busy', 'updated_at',
                        p_stamp, 'metadata', p_metadata || COALESCE(t.body->'metadata', '{}'))
                WHERE t.thread_id = p_thread_id;
                RETURN QUERY SELECT p_run_id, 'running'::text, NULL::text, v_token;
                RETURN;
            END IF;
            RETURN QUERY
            WITH f AS (
                SELECT r.run_id, r.status, r.body::text AS body, r.seq FROM server_runs r
                WHERE r.thread_id = p_thread_id AND r.status IN ('pending', 'running')),
            ins AS (
                INSERT INTO server_runs (run_id, thread_id, status, body, not_before)
                SELECT p_run_id, p_thread_id, 'pending', p_run,
                    now() + make_interval(secs => p_after)
                WHERE p_enqueue OR NOT EXISTS (SELECT 1 FROM f)
                RETURNING 1),
            upd AS (
                UPDATE server_threads t SET status = 'busy', updated_at = p_stamp,
                    body = t.body || jsonb_build_object('status', 'busy', 'updated_at',
                        p_stamp, 'metadata', p_metadata || COALESCE(t.body->'metadata', '{}'))
                WHERE t.thread_id = p_thread_id AND EXISTS (SELECT 1 FROM ins))
            SELECT f.run_id, f.status, f.body, NULL::uuid FROM f ORDER BY f.seq;
        END
        $fn$""",
        """CREATE FUNCTION graphrun_finish(p_run_id text, p_token uuid, p_status text,
                p_run jsonb, p_outcome jsonb, p_thread_id text, p_thread_status text,
                p_stamp text, p_thread jsonb, OUT written boolean, OUT others boolean)
            LANGUAGE plpgsql VOLATILE AS $fn$
        BEGIN
            PERFORM 1 FROM server_threads WHERE thread_id = p_thread_id FOR UPDATE;
            -- under the lock: every run of the thread committed before is seen; another in
            -- flight keeps the thread `busy` (and a pending one waits for this end)
            others := EXISTS (SELECT 1 FROM server_runs WHERE thread_id = p_thread_id
                AND run_id <> p_run_id AND status IN ('pending', 'running'));
            UPDATE server_runs SET status = p_status, body = p_run, outcome = p_outcome,
                owner = NULL, lease_until = NULL
            WHERE run_id = p_run_id AND token = p_token AND status = 'running';
            written := FOUND;  -- no row: a stale attempt, nothing written
            IF written AND p_thread IS NOT NULL THEN
                UPDATE server_threads SET status = s.status, updated_at = p_stamp,
                    body = p_thread || jsonb_build_object('status', s.status,
                        'updated_at', p_stamp)
                FROM (SELECT CASE WHEN others THEN 'busy' ELSE p_thread_status END AS status) s
                WHERE thread_id = p_thread_id;
            END IF;
        END
        $fn$""",
    ),
]
