"""`stats`' breakdown reads most message lines through msgspec structs of the fields
it needs (line_sizes.py) and the rest the dict way; whichever way a line goes, every
figure is the one the dict way gives, in the same order. Also the pieces that make it
fast: UsageTally, js_length's shortcut, dumps' prefilter; and a long session measured
by several processes (breakdown_spread.py) giving one process's figures."""

from __future__ import annotations

import json
import math
import random
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers_cli import invoke
from helpers_large import generate

from jsonl_session import (
    JsonlSessionError,
    Session,
    SessionFormatError,
    SessionTreeError,
    breakdown_cache,
    breakdown_spread,
)
from jsonl_session import breakdown as breakdown_module
from jsonl_session.breakdown import Stored
from jsonl_session.breakdown_spread import HeadStart
from jsonl_session.format.jsonio import dumps
from jsonl_session.line_sizes import DICT_WAY
from jsonl_session.session import figures as steps
from jsonl_session.storage import loader, reading
from jsonl_session.storage.table import EntryTable
from jsonl_session.tokens import js_length
from jsonl_session.usage import USAGE_KEYS, RecordedUsage, UsageTally

HEADER = (
    b'{"type":"session","version":3,"id":"s1","timestamp":"2025-06-01T08:00:00.000Z","cwd":"/w"}'
)

# values the two decoders could read apart: integers past 64 bits (orjson: a float),
# floats JavaScript writes as integers, lone surrogates, bytes that are not UTF-8
ODD_VALUES: list[Any] = [
    10**20,
    -(10**19),
    2**64 - 1,
    2**53 + 1,
    1.0,
    1e20,
    -0.0,
    2.5,
    True,
    False,
    None,
    0,
    "",
    [],
    {},
    [10**20],
    {"k": 1.0},
    "x.0]",
    "e+17}",
    "caf\u00e9 \U0001f680 \u65e5",
    "\ud800 lone",
    'tab\t"quote" back\\slash \u2028',
]


def odd(rng: random.Random) -> Any:
    return rng.choice(ODD_VALUES)


def text(rng: random.Random) -> Any:
    if rng.random() < 0.25:
        return odd(rng)
    parts = ["plain", "caf\u00e9", "\U0001f680", "\u0100\u0101", "\\n", '"q"', "\n\t", " "]
    return "".join(rng.choice(parts) for _ in range(rng.randint(0, 12)))


def block(rng: random.Random) -> Any:
    if rng.random() < 0.04:
        return odd(rng)  # not an object
    kind = rng.choice(["text", "thinking", "toolCall", "image", "other", 7, None])
    out: dict[str, Any] = {"type": kind}
    for key in ("text", "thinking", "name"):
        if rng.random() < 0.5:
            out[key] = text(rng)
    if rng.random() < 0.6:
        out["arguments"] = rng.choice([{"path": text(rng), "n": odd(rng)}, odd(rng), {}])
    return out


def usage(rng: random.Random) -> Any:
    if rng.random() < 0.1:
        return odd(rng)
    out: dict[str, Any] = {}
    for key in USAGE_KEYS:
        if rng.random() < 0.9:
            out[key] = rng.randint(0, 10**6) if rng.random() < 0.8 else odd(rng)
    if rng.random() < 0.9:
        out["cost"] = {"total": rng.random()} if rng.random() < 0.8 else odd(rng)
    return out


def message(rng: random.Random) -> Any:
    roles = ["user", "assistant", "assistant", "toolResult", "custom", "system", 5, None]
    out: dict[str, Any] = {"role": rng.choice(roles)}
    if rng.random() < 0.9:
        choice = rng.random()
        out["content"] = (
            [block(rng) for _ in range(rng.randint(0, 4))]
            if choice < 0.8
            else text(rng)
            if choice < 0.9
            else odd(rng)
        )
    for key in ("toolName", "provider", "model"):
        if rng.random() < 0.7:
            out[key] = text(rng) if rng.random() < 0.3 else "read"
    if rng.random() < 0.7:
        out["usage"] = usage(rng)
    return out


