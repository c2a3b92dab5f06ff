"""Lists and search results are the same with and without the cache: on a fresh folder,
after another process appends (whole lines, torn ones, bad ones), after a record is
damaged or the cache folder is gone, and after a session file is replaced, cut short
and regrown; plus the one change the cache cannot see (a rewrite in place of a middle
line), the switches that turn it off, and the CLI. Every cached run is made twice:
the first writes records, the second must use them and rewrite none."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from builders import BASE_MS
from builders import read_assistant as assistant
from builders import read_user as user
from helpers_large import generate
from helpers_read import dumps, entry, header, iso, message, write_session
from helpers_write import finish, spawn_python
from locations import FIXTURES

from jsonl_session.catalog import listing_read, search_read
from jsonl_session.catalog.finding import session_files
from jsonl_session.catalog.listing import latest_session, list_sessions, session_info
from jsonl_session.catalog.search import search_sessions
from jsonl_session.storage.paths import session_dir_for

KINDS = {"listing": 5, "search": 4}  # each kind of record and its layout version
NEW_MS = 1_950_000_000_000  # 2031: later than every message in the folder
QUERIES = ("parser", "zebracorn", "ZebraCorn", 'say "hi"', "back\\slash", "é", "Renamed plan")
APPEND_CODE = """
import sys
for path, chunk in zip(sys.argv[1::2], sys.argv[2::2]):
    with open(path, "ab") as handle, open(chunk, "rb") as source:
        handle.write(source.read())
"""
Snapshot = dict[str, dict[str, tuple[Any, ...]]]


def line(kind: str, entry_id: str, **fields: Any) -> bytes:
    return dumps(entry(kind, entry_id, None, iso(NEW_MS), **fields)) + b"\n"


def said(entry_id: str, text: str, ms: int = NEW_MS) -> bytes:
    return line("message", entry_id, message=user(text, ms=ms))


def build_folder(folder: Path) -> Path:
    """Generated sessions, every fixture, and hand-made files with each oddity."""
    folder.mkdir()
    for seed, count in ((1, 300), (2, 600), (3, 200)):
        generate(folder / f"gen-{seed}.jsonl", count, seed)
    fixtures = FIXTURES
    for fixture in sorted(fixtures.glob("*.jsonl")):
        shutil.copy(fixture, folder / fixture.name)
    linear = (fixtures / "linear.jsonl").read_bytes()
    (folder / "crlf.jsonl").write_bytes(linear.replace(b"\n", b"\r\n"))
    (folder / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + (fixtures / "named.jsonl").read_bytes())
    quoted = 'Quoting: say "hi" and back\\slash, café'
    write_session(
        folder / "empty-first.jsonl",
        [
            header(session_id="e1"),
            message("u1", None, user("", ms=BASE_MS + 10)),
            b"",  # a blank line
            message("u2", "u1", user(quoted, ms=BASE_MS + 20)),
            message("a1", "u2", assistant("A zebracorn reply", ms=BASE_MS + 30)),
        ],
    )
    names = ["Alpha plan", "", "  Renamed plan  "]
    write_session(
        folder / "names.jsonl",
        [header(session_id="n1")]
        + [entry("session_info", f"n{i}", None, name=name) for i, name in enumerate(names)],
    )
    write_session(
        folder / "cleared.jsonl",
        [
            header(session_id="c1"),
            entry("session_info", "c1", None, name="Alpha plan"),
            entry("session_info", "c2", "c1", name=""),
        ],
    )
    write_session(
        folder / "no-newline.jsonl",
        [header(session_id="x1"), message("u1", None, user("the last line has no newline"))],
        final_eol=False,
    )
    bad_utf8 = said("b1", "cafE9 zebracorn FF é", BASE_MS + 5).rstrip(b"\n")
    bad_utf8 = bad_utf8.replace(b"E9", b"\xe9").replace(b"FF", b"\xff")
    write_session(folder / "bad-utf8.jsonl", [header(session_id="b1"), bad_utf8])
    return folder


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_folder(tmp_path_factory.mktemp("template") / "sessions")


@pytest.fixture
def folder(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "sessions"))


def listing(folder: Path, cache: bool | None) -> list[dict[str, Any]]:
    return [info.to_dict() for info in list_sessions(folder, cache=cache)]


def hits(
    folder: Path, cache: bool | None, queries: tuple[str, ...] = QUERIES
) -> dict[str, list[dict[str, Any]]]:
    files = session_files(folder)
    return {q: [hit.to_dict() for hit in search_sessions(q, files, cache=cache)] for q in queries}


def index_of(cache_dir: Path, kind: str) -> Path:
    """The database holding a kind's rows (storage/facts_index.py)."""
    return cache_dir / f"{kind}-{KINDS[kind]}.sqlite"


