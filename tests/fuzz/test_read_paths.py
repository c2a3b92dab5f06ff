"""Every public read path on damaged and hostile files: it succeeds or raises our own
error naming the file; never another exception, never a write, never a different
answer through the cache. A short budget here (CI); `python benchmarks/fuzz.py` runs
the same inputs long and prints the figures."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from fuzzkit import HOSTILE_VALUES, base_files, mutate, run_read_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

BASES = base_files()

HOSTILE = st.one_of(
    st.sampled_from(HOSTILE_VALUES),
    st.integers(),
    st.floats(),
    st.text(max_size=50),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5), st.lists),
)


def assert_safe(data: bytes, folder: Path) -> None:
    outcome = run_read_paths(data, folder / "sessions", folder / "cache")
    assert outcome.unexpected == []
    assert outcome.unnamed == []
    assert not outcome.wrote
    assert not outcome.cache_disagreed


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(base=st.sampled_from(sorted(BASES)), seed=st.integers(0, 2**32 - 1), hostile=HOSTILE)
def test_a_damaged_file_is_read_safely_by_every_path(
    base: str, seed: int, hostile: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    assert_safe(mutate(BASES[base], random.Random(seed), hostile), folder)


@pytest.mark.parametrize("base", sorted(BASES))
def test_each_fixture_as_it_is_is_read_safely(base: str, tmp_path: Path) -> None:
    assert_safe(BASES[base], tmp_path)
