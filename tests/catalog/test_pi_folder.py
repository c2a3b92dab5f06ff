"""pi's own session folder is looked in as well as ours, so a pi user's first `list`
shows their sessions; `latest` picks what pi's --continue picks."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers_cli import invoke
from locations import GOLDEN_DIR

from jsonl_session import latest_session, list_sessions, pi_session_root, session_dir_for

PI_WROTE = GOLDEN_DIR / "pi15" / "corpus"
CWD = "/home/dev/app"  # the corpus sessions' working directory


@pytest.fixture
def both_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi-agent"))
    monkeypatch.setenv("JSONL_SESSION_DIR", str(tmp_path / "ours"))
    pi_folder = session_dir_for(CWD, pi_session_root())
    ours = session_dir_for(CWD)
    for folder, names in (
        (pi_folder, ["prompt-and-tools", "usage-entries"]),
        (ours, ["context-edits"]),
    ):
        folder.mkdir(parents=True)
        for name in names:
            shutil.copy(PI_WROTE / f"{name}.jsonl", folder / f"{name}.jsonl")
    return pi_folder, ours


def age(path: Path, seconds: float) -> None:
    stamp = path.stat().st_mtime - seconds
    os.utime(path, (stamp, stamp))


class TestPisFolder:
    def test_pis_folder_is_under_the_agent_dir_or_home(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
        assert pi_session_root() == tmp_path / "sessions"
        monkeypatch.delenv("PI_CODING_AGENT_DIR")
        monkeypatch.setenv("HOME", str(tmp_path))
        assert pi_session_root() == tmp_path / ".pi" / "agent" / "sessions"

    def test_list_shows_the_sessions_of_both_folders(self, both_folders: tuple[Path, Path]) -> None:
        names = {info.path.stem for info in list_sessions(cwd=CWD)}
        assert names == {"prompt-and-tools", "usage-entries", "context-edits"}
        assert len(list_sessions(all_projects=True)) == 3
        code, out, _ = invoke("list", "--cwd", CWD, "--json")
        assert code == 0 and len(json.loads(out)) == 3

    def test_latest_is_the_file_changed_last_as_pis_continue_picks(
        self, both_folders: tuple[Path, Path]
    ) -> None:
        pi_folder, ours = both_folders
        age(ours / "context-edits.jsonl", 300)
        age(pi_folder / "prompt-and-tools.jsonl", 200)
        found = latest_session(CWD)
        assert found is not None and found.path == pi_folder / "usage-entries.jsonl"
        (pi_folder / "broken.jsonl").write_text('{"type":"message"}\n')  # newest, no header
        found = latest_session(CWD)
        assert found is not None and found.path == pi_folder / "usage-entries.jsonl"
        code, out, _ = invoke("latest", "--cwd", CWD)
        assert code == 0 and out.strip() == str(pi_folder / "usage-entries.jsonl")

    def test_search_looks_in_pis_folder_too(self, both_folders: tuple[Path, Path]) -> None:
        code, out, _ = invoke("search", "vitest", "--cwd", CWD, "--json")
        hits = json.loads(out)
        assert code == 0 and hits and all("prompt-and-tools" in hit["path"] for hit in hits)

    def test_nothing_found_names_both_folders(self, both_folders: tuple[Path, Path]) -> None:
        code, _, err = invoke("latest", "--cwd", "/elsewhere")
        assert code == 1 and "pi-agent" in err and "ours" in err