def rows_of(cache_dir: Path, kind: str) -> dict[str, tuple[Any, ...]]:
    """A kind's rows: file -> (stamp, record); when a row was stamped is left out (a
    row of a file changed less than two seconds before is stamped again)."""
    if not index_of(cache_dir, kind).exists():
        return {}
    with contextlib.closing(sqlite3.connect(index_of(cache_dir, kind))) as db:
        rows = db.execute("SELECT file, stamp, record FROM records").fetchall()
    return {file: (stamp, record) for file, stamp, record in rows}


def set_row(cache_dir: Path, kind: str, session: Path, stamp: bytes, record: bytes) -> None:
    with contextlib.closing(sqlite3.connect(index_of(cache_dir, kind))) as db, db:
        db.execute(
            "UPDATE records SET stamp = ?, record = ? WHERE file = ?",
            (stamp, record, os.path.abspath(session)),
        )


def records(cache_dir: Path) -> Snapshot:
    """Each kind's rows."""
    return {kind: rows_of(cache_dir, kind) for kind in KINDS}


def assert_cache_agrees(
    folder: Path, cache_dir: Path, queries: tuple[str, ...] = QUERIES
) -> list[dict[str, Any]]:
    """Cached runs (cold, then warm) give what an uncached run gives; the warm run
    rewrites no record. Returns the listing."""
    expected_list, expected_hits = listing(folder, False), hits(folder, False, queries)
    assert listing(folder, None) == expected_list
    assert hits(folder, None, queries) == expected_hits
    written = records(cache_dir)
    assert listing(folder, None) == expected_list
    assert hits(folder, None, queries) == expected_hits
    assert records(cache_dir) == written, "the warm run did not use the records"
    # A header without its newline may still grow, so such a file gets no record yet.
    readable = [
        Path(info["path"])
        for info in expected_list
        if info["problem"] is None and b"\n" in Path(info["path"]).read_bytes()
    ]
    for kind in KINDS:
        assert {os.path.abspath(p) for p in readable} <= written[kind].keys()
    return expected_list


