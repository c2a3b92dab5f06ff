"""`list`'s lines into a pipe: the local minute each session changed, worked out by
arithmetic an hour at a time yet right across a change of the zone's offset and in
years strftime writes in fewer digits, and titles cut from the head
of a long first message as from the whole of it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jsonl_session import list_sessions
from jsonl_session.cli.cells import fit
from jsonl_session.cli.terminal_text import visible

# Liberia moved from -0:44:30 to UTC at 1972-01-07 00:44:30 UTC: one UTC minute holds
# both offsets, so two sessions changed in it show different local minutes.
ZONE = "Africa/Monrovia"
MOMENTS_MS = [
    int(datetime(1972, 1, 7, 0, 44, seconds, tzinfo=UTC).timestamp() * 1000)
    for seconds in (10, 20, 40, 50)
] + [1_750_000_000_000 + n * 7_000 for n in range(20)]  # twenty in three minutes
# either side of New York's and Lord Howe's (half an hour) changes in 2025, before
# 1970, and years that strftime writes in fewer digits or a datetime barely holds
MOMENTS_MS += [
    int(datetime(*moment, tzinfo=UTC).timestamp() * 1000)
    for moment in [
        (2025, 3, 9, 6, 59, 59), (2025, 3, 9, 7, 0, 0), (2025, 11, 2, 5, 59), (2025, 11, 2, 6, 1),
        (2025, 4, 5, 14, 59), (2025, 4, 5, 15, 1), (1969, 12, 31, 23, 59, 30), (1931, 5, 17, 8),
        (999, 12, 31, 23, 59), (1, 1, 2, 0, 30),
    ]
]  # fmt: skip


def write_session(path: Path, moment_ms: int, text: str) -> None:
    """A session changed at ``moment_ms``: its message's time or, for a moment before
    1970 (which a message's time cannot say), its header's."""
    started = datetime(1, 1, 1, tzinfo=UTC) + timedelta(milliseconds=moment_ms + 62135596800000)
    header = {"type": "session", "version": 3, "id": path.stem, "cwd": "/p",
              "timestamp": f"{started:%Y-%m-%dT%H:%M:%S}.000Z".rjust(24, "0")}  # fmt: skip
    message = {"type": "message", "id": "a0000001", "parentId": None,
               "timestamp": "2025-01-01T00:00:00.000Z",
               "message": {"role": "user", "content": text, "timestamp": moment_ms}}  # fmt: skip
    path.write_text(json.dumps(header) + "\n" + json.dumps(message) + "\n")


def listed_in(zone: str, folder: Path) -> list[str]:
    env = {**os.environ, "TZ": zone, "JSONL_SESSION_NO_CACHE": "1"}
    command = [sys.executable, "-m", "jsonl_session", "list", str(folder)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return done.stdout.splitlines()[::2]


def local_minutes_in(zone: str, folder: Path) -> list[str]:
    """Each session's local minute, worked out on its own in ``zone``."""
    code = (
        "import sys, time\nfrom pathlib import Path\nfrom jsonl_session import list_sessions\n"
        "time.tzset()\nfor i in list_sessions(Path(sys.argv[1]), cache=False):\n"
        "    print(i.modified.astimezone().strftime('%Y-%m-%d %H:%M'))\n"
    )
    env = {**os.environ, "TZ": zone}
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, env=env
    )
    return done.stdout.splitlines()


@pytest.mark.skipif(not Path("/usr/share/zoneinfo", ZONE).exists(), reason="no tz database")
@pytest.mark.parametrize(
    "zone", [ZONE, "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"]
)
def test_each_session_shows_its_own_local_minute(tmp_path: Path, zone: str) -> None:
    for n, moment in enumerate(MOMENTS_MS):
        write_session(tmp_path / f"s{n:02d}.jsonl", moment, f"question {n}")
    shown = [line.split("  ")[0] for line in listed_in(zone, tmp_path)]
    expected = local_minutes_in(zone, tmp_path)
    assert shown == expected
    if zone == ZONE:
        assert {"1972-01-06 23:59", "1972-01-07 00:44"} <= set(shown)


@pytest.mark.parametrize(
    "text",
    [
        "word " * 400,
        "a" + " \n\t" * 500 + "b c d " * 50,  # more whitespace than text at its head
        " ".join(["日本語 ✓ 🚀 €"] * 80),
        "short\n\nquestion",
        " " + "word " * 100,  # a space at either end of the head
        "x" * 64 + " " + "y" * 300,  # a space just past what the title shows
        "é" * 500,  # not ASCII: the longer head
        "\u200b" * 100 + "word " * 100,  # zero-width characters: the longer head needed
        "\x1b[31m" + "word " * 100,  # printable it is not
        "w" * 10 + "\n" * 200 + "v" * 400,  # more whitespace than text in a head
    ],
)
def test_a_long_first_message_is_cut_as_its_whole_one_line_form_would_be(
    tmp_path: Path, text: str
) -> None:
    write_session(tmp_path / "s.jsonl", 1_750_000_000_000, text)
    (info,) = list_sessions(tmp_path, cache=False)
    title = listed_in("UTC", tmp_path)[0].split("  pi      ", 1)[1]
    expected = fit(" ".join(info.first_message.split()), 64).rstrip(" ")
    assert title == visible(expected)  # (control characters are shown escaped)


def test_a_time_of_a_fraction_of_a_millisecond_shows_the_minute_its_datetime_does(
    tmp_path: Path,
) -> None:
    """A session with no time of its own changed when its file did: 0.3 µs before a
    minute starts, which its datetime (microseconds) rounds up into that minute."""
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "session", "version": 3, "id": "s", "cwd": "/p"}) + "\n")
    minute_ns = 1_750_000_020 * 10**9  # a minute's start
    os.utime(path, ns=(minute_ns, minute_ns - 300))
    (info,) = list_sessions(tmp_path, cache=False)
    assert not float(info.modified_ms).is_integer()
    shown = listed_in("UTC", tmp_path)[0].split("  ")[0]
    assert shown == info.modified.strftime("%Y-%m-%d %H:%M") == "2025-06-15 15:07"


def test_a_time_whose_local_date_no_datetime_holds_is_shown_in_utc(tmp_path: Path) -> None:
    """The last millisecond of 9999 (UTC) is in 10000 east of Greenwich: the listing
    shows it in UTC rather than stop."""
    write_session(tmp_path / "s.jsonl", 253_402_300_799_999, "question")
    shown = listed_in("Europe/Amsterdam", tmp_path)[0].split("  ")[0]
    assert shown == "9999-12-31 23:59 UTC"
