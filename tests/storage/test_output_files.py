"""The output writer (storage/outputs.py): an output appears whole or not at all, is
owner-only whatever the umask, never goes through a symbolic link, refuses an
existing target unless told to replace it, and turns every OSError into our error
naming the path. The disk really fills here: a file size limit (RLIMIT_FSIZE) in a
child process, and a 1 MiB tmpfs mounted in a user namespace of the child's own
(``unshare -rm``; skipped where that is not permitted)."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers_write import mode_of

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage import output_lines, outputs, paths
from jsonl_session.storage.output_lines import write_lines
from jsonl_session.storage.outputs import check_output, output_file, write_output

CHILD_TIMEOUT = 120.0  # only stops a hung child; nothing asserts how long anything takes


def listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


class TestWholeOrNothing:
    def test_chunks_written_in_the_block_appear_together_when_it_ends(self, tmp_path: Path) -> None:
        target = tmp_path / "out.md"
        with output_file(target) as out:
            out.write(b"first ")
            assert not os.path.lexists(target)
            out.write(b"second")
        assert target.read_bytes() == b"first second"
        assert listing(tmp_path) == ["out.md"]

    def test_an_error_in_the_block_leaves_no_file_and_no_temporary(self, tmp_path: Path) -> None:
        target = tmp_path / "out.md"
        with pytest.raises(KeyError), output_file(target) as out:
            out.write(b"half of it")
            raise KeyError("the renderer failed")
        assert listing(tmp_path) == []

    def test_a_failed_replace_keeps_the_old_file(self, tmp_path: Path) -> None:
        target = tmp_path / "out.md"
        target.write_bytes(b"the old export")
        with pytest.raises(RuntimeError), output_file(target, replace=True) as out:
            out.write(b"new")
            raise RuntimeError("interrupted")
        assert target.read_bytes() == b"the old export"
        assert listing(tmp_path) == ["out.md"]

    def test_a_failed_fsync_names_the_path_and_leaves_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def broken_fsync(fd: int) -> None:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(os, "fsync", broken_fsync)
        target = tmp_path / "out.md"
        with pytest.raises(SessionWriteError) as caught:
            write_output(target, b"data")
        assert str(caught.value) == (
            f"cannot write {target}: Input/output error; nothing was written"
        )
        assert listing(tmp_path) == []

    def test_a_missing_folder_is_our_error_with_the_path(self, tmp_path: Path) -> None:
        target = tmp_path / "no such folder" / "out.md"
        with pytest.raises(SessionWriteError, match=r"cannot write .*out\.md: No such file"):
            write_output(target, b"data")

    def test_without_hard_links_the_name_is_claimed_then_the_whole_file_renamed_over(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def no_links(*args: object, **kwargs: object) -> None:
            raise OSError(errno.EPERM, "Operation not permitted")

        monkeypatch.setattr(os, "link", no_links)
        target = tmp_path / "out.md"
        write_output(target, b"data")
        assert target.read_bytes() == b"data" and listing(tmp_path) == ["out.md"]
        with pytest.raises(SessionWriteError, match="already exists"):
            write_output(target, b"other")
        assert target.read_bytes() == b"data"


class TestExistingTargets:
    @pytest.mark.parametrize("kind", ["file", "link to a file", "dangling link", "folder"])
    def test_anything_at_the_target_is_refused_without_replace(
        self, tmp_path: Path, kind: str
    ) -> None:
        target, victim = tmp_path / "out.md", tmp_path / "victim.txt"
        if kind == "file":
            target.write_bytes(b"mine")
        elif kind == "folder":
            target.mkdir()
        else:
            target.symlink_to(victim)
            if kind == "link to a file":
                victim.write_bytes(b"precious")
        before = listing(tmp_path)
        with pytest.raises(SessionWriteError, match=r"already exists|is a directory"):
            write_output(target, b"new")
        assert listing(tmp_path) == before
        if kind == "file":
            assert target.read_bytes() == b"mine"
        if kind == "dangling link":
            assert not victim.exists()
        if kind == "link to a file":
            assert victim.read_bytes() == b"precious"

    def test_replace_swaps_a_link_for_a_file_and_leaves_the_link_target_alone(
        self, tmp_path: Path
    ) -> None:
        victim = tmp_path / "victim.txt"
        victim.write_bytes(b"precious")
        target = tmp_path / "out.md"
        target.symlink_to(victim)
        write_output(target, b"export", replace=True)
        assert not target.is_symlink() and target.read_bytes() == b"export"
        assert victim.read_bytes() == b"precious"

    def test_replace_never_writes_into_a_folder(self, tmp_path: Path) -> None:
        (tmp_path / "out.md").mkdir()
        with pytest.raises(SessionWriteError, match="is a directory"):
            write_output(tmp_path / "out.md", b"x", replace=True)
        assert listing(tmp_path / "out.md") == []


class TestCheckingFirst:
    @pytest.mark.parametrize("kind", ["file", "dangling link", "folder"])
    def test_check_output_refuses_what_the_write_would_and_touches_nothing(
        self, tmp_path: Path, kind: str
    ) -> None:
        target = tmp_path / "out.md"
        if kind == "file":
            target.write_bytes(b"mine")
        elif kind == "folder":
            target.mkdir()
        else:
            target.symlink_to(tmp_path / "victim")
        before = listing(tmp_path)
        with pytest.raises(SessionWriteError, match=r"already exists; choose|is a directory"):
            check_output(target, exists_hint="choose another")
        assert listing(tmp_path) == before
        if kind != "folder":
            check_output(target, replace=True)  # replacing a file or a link is allowed

    def test_check_output_refuses_a_missing_folder_unless_the_write_makes_it(
        self, tmp_path: Path
    ) -> None:
        target = tmp_path / "missing" / "out.md"
        with pytest.raises(SessionWriteError, match="no folder"):
            check_output(target)
        check_output(target, make_folders=True)
        assert listing(tmp_path) == []

    def test_check_output_passes_a_free_name_and_refuses_the_source_even_to_replace(
        self, tmp_path: Path
    ) -> None:
        source = tmp_path / "s.jsonl"
        source.write_bytes(b"{}\n")
        check_output(tmp_path / "free.md")
        link = tmp_path / "link.jsonl"
        link.symlink_to(source)
        for target in (source, link):
            with pytest.raises(SessionWriteError, match="is the session being exported"):
                check_output(target, replace=True, source=source)


class TestWritingLines:
    def test_lines_are_written_in_blocks_each_ended_by_a_newline(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(output_lines, "LINES_BYTES", 10)
        lines = [b"one", b"two", b"a line longer than a block", b"", b"last"]
        given = iter(lines)
        count = write_lines(tmp_path / "out.jsonl", given)
        assert count == 5 and next(given, None) is None
        assert (
            tmp_path / "out.jsonl"
        ).read_bytes() == b"one\ntwo\na line longer than a block\n\nlast\n"

    def test_a_failure_while_the_lines_are_made_leaves_no_file(self, tmp_path: Path) -> None:
        def failing() -> Iterator[bytes]:
            yield b"x" * (2 << 20)  # written already
            raise ValueError("the next line cannot be made")

        with pytest.raises(ValueError, match="cannot be made"):
            write_lines(tmp_path / "out.jsonl", failing())
        assert listing(tmp_path) == []


class TestModes:
    @pytest.mark.usefixtures("open_umask")
    @pytest.mark.parametrize("replace", [False, True])
    def test_an_output_is_0600_under_umask_0_even_over_a_0644_file(
        self, tmp_path: Path, replace: bool
    ) -> None:
        target = tmp_path / "out.md"
        if replace:
            target.write_bytes(b"old")
            os.chmod(target, 0o644)
        write_output(target, b"new", replace=replace)
        assert mode_of(target) == 0o600


class TestSafeNames:
    @pytest.mark.parametrize(
        "name", ["../../x", "/etc/passwd", "a\\b", "a\0b", "..", ".", "", "x" * 256]
    )
    def test_a_name_that_could_leave_its_folder_is_refused(self, name: str) -> None:
        with pytest.raises(SessionWriteError, match="refusing to write there"):
            paths.safe_name(name)

    @pytest.mark.parametrize("name", ["2026-01-01T00-00-00-000Z_abc.jsonl", "..x", "é" * 127])
    def test_an_ordinary_name_passes(self, name: str) -> None:
        assert paths.safe_name(name) == name

    def test_a_cwd_of_dot_dot_stays_one_folder_under_the_root(self, tmp_path: Path) -> None:
        for cwd in ("..", "../..", "/../../etc"):
            folder = paths.session_dir_for(cwd, tmp_path)
            assert folder.parent == tmp_path and paths.safe_name(folder.name) == folder.name


# --- the disk really fills ---------------------------------------------------------------

WRITER_CHILD = """
import resource, signal, sys
from pathlib import Path
from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.outputs import output_file
target, limit = Path(sys.argv[1]), int(sys.argv[2])
if limit:
    # Python ignores SIGXFSZ already; said here because a write past the limit must
    # raise EFBIG rather than kill the child
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    with output_file(target, replace=True) as out:
        for _ in range(64):
            out.write(b"x" * 32768)
