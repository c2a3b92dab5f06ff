"""The HTML export in a real browser: headless Chromium opens the page of a bundled
session and of a generated 10,000-entry one, draws them (a screenshot that is not
blank) and parses them into the DOM the page was written as. Skipped when Chromium
is not installed (Debian: ``apt-get install -y chromium``)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import time
import zlib
from pathlib import Path

import pytest
from helpers_large import generate
from locations import copy_fixture

from jsonl_session import Session
from jsonl_session.export import export_html

CHROMIUM = next(
    (
        found
        for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
        if (found := shutil.which(name))
    ),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (apt-get install -y chromium to run the browser tests)",
)


def chromium(tmp_path: Path, page: Path, *options: str) -> subprocess.CompletedProcess[bytes]:
    """Headless Chromium on ``page`` with ``options``; its own profile, no network use."""
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1280,2000",
        *options,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, timeout=180, check=False)


def screenshot(tmp_path: Path, page: Path) -> tuple[Path, float]:
    """A screenshot of the page's first 2,000 pixels, and how long Chromium took."""
    target = tmp_path / f"{page.stem}.png"
    started = time.perf_counter()
    done = chromium(tmp_path, page, f"--screenshot={target}")
    took = time.perf_counter() - started
    assert target.exists(), done.stderr.decode(errors="replace")[-2000:]
    return target, took


def png_facts(path: Path) -> tuple[int, int, int]:
    """Width, height and how many different byte values its pixels hold (a blank
    page has very few)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pixels, at = b"", 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if data[at + 4 : at + 8] == b"IDAT":
            pixels += data[at + 8 : at + 8 + length]
        at += 12 + length
    return width, height, len(set(zlib.decompress(pixels)))


def write_page(tmp_path: Path, session: Session, name: str, **options: bool) -> Path:
    target = tmp_path / f"{name}.html"
    target.write_text(export_html(session, **options).text, encoding="utf-8")
    return target


class TestInChromium:
    def test_a_real_session_is_drawn_and_parsed_as_written(self, tmp_path: Path) -> None:
        session = Session.open(copy_fixture(tmp_path, "tool-calls"))
        page = write_page(tmp_path, session, "tool-calls")
        shot, _ = screenshot(tmp_path, page)
        width, height, values = png_facts(shot)
        assert (width, height) == (1280, 2000) and values > 40
        done = chromium(tmp_path, page, "--dump-dom")
        dom = done.stdout.decode()
        written = page.read_text()
        for element in ("<section", "<details", "<pre", "<h2", "<summary"):
            assert dom.count(element) == written.count(element) > 0, element
        assert "<script" not in dom

    def test_every_branch_of_a_branching_session_opens(self, tmp_path: Path) -> None:
        session = Session.open(copy_fixture(tmp_path, "branching"))
        page = write_page(tmp_path, session, "branching", all_branches=True)
        dom = chromium(tmp_path, page, "--dump-dom").stdout.decode()
        assert dom.count('<span class="badge">active</span>') == 2  # index and heading
        assert dom.count('<h2 id="run-') == 5

    def test_a_ten_thousand_entry_session_opens_in_seconds(self, tmp_path: Path) -> None:
        small = write_page(tmp_path, Session.open(copy_fixture(tmp_path, "linear")), "small")
        big_session = Session.open(generate(tmp_path / "big.jsonl", 10_000))
        big = write_page(tmp_path, big_session, "big")
        _, baseline = screenshot(tmp_path, small)  # Chromium starting and drawing a page
        shot, took = screenshot(tmp_path, big)
        width, _, values = png_facts(shot)
        assert width == 1280 and values > 40
        # about 3 s more than a small page here (the page before this export: 17 s)
        assert took - baseline < 60, f"{took - baseline:.1f} s to open {big.stat().st_size} B"
