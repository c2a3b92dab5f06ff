"""A huge text's keyword scans made by a worker process (redaction/spread.py): the
same secrets as one process finds, in the same order, whether the worker helps, fails
or is not there; and an export's huge line redacted with its workers' help."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from locations import ROOT

from jsonl_session import Session, export_chunks
from jsonl_session.redaction import Redactor, context, spread
from jsonl_session.redaction.finding import find_secrets
from jsonl_session.redaction.hay import Hay
from jsonl_session.redaction.shapes import Rule, Span
from jsonl_session.views import slices

sys.path.insert(0, str(ROOT / "benchmarks"))
from redaction_corpus import lookalike_cases, secret_cases

CASES = [case.text for case in secret_cases() + lookalike_cases()]


class Counting(Executor):
    """An executor that passes work on to ``inner`` and counts what it was given."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.submitted = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        return self.inner.submit(fn, *args, **kwargs)


class Refusing(Executor):
    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise RuntimeError("cannot schedule new futures after shutdown")


class Failing(Executor):
    """Takes the work, and its future fails as a worker that ended would."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_exception(OSError("the worker ended"))
        return future


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as executor:
        yield executor


@pytest.fixture
def spread_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spread, "SPREAD_CHARS", 20_000)


def long_texts() -> list[str]:
    """The corpus glued into texts past the short path, in several orders and with
    wide characters (a text holding a character that case-folds onto ASCII is
    searched the slow way, never shared)."""
    glued = "\n".join(CASES)
    texts = [
        glued,
        " ".join(reversed(CASES)),
        "\U0001f680 → ".join(CASES) + " é",
        "".join(CASES),
        (" token: abc key=1 cookie sig=zz config set git config " * 500) + glued,
        glued + "\u212a",
    ]
    assert all(len(text) > 20_000 for text in texts)
    return texts


def test_a_worker_s_scans_find_what_one_process_finds(
    pool: ProcessPoolExecutor, spread_small: None
) -> None:
    counting = Counting(pool)
    texts = long_texts()
    for text in texts:
        assert find_secrets(text, counting) == find_secrets(text), text[:80]
    assert counting.submitted == len(texts) - 1  # (all but the one searched the slow way)


def test_a_redactor_with_helpers_replaces_and_counts_alike(
    pool: ProcessPoolExecutor, spread_small: None
) -> None:
    alone, helped = Redactor(), Redactor(helpers=pool)
    for text in long_texts():
        assert helped.text(text) == alone.text(text)
    assert helped.counts == alone.counts and alone.total > len(long_texts())


class Answering(Executor):
    """Makes the scans at once, here, and answers once asked ``after`` times whether
    it has: a worker that answers before this process scans, or after some scans."""

    def __init__(self, after: int) -> None:
        self.after = after

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        answer, after = fn(*args), self.after

        class Late(Future[Any]):
            def done(self) -> bool:
                nonlocal after
                if after == 0 and not super().done():
                    self.set_result(answer)
                after -= 1
                return super().done()

        return Late()


@pytest.mark.parametrize("after", [0, 1, 3, 100])
def test_the_worker_s_places_are_taken_for_the_scans_not_made_here_meanwhile(
    after: int, monkeypatch: pytest.MonkeyPatch, spread_small: None
) -> None:
    remembered: list[object] = []
    real = Hay.remember_scan

    def remember(self: Hay, owner: Any, places: Any) -> None:
        remembered.append(owner)
        real(self, owner, places)

    monkeypatch.setattr(Hay, "remember_scan", remember)
    for text in long_texts()[:-1]:  # (the last is searched the slow way)
        remembered.clear()
        assert find_secrets(text, Answering(after)) == find_secrets(text), text[:80]
        # (the scans made here while the worker had not answered are not taken)
        assert remembered == list(spread._OWNERS[after:])


@pytest.mark.parametrize("helpers", [Refusing(), Failing()], ids=["refusing", "failing"])
def test_scans_a_worker_cannot_make_are_made_here(helpers: Executor, spread_small: None) -> None:
    for text in long_texts():
        assert find_secrets(text, helpers) == find_secrets(text)


def test_a_short_text_is_never_sent(spread_small: None) -> None:
    counting = Counting(Refusing())
    for text in CASES:
        find_secrets(text * 2, counting)
    assert counting.submitted == 0


def test_an_export_s_huge_line_is_redacted_with_its_workers_help(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spread_small: None
) -> None:
    monkeypatch.setattr(slices, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(slices, "HERE_BYTES", 50_000)
    taken: list[bool] = []  # whether a worker was asked, text by text
    real_init = spread.SharedScans.__init__

    def init(self: spread.SharedScans, hay: Any, helpers: Any) -> None:
        real_init(self, hay, helpers)
        taken.append(self._future is not None)

    monkeypatch.setattr(spread.SharedScans, "__init__", init)
    path = tmp_path / "huge.jsonl"
    session = Session.create("/w", path=path, fsync="never")
    session.append_message({"role": "user", "content": "the log?", "timestamp": 1})
    huge = "\n".join(long_texts()[:3])
    session.append_message(
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "bash",
            "content": [{"type": "text", "text": huge}],
            "isError": False,
            "timestamp": 2,
        }
    )
    for fmt in ("markdown", "html", "json"):
        taken.clear()
        outputs = []
        for workers in (2, 1):
            chunks = export_chunks(
                Session.open(path, cache=False), fmt, redact=True, workers=workers
            )
            outputs.append(("".join(chunks), chunks.redactions))
        assert outputs[0] == outputs[1]
        assert outputs[0][1] and "[REDACTED:github-token]" in outputs[0][0]
        # the workers' export asked one for its scans, one process did not (JSON: the
        # line is not first searched whole, so its text is searched once)
        assert taken == [True], fmt


def test_what_the_rules_find_keeps_their_order_whichever_process_scans_first(
    monkeypatch: pytest.MonkeyPatch, spread_small: None
) -> None:
    # spans of the same start and rank merge under the first one's kind: the rules'
    # order must stand though the keyword rules run last
    def mine(hay: Any) -> Iterator[Span]:
        yield 0, 5, "mine", 1

    def theirs(hay: Any) -> Iterator[Span]:
        yield 0, 9, "theirs", 1

    monkeypatch.setattr(context, "KEYWORD_FINDERS", (theirs,))
    first, second = Rule((), theirs), Rule((), mine)
    hay = Hay("x" * 30_000)
    shared = spread.SharedScans(hay, Refusing())
    assert shared.find(hay, [first, second]) == [(0, 9, "theirs", 1), (0, 5, "mine", 1)]
    assert shared.find(hay, [second, first]) == [(0, 5, "mine", 1), (0, 9, "theirs", 1)]


class Recording(Executor):
    """Passes work on to ``inner`` and keeps what it was asked to run, with what."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.calls.append((fn, args))
        return self.inner.submit(fn, *args, **kwargs)


