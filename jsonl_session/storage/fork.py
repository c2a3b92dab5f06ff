"""Forks: a new session file holding one path of a session, or a whole session
copied to another working directory.

A fork holds one path of the source tree, root to the chosen entry, as pi 1.5.2's
createBranchedSession writes it. Label entries and leaf markers on that path are
left out, and every kept entry is re-parented to the kept entry before it (the
first to null), so the chain has no holes; a compaction whose first kept entry was
a dropped one keeps from the next kept entry instead. The labels of kept entries
are written again as label entries chained after the last kept entry, in the
order the session's labels were set. Entries keep their exact bytes unless a
field had to change. The new file is written (outputs.py: a temporary
file linked into place, 0600, never over an existing name or through a link; any
failure our SessionWriteError naming the path); the source is only read. A
``transform`` (a session's redactor, for a redacted copy) rewrites each entry's
line on the way. Lines are written as they are made (output_lines.write_lines): a fork
of a large session is never held whole.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from jsonl_session.errors import SessionWriteError
from jsonl_session.format.entry import StoredEntry, entry_lines, loads_object
from jsonl_session.format.ids import new_entry_id
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.model import CURRENT_VERSION, LabelEntry, SessionHeader, encode
from jsonl_session.storage import store
from jsonl_session.storage.loader import LoadedFile
from jsonl_session.storage.output_lines import write_lines


def reparented(
    entry: StoredEntry,
    parent_id: str | None,
    replaced: dict[str, str] | None = None,
    raw: bytes | None = None,
) -> bytes:
    """The entry's line (``raw``, when read already) with ``parentId`` set, all other
    keys and their order kept; for a compaction, a ``firstKeptEntryId`` found in
    ``replaced`` becomes its replacement (a retain-none compaction keeps naming
    itself)."""
    line = raw if raw is not None else entry.raw
    if entry.type == "compaction" and replaced:
        data = loads_object(line)
        first_kept = data.get("firstKeptEntryId")
        if isinstance(first_kept, str) and first_kept != entry.id and first_kept in replaced:
            data["parentId"] = parent_id
            data["firstKeptEntryId"] = replaced[first_kept]
            return dumps(data)
    if entry.parent_id == parent_id:
        return line
    data = loads_object(line)
    data["parentId"] = parent_id
    return dumps(data)


def fork_path_lines(
    path: Sequence[StoredEntry], labels: dict[str, tuple[str, str]]
) -> Iterator[bytes]:
    """Lines for the entries of a fork: the path without labels and markers, then
    labels; made as they are taken, the path's lines read a batch at a time.

    ``labels`` maps a target id to (label, timestamp of the label change), in the
    order they were set.
    """
    kept_ids: set[str] = set()
    replaced: dict[str, str] = {}  # a dropped entry's id -> the next kept entry's
    dropped: list[str] = []
    previous: str | None = None
    kept = [entry for entry in path if entry.type != "label" and not entry.is_leaf_marker]
    lines = entry_lines(kept)
    for entry in path:
        if entry.type == "label" or entry.is_leaf_marker:
            dropped.append(entry.id)
            continue
        replaced.update((gone, entry.id) for gone in dropped)
        dropped.clear()
        read, raw = next(lines)
        assert read is entry  # (the same order)
        yield reparented(entry, previous, replaced, raw)
        kept_ids.add(entry.id)
        previous = entry.id
    taken = set(kept_ids)
    for target, (text, stamp) in labels.items():
        if target not in kept_ids:
            continue
        label_id = new_entry_id(taken)
        taken.add(label_id)
        label = LabelEntry(
            id=label_id, parent_id=previous, timestamp=stamp, target_id=target, label=text
        )
        yield encode(label)
        previous = label_id


def write_fork(
    new_path: Path,
    header: SessionHeader,
    path: Sequence[StoredEntry],
    labels: dict[str, tuple[str, str]],
    fsync: store.FsyncPolicy,
    transform: Callable[[bytes], bytes] | None = None,
) -> int:
    """Write a new file holding ``path`` (see fork_path_lines) under ``header``, each
    line through ``transform`` if given; how many entries it holds."""
    lines: Iterable[bytes] = fork_path_lines(path, labels)
    if transform is not None:
        lines = map(transform, lines)
    return _write_new(new_path, itertools.chain([encode(header)], lines), fsync) - 1


def write_copy(
    new_path: Path,
    header: SessionHeader,
    source: LoadedFile,
    fsync: store.FsyncPolicy,
    transform: Callable[[bytes], bytes] | None = None,
) -> None:
    """Write a new file holding every entry of ``source`` (migrated) under ``header``,
    each line through ``transform`` if given."""
    if not source.copyable:
        raise SessionWriteError(
            f"{source.path}: format version {source.version_read} is newer than "
            f"{CURRENT_VERSION}; refusing to copy it into a version {CURRENT_VERSION} file"
        )
    lines: Iterable[bytes] = (raw for _, raw in entry_lines(source.entries))
    if transform is not None:
        lines = map(transform, lines)
    _write_new(new_path, itertools.chain([encode(header)], lines), fsync)


def _write_new(new_path: Path, lines: Iterable[bytes], fsync: store.FsyncPolicy) -> int:
    """The new file, written by outputs.py (a temporary file linked into place: whole or
    absent, 0600, never over anything at ``new_path``), in folders made 0700, with
    every failure our error naming the path: the default path is built from the
    source's cwd, which a hostile file can make impossible (a NUL, a name too long)."""
    hint = "refusing to overwrite it"
    return write_lines(new_path, lines, fsync=fsync, exists_hint=hint, make_folders=True)
