"""Which back end serves: the parts a `ServerState` is made of, built from its Settings.

- No `database_url`: the embedded default, one SQLite file (or memory): `Records`, the SQLite
  saver and store, the in-process `Broker` and `RunQueue`.
- `database_url`: PostgreSQL holds every record, checkpoint and store item (`cluster.records`,
  `checkpoints.PostgresSaver`, `PostgresStore`) and `cluster.queue` claims runs from it, so
  many processes on many hosts share one database (issue 19 §5).
- `redis_url` too: Redis carries run streams (`cluster.broker`) and wake-up, completion and
  cancel signals (`cluster.signals`) between them. Without it, one-host PostgreSQL mode: the
  in-process broker, and the queue polls the database.

The cluster modules need asyncpg and redis (the ``postgres`` extra): they are imported here,
when chosen, never at `import http_adapter.agent_server` (the default install is SQLite-only).
Routes never see which parts were built; they use the protocols only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .broker import Broker
from .records import Records
from .saver import server_saver
from .settings import Settings
from .store_options import make_store

__all__ = ["Parts", "build_parts"]


@dataclasses.dataclass(slots=True)
class Parts:
    """One server's storage and messaging parts; `make_queue(state)` builds its run queue."""

    records: Any
    saver: Any
    store: Any
    broker: Any
    make_queue: Callable[[Any], Any]
    signals: Any = None  # cluster.signals.Signals with Redis; its `serve` runs in the lifespan
    # Errors that mean "the database cannot be reached right now": answered 503, not 500.
    unavailable: tuple[type[BaseException], ...] = ()


def build_parts(settings: Settings) -> Parts:
    if settings.database_url is None:
        return _embedded(settings)
    return _cluster(settings)


def _embedded(settings: Settings) -> Parts:
    path = settings.db_path
    if path is not None and settings.data_dir is not None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)

    def make_queue(state: Any) -> Any:
        from .queue import RunQueue

        return RunQueue(state)

    return Parts(Records(path), server_saver(path), make_store(settings), Broker(), make_queue)


def _cluster(settings: Settings) -> Parts:
    from .cluster.queue import ClusterQueue
    from .cluster.records import PgRecords

    url = settings.database_url
    assert url is not None
    records = PgRecords(url, min_size=settings.pool_min, max_size=settings.pool_max,
                        prepared_statements=settings.prepared_statements)
    signals = broker = None
    made: list[Any] = []  # the queue, once built: the broker asks it whether a run is over
    if settings.redis_url is not None:
        from .cluster.broker import RedisBroker
        from .cluster.signals import Signals

        async def is_finished(run_id: str) -> bool:
            """A stream without its end marker ends once the queue says its run is over (a
            stateless run has no record: only its host's queue knows)."""
            queue = made[0] if made else None
            return False if queue is None else bool(await queue.finished(run_id))

        signals = Signals(settings.redis_url)
        broker = RedisBroker(settings.redis_url, is_finished=is_finished)

    def make_queue(state: Any) -> Any:
        made.append(ClusterQueue(
            state, url, signals=signals, lease=settings.lease,
            heartbeat=settings.heartbeat_interval, reaper=settings.reaper_interval,
            pool_size=settings.pool_max, prepared_statements=settings.prepared_statements,
        ))
        return made[-1]

    return Parts(
        records=records,
        saver=server_saver(url, pool_size=settings.pool_max,
                           prepared_statements=settings.prepared_statements),
        store=make_store(settings),
        broker=broker if broker is not None else Broker(),
        make_queue=make_queue,
        signals=signals,
        unavailable=_unreachable_database(),
    )


def _unreachable_database() -> tuple[type[BaseException], ...]:
    """The driver's and the socket layer's ways of saying the database is out of reach (down,
    restarting, refusing connections, or the pool found no connection in time)."""
    import asyncpg

    # OperatorIntervention: shut down, restarting, a terminated backend (57xxx);
    # ObjectNotInPrerequisiteState: the database does not accept connections now (55000);
    # InternalClientError: a connection the outage broke mid-operation, handed out again
    # ("cannot switch to state ..."; seen in the outage benchmark's logs).
    return (asyncpg.PostgresConnectionError, asyncpg.OperatorInterventionError,
            asyncpg.ObjectNotInPrerequisiteStateError, asyncpg.TooManyConnectionsError,
            asyncpg.InterfaceError, asyncpg.InternalClientError, ConnectionError, TimeoutError)
