import pytest

# Real PostgreSQL and Redis servers (issue 19): one per session, for every test folder.
from tests.services import (  # noqa: F401 (fixtures)
    pg_cluster,
    pg_url,
    pgbouncer,
    redis_server,
    redis_url,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
