"""Fixtures of the checkpoint tests: real PostgreSQL servers (issue 19) from tests.services."""

from tests.services import pg_cluster, pg_url  # noqa: F401 (fixtures)
