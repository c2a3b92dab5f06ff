"""Long exports and transcripts rendered by worker processes (views/slices.py): the
same bytes as one process, in the same order, with the same redaction counts, for
Markdown, JSON and HTML (the active path and every branch) and textconv, from the
library and the command line."""

from __future__ import annotations

import gc
import itertools
import json
import multiprocessing
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import msgspec
import pytest
from helpers_cli import invoke
from helpers_large import generate
from hypothesis import given, settings
from hypothesis import strategies as st
from locations import FIXTURES

from jsonl_session import Session, export_chunks, processes, textconv_chunks, textconv_encoded
from jsonl_session.errors import JsonlSessionError
from jsonl_session.export import header_facts, html, markdown, plan
from jsonl_session.export.html_parts import PartRenderer
from jsonl_session.views import pieces as handing
from jsonl_session.views import slices

SECRET = "ghp_" + "a1B2c3D4e5" * 4


@pytest.fixture
def spread_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers for any size of export, in slices of 7 entries (the parent decides);
    a page highlights its first 40 kB of lines only, then spreads."""
    monkeypatch.setattr(slices, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(slices, "SLICE_ENTRIES", 7)
    monkeypatch.setattr(html, "HIGHLIGHT_SPAN", 40_000)


@pytest.fixture(scope="module")
def branched(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated session, then branches, labels and a name, with a secret in its
    first user message (the title shows it before its turn) and in later ones."""
    folder = tmp_path_factory.mktemp("branched")
    path = generate(folder / "gen.jsonl", 300, 5)
    session = Session.open(path, cache=False, fsync="never")
    first = next(e for e in session.entries if e.role == "user")
    middle = session.entries[len(session.entries) // 2]
    session.branch(first.id)
    session.append_message({"role": "user", "content": f"try {SECRET}", "timestamp": 1})
    session.append_label(middle.id, "halfway")
    session.branch(middle.id)
    session.append_message({"role": "user", "content": f"again {SECRET} again", "timestamp": 2})
    session.append_session_info(f"named {SECRET}")
    text = path.read_text()
    # the first user message carries a secret too: a title views it before its turn
    opening = '"role":"user","content":[{"type":"text","text":"'
    assert opening in text
    path.write_text(text.replace(opening, f"{opening}{SECRET} ", 1))
    return path


def _export(path: Path, fmt: str, workers: int, **options: bool) -> tuple[str, dict[str, int]]:
    chunks = export_chunks(Session.open(path, cache=False), fmt, workers=workers, **options)  # type: ignore[arg-type]
    return "".join(chunks), chunks.redactions


@pytest.mark.parametrize("fmt", ["markdown", "json", "html"])
@pytest.mark.parametrize("all_branches", [False, True])
def test_workers_write_the_bytes_and_count_the_secrets_one_process_does(
    branched: Path, spread_small: None, fmt: str, all_branches: bool
) -> None:
    for redact in (False, True):
        options = {"all_branches": all_branches, "redact": redact}
        alone = _export(branched, fmt, 1, **options)
        assert _export(branched, fmt, 2, **options) == alone
        if redact:
            assert alone[1]["github-token"] >= 3


def _duplicated(folder: Path) -> Path:
    """A session whose first user message's id is used again by a later user message,
    the one the path holds; each carries a secret of its own."""
    path = folder / "dup.jsonl"
    head = {"type": "session", "version": 3, "id": "s-dup", "timestamp": "2026-01-01T00:00:00Z"}
    lines = [head | {"cwd": "/tmp"}]

    def said(n: int, entry_id: str, parent: str | None, message: dict[str, Any]) -> None:
        stamp = f"2026-01-01T00:00:0{n}.000Z"
        lines.append(
            {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp}
            | {"message": message}
        )

    reply = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    reply |= {"provider": "p", "model": "m"}
    said(1, "aaaa0001", None, reply)
    said(2, "dup00000", None, {"role": "user", "content": f"EARLIER copy {SECRET}"})
    said(3, "dup00000", "aaaa0001", {"role": "user", "content": f"LATER copy {SECRET}"})
    said(4, "bbbb0002", "dup00000", reply)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_an_id_used_again_is_shown_as_the_entry_the_path_holds_not_as_the_title_s_view(
    tmp_path: Path, spread_small: None, fmt: str
) -> None:
    path = _duplicated(tmp_path)
    for workers in (1, 2):
        text, _ = _export(path, fmt, workers)
        assert "LATER copy" in text  # (the title is the file's first user message)
        _, counts = _export(path, fmt, workers, redact=True)
        assert counts == {"github-token": 2}  # the title's, and the later entry's


def test_a_page_is_highlighted_here_then_spread_and_its_results_still_show_their_calls(
    branched: Path, spread_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    spread: list[int] = []

    def counted(
        jobs: Sequence[slices.Slice], workers: int, redactor: Any, **options: bool
    ) -> Iterator[tuple[int, handing.Piece]]:
        spread.append(len(jobs))
        return slices.rendered_pieces(jobs, workers, redactor, **options)

    monkeypatch.setattr(plan, "rendered_pieces", counted)
    monkeypatch.setattr(handing, "PIECE_BYTES", 100)  # slices handed on in many pieces
    page, _ = _export(branched, "html", 2)
    assert spread and spread[0] > 10  # most of the page went to the workers
    assert 'class="code hl"' in page  # code near the top was highlighted
    results = re.findall(r"Tool result</span>(\w+)( · <code>)?", page)
    assert len(results) > 30
    assert all(shown for _, shown in results)  # each under the call it answers
    assert _export(branched, "html", 1)[0] == page


def test_a_worker_remembers_the_calls_of_its_whole_slice() -> None:
    assert PartRenderer.REMEMBERED >= slices.SLICE_ENTRIES


def test_workers_write_the_transcript_one_process_writes_damaged_lines_too(
    tmp_path: Path, spread_small: None
) -> None:
    path = tmp_path / "damaged.jsonl"
    shutil.copy(FIXTURES / "damaged-bad-middle-line.jsonl", path)
    big = generate(tmp_path / "gen.jsonl", 120, 3)
    for session in (path, big, FIXTURES / "damaged-duplicate-id.jsonl"):
        alone = "".join(textconv_chunks(session, cache=False))
        assert "".join(textconv_chunks(session, cache=False, workers=2)) == alone


def test_a_short_export_stays_in_this_process(branched: Path) -> None:
    assert slices.export_workers(None, slices.PARALLEL_BYTES - 1) == 1
    assert slices.export_workers(3, slices.PARALLEL_BYTES) == 3
    with pytest.raises(JsonlSessionError):
        slices.export_workers(0, 0)


def test_the_command_gives_the_same_file_with_workers(
    branched: Path, tmp_path: Path, spread_small: None
) -> None:
    for args in (["-f", "markdown", "--redact"], ["-f", "json"], ["-f", "html"]):
        one, two = tmp_path / "one", tmp_path / "two"
        for out, workers in ((one, "1"), (two, "2")):
            out.unlink(missing_ok=True)
            code, _, err = invoke(
                "--no-cache", "export", *args, "--workers", workers, "-o", out, branched
            )
            assert code == 0, err
        assert one.read_bytes() == two.read_bytes()
    alone = invoke("--no-cache", "textconv", "--workers", "1", branched)
    assert invoke("--no-cache", "textconv", "--workers", "2", branched) == alone


@pytest.fixture
def pools_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each pool of workers started, in order."""
    made: list[int] = []
    real = processes._new_pool
    monkeypatch.setattr(processes, "_new_pool", lambda count: made.append(count) or real(count))
    return made


def test_the_workers_start_with_the_export_and_none_are_left_behind(
    branched: Path, spread_small: None, pools_made: list[int]
) -> None:
    made = pools_made
    for fmt in ("markdown", "html", "json"):
        made.clear()
        _export(branched, fmt, 2)
        assert made == [2]  # started before the plan, and the one that rendered
        assert processes._warm is None
    made.clear()
    assert "".join(textconv_chunks(branched, cache=False, workers=2))
    assert made == [2]
    assert processes._warm is None


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_an_export_s_facts_are_read_by_a_worker_while_the_others_render(
    branched: Path, spread_small: None, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    got: list[Any] = []
    real = header_facts.LaterFigures.get

    def recording(self: header_facts.LaterFigures) -> Any:
        got.append(real(self))
        return got[-1]

    monkeypatch.setattr(header_facts.LaterFigures, "get", recording)
    page = _export(branched, fmt, 2, redact=True)
    assert got and got[0] is not None and got[0].calls > 0
    assert _export(branched, fmt, 1, redact=True) == page


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_each_worker_reads_a_part_of_the_replies_figures(
    branched: Path, spread_small: None, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    parts: list[tuple[int, bool]] = []
    real = plan.submit_warm

    def recording(function: Any, columns: Any, keep_costs: bool) -> Any:
        parts.append((len(columns.ids), keep_costs))
        return real(function, columns, keep_costs)

    monkeypatch.setattr(plan, "submit_warm", recording)
    page = _export(branched, fmt, 2)
    path = Session.open(branched, cache=False).branch_path()
    replies = [e for e in path if e.role == "assistant"]
    assert [keep for _, keep in parts] == [False, True]  # the later part with its costs
    assert sum(count for count, _ in parts) == len(replies) and min(parts)[0] > 0
    assert _export(branched, fmt, 1) == page


def test_a_short_active_path_s_figures_are_read_here_not_by_workers_still_starting(
    branched: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "short.jsonl"
    shutil.copyfile(branched, path)
    session = Session.open(path, cache=False, fsync="never")
    monkeypatch.setattr(slices, "PARALLEL_BYTES", slices.lines_size(session.entries) // 2)
    session.branch(next(e for e in session.entries if e.role == "assistant").id)
    handed: list[Any] = []
    monkeypatch.setattr(plan, "submit_warm", lambda *args: handed.append(args))
    alone = "".join(export_chunks(session, "markdown", workers=1))
    assert "".join(export_chunks(session, "markdown", workers=2)) == alone
    assert handed == []  # (the workers started with the export are let go unused)
    assert processes._warm is None


def test_replies_are_cut_into_parts_of_about_equal_bytes_in_order() -> None:
    sizes = [5, 1, 1, 1, 1, 1, 10, 2]
    entries: Any = [type("E", (), {"length": n})() for n in sizes]
    for count in range(1, 6):
        cuts = header_facts.parts_of(entries, count)
        assert cuts[0][0] == 0 and cuts[-1][1] == len(sizes)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(cuts))
        assert len(cuts) <= count and all(start < stop for start, stop in cuts)
    # each part ends with the entry that brings it to its share of the bytes
    assert header_facts.parts_of(entries, 2) == [(0, 7), (7, 8)]
    assert header_facts.parts_of(entries[:6], 2) == [(0, 1), (1, 6)]  # 5 bytes of 10, then 5
    assert header_facts.parts_of([], 2) == [(0, 0)]


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_a_worker_that_cannot_read_the_facts_leaves_the_export_as_it_is(
    branched: Path, spread_small: None, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    # a module-level function the worker finds by name, called with the wrong arguments
    monkeypatch.setattr(plan, "figures_in_worker", os.stat)
    got: list[Any] = []
    real = header_facts.LaterFigures.get
    monkeypatch.setattr(header_facts.LaterFigures, "get", lambda self: got.append(real(self)))
    page = _export(branched, fmt, 2)
    assert got == [None]  # failed there: read here
    assert _export(branched, fmt, 1) == page


def test_a_warm_pool_no_one_takes_is_let_go() -> None:
    processes.warm_pool(2)
    assert processes._warm is not None
    processes.drop_warm_pool()
    assert processes._warm is None


def test_a_warm_pool_whose_worker_ended_is_let_go_and_its_work_left_to_the_caller() -> None:
    processes.warm_pool(1)
    ended = processes.submit_warm(os._exit, 3)  # (a worker that could not start ends so)
    assert ended is not None
    assert isinstance(ended.exception(timeout=60), BrokenProcessPool)
    assert processes.submit_warm(os.getpid) is None  # not raised: the caller does it
    assert processes.warm_pool_waiting() == 0


# The collector runs a finalizer (or a generator's `finally`) that lets a pool go inside
# submit_warm's section of the same thread: the lock is held there. Run apart, so that
# a wait for ever fails the test (timeout) rather than hanging the suite.
_LET_GO_WHILE_HELD = """
import time
from jsonl_session import processes
if __name__ == "__main__":
    other = processes.warm_pool(1)
    assert other is not None
    with processes._lock:
        processes.drop_warm_pool(other)  # returns: the lock is this thread's
        assert processes._warm is not None
    deadline = time.monotonic() + 30
    while processes._warm is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert processes._warm is None, "let go once the lock was free"
    print("ok")
"""


def test_a_pool_let_go_while_this_thread_holds_the_lock_is_let_go_once_it_is_free(
    tmp_path: Path,
) -> None:
    script = tmp_path / "let_go.py"
    script.write_text(_LET_GO_WHILE_HELD)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


# Whitespace Python strips, in one to three bytes of UTF-8, and characters that are not.
_SPACES = " \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2000\u2028\u3000"
_WORDS = "ab\u00e9\u20ac\U0001f600-"


@given(
    text=st.text(alphabet=_SPACES + _WORDS, max_size=200),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=6),
    as_bytes=st.lists(st.booleans(), min_size=7, max_size=7),
)
@settings(max_examples=300, deadline=None)
def test_a_markdown_end_is_the_same_whether_pieces_come_as_text_or_as_bytes(
    text: str, cuts: list[int], as_bytes: list[bool]
) -> None:
    """The whitespace at the very end becomes one newline, however the text is cut
    into pieces and whichever of them a worker handed on as its bytes."""
    bounds = sorted({0, len(text), *(min(cut, len(text)) for cut in cuts)})
    texts = [text[start:end] for start, end in itertools.pairwise(bounds)]
    pieces: list[handing.Piece] = [
        handing.Utf8Piece(piece.encode()) if raw else piece
        for piece, raw in zip(texts, as_bytes, strict=False)
    ]
    expected = "".join(markdown._ending_once(texts))
    assert "".join(map(handing.text_of, markdown._ending_once(pieces))) == expected
    assert expected == text.rstrip() + "\n"
    with pytest.MonkeyPatch.context() as patch:  # the last text handed on in slices
        patch.setattr(handing, "JOINED_CHARS", 3)
        assert "".join(markdown._ending_once(texts)) == expected


def test_a_long_run_of_whitespace_ending_a_piece_is_held_back_whole() -> None:
    long_space = "x" + " \u3000\n" * 100
    body, space = markdown._stripped(long_space.encode())
    assert (body, space) == (b"x", long_space[1:])


@pytest.mark.parametrize("fmt", ["html", "json"])
def test_an_export_never_read_lets_its_workers_go(
    branched: Path, spread_small: None, fmt: str
) -> None:
    # (a Markdown export's workers start rendering at once: they end with its pieces)
    chunks = export_chunks(Session.open(branched, cache=False), fmt, workers=2)  # type: ignore[arg-type]
    assert processes._warm is not None  # started with the export
    del chunks
    gc.collect()
    assert processes._warm is None


def test_a_long_file_s_short_path_starts_no_workers(
    branched: Path, monkeypatch: pytest.MonkeyPatch, pools_made: list[int]
) -> None:
    made = pools_made
    session = Session.open(branched, cache=False)
    monkeypatch.setattr(slices, "PARALLEL_BYTES", slices.lines_size(session.entries) // 2)
    first = next(e for e in session.entries if e.role == "user")
    for fmt in ("markdown", "html"):
        alone = "".join(export_chunks(session, fmt, leaf_id=first.id, workers=1))  # type: ignore[arg-type]
        assert "".join(export_chunks(session, fmt, leaf_id=first.id, workers=2)) == alone  # type: ignore[arg-type]
    assert made == []
    "".join(export_chunks(session, "markdown", workers=2))  # the whole path: spread
    assert made == [2]


@pytest.mark.parametrize("make", [textconv_chunks, textconv_encoded], ids=["text", "bytes"])
def test_a_transcript_closed_early_lets_its_workers_go(
    branched: Path, spread_small: None, make: Callable[..., Generator[Any, None, None]]
) -> None:
    pieces = make(branched, cache=False, workers=2)
    for _ in range(3):
        assert next(pieces)
    assert multiprocessing.active_children()  # the workers render it
    pieces.close()
    assert processes._warm is None
    assert multiprocessing.active_children() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_a_pool_s_pipes_hold_a_slice_s_text() -> None:
    import fcntl

    most = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    pool = processes._new_pool(2)
    try:
        for queue in (pool._result_queue, pool._call_queue):
            size = fcntl.fcntl(queue._reader.fileno(), fcntl.F_GETPIPE_SZ)
            assert size == min(processes.PIPE_BYTES, most) > slices.SLICE_BYTES // 2
        assert list(pool.map(abs, [-1, -2])) == [1, 2]
    finally:
        pool.shutdown()


@pytest.mark.parametrize(
    ("fmt", "first_read", "early"),
    [("json", "entries", True), ("markdown", "branch_path", True), ("html", "branch_path", False)],
)
def test_an_export_of_every_entry_or_the_active_path_starts_its_workers_before_reading(
    branched: Path,
    spread_small: None,
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
    first_read: str,
    early: bool,
) -> None:
    # (JSON before it makes the entries, Markdown before the path is read; a page
    # once it knows its path, as its workers load the libraries it renders with)
    events: list[str] = []
    real_pool, real = processes._new_pool, getattr(Session, first_read)
    monkeypatch.setattr(processes, "_new_pool", lambda n: events.append("pool") or real_pool(n))
    read = real.fget if isinstance(real, property) else real

    def recorded(*args: Any) -> Any:
        events.append("read")
        return read(*args)

    monkeypatch.setattr(
        Session, first_read, property(recorded) if isinstance(real, property) else recorded
    )
    text = "".join(export_chunks(Session.open(branched, cache=False), fmt, workers=2))  # type: ignore[arg-type]
    assert events.count("pool") == 1 and "read" in events
    assert events.index("pool") < events.index("read") if early else events[0] == "read"
    assert text == "".join(export_chunks(Session.open(branched, cache=False), fmt))  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["markdown", "json", "html", "textconv"])
def test_a_huge_line_is_rendered_here_in_its_turn_the_same_bytes(
    branched: Path, spread_small: None, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    lengths = sorted(e.length for e in Session.open(branched, cache=False).entries)
    monkeypatch.setattr(slices, "HERE_BYTES", lengths[-3])  # the three longest lines
    here: list[int] = []

    class Recorded(slices._Here):
        def __init__(self, job: slices.Slice, pool: Any = None) -> None:
            here.append(len(job.records))
            assert pool is not None  # (the workers', for its redaction's help)
            super().__init__(job, pool)

    monkeypatch.setattr(slices, "_Here", Recorded)
    if fmt == "textconv":
        alone = "".join(textconv_chunks(branched, cache=False, workers=1))
        assert "".join(textconv_chunks(branched, cache=False, workers=2)) == alone
    else:
        for redact in (False, True):
            alone = _export(branched, fmt, 1, redact=redact)
            assert _export(branched, fmt, 2, redact=redact) == alone
    assert here and set(here) == {1}
    assert slices._sources == {}  # the file it opened is let go


def test_a_huge_line_is_a_slice_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slices, "HERE_BYTES", 100)
    sizes = [10, 10, 100, 10, 500, 100, 10, 10]
    assert slices.slices_of(sizes) == [(0, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 8)]


def _cut_one_by_one(sizes: list[int], most: int, entries: int, huge: int) -> list[tuple[int, int]]:
    """The cuts `slices_of` makes, found a step per entry."""
    cuts: list[tuple[int, int]] = []
    start = size = 0
    for index, length in enumerate(sizes):
        if length >= huge and index > start:
            cuts.append((start, index))
            start, size = index, 0
        size += length
        if size >= most or index + 1 - start >= entries or length >= huge:
            cuts.append((start, index + 1))
            start, size = index + 1, 0
    if start < len(sizes):
        cuts.append((start, len(sizes)))
    return cuts


@given(
    sizes=st.lists(st.integers(min_value=0, max_value=120), max_size=60),
    most=st.integers(min_value=0, max_value=300),
    entries=st.integers(min_value=1, max_value=9),
    huge=st.integers(min_value=1, max_value=130),
)
@settings(max_examples=1500, deadline=None)
def test_slices_are_cut_where_a_step_per_entry_cuts_them(
    sizes: list[int], most: int, entries: int, huge: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(slices, "SLICE_BYTES", most)
        patch.setattr(slices, "SLICE_ENTRIES", entries)
        patch.setattr(slices, "HERE_BYTES", huge)
        expected = _cut_one_by_one(sizes, most, entries, huge)
        assert slices.slices_of(sizes) == expected
        as_entries = [msgspec.structs.replace(ENTRY, length=size) for size in sizes]
        assert slices.slices_of(as_entries) == expected


ENTRY = slices.StoredEntry(line=1, offset=0, type="message", id="a", parent_id=None, timestamp="")


@pytest.fixture
def spooled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, int]:
    """Every worker's text handed back through a file (views/spool.py), in a temporary
    folder of the test's own; how many were copied into a file and how many read."""
    from jsonl_session.views.spool import SpooledPiece

    monkeypatch.setattr(slices, "SPOOL_BYTES", 1)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(temporary))
    counts = {"copied": 0, "taken": 0, "folders": 0}
    copy_to, take = SpooledPiece.copy_to, SpooledPiece.take

    def counted_copy(piece: SpooledPiece, out: Any) -> None:
        counts["copied"] += 1
        counts["folders"] = len(os.listdir(temporary))
        copy_to(piece, out)

    def counted_take(piece: SpooledPiece) -> bytes:
        counts["taken"] += 1
        return take(piece)

    monkeypatch.setattr(SpooledPiece, "copy_to", counted_copy)
    monkeypatch.setattr(SpooledPiece, "take", counted_take)
    return counts


@pytest.mark.parametrize("fmt", ["markdown", "json", "html"])
def test_workers_texts_reach_a_file_through_files_of_their_own_that_are_then_gone(
    branched: Path, spread_small: None, spooled: dict[str, int], tmp_path: Path, fmt: str
) -> None:
    from jsonl_session import write_export

    alone, _ = _export(branched, fmt, 1)
    out = tmp_path / f"out.{fmt}"
    write_export(export_chunks(Session.open(branched, cache=False), fmt, workers=2), out)  # type: ignore[arg-type]
    assert out.read_text(encoding="utf-8") == alone
    assert spooled["copied"] > 10  # copied, never read here, but Markdown's last (its end cut)
    assert spooled["taken"] == (1 if fmt == "markdown" else 0)
    assert spooled["folders"] == 1
    assert _export(branched, fmt, 2) == (alone, {})  # read back as text
    assert spooled["taken"] > 10
    gc.collect()
    assert os.listdir(tmp_path / "tmp") == []  # every file and folder gone


def test_a_transcript_s_texts_come_back_through_files_the_same_bytes(
    branched: Path, spread_small: None, spooled: dict[str, int], tmp_path: Path
) -> None:
    alone = b"".join(textconv_encoded(branched, cache=False, workers=1))
    assert b"".join(textconv_encoded(branched, cache=False, workers=2)) == alone
    assert "".join(textconv_chunks(branched, cache=False, workers=2)) == alone.decode()
    assert spooled["taken"] > 20
    gc.collect()
    assert os.listdir(tmp_path / "tmp") == []


@pytest.fixture(scope="module")
def controlled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated session whose texts and titles hold C0, C1 and bidirectional
    controls, one lone surrogate among them."""
    folder = tmp_path_factory.mktemp("controlled")
    path = generate(folder / "gen.jsonl", 120, 3)
    session = Session.open(path, cache=False, fsync="never")
    for number in range(40):
        session.append_message(
            {"role": "user", "content": f"{number} \x1b[2J\x07 \x9b\u202e \x7f\r\n\ttab"}
        )
        session.append_model_change(f"prov\x1b{number}", "model\x85")
    session.append_custom_message("kind\x1b", "half \ud800 of one", display=True)
    return path


@pytest.mark.parametrize("visible", [False, True], ids=["transcript", "visible"])
def test_workers_escape_a_transcript_as_one_process_does(
    controlled: Path, spread_small: None, spooled: dict[str, int], visible: bool
) -> None:
    alone = "".join(textconv_chunks(controlled, cache=False, workers=1, visible=visible))
    assert "".join(textconv_chunks(controlled, cache=False, workers=2, visible=visible)) == alone
    encoded = b"".join(textconv_encoded(controlled, cache=False, workers=2, visible=visible))
    assert encoded == alone.encode("utf-8", "backslashreplace")
    assert "\x1b" not in alone and "\\x1b[2J\\x07" in alone
    assert ("\u202e" in alone) is not visible
    assert spooled["taken"] > 10


def test_write_textconv_copies_workers_files_into_a_file_a_pipe_or_a_buffer(
    controlled: Path, spread_small: None, spooled: dict[str, int], tmp_path: Path
) -> None:
    import gzip
    import io
    import threading

    from jsonl_session import write_textconv
    from jsonl_session.views.spool import SpooledPiece

    expected = b"".join(textconv_encoded(controlled, cache=False, workers=1, visible=True))
    copied: list[int] = []
    copy_to_fd = SpooledPiece.copy_to_fd

    def counted(piece: SpooledPiece, target: int) -> None:
        copied.append(piece.size)
        copy_to_fd(piece, target)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SpooledPiece, "copy_to_fd", counted)
        out = tmp_path / "out.txt"
        with out.open("wb") as stream:
            stream.write(b"before\n")  # (buffered: must come first)
            written = write_textconv(controlled, stream, cache=False, workers=2, visible=True)
        assert out.read_bytes() == b"before\n" + expected
        assert written == len(expected)
        assert len(copied) > 10  # by the kernel, never read here

        reader, writer = os.pipe()
        received: list[bytes] = []
        drain = threading.Thread(target=lambda: received.append(_read_all(reader)))
        drain.start()
        with open(writer, "wb") as stream:
            write_textconv(controlled, stream, cache=False, workers=2, visible=True)
        drain.join()
        os.close(reader)
        assert received == [expected]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SpooledPiece, "copy_to_fd", counted)
        copied.clear()
        packed = tmp_path / "out.txt.gz"  # its fileno() is the compressed file's
        with gzip.open(packed, "wb") as compressing:
            write_textconv(controlled, compressing, cache=False, workers=2, visible=True)
        assert gzip.decompress(packed.read_bytes()) == expected
        assert copied == []  # every byte through the stream's own write

    buffer = io.BytesIO()  # no file: each piece read, then written
    assert write_textconv(controlled, buffer, cache=False, workers=2, visible=True) == len(expected)
    assert buffer.getvalue() == expected
    gc.collect()
    assert os.listdir(tmp_path / "tmp") == []


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's malloc",
)
def test_a_worker_that_cannot_tune_its_heap_works_all_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ctypes", None)  # (a Python built without it)
    processes._keep_heap_top()  # raises nothing
    assert processes.allocator_tuned is False


def test_a_worker_keeps_the_top_of_its_heap() -> None:
    assert processes.allocator_tuned is False  # this process's malloc is left alone
    pool = processes._new_pool(1)
    try:
        asked = "__import__('jsonl_session.processes').processes.allocator_tuned"
        assert pool.submit(eval, asked).result(timeout=60) is True
    finally:
        pool.shutdown()


def test_a_slice_s_text_in_a_file_is_read_in_parts_cut_after_newlines(
    spooled: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonl_session.views.spool import SpooledPiece, new_spool, spool_text

    monkeypatch.setattr(handing, "PIECE_BYTES", 10)
    text = "".join(f"line {n} · ü\n" for n in range(50))
    spool = new_spool()
    assert spool is not None
    name = spool_text(spool.folder, text.encode())
    assert name is not None
    parts = list(handing.texts_of([SpooledPiece(spool, name, len(text.encode()))]))
    assert "".join(parts) == text and len(parts) > 20
    assert all(part.endswith("\n") for part in parts)


def test_a_slice_s_entries_are_packed_and_unpacked_as_they_were(branched: Path) -> None:
    session = Session.open(branched, cache=False)
    items: list[Any] = [*session.entries[:5], b'{"torn', *session.entries[5:9]]
    packed = slices.packed_records(items)
    assert isinstance(packed, bytes)
    unpacked = slices._unpacked(packed)
    assert [
        item if isinstance(item, bytes) else msgspec.structs.replace(item, source=None)
        for item in items
    ] == unpacked
    assert slices._unpacked(slices.packed_records(items[:1])) == unpacked[:1]


def _first_user_line(path: Path) -> tuple[list[str], int]:
    """The lines of ``path`` and where the first user message is."""
    lines = path.read_text().splitlines()
    return lines, next(i for i, line in enumerate(lines) if '"role":"user"' in line)


def _renders_alike_with_workers(path: Path) -> None:
    for fmt in ("markdown", "json", "html"):
        assert _export(path, fmt, 2) == _export(path, fmt, 1), fmt
    alone = "".join(textconv_chunks(path, cache=False))
    assert "".join(textconv_chunks(path, cache=False, workers=2)) == alone


def test_an_entry_msgpack_cannot_hold_goes_as_a_record_and_renders_alike(
    tmp_path: Path, spread_small: None
) -> None:
    # a message's own timestamp beyond 64 bits: msgpack refuses it, a record holds it
    path = generate(tmp_path / "gen.jsonl", 60, 2)
    lines, at = _first_user_line(path)
    lines[at] = re.sub(r'"timestamp":\d+', f'"timestamp":{2**70}', lines[at], count=1)
    path.write_text("\n".join(lines) + "\n")
    session = Session.open(path, cache=False)
    wide = next(e for e in session.entries if e.message_timestamp == 2**70)
    packed = slices.packed_records([wide, wide])
    assert isinstance(packed, list) and len(packed) == 2
    _renders_alike_with_workers(path)


def test_an_entry_whose_id_holds_a_lone_surrogate_goes_as_a_record_and_renders_alike(
    tmp_path: Path, spread_small: None
) -> None:
    # msgpack refuses a lone surrogate (its UTF-8 is not valid): a record holds it
    path = generate(tmp_path / "gen.jsonl", 60, 2)
    lines, at = _first_user_line(path)
    entry_id = re.search(r'"id":"([0-9a-f]+)"', lines[at])
    assert entry_id is not None
    lines = [line.replace(entry_id[1], entry_id[1] + "\\ud800") for line in lines]
    path.write_text("\n".join(lines) + "\n")
    session = Session.open(path, cache=False)
    odd = next(e for e in session.entries if e.id.endswith("\ud800"))
    assert isinstance(slices.packed_records([odd, odd]), list)
    _renders_alike_with_workers(path)
