# hypothesis is imported at start-up on purpose: its pytest plugin imports it at the end of
# every session otherwise, and on CPython 3.11.7 compiling it there (assertion rewriting) can
# fail with "SystemError: AST constructor recursion depth mismatch" once some test has hit a
# RecursionError on the main thread (cpython#106905), failing the whole run.
import hypothesis  # noqa: F401
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
