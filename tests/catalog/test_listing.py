"""Listing and searching sessions: pi's rules for each field, damaged files listed
with their problem, newest first, and the list / latest / search commands."""

from __future__ import annotations

import gc
import json
import math
import os
import pickle
import random
import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from builders import BASE_MS
from builders import read_assistant as assistant
from builders import read_user as user
from helpers_cli import runner
from helpers_read import entry, header, iso
from locations import FIXTURES, ROOT

from jsonl_session.catalog import listing
from jsonl_session.catalog.finding import files_of, session_files
from jsonl_session.catalog.listing import latest_session, list_sessions, session_info
from jsonl_session.catalog.listing_facts import EPOCH, Facts, HeaderFacts, from_ms, kept_moment
from jsonl_session.catalog.listing_read import NO_MESSAGES, info_of
from jsonl_session.catalog.search import SearchHit, search_sessions
from jsonl_session.catalog.session_info import SessionInfo
from jsonl_session.cli import app
from jsonl_session.storage import facts_index
from jsonl_session.storage.facts_rows import index_key, index_keys
from jsonl_session.storage.paths import session_dir_for


def write(path: Path, *lines: dict[str, Any] | str) -> Path:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def three_messages(folder: Path, name: str = "s.jsonl", **head: Any) -> Path:
    return write(
        folder / name,
        header(**head),
        entry("message", "a1", None, message=user("", ms=BASE_MS + 10)),
        entry(
            "message",
            "a2",
            "a1",
            message={
                "role": "user",
                "content": [
                    {"type": "text", "text": "first"},
                    {"type": "image", "data": "AA==", "mimeType": "image/png"},
                    {"type": "text", "text": "words"},
                ],
                "timestamp": BASE_MS + 20,
            },
        ),
        entry("message", "a3", "a2", message=assistant("reply", ms=BASE_MS + 30)),
        entry("session_info", "n1", "a3", name="  Old name  "),
        entry(
            "message",
            "a4",
            "a1",
            message={"role": "toolResult", "toolCallId": "x", "content": [], "timestamp": 9e15},
        ),
        entry("session_info", "n2", "n1", name="  Release prep "),
    )


