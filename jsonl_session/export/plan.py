"""What an export shows: the plan every readable format renders.

Owns ExportPlan (the active path or every branch, which header facts it states and
when the replies' figures are read, labels beside the entries they mark, the one run
that holds the leaf, each entry's view made and redacted once, the slices the workers
render) and ExportResult. The facts' wording is header_facts.py's. What an entry says
comes from views/transcript.py (`view_entry`), the runs of the branch tree from
views/runs.py; secrets are replaced by views/redact.py's `Redactor`. Rendering is
markdown.py's and html.py's; the JSON document is json.py's; choosing a format and
writing the file is render.py's.

Redaction counts each secret once per place it comes from (an entry, a label,
the name, the header), however often the export shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from jsonl_session.errors import SessionTreeError
from jsonl_session.export.header_facts import (
    LaterFigures,
    model_and_thinking,
    parts_of,
    usage_facts,
)
from jsonl_session.export.replies import ReplyFigures, figures_in_worker
from jsonl_session.format.entry import StoredEntry, loads_object, raw_lines
from jsonl_session.format.walk import as_text
from jsonl_session.processes import submit_warm, warm_pool_waiting
from jsonl_session.session.facade import Session
from jsonl_session.storage.columns import entry_columns
from jsonl_session.views.describe import one_line
from jsonl_session.views.pieces import Piece, texts_of
from jsonl_session.views.redact import Redactor
from jsonl_session.views.runs import Run, iter_runs, session_runs
from jsonl_session.views.slices import (
    LazySlices,
    Render,
    Slice,
    export_workers,
    lines_size,
    packed_records,
    rendered_pieces,
    slices_of,
)
from jsonl_session.views.transcript import EntryView, view_entry

if TYPE_CHECKING:
    pass

ExportFormat = Literal["markdown", "html", "json"]
FORMATS: tuple[ExportFormat, ...] = ("markdown", "html", "json")


@dataclass(frozen=True, slots=True)
class ExportResult:
    """The exported text and how many secrets of each kind were replaced."""

    text: str
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def redacted(self) -> int:
        return sum(self.redactions.values())


class ExportPlan:
    """What an export shows, with each entry's view made (and redacted) once."""

    def __init__(
        self, session: Session, leaf_id: str | None, all_branches: bool, redact: bool
    ) -> None:
        self.session = session
        self.redactor = Redactor(enabled=redact)
        self.all_branches = all_branches
        self.leaf_id = leaf_id if leaf_id is not None else session.leaf_id
        try:
            path = session.branch_path(self.leaf_id) if self.leaf_id else []
        except SessionTreeError:
            if not all_branches:
                raise
            path = []  # a cycle: every branch is still shown, none highlighted
        self.path = [e for e in path if not (e.is_leaf_marker or e.type == "label")]
        self._path_ids = [e.id for e in path]
        self.labels = {k: self.redactor.text(v) for k, v in session.labels.items()}
        self.name = self.redactor.text(session.name) if session.name else None
        self._views: dict[int, EntryView] = {}  # by line: an id may be used twice
        self.shown: list[tuple[Run | None, list[StoredEntry]]] = (
            [(run, run.entries) for run in iter_runs(self.runs)]
            if all_branches
            else [(None, self.path)]
        )

    @cached_property
    def runs(self) -> list[Run]:
        """The session's runs (views/runs.py)."""
        return session_runs(self.session)

    @cached_property
    def active(self) -> set[str]:
        """The ids on the path to the leaf (markers and labels included)."""
        return set(self._path_ids)

    @cached_property
    def anchors(self) -> set[str]:
        """The ids of the entries the export shows."""
        return {e.id for _, entries in self.shown for e in entries}

    @cached_property
    def leaf_run(self) -> Run | None:
        """The run that holds the leaf."""
        return next(
            (run for run in iter_runs(self.runs) if any(e.id == self.leaf_id for e in run.entries)),
            None,
        )

    def forget_lookups(self) -> None:
        """Let go of `active` and `anchors` (made again if asked): on a session of
        200,000 entries the two sets take tens of MB a long export need not hold."""
        self.__dict__.pop("active", None)
        self.__dict__.pop("anchors", None)

    @property
    def has_branches(self) -> bool:
        """More than one run: the session branches (or has more than one root)."""
        return len(self.runs) > 1 or any(run.branches for run in self.runs)

    def run_title(self, run: Run) -> str:
        title = f"Branch {run.number}"
        title += f" · from {run.from_id}" if run.from_id is not None else ""
        return title + (" · active" if run is self.leaf_run else "")

    def view(self, entry: StoredEntry) -> EntryView:
        """The view of ``entry``, kept until `take_bodies` takes it (for a title or an
        outline that shows an entry before its turn)."""
        if entry.line not in self._views:
            self._views[entry.line] = view_entry(entry, self.redactor)
        return self._views[entry.line]

    def take_views(self, entries: Sequence[StoredEntry]) -> Generator[EntryView, None, None]:
        """The view of each entry in turn, where the export shows it (see
        `take_bodies`)."""
        for entry, made, data in self.take_bodies(entries):
            yield made if made is not None else view_entry(entry, self.redactor, data)

    def take_bodies(
        self, entries: Sequence[StoredEntry]
    ) -> Generator[tuple[StoredEntry, EntryView | None, dict[str, Any] | None], None, None]:
        """Each entry in turn, with the view `view` made of it or else its body, for a
        renderer that may write it without a view; their lines read from disk a batch
        at a time (one read for many entries, not one each). A view made is taken, not
        kept: an export holds one entry's view at a time, and each entry is shown
        once, so each secret is counted once."""
        for start in range(0, len(entries), _BATCH):
            batch = entries[start : start + _BATCH]
            for entry, raw in zip(batch, raw_lines(batch), strict=True):
                made = self._views.pop(entry.line, None)
                yield entry, made, None if made is not None else loads_object(raw)

    def spread(
        self,
        render: Render,
        shared: Any,
        workers: int | None,
        start: tuple[int, int] = (0, 0),
        context: Callable[[Sequence[StoredEntry]], list[Any]] | None = None,
        *,
        utf8: bool = False,
        meanwhile: Callable[[], object] | None = None,
    ) -> Spread | None:
        """The entries shown rendered by ``workers`` processes through ``render`` (with
        ``shared``, and what ``context`` says of each entry of a slice), or None when
        one process renders them (one worker, or a short export). ``start``: the run
        (index in `shown`) and the entry in it to start from; those before are the
        caller's. Views made already (a title's, an outline's) were counted here: the
        workers do not count them again. Call it after those views are made.
        ``meanwhile``: the caller's work, done once the first slices are handed out
        (views/slices.py's `rendered_pieces`); not done when None is returned."""
        first_run, first_entry = start
        left = [  # (run, its entries, the first of them left)
            (run, entries, first_entry if run == first_run else 0)
            for run, (_, entries) in enumerate(self.shown)
            if run >= first_run
        ]
        size = sum(lines_size(entries[skip:]) for _, entries, skip in left)
        count = export_workers(workers, size)
        if count == 1 or self.session.dialect != "pi":  # another agent's lines are not the file's
            return None
        cuts = [
            (run, entries, (skip + begin, skip + end))
            for run, entries, skip in left
            for begin, end in slices_of(entries[skip:])
        ]
        counted = frozenset(self._views)
        self._views.clear()
        path = str(self.session.path)

        def make(index: int) -> Slice:
            _, entries, (begin, end) = cuts[index]
            chosen = entries[begin:end]
            records = packed_records(chosen)
            said = context(chosen) if context is not None else None
            return Slice(render, path, self.redactor.enabled, records, shared, said, counted)

        pieces = rendered_pieces(
            LazySlices(len(cuts), make), count, self.redactor, utf8=utf8, meanwhile=meanwhile
        )
        return Spread([run for run, _, _ in cuts], pieces)

    def title(self) -> str:
        if self.name:
            return one_line(self.name, 100)
        first = next((e for e in self.session.entries if e.role == "user"), None)
        text = (
            next((p.text for p in self.view(first).parts if p.kind == "text"), "") if first else ""
        )
        return one_line(text, 100) if text.strip() else f"Session {self.session.id}"

    def figures_later(self) -> LaterFigures:
        """The figures the facts read from the replies shown, read by the workers when
        they wait already (processes.warm_pool; the pool stays for `spread`), each a
        part of the replies, so that this process meanwhile renders the start of the
        export and no worker waits long for it; else read by `facts` itself."""
        path = self.session.path
        count = warm_pool_waiting() if self.session.dialect == "pi" and path else 0
        if not count or path is None:
            return LaterFigures([])  # (their columns are not even made)
        shown = self.shown_entries()
        replies = [e for e in shown if e.type == "message" and e.role == "assistant"]
        if not replies or export_workers(count, lines_size(shown)) == 1:
            return LaterFigures([])  # (a short path: read here sooner than workers start)
        futures = []
        for index, (start, stop) in enumerate(parts_of(replies, count)):
            columns = entry_columns(str(path), replies[start:stop])
            future = submit_warm(figures_in_worker, columns, index > 0)
            if future is None:
                return LaterFigures([])
            futures.append(future)
        return LaterFigures(futures)

    def shown_entries(self) -> list[StoredEntry]:
        """The entries the export shows, in order."""
        return [e for _, shown in self.shown for e in shown]

    def facts(self, figures: ReplyFigures | None = None) -> list[tuple[str, str]]:
        """The header's facts (``figures``: the replies' `LaterFigures`, when read)."""
        header = self.session.header_data
        r = self.redactor
        facts = [("session", as_text(header.get("id", ""))), ("cwd", r.text(self.session.cwd))]
        facts.append(("created", as_text(header.get("timestamp", ""))))
        model, thinking = model_and_thinking(self.path)
        facts += [("model", r.text(model))] if model else []
        facts += [("thinking level", thinking)] if thinking else []
        if isinstance(header.get("parentSession"), str):
            facts.append(("forked from", r.text(header["parentSession"])))
        if self.name:
            facts.append(("name", self.name))
        ends = sum(not run.branches for run in iter_runs(self.runs))
        count = self.session.revision
        facts.append(("entries", f"{count}, {ends} branches" if ends > 1 else str(count)))
        facts += usage_facts(self.shown_entries(), figures)
        shown = "every branch" if self.all_branches else f"the path to {self.leaf_id or '(none)'}"
        facts.append(("exported", shown))
        if self.problem_count:
            facts.append(("problems", f"{self.problem_count} (see jsonl-session doctor)"))
        return facts

    @cached_property
    def problem_count(self) -> int:
        """How many problems the session has (`Session.problems`)."""
        return len(self.session.problems)

    def prepare_facts(self) -> None:
        """Read now what the facts read of the whole session in this process (the
        runs, the problems): called while the workers read the replies' figures and
        render the first slices (`spread`'s ``meanwhile``), so that they do not wait
        for it."""
        _ = self.runs, self.problem_count


_BATCH = 1024  # entries whose lines are read from disk at once


class Spread:
    """The texts of the slices of a spread export, taken run by run."""

    def __init__(self, runs: list[int], pieces: Iterator[tuple[int, Piece]]) -> None:
        self._runs = runs  # the run (index in `ExportPlan.shown`) of each slice
        self._pieces = pieces
        # the pool starts now, not when the body is reached
        self._held: tuple[int, Piece] | None = next(pieces, None)

    def pieces_of(self, run: int) -> Iterator[Piece]:
        """The pieces of run ``run``'s slices (take the runs in order)."""
        while self._held is not None and self._runs[self._held[0]] == run:
            yield self._held[1]
            self._held = next(self._pieces, None)

    def texts_of(self, run: int) -> Iterator[str]:
        """`pieces_of`, as texts."""
        return texts_of(self.pieces_of(run))