def gone(name: str) -> bool:
    """Whether no block of shared memory is named ``name`` any more (Linux keeps each
    as a file of /dev/shm; looked at, not attached to, which would register it)."""
    return not (Path("/dev/shm") / name.lstrip("/")).exists()


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm to look in")
def test_the_image_goes_through_shared_memory_removed_once_the_worker_is_done(
    pool: ProcessPoolExecutor, spread_small: None
) -> None:
    recording = Recording(pool)
    text = long_texts()[0]
    assert find_secrets(text, recording) == find_secrets(text)
    ((fn, args),) = recording.calls
    assert fn is spread.scan_shared and args[1] == len(text)
    for _ in range(200):  # (the block goes when the worker's answer comes back)
        if gone(args[0]):
            break
        time.sleep(0.01)
    assert gone(args[0])


def test_without_room_for_the_image_it_is_sent_through_the_pipe(
    pool: ProcessPoolExecutor, spread_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Full:
        f_bavail, f_frsize = 0, 4096

    monkeypatch.setattr(spread.os, "statvfs", lambda path: Full())
    monkeypatch.setattr(spread.sys, "platform", "linux")
    recording = Recording(pool)
    text = long_texts()[0]
    assert find_secrets(text, recording) == find_secrets(text)
    ((fn, args),) = recording.calls
    assert fn is spread.scan_image and args[0] == Hay(text).low


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm to look in")
def test_a_block_no_worker_took_is_removed_at_once(
    spread_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []
    real = spread._shared_image

    def recorded(low: bytes) -> Any:
        block = real(low)
        made.append(block.name)
        return block

    monkeypatch.setattr(spread, "_shared_image", recorded)
    text = long_texts()[0]
    assert find_secrets(text, Refusing()) == find_secrets(text)
    assert made and gone(made[0])


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm to look in")
def test_a_block_whose_pages_cannot_be_had_is_let_go_and_the_pipe_used(
    pool: ProcessPoolExecutor, spread_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process may take the room between the check and the copy: the pages
    are asked for first (a copy into a full tmpfs would end this process)."""
    tried: list[int] = []

    def full(fd: int, offset: int, length: int) -> None:
        tried.append(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spread.os, "posix_fallocate", full)
    before = set(os.listdir("/dev/shm"))
    recording = Recording(pool)
    text = long_texts()[0]
    assert find_secrets(text, recording) == find_secrets(text)
    assert tried and recording.calls[0][0] is spread.scan_image
    assert set(os.listdir("/dev/shm")) <= before


def test_without_shared_memory_the_pipe_is_used(
    pool: ProcessPoolExecutor, spread_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "multiprocessing.shared_memory", None)  # (cannot import)
    recording = Recording(pool)
    text = long_texts()[0]
    assert find_secrets(text, recording) == find_secrets(text)
    assert recording.calls[0][0] is spread.scan_image


def test_helpers_that_take_no_work_now_get_no_copy_of_the_image(
    spread_small: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jsonl_session.processes import WarmHelpers

    made: list[int] = []
    monkeypatch.setattr(spread, "_shared_image", lambda low: made.append(len(low)))
    text = long_texts()[0]
    assert find_secrets(text, WarmHelpers()) == find_secrets(text)  # (no warm pool waits)
    assert made == []