class TestResultsAreLightObjects:
    """A listing or search makes an object per file or hit, up to hundreds of
    thousands: frozen structs the garbage collector does not track, a listing's
    holding its path as text (its Path made when asked for)."""

    def test_a_session_info_is_frozen_untracked_and_picklable(self, tmp_path: Path) -> None:
        path = three_messages(tmp_path)
        info = session_info(path)
        assert not gc.is_tracked(info)
        assert info.path == path and info.path_text == str(path)
        assert info.to_dict()["path"] == str(path)
        with pytest.raises(AttributeError):
            info.name = "other"  # type: ignore[misc]
        renamed = msgspec.structs.replace(info, name="other")
        assert renamed.name == "other" and renamed.path == info.path and renamed != info
        assert pickle.loads(pickle.dumps(info)) == info
        assert hash(info) == hash(msgspec.structs.replace(info))

    def test_a_search_hit_is_frozen_untracked_and_picklable(self, tmp_path: Path) -> None:
        path = three_messages(tmp_path)
        (hit,) = search_sessions("first words", [path])
        assert hit.path == path and hit.path_text == str(path) == hit.to_dict()["path"]
        assert list(search_sessions("first words", [str(path)])) == [hit]
        assert not gc.is_tracked(hit)
        with pytest.raises(AttributeError):
            hit.line = 0  # type: ignore[misc]
        assert pickle.loads(pickle.dumps(hit)) == hit

    @pytest.mark.parametrize("cache", [False, True], ids=["no cache", "warm cache"])
    def test_a_listing_leaves_the_collector_nothing_to_track_for_each_file(
        self, tmp_path: Path, cache: bool, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folder = tmp_path / "many"
        folder.mkdir()
        for number in range(300):
            three_messages(folder, f"s{number:03d}.jsonl")
        monkeypatch.setattr(facts_index, "QUIET_NS", 0)  # trusted on their times at once
        store = tmp_path / "cache" if cache else False
        list_sessions(folder, cache=store)
        gc.collect()
        before = len(gc.get_objects())
        infos = list_sessions(folder, cache=store)
        gc.collect()
        assert len(infos) == 300
        assert len(gc.get_objects()) - before < 30  # a Path each would be 600 more


class TestTheOrderOfAListing:
    """Newest first, and among sessions of one time the path from the last: a folder's
    files, which come sorted by path, are only turned round and sorted by time."""

    @pytest.mark.parametrize("presorted", [True, False])
    def test_it_is_the_order_of_time_then_path_from_the_last(self, presorted: bool) -> None:
        rng = random.Random(3)
        moments = [datetime(2025, 1, day, tzinfo=UTC) for day in (1, 2, 3)]
        files = [f"/p/{rng.choice('abc')}{number:04d}.jsonl" for number in range(500)]
        files = sorted(files) if presorted else files
        infos = [
            SessionInfo(file, None, "/", None, None, None, rng.choice(moments), 0, "")
            for file in files
        ]
        expected = sorted(infos, key=lambda info: (info.modified, info.path_text), reverse=True)
        listing._newest_first(infos, files)
        assert infos == expected


class TestPathsAsText:
    """The files found are named as ``str(Path(...))`` names them."""

    @pytest.mark.parametrize("where", [".", "here", "here/", "./here", "ABSOLUTE"])
    def test_a_folders_files_are_named_as_pathlib_names_them(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
    ) -> None:
        monkeypatch.chdir(tmp_path)
        folder = tmp_path if where == "." else tmp_path / "here"
        folder.mkdir(exist_ok=True)
        for name in ("b.jsonl", "a.jsonl", "notes.txt"):
            (folder / name).write_text("{}\n")
        (folder / "deeper").mkdir()
        (folder / "deeper" / "c.jsonl").write_text("{}\n")
        given = Path(str(tmp_path / "here") if where == "ABSOLUTE" else where)
        assert files_of(given, False) == [str(given / "a.jsonl"), str(given / "b.jsonl")]
        deep = [str(given / "a.jsonl"), str(given / "b.jsonl"), str(given / "deeper" / "c.jsonl")]
        assert files_of(given, True) == deep
        assert session_files(given) == [given / "a.jsonl", given / "b.jsonl"]

    def test_paths_under_dot_folders_are_keyed_as_they_are(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # pi's sessions live under ~/.pi: a name that starts with a dot is normal
        calls: list[str] = []
        real = os.path.abspath
        monkeypatch.setattr(os.path, "abspath", lambda p: calls.append(p) or real(p))
        files = [f"/home/u/.pi/agent/sessions/--w--/s{number}.jsonl" for number in range(3)]
        assert index_keys(files) == files and [index_key(file) for file in files] == files
        assert calls == []
        assert index_key("/home/u/.pi/./s.jsonl") == "/home/u/.pi/s.jsonl" and calls

    def test_a_path_given_where_the_text_goes_is_kept_as_text(self) -> None:
        moment = datetime(2025, 1, 1, tzinfo=UTC)
        given = Path("/p/s.jsonl")
        info = SessionInfo(given, None, "/", None, None, None, moment, 0, "")  # type: ignore[arg-type]
        assert info.path_text == "/p/s.jsonl" and info.path == given
        assert info == SessionInfo("/p/s.jsonl", None, "/", None, None, None, moment, 0, "")
        hit = SearchHit(given, None, None, 1, None, "user", "s")  # type: ignore[arg-type]
        assert hit.path_text == "/p/s.jsonl" and hit.to_dict()["path"] == "/p/s.jsonl"

    def test_index_keys_are_index_key_of_each(self, tmp_path: Path) -> None:
        normal = [f"/x/s{number}.jsonl" for number in range(5)]
        assert index_keys(normal) is normal  # nothing to do: one test of them all
        for odd in ("rel.jsonl", "/x/./a.jsonl", "/x//a.jsonl", "/x/../a.jsonl", "/x/.a.jsonl"):
            files = [*normal, odd]
            assert index_keys(files) == [index_key(file) for file in files]
        assert index_keys([]) == []


class TestSessionInfo:
    def test_follows_pis_rules_for_every_field(self, tmp_path: Path) -> None:
        info = session_info(three_messages(tmp_path, parentSession="/x/parent.jsonl"))
        assert info.problem is None
        assert info.name == "Release prep"
        # the empty user message has no text, so the next user message is the first
        assert info.first_message == "first words"
        assert info.message_count == 4  # every message entry, tool results and branches too
        # a tool result's time does not count; the latest user/assistant message does
        assert info.to_dict()["modified"] == iso(BASE_MS + 30)
        assert info.to_dict()["created"] == iso(BASE_MS)
        assert info.parent_session == "/x/parent.jsonl" and info.cwd == "/work/project"

    def test_an_empty_name_clears_an_earlier_one(self, tmp_path: Path) -> None:
        path = three_messages(tmp_path)
        with path.open("a") as handle:
            handle.write(json.dumps(entry("session_info", "n3", "n2", name="   ")) + "\n")
        assert session_info(path).name is None

    def test_modified_falls_back_to_the_entry_time_then_the_header(self, tmp_path: Path) -> None:
        no_number = {"role": "user", "content": "hi", "timestamp": "soon"}
        path = write(
            tmp_path / "a.jsonl",
            header(),
            entry("message", "u", None, iso(BASE_MS + 5000), message=no_number),
        )
        assert session_info(path).to_dict()["modified"] == iso(BASE_MS + 5000)
        bare = write(tmp_path / "b.jsonl", header())
        info = session_info(bare)
        assert info.to_dict()["modified"] == iso(BASE_MS) and info.first_message == NO_MESSAGES

    def test_damaged_lines_are_skipped_and_damaged_files_listed(self, tmp_path: Path) -> None:
        path = three_messages(tmp_path)
        with path.open("a") as handle:
            handle.write('{"type":"message","id":"torn')
        assert session_info(path).message_count == 4
        for name in ("damaged-empty", "damaged-no-header", "damaged-header-not-first"):
            info = session_info(FIXTURES / f"{name}.jsonl")
            assert info.problem is not None and info.id is None

    @pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="no /dev/fd on this system")
    @pytest.mark.parametrize("cache", [False, True])
    def test_a_session_read_from_a_pipe_is_described(self, tmp_path: Path, cache: bool) -> None:
        """A path that is a pipe (``<(cat s.jsonl)``, /dev/stdin) is read as a file is."""
        data = (FIXTURES / "branching.jsonl").read_bytes()
        expected = session_info(FIXTURES / "branching.jsonl", cache=False)
        read, write = os.pipe()
        writer = threading.Thread(target=lambda: (os.write(write, data), os.close(write)))
        writer.start()
        try:
            info = session_info(f"/dev/fd/{read}", cache=tmp_path / "cache" if cache else False)
        finally:
            writer.join()
            os.close(read)
        assert info.problem is None
        assert (info.id, info.message_count, info.first_message) == (
            expected.id,
            expected.message_count,
            expected.first_message,
        )


class TestListSessions:
    def test_lists_newest_first_and_keeps_damaged_files(self, tmp_path: Path) -> None:
        folder = tmp_path / "proj"
        for fixture in ("linear", "branching", "damaged-empty", "v1"):
            shutil.copy(FIXTURES / f"{fixture}.jsonl", folder.mkdir(exist_ok=True) or folder)
        infos = list_sessions(folder)
        assert len(infos) == 4
        readable = [i for i in infos if i.problem is None]
        assert [i.path.name for i in readable] == ["branching.jsonl", "linear.jsonl", "v1.jsonl"]
        assert [i.path.name for i in list_sessions(folder, limit=2)] == [
            i.path.name for i in infos[:2]
        ]

    def test_all_lists_every_project_under_the_root(self, tmp_path: Path) -> None:
        three_messages(tmp_path / "one")
        three_messages(tmp_path / "two", name="t.jsonl")
        assert len(list_sessions(tmp_path, all_projects=True)) == 2
        assert list_sessions(tmp_path) == []

    def test_latest_is_the_most_recently_active_session_of_a_directory(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path))
        folder = session_dir_for("/work/project")
        three_messages(folder, "older.jsonl")
        newer = write(
            folder / "newer.jsonl",
            header(),
            entry("message", "u", None, message=user("later", ms=BASE_MS + 99_000)),
        )
        found = latest_session("/work/project")
        assert found is not None and found.path == newer
        code = runner.invoke(app, ["latest", "--cwd", "/work/project"])
        assert code.exit_code == 0 and code.stdout.strip() == str(newer)
        missing = runner.invoke(app, ["latest", "--cwd", "/nowhere"])
        assert missing.exit_code == 1 and "no sessions for /nowhere" in missing.stderr


