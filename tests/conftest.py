"""Only the loopback API stub's fixture (the stub itself is tests/stub_api.py)."""

from collections.abc import Iterator

import pytest
from stub_api import StubApi


@pytest.fixture(scope="session")
def stub_api_server() -> Iterator[StubApi]:
    """One stub on 127.0.0.1 for the run; stopped, its threads joined, at the end."""
    with StubApi() as stub:
        yield stub


@pytest.fixture
def stub_api(stub_api_server: StubApi) -> Iterator[StubApi]:
    """The stub with empty records; a violation no test took fails this one."""
    stub_api_server.reset()
    yield stub_api_server
    left = stub_api_server.take_violations()
    if left:
        pytest.fail("stub API violations not checked by the test:\n" + "\n".join(map(str, left)))