def line(rng: random.Random, number: int, parent: str | None) -> bytes:
    entry: dict[str, Any] = {
        "type": "message",
        "id": f"e{number:05d}",
        "parentId": parent,
        "timestamp": "2025-06-01T08:00:00.000Z",
        "message": message(rng) if rng.random() < 0.95 else odd(rng),
    }
    choice = rng.random()
    if choice < 0.5:
        raw = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
    elif choice < 0.8:
        raw = json.dumps(entry)  # spaces, escapes
    else:
        raw = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        raw = raw[:-1] + ',"message":' + json.dumps(message(rng)) + "}"  # a key twice
    data = raw.encode("utf-8", "surrogatepass")  # a lone surrogate: bytes not UTF-8
    if rng.random() < 0.03:
        data = data[:-1] + b',"note":"\xff\xfe"}'  # not UTF-8 where nothing reads
    if rng.random() < 0.03:
        data = data[:-1] + b',"details":1e400}'  # a number orjson refuses
    return data


def odd_session(path: Path, seed: int, entries: int = 400) -> Path:
    rng = random.Random(seed)
    lines = [HEADER]
    for number in range(entries):
        parent = f"e{number - 1:05d}" if number else None
        lines.append(line(rng, number, parent))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def figures(session: Session, workers: int | None = 1) -> str:
    """Every figure of the breakdown, in order, with the keys' order of each total."""
    found = session.token_breakdown(workers=workers)
    totals = [found.recorded.total, *found.recorded.by_model.values()]
    totals += found.recorded.by_kind.values()
    orders = [list(total.tokens) for total in totals]
    costs = [total.cost.hex() for total in totals]
    return json.dumps([found.to_dict(), orders, costs, list(found.by_tool)])


def dict_way_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(breakdown_module, "measure_message_line", lambda *args: DICT_WAY)


@pytest.fixture
def lines_on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "WHOLE_READ_BYTES", 0)
    monkeypatch.setattr(reading, "INLINE_BYTES", 0)