class TestAFolderForOneWorkingDirectory:
    """pi 1.5's list(cwd, dir): a folder given with a cwd keeps the sessions whose
    header names that directory, unless the folder is the directory's own."""

    @pytest.fixture
    def mixed(self, tmp_path: Path) -> Path:
        folder = tmp_path / "shared"
        three_messages(folder, "app.jsonl", cwd="/work/app")
        three_messages(folder, "app-too.jsonl", cwd="/work/app/")
        three_messages(folder, "other.jsonl", cwd="/work/other")
        three_messages(folder, "empty-cwd.jsonl", cwd="")
        shutil.copy(FIXTURES / "damaged-no-header.jsonl", folder)
        return folder

    def test_only_the_sessions_started_there_are_listed(self, mixed: Path) -> None:
        names = {info.path.name for info in list_sessions(mixed, cwd="/work/app")}
        assert names == {"app.jsonl", "app-too.jsonl"}
        assert [i.path.name for i in list_sessions(mixed, cwd="/work/other")] == ["other.jsonl"]
        assert list_sessions(mixed, cwd="/nowhere") == []
        assert len(list_sessions(mixed)) == 5  # without a cwd: every file, damaged ones too

    def test_the_directorys_own_folder_is_not_filtered(self, tmp_path: Path) -> None:
        own = session_dir_for("/work/app", tmp_path)
        three_messages(own, "moved.jsonl", cwd="/work/elsewhere")
        assert [i.path.name for i in list_sessions(own, cwd="/work/app")] == ["moved.jsonl"]

    def test_latest_in_a_folder_picks_among_the_sessions_started_there(self, mixed: Path) -> None:
        for offset, name in enumerate(("app.jsonl", "app-too.jsonl", "other.jsonl")):
            os.utime(mixed / name, (1_900_000_000 + offset, 1_900_000_000 + offset))
        found = latest_session("/work/app", folder=mixed)
        assert found is not None and found.path.name == "app-too.jsonl"
        assert latest_session("/nowhere", folder=mixed) is None

    def test_the_commands_take_the_folder_and_the_cwd(self, mixed: Path) -> None:
        listed = runner.invoke(app, ["list", str(mixed), "--cwd", "/work/other", "--json"])
        assert [Path(i["path"]).name for i in json.loads(listed.stdout)] == ["other.jsonl"]
        found = runner.invoke(app, ["latest", str(mixed), "--cwd", "/work/other"])
        assert found.exit_code == 0 and found.stdout.strip() == str(mixed / "other.jsonl")
        hits = runner.invoke(app, ["search", "reply", str(mixed), "--cwd", "/work/other"])
        assert str(mixed / "other.jsonl") in hits.stdout
        assert str(mixed / "app.jsonl") not in hits.stdout
        missing = runner.invoke(app, ["latest", str(mixed), "--cwd", "/nowhere"])
        assert missing.exit_code == 1
        assert f"no sessions for /nowhere in {mixed} started in /nowhere" in missing.stderr


