"""How well and how fast jsonl_session redacts secrets, beside a maintained detector.

Accuracy, on the corpus of redaction_corpus.py (synthetic secrets of ~90 types in up to
six placements each, and look-alikes that must be left alone): for each secret type,
the cases caught (no 12-character piece of the secret survives redaction) and missed;
for each look-alike, the cases changed at all (false positives). The same cases go,
in the same run, to detect-secrets (Yelp's, from PyPI; in the [dev] extra): each case
is written to a file named for its placement (.txt, .sh, .json, .env, .log) and
scanned with the default plugins and filters. It catches a secret when it reports a
finding on a line the secret stands on, and is wrong about a look-alike when it
reports anything. detect-secrets reports and does not replace, so "caught" is the
more generous test for it.

Speed: MB/s of ``Redactor().value`` over every entry of a session (decoded
beforehand), the best of --runs, in CPU time. The session is --session FILE, or one
benchmarks/generate.py writes (--entries). With --baseline REV the redactor of that
git revision is measured the same way (speed and corpus), in a separate process on a
copy of that revision's package, and shown beside.

    python benchmarks/redaction.py [--session FILE]... [--entries 5000] [--runs 3]
                                   [--baseline REV] [--no-detector] [--kinds]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from redaction_corpus import lookalike_cases, secret_cases  # noqa: E402
from redaction_forms import Case, leaked  # noqa: E402

SUFFIX = {"bare": ".txt", "shell": ".sh", "json": ".json", "env": ".env", "url": ".txt"}


# --- judging one redactor ------------------------------------------------------------------


def judge_redactor(redactor_class: Any, cases: list[Case]) -> dict[str, list[bool]]:
    """Per case: caught (a secret) or left alone (a look-alike), by the redactor."""
    results: dict[str, list[bool]] = {}
    for case in cases:
        out = redactor_class().text(case.text)
        ok = not leaked(case.secret, out) if case.secret is not None else out == case.text
        results.setdefault(case.kind, []).append(ok)
    return results


def judge_detector(cases: list[Case]) -> dict[str, list[bool]] | None:
    """Per case: caught (a finding on a line of the secret) or left alone (no finding),
    by detect-secrets; None when it is not installed."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    results: dict[str, list[bool]] = {}
    with tempfile.TemporaryDirectory() as folder, default_settings():
        for index, case in enumerate(cases):
            path = Path(folder) / f"case{index}{SUFFIX.get(case.placement, '.log')}"
            path.write_text(case.text + "\n", encoding="utf-8")
            found = SecretsCollection()
            found.scan_file(str(path))
            lines = {secret.line_number for _, secret in found}
            ok = bool(lines & case.lines) if case.secret is not None else not lines
            results.setdefault(case.kind, []).append(ok)
    return results


# --- speed ---------------------------------------------------------------------------------


def speed(redactor_class: Any, session: Path, runs: int) -> tuple[float, dict[str, int]]:
    """MB/s of Redactor.value over every entry of ``session``, and what it replaced."""
    import orjson

    raw = session.read_bytes()
    entries = [orjson.loads(line) for line in raw.splitlines() if line.strip()]
    best, counts = float("inf"), {}
    for _ in range(runs):
        redactor = redactor_class()
        start = time.process_time()
        for entry in entries:
            redactor.value(entry)
        best = min(best, time.process_time() - start)
        counts = redactor.summary()
    return len(raw) / 1e6 / max(best, 1e-9), counts


def worker(sessions: list[str], runs: int) -> None:
    """In the baseline's process: the corpus and the speed, as JSON on stdout."""
    from jsonl_session.views.redact import Redactor

    cases = secret_cases() + lookalike_cases()
    out = {
        "corpus": judge_redactor(Redactor, cases),
        "speed": {s: speed(Redactor, Path(s), runs) for s in sessions},
    }
    print(json.dumps(out))


def baseline(rev: str, sessions: list[Path], runs: int) -> dict[str, Any]:
    """Run `worker` against the package as it was at ``rev``."""
    root = HERE.parent
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / "old.tar"
        subprocess.run(
            ["git", "archive", "-o", str(archive), rev, "jsonl_session"], cwd=root, check=True
        )
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
        env = {**os.environ, "PYTHONPATH": folder}
        command = [sys.executable, __file__, "--worker", "--runs", str(runs)]
        command += [arg for s in sessions for arg in ("--session", str(s))]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        result: dict[str, Any] = json.loads(done.stdout)
        return result