class TestEitherWayTheSameFigures:
    @pytest.mark.parametrize("seed", range(12))
    def test_odd_message_lines_count_as_their_bodies_decoded_whole_count(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
    ) -> None:
        session = Session.open(odd_session(tmp_path / "odd.jsonl", seed), cache=False)
        fast = figures(session)
        dict_way_only(monkeypatch)
        assert fast == figures(session)

    @pytest.mark.usefixtures("lines_on_disk")
    @pytest.mark.parametrize("seed", range(3))
    def test_odd_lines_read_back_from_disk_count_the_same(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
    ) -> None:
        session = Session.open(odd_session(tmp_path / "odd.jsonl", seed), cache=False)
        assert all(entry.inline is None for entry in session.entries)
        fast = figures(session)
        dict_way_only(monkeypatch)
        assert fast == figures(session)

    def test_a_generated_session_counts_the_same_and_nearly_all_of_it_goes_the_fast_way(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        session = Session.open(generate(tmp_path / "big.jsonl", entries=1500), cache=False)
        measure = breakdown_module.measure_message_line
        went: list[bool] = []

        def counted(*args: Any) -> Any:
            result = measure(*args)
            went.append(result is not DICT_WAY)
            return result

        monkeypatch.setattr(breakdown_module, "measure_message_line", counted)
        fast = figures(session)
        assert len(went) > 1000 and sum(went) == len(went)
        dict_way_only(monkeypatch)
        assert fast == figures(session)

    def test_integers_past_64_bits_count_as_orjson_reads_them_a_float(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        big = 10**20
        blocks = [
            {"type": "text", "text": big},
            {"type": "toolCall", "name": "bash", "arguments": {"n": big}},
        ]
        message = {
            "role": "assistant",
            "content": blocks,
            "provider": big,
            "usage": {"input": 5, "totalTokens": big, "cost": {"total": big}},
        }
        plain = {"input": 5, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 6}
        priced = {"role": "assistant", "content": [], "usage": {**plain, "cost": {"total": big}}}
        entry = {"type": "message", "id": "a1", "parentId": None, "timestamp": "t"}
        second = {**entry, "id": "a2", "parentId": "a1", "message": priced}
        lines = [HEADER, json.dumps({**entry, "message": message}).encode()]
        path = tmp_path / "big-ints.jsonl"
        path.write_bytes(b"\n".join([*lines, json.dumps(second).encode()]))
        session = Session.open(path, cache=False)
        found = session.token_breakdown()
        assert found.recorded.total.tokens["totalTokens"] == big + 6  # 1e20 as orjson reads it
        assert found.recorded.total.cost == 2 * 1e20  # the cost 10**20 too, as a float
        assert "1e+20/None" in found.recorded.by_model
        fast = figures(session)
        dict_way_only(monkeypatch)
        assert fast == figures(session)

    def test_a_file_rewritten_after_opening_is_refused_as_before(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl")
        session = Session.open(path, cache=False)
        target = next(e for e in session.entries[300:] if e.inline is None and e.role)
        with open(path, "r+b") as handle:
            handle.seek(target.offset)
            handle.write(target.raw.replace(target.id.encode(), b"0badf00d", 1))
        with pytest.raises(SessionFormatError, match="open it again"):
            session.token_breakdown()


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sessions of any size measured by as many processes as asked, in chunks of
    16 kB; the sizes of the pools started, in order."""
    monkeypatch.setattr(breakdown_spread, "SPREAD_BYTES", 0)
    monkeypatch.setattr(breakdown_spread, "CHUNK_BYTES", 1 << 14)
    started: list[int] = []
    start = breakdown_spread.spawned_pool

    def counted(workers: int) -> Any:
        started.append(workers)
        return start(workers)

    monkeypatch.setattr(breakdown_spread, "spawned_pool", counted)
    return started


@pytest.fixture
def long_lines_on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files read as large ones are: short lines in memory, the others on disk."""
    monkeypatch.setattr(loader, "WHOLE_READ_BYTES", 0)


class TestSpreadOverProcesses:
    @pytest.mark.usefixtures("lines_on_disk")
    @pytest.mark.parametrize("seed", range(2))
    def test_odd_lines_measured_in_parts_by_workers_give_one_process_figures(
        self, tmp_path: Path, pools: list[int], seed: int
    ) -> None:
        session = Session.open(odd_session(tmp_path / "odd.jsonl", seed), cache=False)
        assert figures(session, workers=2) == figures(session, workers=1)
        assert pools == [1]

    @pytest.mark.usefixtures("long_lines_on_disk")
    def test_lines_in_memory_and_on_disk_give_the_same_figures_in_two_or_three_parts(
        self, tmp_path: Path, pools: list[int]
    ) -> None:
        session = Session.open(generate(tmp_path / "gen.jsonl", entries=900), cache=False)
        kept = [entry.inline is not None for entry in session.entries]
        assert any(kept) and not all(kept)
        one = figures(session, workers=1)
        assert figures(session, workers=2) == one
        assert figures(session, workers=3) == one
        assert pools == [1, 2]

    @pytest.mark.usefixtures("long_lines_on_disk")
    def test_a_session_with_appended_entries_is_measured_the_same(
        self, tmp_path: Path, pools: list[int]
    ) -> None:
        session = Session.open(generate(tmp_path / "gen.jsonl", entries=400))
        session.append_message({"role": "user", "content": "one more", "timestamp": 1})
        assert figures(session, workers=2) == figures(session, workers=1)
        assert pools == [1]

    def test_lines_all_in_memory_are_measured_here(self, tmp_path: Path, pools: list[int]) -> None:
        session = Session.open(generate(tmp_path / "gen.jsonl", entries=100), cache=False)
        assert figures(session, workers=2) == figures(session, workers=1)
        assert pools == []  # (a file small enough to be read whole)

    def test_the_last_parts_go_to_the_workers_before_the_entries_are_built(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pools: list[int]
    ) -> None:
        path = generate(tmp_path / "gen.jsonl", entries=900)
        expected = figures(Session.open(path, cache=False))
        Session.open(path)  # its index record: the next open builds no entry
        session = Session.open(path)
        events: list[str] = []
        here: list[int] = []  # the entries this process measures
        submit, build = breakdown_spread.submit_warm, EntryTable.materialise
        monkeypatch.setattr(
            breakdown_spread, "submit_warm", lambda *a: (events.append("handed"), submit(*a))[1]
        )
        monkeypatch.setattr(
            EntryTable, "materialise", lambda table: (events.append("built"), build(table))[1]
        )
        part = breakdown_spread.measure_part
        monkeypatch.setattr(
            breakdown_spread, "measure_part", lambda b, *a: (here.append(len(b)), part(b, *a))[1]
        )
        assert figures(session, workers=2) == expected
        built = events.index("built")
        assert built >= 2 and events[:built] == ["handed"] * built and pools == [1]
        # what the workers were handed first is not measured here again
        assert 0 < sum(here) < len(breakdown_module.body_entries(session.entries))

    def test_no_worker_is_started_for_figures_the_cache_keeps(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pools: list[int]
    ) -> None:
        path = generate(tmp_path / "gen.jsonl", entries=900)
        kept = figures(Session.open(path), workers=1)  # measured, and kept

        def no_pool(*args: Any) -> Any:
            raise AssertionError("a worker was started")

        monkeypatch.setattr(breakdown_spread, "warm_pool", no_pool)
        assert figures(Session.open(path), workers=2) == kept
        assert pools == []

    def test_the_stats_record_is_read_once_when_workers_may_measure(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pools: list[int]
    ) -> None:
        path = generate(tmp_path / "gen.jsonl", entries=900)
        kept = figures(Session.open(path), workers=1)  # measured, and kept
        session = Session.open(path)
        read: list[str] = []
        load = breakdown_cache.RecordCache.load
        monkeypatch.setattr(
            breakdown_cache.RecordCache,
            "load",
            lambda self, *a, **k: (read.append(self.folder.name), load(self, *a, **k))[1],
        )
        assert figures(session, workers=2) == kept
        assert [name for name in read if name.startswith("stats")] == ["stats-2"]

    def test_a_head_start_that_is_not_the_last_entries_is_not_used(
        self, tmp_path: Path, pools: list[int]
    ) -> None:
        session = Session.open(generate(tmp_path / "gen.jsonl", entries=900), cache=False)
        bodies = breakdown_module.body_entries(session.entries)
        wrong: Future[tuple[Stored, UsageTally]] = Future()
        wrong.set_result((Stored(stored_tokens=10**9, tokens=[0] * 4), UsageTally(keep_costs=True)))
        stale = HeadStart(bodies[-5:-1], [(0, 4)], [wrong])  # (one short of the end)
        spread = breakdown_spread.measure_spread(bodies, 10, 2, head=stale)
        assert spread == breakdown_module.measure_stored(bodies, 10)
        assert pools == [1]

    def test_the_cache_record_written_after_measuring_in_parts_is_the_same(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pools: list[int]
    ) -> None:
        path = generate(tmp_path / "gen.jsonl", entries=900)  # over 1 MiB: its record kept
        spread = figures(Session.open(path), workers=2)
        measured = figures(Session.open(path, cache=False))

        def not_again(*args: Any) -> Any:
            raise AssertionError("measured again: the record was not used")

        monkeypatch.setattr(breakdown_cache, "measure_spread", not_again)
        assert figures(Session.open(path)) == spread == measured
        assert pools == [1]

    @pytest.mark.usefixtures("lines_on_disk")
    def test_a_part_a_worker_cannot_read_is_measured_here(
        self, tmp_path: Path, pools: list[int]
    ) -> None:
        path = generate(tmp_path / "gen.jsonl")
        session = Session.open(path, cache=False)
        one = figures(session, workers=1)
        path.unlink()  # the worker opens the path; this process reads what it opened
        assert figures(session, workers=2) == one
        assert pools == [1]

    @pytest.mark.usefixtures("lines_on_disk")
    def test_a_file_rewritten_after_opening_is_refused_whichever_process_reads_it(
        self, tmp_path: Path, pools: list[int]
    ) -> None:
        path = generate(tmp_path / "gen.jsonl")
        session = Session.open(path, cache=False)
        target = session.entries[-20]  # in the last part, a worker's
        with open(path, "r+b") as handle:
            handle.seek(target.offset)
            handle.write(target.raw.replace(target.id.encode(), b"0badf00d", 1))
        bodies = breakdown_module.body_entries(session.entries)
        with pytest.raises(SessionFormatError, match="open it again"):
            breakdown_spread.measure_spread(bodies, workers=2)  # (raised whole, here)
        assert pools == [1]

    @pytest.mark.usefixtures("long_lines_on_disk")
    def test_the_command_measures_with_workers_and_prints_the_same(
        self, tmp_path: Path, pools: list[int]
    ) -> None:
        path = generate(tmp_path / "gen.jsonl", entries=300)
        outputs = [invoke("--no-cache", "stats", "--json", "--workers", n, path) for n in "12"]
        assert outputs[0][0] == 0 and outputs[0] == outputs[1]
        assert pools == [1]

    @pytest.mark.usefixtures("long_lines_on_disk")
    def test_the_command_starts_its_worker_before_it_opens_the_session(
        self, tmp_path: Path, pools: list[int], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from jsonl_session import processes

        path = generate(tmp_path / "gen.jsonl", entries=900)  # over 1 MiB: its record kept
        events: list[str] = []
        real_pool, real_open = processes._new_pool, Session.open
        monkeypatch.setattr(processes, "_new_pool", lambda n: events.append("pool") or real_pool(n))
        monkeypatch.setattr(
            Session, "open", lambda *a, **k: events.append("open") or real_open(*a, **k)
        )
        spread = invoke("--no-cache", "stats", "--json", "--workers", "2", path)
        assert events == ["pool", "open"]  # one pool, started first, and taken
        assert pools == [1] and processes._warm is None
        assert spread == invoke("--no-cache", "stats", "--json", "--workers", "1", path)
        # figures the cache holds need no worker: the one started is let go
        invoke("stats", "--json", "--workers", "1", path)
        events.clear()
        assert invoke("stats", "--json", "--workers", "2", path) == spread
        assert events == ["pool", "open"] and pools == [1] and processes._warm is None

    @pytest.mark.usefixtures("long_lines_on_disk")
    def test_the_figures_of_a_file_by_its_path_are_those_of_the_session_opened(
        self, tmp_path: Path, pools: list[int]
    ) -> None:
        from jsonl_session import token_breakdown_of

        path = generate(tmp_path / "gen.jsonl", entries=300)
        session = Session.open(path, cache=False)
        leaf = session.branch_path()[-5].id
        expected = session.token_breakdown(leaf).to_dict()
        assert token_breakdown_of(path, leaf, cache=False).to_dict() == expected
        assert pools == []
        assert token_breakdown_of(path, leaf, workers=2, cache=False).to_dict() == expected
        assert pools == [1]
        assert (
            token_breakdown_of(path, cache=False).to_dict() == session.token_breakdown().to_dict()
        )

    @pytest.mark.usefixtures("lines_on_disk")
    def test_a_worker_that_dies_leaves_its_chunk_and_the_rest_to_this_process(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        class DiedPool:
            """A pool whose worker died on the first chunk it took: that chunk's
            future fails, and the pool takes no more (as ProcessPoolExecutor)."""

            submitted = 0

            def submit(self, *args: Any) -> Future[Any]:
                self.submitted += 1
                if self.submitted > 1:
                    raise BrokenProcessPool("a worker died")
                future: Future[Any] = Future()
                future.set_exception(BrokenProcessPool("a worker died"))
                return future

            def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
                pass

        monkeypatch.setattr(breakdown_spread, "SPREAD_BYTES", 0)
        monkeypatch.setattr(breakdown_spread, "CHUNK_BYTES", 1 << 14)
        died = DiedPool()
        monkeypatch.setattr(breakdown_spread, "spawned_pool", lambda workers: died)
        session = Session.open(generate(tmp_path / "gen.jsonl"), cache=False)
        bodies = breakdown_module.body_entries(session.entries)
        expected = repr(breakdown_module.measure_stored(bodies))
        assert repr(breakdown_spread.measure_spread(bodies, workers=2)) == expected
        assert died.submitted == 2

    def test_measuring_by_path_leaves_another_caller_s_waiting_workers_alone(
        self, tmp_path: Path
    ) -> None:
        from jsonl_session import processes, token_breakdown_of

        path = generate(tmp_path / "gen.jsonl", entries=50)
        pool = processes.warm_pool(2)
        assert pool is not None
        try:
            token_breakdown_of(path, cache=False)  # (one process: it starts none)
            assert processes._warm is not None and processes._warm[0] is pool
        finally:
            processes.drop_warm_pool(pool)
        assert processes._warm is None

    def test_workers_are_started_early_for_a_long_pi_file_only(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from locations import FIXTURES

        from jsonl_session import processes

        monkeypatch.setattr(breakdown_spread, "SPREAD_BYTES", 0)
        claude = next((FIXTURES / "claude" / "projects").glob("*/*.jsonl"))
        # another agent's lines are held in memory and measured here: no worker
        assert breakdown_spread.warm_spread(claude, 2) is None
        assert breakdown_spread.warm_spread(tmp_path / "missing.jsonl", 2) is None
        pool = breakdown_spread.warm_spread(generate(tmp_path / "gen.jsonl", entries=20), 2)
        try:
            assert pool is not None
        finally:
            processes.drop_warm_pool(pool)


class TestSpreadDecisions:
    def test_short_sessions_are_measured_in_this_process(self) -> None:
        assert breakdown_spread.spread_workers(4, breakdown_spread.SPREAD_BYTES - 1) == 1
        assert breakdown_spread.spread_workers(4, breakdown_spread.SPREAD_BYTES) == 4

    def test_no_workers_is_refused(self) -> None:
        with pytest.raises(JsonlSessionError, match="workers must be 1 or more"):
            breakdown_spread.spread_workers(0, 1 << 30)


class TestUsageTally:
    def test_a_tally_adds_up_what_recorded_usage_adds_up_keys_and_costs_alike(self) -> None:
        rng = random.Random(3)
        recorded, tally = RecordedUsage(), UsageTally()
        for _ in range(3000):
            record = usage(rng)
            model, kind = rng.choice(["a/x", "b/y", "c/z"]), rng.choice(["assistant", "warm"])
            recorded.add(record, model, kind)
            counts = [record.get(key) if isinstance(record, dict) else None for key in USAGE_KEYS]
            cost = record.get("cost") if isinstance(record, dict) else None
            total = cost.get("total") if isinstance(cost, dict) else None
            plain = all(type(c) is int and 0 <= c < 2**53 for c in counts)
            if plain and type(total) is float and math.isfinite(total):
                tally.add_counts(tuple(counts), total, model, kind)  # type: ignore[arg-type]
            else:
                tally.add(record, model, kind)
        found = tally.recorded()
        assert found.to_dict() == recorded.to_dict()
        pairs = [(found.total, recorded.total)]
        pairs += [(found.by_model[k], v) for k, v in recorded.by_model.items()]
        pairs += [(found.by_kind[k], v) for k, v in recorded.by_kind.items()]
        for mine, theirs in pairs:
            assert list(mine.tokens.items()) == list(theirs.tokens.items())
            assert (mine.cost.hex(), mine.records) == (theirs.cost.hex(), theirs.records)
        assert list(found.by_model) == list(recorded.by_model)
        assert list(found.by_kind) == list(recorded.by_kind)

    def test_keys_come_in_the_order_records_first_had_them(self) -> None:
        recorded, tally = RecordedUsage(), UsageTally()
        for record in ({"output": 1}, {"input": 2, "totalTokens": 3}, {"cacheRead": 4}):
            recorded.add(record, "m", "k")
            tally.add(record, "m", "k")
        tally.add_counts((1, 1, 1, 1, 1), 0.5, "m", "k")
        recorded.add(
            dict(zip(USAGE_KEYS, (1, 1, 1, 1, 1), strict=True)) | {"cost": {"total": 0.5}}, "m", "k"
        )
        assert list(tally.recorded().total.tokens) == list(recorded.total.tokens)
        assert list(recorded.total.tokens)[:3] == ["output", "input", "totalTokens"]

    @pytest.mark.parametrize("parts", [2, 3, 5])
    def test_tallies_of_parts_merged_add_up_what_one_tally_adds_up(self, parts: int) -> None:
        rng = random.Random(parts)
        records = []
        for number in range(600):
            record = usage(rng)
            if isinstance(record, dict) and rng.random() < 0.3:  # costs whose sum depends
                record["cost"] = {"total": rng.choice([1e16, -1e16, 1.0, 0.1, 3e-17])}  # on order
            model = rng.choice(["a/x", "b/y"]) if number < 300 else rng.choice(["b/y", "c/z"])
            records.append((record, model, rng.choice(["assistant", "warm"])))
        whole = UsageTally()
        for record in records:
            whole.add(*record)
        cuts = sorted(rng.sample(range(1, len(records)), parts - 1))
        pieces = [records[a:b] for a, b in zip([0, *cuts], [*cuts, len(records)], strict=True)]
        merged = UsageTally()
        for piece in pieces:
            tally = UsageTally(keep_costs=True)
            for record in piece:
                tally.add(*record)
            if rng.random() < 0.5:
                tally.fold()  # (as a worker's is, before it crosses)
            merged.merge(tally)
        found, expected = merged.recorded(), whole.recorded()
        assert found.to_dict() == expected.to_dict()
        totals = [(found.total, expected.total)]
        totals += [(found.by_model[k], v) for k, v in expected.by_model.items()]
        totals += [(found.by_kind[k], v) for k, v in expected.by_kind.items()]
        for mine, theirs in totals:
            assert list(mine.tokens) == list(theirs.tokens)
            assert (mine.cost.hex(), mine.records) == (theirs.cost.hex(), theirs.records)
        assert list(found.by_model) == list(expected.by_model)

    def test_a_tally_that_kept_no_costs_cannot_be_merged(self) -> None:
        with pytest.raises(ValueError, match="keep_costs"):
            UsageTally().merge(UsageTally())


class TestLengthsAndJson:
    @pytest.mark.parametrize(
        "value",
        [
            "",
            "ascii",
            "caf\u00e9",
            "\u0100\u65e5\u672c",
            "\U0001f680",
            "a\U0001f680\u00e9",
            "\ud800",
            "\ud83d\ude80",
            "\u00ff" * 1000,
            "\U00010000" * 3 + "x" * 500,
        ],
    )
    def test_js_length_counts_utf16_units_however_the_string_is_stored(self, value: str) -> None:
        expected = len(value.encode("utf-16-le", "surrogatepass")) // 2
        assert js_length(value) == expected
        assert js_length(value + "\u0100") == expected + 1  # stored two bytes a character

    def test_dumps_writes_integral_floats_as_javascript_and_leaves_strings_alone(self) -> None:
        assert (
            dumps({"a": 1.0, "b": [2.0], "c": 1e20}) == b'{"a":1,"b":[2],"c":100000000000000000000}'
        )
        assert dumps({"s": "x.0]", "t": "e+17}"}) == orjson.dumps({"s": "x.0]", "t": "e+17}"})
        assert dumps({"a": 1.5, "s": "no floats here"}) == b'{"a":1.5,"s":"no floats here"}'


@pytest.mark.parametrize("cache", [False, True])
def test_in_one_process_the_context_is_projected_after_the_stored_figures_are_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    # each decodes the bodies on the path: one after the other, a huge body is held
    # decoded once at a time, not twice (with workers: while they measure, below)
    path = generate(tmp_path / "s.jsonl", 40, 2)
    session = Session.open(path, cache=cache)
    calls: list[str] = []
    for name in ("project_path", "measure_spread", "stored_figures"):
        real = getattr(steps, name)
        monkeypatch.setattr(
            steps, name, lambda *a, _n=name, _r=real, **k: (calls.append(_n), _r(*a, **k))[1]
        )
    expected = Session.open(path, cache=False).token_breakdown()
    calls.clear()
    assert session.token_breakdown() == expected
    assert calls[-1] == "project_path" and len(calls) == 2


@pytest.mark.usefixtures("long_lines_on_disk")
def test_with_workers_the_context_is_projected_while_they_measure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pools: list[int]
) -> None:
    # the workers would wait while this process projects the path alone: it does so
    # once they have their parts, then measures its own
    session = Session.open(generate(tmp_path / "gen.jsonl", entries=900), cache=False)
    expected = figures(session, workers=1)
    events: list[str] = []

    def noting(event: str, real: Any) -> Any:
        return lambda *a, **k: (events.append(event), real(*a, **k))[1]

    counted = breakdown_spread.spawned_pool

    def pool_noting_parts(workers: int) -> Any:
        pool = counted(workers)
        pool.submit = noting("handed out", pool.submit)
        return pool

    monkeypatch.setattr(breakdown_spread, "spawned_pool", pool_noting_parts)
    # (the last parts go to the workers before every entry is built: `head_start`)
    monkeypatch.setattr(
        breakdown_spread, "submit_warm", noting("handed out", breakdown_spread.submit_warm)
    )
    real_part = breakdown_spread.measure_part
    monkeypatch.setattr(breakdown_spread, "measure_part", noting("measured here", real_part))
    monkeypatch.setattr(steps, "project_path", noting("projected", steps.project_path))
    assert figures(session, workers=2) == expected
    assert pools == [1] and events.count("projected") == 1
    projected = events.index("projected")
    assert events.index("handed out") < projected < events.index("measured here")


def test_a_leaf_that_is_not_there_is_said_before_anything_is_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session.open(generate(tmp_path / "gen.jsonl", entries=200), cache=False)

    def not_measured(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("measured first")

    monkeypatch.setattr(breakdown_spread, "measure_part", not_measured)
    monkeypatch.setattr(breakdown_module, "measure_part", not_measured)
    for workers in (1, 2):
        with pytest.raises(SessionTreeError, match="no-such-leaf"):
            session.token_breakdown("no-such-leaf", workers=workers)