class TestSearch:
    def test_finds_user_and_assistant_text_and_names_case_insensitively(
        self, tmp_path: Path
    ) -> None:
        path = three_messages(tmp_path)
        hits = list(search_sessions("WORDS", [path]))
        assert [(h.entry_id, h.role, h.snippet) for h in hits] == [("a2", "user", "first words")]
        assert [h.role for h in search_sessions("release", [path])] == ["name"]
        assert [h.entry_id for h in search_sessions("reply", [path])] == ["a3"]

    def test_finds_text_json_writes_escaped(self, tmp_path: Path) -> None:
        quoted = 'say "hi"\\now'
        path = write(
            tmp_path / "q.jsonl", header(), entry("message", "u", None, message=user(quoted))
        )
        assert [h.entry_id for h in search_sessions('"hi"\\', [path])] == ["u"]
        assert [h.entry_id for h in search_sessions("Ünï", [ROOT / "fixtures" / "linear.jsonl"])]

    def test_snippets_are_short_and_marked_when_cut(self, tmp_path: Path) -> None:
        text = "a" * 500 + " needle " + "b" * 500
        path = write(
            tmp_path / "n.jsonl", header(), entry("message", "u", None, message=user(text))
        )
        (hit,) = search_sessions("needle", [path])
        assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
        assert len(hit.snippet) < 140


class TestListCommand:
    def test_json_lists_the_folder(self, tmp_path: Path) -> None:
        three_messages(tmp_path)
        done = runner.invoke(app, ["list", str(tmp_path), "--json"])
        assert done.exit_code == 0
        (info,) = json.loads(done.stdout)
        assert info["name"] == "Release prep" and info["messageCount"] == 4

    def test_the_default_is_the_current_directorys_sessions(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path / "root"))
        work = tmp_path / "work"
        work.mkdir()
        monkeypatch.chdir(work)
        three_messages(session_dir_for(os.path.abspath(work)))
        done = runner.invoke(app, ["list"])
        assert done.exit_code == 0 and "Release prep" in done.stdout

    def test_search_command_prints_path_line_and_snippet(self, tmp_path: Path) -> None:
        path = three_messages(tmp_path)
        done = runner.invoke(app, ["search", "reply", str(tmp_path), "--json"])
        assert done.exit_code == 0
        (hit,) = json.loads(done.stdout)
        assert hit["path"] == str(path) and hit["entryId"] == "a3" and hit["line"] == 4


