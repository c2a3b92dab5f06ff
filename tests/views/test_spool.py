"""A long export's texts handed from its workers through files (views/spool.py): each
file is private, read or copied once and then gone, its folder gone once nothing of
it is left, and a lost file is an error that names it."""

from __future__ import annotations

import gc
import os
import shutil
import stat
from pathlib import Path

import pytest

from jsonl_session.errors import SessionWriteError
from jsonl_session.storage.outputs import output_file
from jsonl_session.views.spool import Spool, SpooledPiece, new_spool, spool_text

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
    assert os.listdir(spool.folder) == []


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
    assert os.listdir(spool.folder) == []


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
