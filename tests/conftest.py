import pytest

# Real PostgreSQL and Redis servers (issue 19): one per session, for every test folder.
from tests.services import pg_cluster, pg_url, redis_server, redis_url  # noqa: F401 (fixtures)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
