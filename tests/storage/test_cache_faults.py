"""The cache never changes a result and never blocks a write.

A record the cache cannot write (a value msgpack cannot hold: a lone surrogate in an
id, an integer beyond 64 bits; a file size limit; a link where the record goes) is
skipped and said once, and the command answers as with --no-cache. A file changed
other than by appending (rewritten in place on the same inode and grown, with its
mtime put back, cut short, replaced by rename) is never read from a stale record.
Each odd file is checked through the library (open, context, tree) and the CLI (show,
textconv, list, search), cached (cold and warm) against --no-cache."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from builders import user_message
from helpers_cli import invoke
from helpers_large import entry_key, generate
from helpers_write import raw_entry

import jsonl_session
from jsonl_session import Session
from jsonl_session.storage import loader

NOTE = "no record kept"


def message_line(entry_id: str, parent: str | None, text: str = "go on", ms: int = 1) -> bytes:
    message = {**user_message(text), "timestamp": ms}
    return raw_entry(entry_id, parent, type="message", message=message)


def records_in(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.bin")) if cache.exists() else []


def library_view(path: Path, cache: bool | None) -> tuple[object, ...]:
    session = Session.open(path, cache=cache)
    return (
        [entry_key(e) for e in session.entries],
        session.problems,
        session.leaf_id,
        session.build_context().to_dict(),
        [(node.entry.id, len(node.children)) for node in session.tree(fold=False)],
    )


def cli_views(path: Path) -> Iterator[tuple[str, list[str]]]:
    """The commands that read through a cache (open, context and tree are checked
    through the library: `library_view`)."""
    yield "show", ["show", str(path)]
    yield "textconv", ["textconv", str(path)]
    yield "list", ["list", str(path.parent), "--json"]
    yield "search", ["search", "go", str(path.parent), "--json"]


def assert_same_as_without_cache(path: Path) -> str:
    """Cached runs, cold then warm, answer as uncached ones; returns what the cached
    runs said on stderr."""
    said = []
    for name, args in cli_views(path):
        plain = invoke("--no-cache", *args)
        for run in ("cold", "warm"):
            code, out, err = invoke(*args)
            assert (code, out) == plain[:2], f"{name} ({run})"
            said.append(err)
    for _ in ("cold", "warm"):
        assert library_view(path, None) == library_view(path, False)
    return "".join(said)


@pytest.fixture
def big(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    return generate(folder / "big.jsonl")


@pytest.fixture
def told() -> Iterator[list[str]]:
    heard: list[str] = []
    jsonl_session.on_record_not_kept(heard.append)
    yield heard
    jsonl_session.on_record_not_kept(None)


def leaf_of(path: Path) -> str:
    leaf = Session.open(path, cache=False).leaf_id
    assert leaf is not None
    return leaf


def with_line(path: Path, line: bytes) -> None:
    """Append a whole line (as pi would, no lock)."""
    with open(path, "ab") as handle:
        handle.write(line + b"\n")


# --- values the cache cannot hold ---------------------------------------------------------


ODD_VALUES: dict[str, Callable[[str], bytes]] = {
    "a lone surrogate in an id": lambda leaf: message_line("\\ud83d", leaf).replace(
        b'"\\\\ud83d"', b'"\\ud83d"'
    ),
    "an integer beyond 64 bits": lambda leaf: message_line("b0000001", leaf, ms=1234).replace(
        b'"timestamp":1234', b'"timestamp":%d' % 2**70
    ),
}


@pytest.mark.parametrize("odd", list(ODD_VALUES))
def test_a_value_the_cache_cannot_hold_is_read_as_without_cache_and_said_once(
    big: Path, own_cache_folder: Path, told: list[str], odd: str
) -> None:
    leaf = leaf_of(big)
    line = ODD_VALUES[odd](leaf)
    assert (b'"\\ud83d"' in line) or (str(2**70).encode() in line)
    with_line(big, line)
    with_line(big, message_line("c0000001", leaf))  # a sibling after it
    assert big.stat().st_size > loader.WHOLE_READ_BYTES  # read in chunks, with the cache
    assert library_view(big, None) == library_view(big, False)
    assert len(told) == 1 and NOTE in told[0] and str(big) in told[0]
    assert_same_as_without_cache(big)
    assert "index-3" not in [r.parent.name for r in records_in(own_cache_folder)]
    for command in ("show", "textconv", "tree"):  # each run says it once
        code, _, err = invoke(command, big)
        assert code == 0 and err.count(f"note: index cache: {NOTE} for {big}") == 1, command
    session = Session.open(big)
    session.append_message(user_message("appended after it"))  # writes are not blocked
    assert b"appended after it" in Session.open(big).entries[-1].raw


LIMIT_RUN = """
import resource, sys
from jsonl_session.cli import app
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), int(sys.argv[1])))
sys.argv = ["jsonl-session", *sys.argv[2:]]
app()
"""


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="RLIMIT_FSIZE is POSIX's")
def test_a_file_size_limit_below_the_record_gives_the_same_answer_and_a_note(
    big: Path, own_cache_folder: Path
) -> None:
    limit = 64 * 1024  # the record of a 1.5 MB session is larger

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        command = [sys.executable, "-W", "error", "-c", LIMIT_RUN, str(limit), *args]
        return subprocess.run(command, capture_output=True, timeout=120, check=False)

    for args in (["show", str(big)], ["textconv", str(big)]):
        cached, plain = run(*args), run("--no-cache", *args)
        assert (cached.returncode, cached.stdout) == (plain.returncode, plain.stdout)
        assert cached.returncode == 0
        assert cached.stderr.decode().count(NOTE) == 1
        assert "File too large" in cached.stderr.decode()
    assert [p for p in own_cache_folder.rglob("*") if p.is_file()] == []  # no partial record


def test_a_link_planted_at_the_record_path_is_replaced_never_written_through(
    big: Path, own_cache_folder: Path, tmp_path: Path
) -> None:
    Session.open(big)
    (record,) = records_in(own_cache_folder)
    victim = tmp_path / "victim"
    victim.write_bytes(b"not the cache's")
    record.unlink()
    record.symlink_to(victim)
    assert library_view(big, None) == library_view(big, False)
    assert victim.read_bytes() == b"not the cache's"
    assert not record.is_symlink() and record.stat().st_size > 0


# --- the file changed other than by appending -----------------------------------------------


def reparent_middle(path: Path) -> None:
    """Give the entry in the middle another parent, in place (same length)."""
    entries = Session.open(path, cache=False).entries
    moved, new_parent = entries[len(entries) // 2], entries[len(entries) // 4]
    assert moved.parent_id is not None and len(moved.parent_id) == len(new_parent.id)
    line = moved.raw.replace(moved.parent_id.encode(), new_parent.id.encode(), 1)
    with open(path, "r+b") as handle:
        handle.seek(moved.offset)
        handle.write(line)


def rewritten_in_place_and_grown(path: Path) -> None:
    reparent_middle(path)
    with_line(path, message_line("d0000001", leaf_of(path)))


def rewritten_in_place_mtime_put_back(path: Path) -> None:
    before = path.stat()
    reparent_middle(path)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def torn_tail(path: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(message_line("e0000001", leaf_of(path))[:150])


def truncated(path: Path) -> None:
    entries = Session.open(path, cache=False).entries
    os.truncate(path, entries[len(entries) * 3 // 4].offset)


def replaced_by_rename(path: Path) -> None:
    other = generate(path.with_name("other.jsonl.new"), entries=750, seed=9)
    os.replace(other, path)


CHANGES: dict[str, Callable[[Path], None]] = {
    "rewritten in place and grown": rewritten_in_place_and_grown,
    "rewritten in place, mtime put back": rewritten_in_place_mtime_put_back,
    "a torn tail": torn_tail,
    "truncated": truncated,
    "replaced by rename": replaced_by_rename,
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_file_answers_as_without_cache(
    big: Path, own_cache_folder: Path, change: str
) -> None:
    for _, args in cli_views(big):  # records of every kind made
        assert invoke(*args)[0] == 0
    Session.open(big)
    assert {r.parent.name for r in records_in(own_cache_folder)} >= {"index-3"}
    assert (own_cache_folder / "listing-5.sqlite").exists()
    assert (own_cache_folder / "search-4.sqlite").exists()
    before = library_view(big, False)
    CHANGES[change](big)
    assert library_view(big, False) != before  # the change shows
    said = assert_same_as_without_cache(big)
    assert NOTE not in said


def test_a_rewrite_in_place_that_grew_is_caught_by_its_whole_checksum(
    big: Path, own_cache_folder: Path
) -> None:
    """Not by the 4 KiB hashed at the head and the end of the covered part: those
    still match; a changed size makes the whole covered part be checked."""
    Session.open(big)
    old_leaf_path = [e.id for e in Session.open(big).branch_path()]
    rewritten_in_place_and_grown(big)
    new_path = [e.id for e in Session.open(big).branch_path()]
    assert new_path == [e.id for e in Session.open(big, cache=False).branch_path()]
    assert new_path[: len(old_leaf_path)] != old_leaf_path


def test_an_unchanged_file_is_not_read_again_to_check_its_record(
    big: Path, own_cache_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonl_session.storage import stamps

    Session.open(big)
    with_line(big, message_line("f0000001", leaf_of(big)))
    checked: list[int] = []
    real = stamps.prefix_crc
    monkeypatch.setattr(stamps, "prefix_crc", lambda *a, **k: checked.append(1) or real(*a, **k))
    Session.open(big)  # grown: the covered part is checked once...
    assert checked == [1]
    Session.open(big)  # ...and the size and times checked are kept: not again
    assert checked == [1]