# --- the table -----------------------------------------------------------------------------


def tally(results: dict[str, list[bool]] | None, kind: str) -> tuple[int, int] | None:
    if results is None:
        return None
    oks = results.get(kind, [])
    return sum(oks), len(oks) - sum(oks)


def table(
    cases: list[Case], columns: dict[str, dict[str, list[bool]] | None], *, secrets: bool
) -> list[str]:
    """Rows per kind: for secrets "caught/missed", for look-alikes "false positives"."""
    kinds: dict[str, Case] = {}
    for case in cases:
        kinds.setdefault(case.kind, case)
    per = Counter(case.kind for case in cases)
    names = [n for n, c in columns.items() if c is not None]
    what = "caught missed" if secrets else "false-pos"
    head = f"{'type' if secrets else 'look-alike':30} {'cases':>5}  " + "  ".join(
        f"{n + ' ' + what:>24}" for n in names
    )
    rows = [head, "-" * len(head)]
    totals: dict[str, list[int]] = {n: [0, 0] for n in names}
    for kind in kinds:
        cells = []
        for name in names:
            ok, bad = tally(columns[name], kind) or (0, 0)
            totals[name][0] += ok
            totals[name][1] += bad
            cells.append(f"{ok:>16} {bad:>7}" if secrets else f"{bad:>24}")
        rows.append(f"{kind:30} {per[kind]:>5}  " + "  ".join(cells))
    cells = [f"{t[0]:>16} {t[1]:>7}" if secrets else f"{t[1]:>24}" for t in totals.values()]
    rows.append("-" * len(head))
    rows.append(f"{'total':30} {len(cases):>5}  " + "  ".join(cells))
    return rows


def by_placement(cases: list[Case], columns: dict[str, dict[str, list[bool]] | None]) -> None:
    """Misses of each redactor by placement."""
    index: dict[str, int] = Counter()
    where: dict[tuple[str, str], list[bool]] = {}
    for case in cases:
        i = index[case.kind]
        index[case.kind] += 1
        for name, results in columns.items():
            if results is not None:
                where.setdefault((name, case.placement), []).append(results[case.kind][i])
    print("\nmissed by placement:")
    for (name, placement), oks in sorted(where.items()):
        print(f"  {name:12} {placement:7} {len(oks) - sum(oks):>4} of {len(oks)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--session", action="append", type=Path, default=[])
    parser.add_argument("--entries", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", metavar="REV")
    parser.add_argument("--no-detector", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker([str(s) for s in args.session], args.runs)
        return

    from jsonl_session import Redactor

    secrets, lookalikes = secret_cases(), lookalike_cases()
    print(
        f"corpus: {len(secrets)} secrets of {len({c.kind for c in secrets})} types, "
        f"{len(lookalikes)} look-alikes of {len({c.kind for c in lookalikes})} kinds"
    )
    with tempfile.TemporaryDirectory() as folder:
        sessions = list(args.session)
        if not sessions:
            sys.path.insert(0, str(HERE))
            from generate import write_session

            sessions.append(Path(folder) / "generated.jsonl")
            write_session(sessions[0], args.entries, 7)
        old = baseline(args.baseline, sessions, args.runs) if args.baseline else None
        columns: dict[str, dict[str, list[bool]] | None] = {}
        if old is not None:
            print(f"before: the redactor of {args.baseline}")
            columns["before"] = old["corpus"]
        columns["ours"] = judge_redactor(Redactor, secrets + lookalikes)
        columns["detector"] = None if args.no_detector else judge_detector(secrets + lookalikes)
        if columns["detector"] is None and not args.no_detector:
            print("(detect-secrets is not installed: pip install detect-secrets)")
        print()
        print("\n".join(table(secrets, columns, secrets=True)))
        print()
        print("\n".join(table(lookalikes, columns, secrets=False)))
        by_placement(secrets, columns)
        print(f"\nspeed (Redactor.value over every entry; CPU time, best of {args.runs}):")
        for session in sessions:
            size = session.stat().st_size / 1e6
            rate, counts = speed(Redactor, session, args.runs)
            line = f"  {session.name} ({size:.1f} MB): ours {rate:.1f} MB/s"
            if old is not None:
                before, _ = old["speed"][str(session)]
                line += f", before {before:.1f} MB/s ({rate / before:.1f}x)"
            print(line + (f"; replaced {counts}" if counts else ""))


if __name__ == "__main__":
    main()