class TestTimesAsMilliseconds:
    """A SessionInfo keeps its times as milliseconds, kept only when a datetime holds
    them, and makes the datetimes when asked: the ones making them at once gave."""

    def test_the_times_are_those_made_at_once(self) -> None:
        def at_once(created_ms: float | None, latest_ms: float | None, mtime: float) -> Any:
            # what the listing made before it kept milliseconds
            created = kept_moment(created_ms) if created_ms is not None else None
            latest = kept_moment(latest_ms) if latest_ms is not None and latest_ms > 0 else None
            return created, latest or created or from_ms(mtime * 1000) or EPOCH

        odd = [
            None, 0.0, -1.0, 1.5, 1.7e12 + 0.0004, 1.7e12, 32_503_680_000_000.0,
            32_503_679_999_999.9, 253_402_300_799_999.0, 253_402_300_800_000.0,
            -62_135_596_800_000.0, -62_135_596_800_001.0, 1e300, -1e300, math.inf,
            -math.inf, math.nan, 8.64e15, 8.64e15 + 1,
        ]  # fmt: skip
        mtimes = [0.0, 1.7e9 + 0.123456789, -5.0, 1e15]
        for created_ms in odd:
            for latest_ms in odd:
                for mtime in mtimes:
                    head = HeaderFacts(None, "/", None, created_ms)
                    info = info_of("/s.jsonl", head, Facts(1, latest_ms), mtime)
                    expected = at_once(created_ms, latest_ms, mtime)
                    assert (info.created, info.modified) == expected, (created_ms, latest_ms)

    @pytest.mark.parametrize(
        "moment",
        [
            datetime(2025, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
            datetime(2038, 3, 31, 23, 43, 3, 951000, tzinfo=UTC),
        ],
    )
    def test_datetimes_given_where_the_milliseconds_go_are_kept_as_those(
        self, moment: datetime
    ) -> None:
        info = SessionInfo("/p/s.jsonl", None, "/", None, None, moment, moment, 0, "")  # type: ignore[arg-type]
        whole_ms = round(moment.timestamp() * 1000)
        assert info.created_ms == info.modified_ms == whole_ms  # exact, not timestamp() * 1000
        assert info.created == info.modified == moment
        assert info == SessionInfo("/p/s.jsonl", None, "/", None, None, whole_ms, whole_ms, 0, "")


class TestTimesNoClockHolds:
    """A message time no clock holds (1e300, 2**70, 10**400, a year past 9999) is left
    out like a missing one: the listing shows the other times, and one damaged file
    never stops the listing of the others."""

    @pytest.mark.parametrize(
        "moment",
        ["1e300", str(2**70), "1" + "0" * 400, "-9000000000000000", "1.7976931348623157e308"],
    )
    @pytest.mark.parametrize("cache", [False, None], ids=["no cache", "cache"])
    def test_the_other_times_are_shown_and_every_file_is_listed(
        self, tmp_path: Path, moment: str, cache: bool | None
    ) -> None:
        three_messages(tmp_path, "fine.jsonl")
        late = entry("message", "b2", "b1", message=user("later", ms=0))
        late_line = json.dumps(late).replace('"timestamp": 0}', f'"timestamp": {moment}}}')
        assert moment in late_line
        write(
            tmp_path / "odd.jsonl",
            header(id="odd"),
            entry("message", "b1", None, message=user("hello", ms=BASE_MS + 5)),
            late_line,
        )
        listed = {info.path.name: info for info in list_sessions(tmp_path, cache=cache)}
        assert set(listed) == {"fine.jsonl", "odd.jsonl"}
        odd = listed["odd.jsonl"]
        assert odd.message_count == 2 and odd.problem is None
        assert odd.modified.timestamp() * 1000 == pytest.approx(BASE_MS + 5)

    def test_a_header_year_no_clock_holds_leaves_created_unknown(self, tmp_path: Path) -> None:
        path = three_messages(tmp_path, timestamp="99999-01-01T00:00:00.000Z")
        info = session_info(path, cache=False)
        assert info.created is None
        assert info.modified.timestamp() * 1000 == pytest.approx(BASE_MS + 30)
