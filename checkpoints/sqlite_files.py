"""Public helpers for other components that keep their own tables in a SQLite file the savers
may share: WAL set-up with a retry, and versioned schema migrations.

The agent server's records and the control plane's records use these (DESIGN: what they share
of SQLite plumbing is a public helper of `checkpoints`, so nobody imports a private module).
"""

from ._schema_versions import SchemaError, amigrate, migrate
from ._sqlite_wal import aenable_wal, enable_wal

__all__ = ["SchemaError", "aenable_wal", "amigrate", "enable_wal", "migrate"]
