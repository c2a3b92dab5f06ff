"""Building the content of a forked session file (pure: bytes out, nothing written).

A fork holds one path of the source tree, root to the chosen entry. Label entries
and leaf markers on that path are left out, and every kept entry is re-parented to
the kept entry before it, so the chain has no holes (pi leaves a child pointing at
a dropped label entry). Labels on the path are written again as label entries
chained after the last kept entry. Entries keep their exact bytes unless their
parent had to change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from jsonl_session.ids import new_entry_id
from jsonl_session.jsonio import dumps
from jsonl_session.jsonl import StoredEntry
from jsonl_session.model import LabelEntry, encode


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


def file_bytes(header: dict[str, Any] | bytes, lines: Iterable[bytes]) -> bytes:
    head = header if isinstance(header, bytes) else dumps(header)
    return b"".join([head, b"\n", *(line + b"\n" for line in lines)])
