import hypothesis  # noqa: F401
import pytest

# Imported at start-up on purpose: hypothesis's pytest plugin imports it at the end of every
# session otherwise, and on CPython 3.11.7 compiling it there (assertion rewriting) can fail
# with "SystemError: AST constructor recursion depth mismatch" once some test has hit a
# RecursionError on the main thread (cpython#106905), failing the whole run.


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