def by_name(infos: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {Path(info["path"]).name: info for info in infos}


def append_elsewhere(*changes: tuple[Path, bytes]) -> None:
    """Append bytes to files from another process (a real child), in order."""
    with tempfile.TemporaryDirectory() as chunks:
        args: list[Path] = []
        for number, (path, data) in enumerate(changes):
            chunk = Path(chunks) / str(number)
            chunk.write_bytes(data)
            args += [path, chunk]
        finish(spawn_python(APPEND_CODE, *args))


class TestFreshFolder:
    def test_lists_and_hits_match_and_records_are_written(
        self, folder: Path, own_cache_folder: Path
    ) -> None:
        infos = by_name(assert_cache_agrees(folder, own_cache_folder))
        assert infos["empty-first.jsonl"]["firstMessage"].startswith("Quoting: say")
        assert infos["names.jsonl"]["name"] == "Renamed plan"
        assert infos["cleared.jsonl"]["name"] is None
        assert infos["bom.jsonl"]["problem"].startswith("line 1 starts with a UTF-8 byte order")
        assert infos["named.jsonl"]["name"] is not None
        assert infos["no-newline.jsonl"]["messageCount"] == 1
        assert infos["damaged-empty.jsonl"]["problem"] == "file is empty"
        assert all(hits(folder, False)[q] for q in QUERIES)  # every query finds something

    def test_latest_session_is_the_same_with_and_without_the_cache(
        self, template: Path, tmp_path: Path
    ) -> None:
        shutil.copytree(template, session_dir_for("/work/project", tmp_path))
        plain = latest_session("/work/project", tmp_path, cache=False)
        assert plain is not None
        for _ in range(2):
            assert latest_session("/work/project", tmp_path) == plain


class TestAppendsByAnotherProcess:
    def test_whole_torn_and_bad_lines_read_the_same(
        self, folder: Path, own_cache_folder: Path
    ) -> None:
        assert_cache_agrees(folder, own_cache_folder)
        torn = said("t1", "a torn zebracorn line, finished later", NEW_MS + 5)
        append_elsewhere(
            (folder / "gen-1.jsonl", said("w1", 'New zebracorn ask: say "hi"', NEW_MS)),
            (folder / "gen-1.jsonl", line("message", "w2", message=assistant("parser é"))),
            (folder / "gen-1.jsonl", line("session_info", "w3", name="Renamed plan by child")),
            (folder / "names.jsonl", line("session_info", "w4", name="  ")),
            (folder / "crlf.jsonl", said("w6", "a CRLF zebracorn").replace(b"\n", b"\r\n")),
            (folder / "damaged-torn-tail.jsonl", said("w7", "after a torn tail")),
            (folder / "damaged-empty.jsonl", dumps(header()) + b"\n"),
            (folder / "damaged-empty.jsonl", said("w8", "first words in a new file")),
        )
        infos = by_name(assert_cache_agrees(folder, own_cache_folder))
        assert infos["gen-1.jsonl"]["name"] == "Renamed plan by child"
        assert infos["gen-1.jsonl"]["modified"] == iso(NEW_MS)
        assert infos["names.jsonl"]["name"] is None
        assert infos["damaged-empty.jsonl"]["firstMessage"] == "first words in a new file"

        append_elsewhere(
            (folder / "linear.jsonl", torn[:40]),
            (folder / "gen-2.jsonl", b'{"type":"message","id": zebracorn\n'),
            (folder / "gen-2.jsonl", b'[1, 2]\nnull\n"say \\"hi\\" zebracorn"\n{}\n'),
            (folder / "gen-3.jsonl", said("w9", "after the bad lines, zebracorn")),
        )
        assert by_name(assert_cache_agrees(folder, own_cache_folder)) != infos
        append_elsewhere((folder / "linear.jsonl", torn[40:]))
        infos = by_name(assert_cache_agrees(folder, own_cache_folder))
        assert infos["linear.jsonl"]["modified"] == iso(NEW_MS + 5)


DAMAGES = ("truncated", "random bytes", "emptied", "swapped", "path not utf-8", "folder deleted")


class TestDamagedRecords:
    @pytest.mark.parametrize("damage", DAMAGES)
    def test_a_damaged_record_is_ignored_and_written_again(
        self, folder: Path, own_cache_folder: Path, damage: str
    ) -> None:
        expected = assert_cache_agrees(folder, own_cache_folder)
        victim, other = folder / "gen-1.jsonl", folder / "gen-2.jsonl"
        if damage == "folder deleted":
            shutil.rmtree(own_cache_folder)
        planted: dict[str, tuple[bytes, bytes]] = {}
        for kind in KINDS if damage != "folder deleted" else ():
            rows = rows_of(own_cache_folder, kind)
            stamp, record = rows[os.path.abspath(victim)]
            if damage == "swapped":
                stamp, record = rows[os.path.abspath(other)]
            elif damage == "path not utf-8":
                stamp = stamp[:-8] + bytes(8)  # a stamp no file has
            else:
                record = damaged_copy(damage, record, kind)
            set_row(own_cache_folder, kind, victim, stamp, record)
            planted[kind] = (stamp, record)
        assert assert_cache_agrees(folder, own_cache_folder) == expected
        for kind, row in planted.items():
            # read afresh and kept again: the victim's own row, not what was planted
            assert rows_of(own_cache_folder, kind)[os.path.abspath(victim)] != row


def damaged_copy(damage: str, data: bytes, kind: str) -> bytes:
    return {
        "truncated": lambda: data[: len(data) // 2],
        "random bytes": lambda: random.Random(kind).randbytes(len(data)),
        "emptied": lambda: b"",
    }[damage]()


class TestFileChanges:
    def test_a_different_session_renamed_over_a_file_is_read_afresh(
        self, folder: Path, own_cache_folder: Path, tmp_path: Path
    ) -> None:
        assert_cache_agrees(folder, own_cache_folder)
        path = folder / "gen-3.jsonl"
        before = path.stat().st_ino
        os.replace(generate(tmp_path / "other.jsonl", 250, seed=9), path)
        assert path.stat().st_ino != before
        assert_cache_agrees(folder, own_cache_folder)

    def test_a_file_cut_short_then_regrown_is_read_afresh(
        self, folder: Path, own_cache_folder: Path
    ) -> None:
        assert_cache_agrees(folder, own_cache_folder)
        path, donor = folder / "gen-1.jsonl", (folder / "gen-3.jsonl").read_bytes()
        size = path.stat().st_size
        os.truncate(path, path.read_bytes().rfind(b"\n", 0, size // 2) + 1)
        assert_cache_agrees(folder, own_cache_folder)
        body = donor[donor.index(b"\n") + 1 :]
        while path.stat().st_size <= size:
            append_elsewhere((path, body))
        assert_cache_agrees(folder, own_cache_folder)

    def test_a_rewrite_in_place_of_a_middle_line(
        self, folder: Path, own_cache_folder: Path
    ) -> None:
        """The same size with a new mtime: read afresh. So too with the mtime put back
        (the ctime still moved), and then followed by an append: a file whose size or
        times changed is checked over the whole covered part (CRC-32), not only the
        first and last 4 KiB."""
        path, queries = folder / "gen-2.jsonl", ("xyzzy", "plugh")
        data = path.read_bytes()
        edit = re.compile(rb'"role":"user","content":\[\{"type":"text","text":"([A-Za-z]{5})')
        found = [m for m in edit.finditer(data) if 8192 < m.start() < len(data) - 16384]
        word_at = found[len(found) // 2].start(1)
        # the user message's own time ends its line
        when = re.search(rb'"timestamp":(\d{13})\}\}$', data[: data.index(b"\n", word_at)])
        assert when is not None
        time_at, original, later = when.start(1), int(when[1]), int(when[1]) + 10**12

        def rewrite(word: bytes, ms: int) -> None:
            with open(path, "r+b") as handle:
                handle.seek(word_at)
                handle.write(word)
                handle.seek(time_at)
                handle.write(str(ms).encode())
            assert path.stat().st_size == len(data)

        assert_cache_agrees(folder, own_cache_folder, queries)
        rewrite(b"Xyzzy", later)  # year 2057: the newest message
        infos = by_name(assert_cache_agrees(folder, own_cache_folder, queries))
        assert infos["gen-2.jsonl"]["modified"] == iso(later)
        before = path.stat()
        rewrite(b"Plugh", original)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        for step in ("mtime put back", "then appended to"):
            fresh, cached = by_name(listing(folder, False)), by_name(listing(folder, None))
            assert cached == fresh, step
            assert fresh["gen-2.jsonl"]["modified"] != iso(later), step
            assert [len(v) for v in hits(folder, False, queries).values()] == [0, 1], step
            assert [len(v) for v in hits(folder, None, queries).values()] == [0, 1], step
            append_elsewhere((path, said("p1", "appended after the rewrite")))


class TestSwitches:
    def test_no_cache_variable_and_cache_false_write_nothing(
        self, folder: Path, own_cache_folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        expected = listing(folder, False), hits(folder, False)
        assert list(own_cache_folder.iterdir()) == []
        monkeypatch.setenv("JSONL_SESSION_NO_CACHE", "1")
        assert (listing(folder, None), hits(folder, None)) == expected
        assert list(own_cache_folder.iterdir()) == []

    def test_the_cli_prints_the_same_json_with_and_without_the_cache(
        self, folder: Path, tmp_path: Path
    ) -> None:
        cache_dir = tmp_path / "cli-cache"
        env = dict(os.environ, JSONL_SESSION_CACHE_DIR=str(cache_dir))

        def run(*args: str) -> str:
            command = [sys.executable, "-W", "error", "-m", "jsonl_session", *args]
            done = subprocess.run(command, env=env, capture_output=True, timeout=300)
            assert done.returncode == 0, done.stderr.decode()
            return done.stdout.decode()

        for command in (["list", str(folder)], ["search", "zebracorn", str(folder)]):
            plain = run("--no-cache", *command, "--json")
            assert run(*command, "--json", "--no-cache") == plain
            assert not cache_dir.exists(), "--no-cache wrote to the cache"
            assert json.loads(plain), "nothing listed or found"
        for command in (["list", str(folder)], ["search", "zebracorn", str(folder)]):
            plain = run("--no-cache", *command, "--json")
            assert run(*command, "--json") == plain  # cold
            assert run(*command, "--json") == plain  # warm
        assert records(cache_dir)["listing"] and records(cache_dir)["search"]


class TestReportedProblems:
    def test_a_reply_appended_to_an_unterminated_reply(self, tmp_path: Path) -> None:
        """The two lines become one that is not JSON, which pi skips; msgspec's
        decode_lines (listing_facts.line_facts) reads ``{...}{...}`` on one line as two values."""
        path = tmp_path / "glued.jsonl"
        reply = message("a1", None, assistant("a reply", ms=BASE_MS + 9))
        write_session(path, [header(), reply], final_eol=False)
        append_elsewhere((path, line("message", "a2", message=assistant("glued", ms=NEW_MS))))
        assert session_info(path, cache=False).message_count == 0  # it counts 2

    @pytest.mark.parametrize(
        "odd",
        [
            (b'{"type":"message","id":"m2","parentId":null,\n"message":{"role":"user"}}', 0),
            (b'{"type":"custom","id":"c1"} {"type":"message","id":"m3"}', 0),
            (b'{"type":"custom","id":"c1"}\r\n\n  \n{"type":"message","id":"m4"}', 1),
            (b'{"type":"message","id":"m5"}\r', 1),
        ],
        ids=["an object over two lines", "two objects with a space", "blank lines", "CR LF"],
    )
    def test_lines_count_as_pi_parses_each_line(
        self, tmp_path: Path, own_cache_folder: Path, odd: tuple[bytes, int]
    ) -> None:
        """pi parses every line on its own: neither half of an object split over two
        lines is an entry, nor is a line holding two objects."""
        data, count = odd
        path = tmp_path / "odd.jsonl"
        reply = message("a1", None, assistant("a reply", ms=BASE_MS + 9))
        write_session(path, [header(), reply])
        append_elsewhere((path, data + b"\n"))
        assert session_info(path, cache=False).message_count == 1 + count

    def test_a_question_appended_to_an_unterminated_last_line(
        self, folder: Path, own_cache_folder: Path
    ) -> None:
        """As above, and the glued line's user message is then decoded on its own:
        NotJson escapes session_info and list_sessions, with or without the cache."""
        assert_cache_agrees(folder, own_cache_folder)
        append_elsewhere((folder / "no-newline.jsonl", said("u2", "glued ask")))
        infos = by_name(assert_cache_agrees(folder, own_cache_folder))
        assert infos["no-newline.jsonl"]["messageCount"] == 0

    def test_an_unterminated_header_then_an_appended_entry(
        self, tmp_path: Path, own_cache_folder: Path
    ) -> None:
        """An entry appended right after a header without its newline joins line 1,
        which then is no header: no record may cover that header before it ends."""
        folder = tmp_path / "s"
        folder.mkdir()
        path = folder / "header-only.jsonl"
        path.write_bytes(dumps(header()))
        assert_cache_agrees(folder, own_cache_folder, ("zebracorn",))
        append_elsewhere((path, said("h1", "zebracorn right after the header")))
        assert_cache_agrees(folder, own_cache_folder, ("zebracorn",))

    def test_text_whose_lower_case_holds_the_query_only_once_decoded(
        self, tmp_path: Path, own_cache_folder: Path
    ) -> None:
        """U+212A KELVIN SIGN lower-cases to "k"; ``\\u0068`` is JSON for "h". The byte
        prefilter of the uncached search looks for the query in the raw bytes."""
        folder = tmp_path / "s"
        folder.mkdir()
        write_session(
            folder / "k.jsonl",
            [
                header(),
                message("k1", None, user("300 \u212aelvin")),
                said("k2", "HIDDEN text").rstrip(b"\n").replace(b"HIDDEN", b"\\u0068idden"),
            ],
        )
        found = hits(folder, None, ("kelvin", "hidden"))
        assert [len(found[q]) for q in ("kelvin", "hidden")] == [1, 1]
        assert hits(folder, False, ("kelvin", "hidden")) == found


class TestLargeFilesReadInChunks:
    """A pi file of LARGE_BYTES or more is described a chunk at a time (lines
    crossing chunks, appends read the same way): the listing a whole read gives."""

    @pytest.fixture(autouse=True)
    def every_file_is_large(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for module in (listing_read, search_read):
            monkeypatch.setattr(module, "LARGE_BYTES", 1)
            monkeypatch.setattr(module, "READ_BYTES", 97)

    def test_fresh_and_appended_listings_and_hits_are_those_of_whole_reads(
        self, folder: Path, own_cache_folder: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def whole_read() -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
            with monkeypatch.context() as whole:
                for module in (listing_read, search_read):
                    whole.setattr(module, "LARGE_BYTES", 1 << 60)
                return listing(folder, False), hits(folder, False)

        def chunked() -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
            # (cached runs, cold and warm, agree with uncached ones, all a chunk at a time)
            return assert_cache_agrees(folder, own_cache_folder), hits(folder, False)

        assert chunked() == whole_read()
        append_elsewhere(
            (folder / "gen-1.jsonl", said("w1", "a later zebracorn ask", NEW_MS)),
            (folder / "linear.jsonl", said("t1", "torn", NEW_MS)[:30]),
            (folder / "crlf.jsonl", said("w2", "crlf").replace(b"\n", b"\r\n")),
        )
        assert chunked() == whole_read()
        append_elsewhere((folder / "linear.jsonl", said("t1", "torn", NEW_MS)[30:]))
        assert chunked() == whole_read()

    def test_describing_a_file_holds_a_chunk_not_the_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = generate(tmp_path / "long.jsonl", entries=1_400)  # about 3 MB
        monkeypatch.setattr(listing_read, "READ_BYTES", 64 << 10)
        tracemalloc.start()
        try:
            chunked = session_info(path, cache=False)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        monkeypatch.setattr(listing_read, "LARGE_BYTES", 1 << 60)
        assert chunked == session_info(path, cache=False)
        assert peak < path.stat().st_size // 2

    def test_searching_a_file_without_the_cache_holds_a_chunk_not_the_file(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        path = generate(tmp_path / "long.jsonl", entries=1_400)
        monkeypatch.setattr(search_read, "READ_BYTES", 64 << 10)
        tracemalloc.start()
        try:
            chunked = [
                h.to_dict() for h in search_sessions("zebracorn", [path], cache=False, tools=True)
            ]
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        monkeypatch.setattr(search_read, "LARGE_BYTES", 1 << 60)
        assert chunked == [
            h.to_dict() for h in search_sessions("zebracorn", [path], cache=False, tools=True)
        ]
        assert chunked and peak < path.stat().st_size // 2
