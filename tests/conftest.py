"""Fixtures every test shares: the loopback API stub (tests/stub_api.py) and the real
SDK clients pointed at it, a cache folder of each test's own, so no test reads or
writes the user's cache, and a umask of 0 for tests of file modes.

Shared paths, the CLI runner, message builders and other helpers are plain modules
beside this file (locations.py, helpers_cli.py, builders.py, helpers_*.py), imported
by name from every test folder (``pythonpath = ["tests"]`` in pyproject.toml)."""

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import openai
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


# --- the real SDK clients on the stub ------------------------------------------------------
# Anthropic's base_url is the stub without /v1, OpenAI's with it; no retries, so a
# scripted error reaches the test as the SDK raises it.


def anthropic_client(stub: StubApi) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test", base_url=stub.url, max_retries=0)


def openai_client(stub: StubApi) -> openai.OpenAI:
    return openai.OpenAI(api_key="test", base_url=stub.url + "/v1", max_retries=0)


@pytest.fixture
def claude(stub_api: StubApi) -> Iterator[anthropic.Anthropic]:
    """An Anthropic client of the test's own, on the stub with empty records."""
    with anthropic_client(stub_api) as client:
        yield client


@pytest.fixture
def gpt(stub_api: StubApi) -> Iterator[openai.OpenAI]:
    """An OpenAI client of the test's own, on the stub with empty records."""
    with openai_client(stub_api) as client:
        yield client


@pytest.fixture(scope="module")
def module_claude(stub_api_server: StubApi) -> Iterator[anthropic.Anthropic]:
    """One Anthropic client for all the tests of a module (they take stub_api themselves)."""
    with anthropic_client(stub_api_server) as client:
        yield client


@pytest.fixture(scope="module")
def module_gpt(stub_api_server: StubApi) -> Iterator[openai.OpenAI]:
    """One OpenAI client for all the tests of a module (they take stub_api themselves)."""
    with openai_client(stub_api_server) as client:
        yield client


# --- files and folders ----------------------------------------------------------------------


@pytest.fixture(autouse=True)
def own_cache_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("JSONL_SESSION_CACHE_DIR", str(folder))
    monkeypatch.delenv("JSONL_SESSION_NO_CACHE", raising=False)
    # pi's own session folder is looked in too: never the user's
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path_factory.mktemp("pi-agent")))
    return folder


@pytest.fixture
def open_umask() -> Iterator[None]:
    """Run with umask 0, so modes cannot come out right by the umask's luck."""
    previous = os.umask(0)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def calls_to(
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[object, str], list[tuple[Any, ...]]]:
    """``calls_to(owner, name)``: the arguments of each call made to ``owner.name``
    from then on (the call still made), for tests of what a path does not do."""

    def watch(owner: object, name: str) -> list[tuple[Any, ...]]:
        seen: list[tuple[Any, ...]] = []
        real = getattr(owner, name)

        def watching(*args: Any, **kwargs: Any) -> Any:
            seen.append(args)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, watching)
        return seen

    return watch