except SessionWriteError as exc:
    print(exc)
    sys.exit(3)
"""


def run_writer(target: Path, limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", WRITER_CHILD, str(target), str(limit)],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_file_size_limit_leaves_the_old_output_and_names_the_path(tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_bytes(b"the previous export")
    done = run_writer(target, 100_000)  # 2 MiB asked for
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == f"cannot write {target}: File too large; nothing was written"
    assert target.read_bytes() == b"the previous export"
    assert listing(tmp_path) == ["out.md"]


def tmpfs_unavailable(folder: Path) -> str | None:
    """Why a tmpfs cannot be mounted here, or None."""
    folder.mkdir(exist_ok=True)
    command = ["unshare", "-rm", "sh", "-c", f'mount -t tmpfs -o size=64k tmpfs "{folder}"']
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    except OSError as exc:
        return f"cannot run unshare: {exc}"
    return None if done.returncode == 0 else f"no tmpfs in a user namespace: {done.stderr}"


# Mounts a 1 MiB tmpfs on $1, puts an old export there, runs the writer child (2 MiB)
# and prints what the tmpfs holds after it, before the namespace (and the tmpfs) goes.
FULL_DISK_SCRIPT = """
mount -t tmpfs -o size=1m tmpfs "$1" || exit 90
printf 'the previous export' > "$1/out.md"
"$2" -W error -c "$3" "$1/out.md" 0
status=$?
echo "left: $(ls -A "$1" | tr '\\n' ' ')"
echo "old: $(cat "$1/out.md")"
exit $status
"""


@pytest.mark.skipif(sys.platform != "linux", reason="tmpfs in a user namespace is Linux's")
def test_a_full_disk_leaves_the_old_output_and_names_the_path(tmp_path: Path) -> None:
    mount_point = tmp_path / "small"
    reason = tmpfs_unavailable(mount_point)
    if reason is not None:
        pytest.skip(reason)
    command = ["unshare", "-rm", "sh", "-c", FULL_DISK_SCRIPT, "sh"]
    command += [str(mount_point), sys.executable, WRITER_CHILD]
    done = subprocess.run(command, capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    assert done.returncode == 3, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    target = mount_point / "out.md"
    assert lines == [
        f"cannot write {target}: No space left on device; nothing was written",
        "left: out.md ",
        "old: the previous export",
    ]


def test_a_folder_without_locks_refuses_the_output_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonl_session.storage import outputs

    def no_locks(fd: int) -> bool:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))  # NFS without lockd

    monkeypatch.setattr(outputs, "try_lock", no_locks)
    target = tmp_path / "export.md"
    with pytest.raises(
        SessionWriteError, match=rf"cannot write {re.escape(str(target))}.*nothing was written"
    ):
        write_output(target, b"text")
    assert listing(tmp_path) == []


def test_a_new_session_under_a_file_is_refused_with_our_error(tmp_path: Path) -> None:
    from jsonl_session import Session

    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(SessionWriteError, match=r"afile/sub.*Not a directory; nothing was written"):
        session = Session.create(cwd="/w", session_dir=tmp_path / "afile" / "sub")
        session.append_message({"role": "user", "content": "hi", "timestamp": 1})


class TestSyncedAsWritten:
    """A long output is synced in the background as it is written, so the fsync at
    its end waits only for its last part; a failure there fails the write."""

    @pytest.fixture
    def syncs(self, monkeypatch: pytest.MonkeyPatch) -> list[int]:
        done: list[int] = []
        real = outputs._sync_data

        def counting(fd: int) -> None:
            real(fd)
            done.append(fd)

        monkeypatch.setattr(outputs, "SYNC_EVERY", 10)
        monkeypatch.setattr(outputs, "_sync_data", counting)
        return done

    def test_a_long_output_is_synced_while_it_is_written_and_ends_whole(
        self, tmp_path: Path, syncs: list[int]
    ) -> None:
        target = tmp_path / "out.md"
        with output_file(target) as out:
            for number in range(50):
                out.write(b"%03d chunk\n" % number)
                out.settle()  # (each sync done before the next write: none is skipped)
        assert len(syncs) == 50
        assert target.read_bytes() == b"".join(b"%03d chunk\n" % n for n in range(50))
        assert listing(tmp_path) == ["out.md"]

    def test_an_output_written_without_fsync_is_not_synced_as_it_goes(
        self, tmp_path: Path, syncs: list[int]
    ) -> None:
        with output_file(tmp_path / "out.md", fsync="never") as out:
            for _ in range(50):
                out.write(b"0123456789abc")
        assert syncs == []

    def test_a_failed_sync_in_the_background_fails_the_write_and_leaves_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        def broken(fd: int) -> None:
            raise OSError(errno.EIO, "Input/output error")

        monkeypatch.setattr(outputs, "SYNC_EVERY", 10)
        monkeypatch.setattr(outputs, "_sync_data", broken)
        target = tmp_path / "out.md"
        with pytest.raises(SessionWriteError) as caught, output_file(target) as out:
            out.write(b"more than ten bytes")
        assert str(caught.value) == (
            f"cannot write {target}: Input/output error; nothing was written"
        )
        assert listing(tmp_path) == []


class TestCopyingAFileIn:
    """`OutputWriter.copy_from` (a worker's text left in a file): copied by the kernel
    where it can, through a buffer where it cannot, between what was written around
    it, and refused whole when the file copied is shorter than said."""

    def _source(self, tmp_path: Path, data: bytes) -> int:
        path = tmp_path / "spooled"
        path.write_bytes(data)
        return os.open(path, os.O_RDONLY)

    @pytest.mark.parametrize("refused", [(), ("copy_file_range",), ("copy_file_range", "sendfile")])
    def test_a_file_is_copied_in_whichever_way_the_system_allows(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: tuple[str, ...]
    ) -> None:
        used: list[str] = []
        for name in ("copy_file_range", "sendfile"):
            real = getattr(os, name, None)
            if real is None:
                continue

            def way(*args: int, name: str = name, real: object = real) -> int:
                used.append(name)
                if name in refused:  # as across file systems, or to a file that appends
                    raise OSError(errno.EXDEV, "refused here")
                return real(*args)  # type: ignore[operator, no-any-return]

            monkeypatch.setattr(os, name, way)
        data = bytes(range(256)) * 5000  # more than one buffer's worth
        source = self._source(tmp_path, data + b"not this")
        target = tmp_path / "out.md"
        try:
            with output_file(target) as out:
                out.write(b"before ")
                out.copy_from(source, len(data))
                out.write(b" after")
        finally:
            os.close(source)
        assert target.read_bytes() == b"before " + data + b" after"
        assert out.written == len(data) + 13
        if sys.platform.startswith("linux"):  # (the ways tried, in order, each until it fails)
            tried = ["copy_file_range", "sendfile"][: len(refused) + 1]
            assert list(dict.fromkeys(used)) == tried

    def test_a_file_shorter_than_said_fails_the_output_which_is_not_made(
        self, tmp_path: Path
    ) -> None:
        source = self._source(tmp_path, b"short")
        target = tmp_path / "out.md"
        try:
            with (
                pytest.raises(SessionWriteError, match=r"out\.md.*ended after 5 of its 9 bytes"),
                output_file(target) as out,
            ):
                out.copy_from(source, 9)
        finally:
            os.close(source)
        assert not os.path.lexists(target)
        assert listing(tmp_path) == ["spooled"]

    @pytest.mark.skipif(not hasattr(os, "pread"), reason="the stand-in copies with pread")
    def test_a_kernel_copy_that_fails_halfway_is_not_begun_again(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        calls: list[int] = []

        def halfway(source: int, target: int, count: int, offset: int) -> int:
            calls.append(offset)
            if offset:
                raise OSError(errno.EXDEV, "refused after a part")
            return os.write(target, os.pread(source, 3, offset))

        monkeypatch.setattr(os, "copy_file_range", halfway, raising=False)
        source = self._source(tmp_path, b"abcdefgh")
        try:
            with (
                pytest.raises(SessionWriteError, match="refused after a part"),
                output_file(tmp_path / "out.md") as out,
            ):
                out.copy_from(source, 8)
        finally:
            os.close(source)
        assert calls == [0, 3]  # (no other way started over the 3 bytes copied)
        assert listing(tmp_path) == ["spooled"]
