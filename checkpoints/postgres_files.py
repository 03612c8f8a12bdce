"""Public helpers for other components that keep their own tables in the PostgreSQL database the
saver uses: versioned migrations under the shared advisory lock, and asyncpg connect options
(PgBouncer in transaction mode needs prepared statements off).

The agent server's records and run queue use these (issue 19), as `sqlite_files` serves the
SQLite file's other tenants: nobody imports a private module of `checkpoints`.
"""

from ._postgres_schema import LOCK_KEY, MIN_SERVER, connect_options, migrate
from ._schema_versions import SchemaError

__all__ = ["LOCK_KEY", "MIN_SERVER", "SchemaError", "connect_options", "migrate"]
