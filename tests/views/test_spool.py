"""A long export's texts handed from its workers through files (views/spool.py): each
file is private, read or copied once and then gone, its folder gone once nothing of
it is left, a lost file is an error that names it, and a folder a killed rendering
left is swept by the next."""

from __future__ import annotations

import gc
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.outputs import output_file
from jsonl_session.views import spool as spool_module
from jsonl_session.views.spool import Spool, SpooledPiece, new_spool, spool_text, sweep_spools

LOCK = ".lock"  # (held while the spool lives: see the sweep below)
TEXT = "## Branch 1\n\nsome text · with ünïcode\n".encode() * 100


@pytest.fixture
def spool() -> Spool:
    made = new_spool()
    assert made is not None
    return made


def _piece(spool: Spool, data: bytes = TEXT) -> SpooledPiece:
    name = spool_text(spool.folder, data)
    assert name is not None
    return SpooledPiece(spool, name, len(data))


def test_a_text_is_left_in_a_private_file_taken_once_then_gone(spool: Spool) -> None:
    piece = _piece(spool)
    assert stat.S_IMODE(os.stat(piece.name).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(spool.folder).st_mode) == 0o700
    assert piece.take() == TEXT
    assert os.listdir(spool.folder) == [LOCK]


def test_a_text_is_copied_into_an_output_between_what_is_written_around_it(
    spool: Spool, tmp_path: Path
) -> None:
    piece = _piece(spool)
    target = tmp_path / "out.md"
    with output_file(target) as out:
        out.write(b"# Title\n")
        piece.copy_to(out)
        out.write(b"the end\n")
    assert target.read_bytes() == b"# Title\n" + TEXT + b"the end\n"
    assert os.listdir(spool.folder) == [LOCK]


def test_a_lost_or_cut_file_is_an_error_that_names_it(spool: Spool, tmp_path: Path) -> None:
    gone, cut = _piece(spool), _piece(spool)
    os.unlink(gone.name)
    with pytest.raises(SessionWriteError, match=f"kept in {gone.name} was lost"):
        gone.take()
    with (
        pytest.raises(SessionWriteError, match=f"kept in {gone.name} was lost"),
        output_file(tmp_path / "out.md") as out,
    ):
        gone.copy_to(out)
    assert not (tmp_path / "out.md").exists()
    with open(cut.name, "r+b") as handle:
        handle.truncate(10)
    with pytest.raises(SessionWriteError, match=f"holds 10 bytes of the {len(TEXT)} written"):
        cut.take()


def test_the_folder_goes_once_neither_the_spool_nor_a_piece_of_it_is_left() -> None:
    spool = new_spool()  # (not the fixture's: pytest holds that one to the end)
    assert spool is not None
    folder = spool.folder
    piece = _piece(spool)
    del spool
    gc.collect()
    assert os.path.isdir(folder)  # a piece not yet written still needs its file
    assert piece.take() == TEXT
    _piece(piece._spool)  # a text no one took
    del piece
    gc.collect()
    assert not os.path.exists(folder)


def test_a_worker_that_cannot_write_its_file_says_so_and_keeps_its_text(spool: Spool) -> None:
    shutil.rmtree(spool.folder)
    assert spool_text(spool.folder, TEXT) is None


def test_no_temporary_folder_means_no_spool(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(**_: object) -> str:
        raise PermissionError(13, "not here")

    monkeypatch.setattr("tempfile.mkdtemp", refused)
    assert new_spool() is None


HOLDER = """
import sys, time
from jsonl_session.views.spool import new_spool, spool_text
spool = new_spool()
assert spool_text(spool.folder, b"a text") is not None
print(spool.folder, flush=True)
sys.stdin.read()  # (until told to end)
"""


def _holding_a_spool(folder: Path) -> tuple[subprocess.Popen[str], Path]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(folder), "TEMP": str(folder), "TMP": str(folder)},
    )
    assert child.stdout is not None
    made = Path(child.stdout.readline().strip())
    assert made.parent == folder and made.is_dir()
    return child, made


def _killed(child: subprocess.Popen[str]) -> None:
    child.kill()
    child.wait(timeout=30)
    for stream in (child.stdin, child.stdout):
        assert stream is not None
        stream.close()


def _unchanged_for(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_spool_a_killed_rendering_left_is_swept_and_a_live_one_never(tmp_path: Path) -> None:
    live, kept = _holding_a_spool(tmp_path)
    killed, left = _holding_a_spool(tmp_path)
    _killed(killed)
    for folder in (kept, left):
        _unchanged_for(folder, spool_module.SWEEP_AFTER_SECONDS + 5)
    try:
        assert sweep_spools(str(tmp_path)) == [str(left)]
        assert not left.exists() and kept.is_dir()
    finally:
        assert live.stdin is not None and live.stdout is not None
        live.stdin.close()
        assert live.wait(timeout=30) == 0
        live.stdout.close()
    assert not kept.exists()  # its own, at exit


def test_a_folder_just_made_or_not_a_spool_of_ours_is_left_alone(tmp_path: Path) -> None:
    fresh = tmp_path / f"{spool_module.SPOOL_PREFIX}fresh"  # may not hold its lock yet
    fresh.mkdir()
    (fresh / LOCK).touch()
    a_file = tmp_path / f"{spool_module.SPOOL_PREFIX}file"
    a_file.write_text("not a folder")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / f"{spool_module.SPOOL_PREFIX}link"
    link.symlink_to(elsewhere)
    other = tmp_path / "another-program-spool-x"
    other.mkdir()
    unlocked_old = tmp_path / f"{spool_module.SPOOL_PREFIX}old"  # (made before locks)
    unlocked_old.mkdir()
    unlocked_recent = tmp_path / f"{spool_module.SPOOL_PREFIX}recent"
    unlocked_recent.mkdir()
    _unchanged_for(other, 3600)
    _unchanged_for(unlocked_old, 3600)
    _unchanged_for(unlocked_recent, spool_module.SWEEP_AFTER_SECONDS + 5)
    assert sweep_spools(str(tmp_path)) == [str(unlocked_old)]
    for still in (fresh, a_file, elsewhere, link, other, unlocked_recent):
        assert still.exists()


def test_the_first_spool_of_a_process_sweeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    killed, left = _holding_a_spool(tmp_path)
    _killed(killed)
    _unchanged_for(left, spool_module.SWEEP_AFTER_SECONDS + 5)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(spool_module, "_swept", False)
    made = new_spool()
    assert made is not None and not left.exists()
    _unchanged_for(Path(made.folder), spool_module.SWEEP_AFTER_SECONDS + 5)
    assert sweep_spools(str(tmp_path)) == []  # (a live one: its lock held)


def test_a_folder_without_locks_means_no_spool_and_nothing_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(fd: int) -> bool:
        raise OSError(37, "No locks available")  # (ENOLCK: some network file systems)

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(spool_module, "try_lock", refused)
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    assert new_spool() is None  # (the texts then come through the pipes)
    assert os.listdir(tmp_path) == []
    if before:
        assert len(os.listdir("/proc/self/fd")) == before
