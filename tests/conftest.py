"""Fixtures every test shares: the loopback API stub (tests/stub_api.py) and a cache
folder of each test's own, so no test reads or writes the user's cache."""

from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture(autouse=True)
def own_cache_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("JSONL_SESSION_CACHE_DIR", str(folder))
    monkeypatch.delenv("JSONL_SESSION_NO_CACHE", raising=False)
    return folder
