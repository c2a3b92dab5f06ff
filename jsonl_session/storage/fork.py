"""Forks: a new session file holding one path of a session, or a whole session
copied to another working directory.

A fork holds one path of the source tree, root to the chosen entry. Label entries
and leaf markers on that path are left out, and every kept entry is re-parented to
the kept entry before it, so the chain has no holes (pi leaves a child pointing at
a dropped label entry). Labels on the path are written again as label entries
chained after the last kept entry. Entries keep their exact bytes unless their
parent had to change. The new file is written whole (store.write_new_file); the
source is only read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jsonl_session.errors import SessionWriteError
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.ids import new_entry_id
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.model import CURRENT_VERSION, LabelEntry, SessionHeader, encode
from jsonl_session.storage import store
from jsonl_session.storage.lines import file_bytes
from jsonl_session.storage.loader import LoadedFile


def reparented(entry: StoredEntry, parent_id: str | None) -> bytes:
    """The entry's line with ``parentId`` set, all other keys and their order kept."""
    if entry.parent_id == parent_id:
        return entry.raw
    data = entry.data()
    data["parentId"] = parent_id
    return dumps(data)


def fork_path_lines(path: Sequence[StoredEntry], labels: dict[str, tuple[str, str]]) -> list[bytes]:
    """Lines for the entries of a fork: the path without labels and markers, then labels.

    ``labels`` maps a target id to (label, timestamp of the label change).
    """
    lines: list[bytes] = []
    kept_ids: set[str] = set()
    previous: str | None = None
    for entry in path:
        if entry.type == "label" or entry.is_leaf_marker:
            continue
        lines.append(reparented(entry, previous))
        kept_ids.add(entry.id)
        previous = entry.id
    taken = set(kept_ids)
    for entry in path:
        if entry.id not in kept_ids or entry.id not in labels:
            continue
        text, stamp = labels[entry.id]
        label_id = new_entry_id(taken)
        taken.add(label_id)
        lines.append(
            encode(
                LabelEntry(
                    id=label_id, parent_id=previous, timestamp=stamp, target_id=entry.id, label=text
                )
            )
        )
        previous = label_id
    return lines


def write_fork(
    new_path: Path,
    header: SessionHeader,
    path: Sequence[StoredEntry],
    labels: dict[str, tuple[str, str]],
    fsync: store.FsyncPolicy,
) -> None:
    """Write a new file holding ``path`` (see fork_path_lines) under ``header``."""
    store.write_new_file(new_path, file_bytes(encode(header), fork_path_lines(path, labels)), fsync)


def write_copy(
    new_path: Path, header: SessionHeader, source: LoadedFile, fsync: store.FsyncPolicy
) -> None:
    """Write a new file holding every entry of ``source`` (migrated) under ``header``."""
    if not source.writable:
        raise SessionWriteError(
            f"{source.path}: format version {source.version_read} is newer than "
            f"{CURRENT_VERSION}; refusing to copy it into a version {CURRENT_VERSION} file"
        )
    content = file_bytes(encode(header), (e.raw for e in source.entries))
    store.write_new_file(new_path, content, fsync)
