"""The on-disk side of a session: how much of its file has been read, and the
protocol every write follows.

Owns the state that ties a session in memory to its file (how far it has read,
which inode, which lines carry no entry, whether it exists yet) and the write
protocol: take the lock; pick up what other writers appended; refuse a format newer
than ours or a file that now holds another session; seal a torn tail; rewrite an
old version (with a backup); append. What to write is session/'s business;
the byte-level I/O is store.py's (sidecars: new_files.py's).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jsonl_session.errors import SessionWriteError, UnsyncedWrite
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.jsonio import dumps
from jsonl_session.format.model import CURRENT_VERSION
from jsonl_session.format.problems import Problem
from jsonl_session.storage import new_files, store
from jsonl_session.storage.foreign import dialect_name
from jsonl_session.storage.lines import consumed_length, count_newlines, file_bytes
from jsonl_session.storage.loader import BadLine, LoadedFile, parse_session_bytes, read_appended
from jsonl_session.storage.reading import fused_entry_start


class SessionFile:
    """A session's file as this process knows it.

    ``on_entry``, ``on_problem`` and ``on_reload`` tell the owner about lines other
    writers added, what was wrong with them, and a complete re-read.
    """

    def __init__(
        self,
        path: Path,
        loaded: LoadedFile,
        *,
        persisted: bool,
        fsync: store.FsyncPolicy,
        on_entry: Callable[[StoredEntry], None],
        on_problem: Callable[[Problem], None],
        on_reload: Callable[[LoadedFile], None],
    ) -> None:
        store.check_fsync_policy(fsync)
        self.path = path
        self.fsync: store.FsyncPolicy = fsync
        self.persisted = persisted
        self.sealed_tails: list[Path] = []
        self.backups: list[Path] = []
        self._on_entry = on_entry
        self._on_problem = on_problem
        self._on_reload = on_reload
        self._session_id = loaded.header.get("id")
        self._adopt(loaded)

    def _adopt(self, loaded: LoadedFile) -> None:
        self.loaded = loaded
        self._bad_lines = list(loaded.bad_lines)
        self._end_offset = loaded.end_offset
        self.next_line = loaded.last_line + 1
        self._stale = False  # set when a writer without a lock wrote beside ours

    def check_copyable(self) -> None:
        """Refuse to copy entries into a new pi file when the version is newer."""
        if not self.loaded.copyable:
            self.check_writable()

    def check_writable(self) -> None:
        loaded = self.loaded
        if loaded.dialect != "pi":
            raise SessionWriteError(
                f"{self.path}: a {dialect_name(loaded.dialect)} transcript is only read here, "
                "never written; convert it to a pi session first "
                f"(jsonl-session convert {self.path} --to pi) or fork it"
            )
        if not loaded.writable:
            raise SessionWriteError(
                f"{self.path}: format version {loaded.version_read} is newer than "
                f"{CURRENT_VERSION}, the newest this jsonl-session knows; refusing to write "
                "(reading works best-effort). Upgrade jsonl-session to write to it."
            )

    @contextmanager
    def writing(self) -> Iterator[store.LockedFile]:
        """The locked file, with our view brought up to date and checked.

        OS errors on the way (a full disk, a vanished folder) become SessionWriteError.
        """
        self.check_writable()
        try:
            with store.locked(self.path, self.fsync) as handle:
                self._catch_up(handle)
                self.check_writable()  # another writer may have replaced the file
                yield handle
        except OSError as exc:
            where = exc.filename or self.path
            raise SessionWriteError(f"{where}: {exc.strerror or exc}") from None

    def prepare(self, handle: store.LockedFile) -> None:
        """Before an append: end the file with a newline and bring it to version 3."""
        self.seal(handle)
        self.rewrite_if_needed(handle, keep_tail=False)

    def append(self, handle: store.LockedFile, raw: bytes) -> tuple[int, int]:
        """Append one entry line; return its line number and byte offset.

        Raises UnsyncedWrite (after counting the line) when the line was
        written but fsync failed.
        """
        unsynced: UnsyncedWrite | None = None
        try:
            offset = handle.append(raw + b"\n")
        except UnsyncedWrite as exc:
            offset, unsynced = exc.offset, exc
        if offset > self._end_offset:
            # A writer without a lock (pi) appended between our read and our write:
            # its whole lines lie before ours; take them in now.
            gap = handle.read_range(self._end_offset, offset - self._end_offset)
            self._take_in(gap[: consumed_length(gap)])
            self._stale = len(gap) != consumed_length(gap)
        elif offset < self._end_offset:
            self._stale = True  # the file shrank under us: read it again next time
        line = self.next_line
        self.next_line += 1
        self._end_offset = offset + len(raw) + 1
        if unsynced is not None:
            unsynced.line = line
            raise unsynced
        return line, offset

    def create(self, header: dict[str, Any], lines: Sequence[bytes]) -> list[int]:
        """Write a new file (deferred persistence ends); return each line's offset."""
        content = file_bytes(dumps(header), lines)
        store.write_new_file(self.path, content, self.fsync)
        self.persisted = True
        info = os.stat(self.path)
        self.loaded.identity = (info.st_dev, info.st_ino)
        offsets = []
        offset = content.index(b"\n") + 1
        for raw in lines:
            offsets.append(offset)
            offset += len(raw) + 1
        self._end_offset = len(content)
        self.next_line = len(lines) + 2
        return offsets

    def seal(self, handle: store.LockedFile, *, at_once: bool = False) -> Path | None:
        """End the file with a newline (see LockedFile.seal_tail); re-read if it changed.

        ``at_once`` cuts a torn tail however recently the file changed (an explicit
        repair, when the user says no one is writing)."""
        sealed = handle.seal_tail(quiet_seconds=0.0) if at_once else handle.seal_tail()
        if sealed.sidecar is not None:
            self.sealed_tails.append(sealed.sidecar)
        if sealed.sidecar is not None or sealed.closed or sealed.settled:
            self._reload(handle)
        return sealed.sidecar

    def rewrite_if_needed(self, handle: store.LockedFile, *, keep_tail: bool) -> Path | None:
        """Rewrite the file as version 3 if reading migrated it; return the backup.

        Every line is kept: entries (migrated), bad lines as they are, and with
        ``keep_tail`` an unterminated last line too.
        """
        loaded = self.loaded
        if not loaded.needs_rewrite:
            return None
        lines = sorted(
            [(e.line, e.raw) for e in loaded.entries] + [(b.line, b.raw) for b in self._bad_lines]
        )
        content = file_bytes(loaded.header, (raw for _, raw in lines))
        if keep_tail and loaded.torn_tail is not None:
            content += loaded.torn_tail.raw
        kind = f"v{loaded.version_read}.bak"
        backup = handle.replace_contents(content, kind, built_from=loaded.size)
        self.backups.append(backup)
        self._reload(handle)
        return backup

    def split_fused(self, handle: store.LockedFile) -> list[Path]:
        """Split each line that is a torn fragment followed by a whole entry (see
        reading.fused_entry_start): the fragment goes to a ``torn`` sidecar, the entry
        stays as its own line, the original file is kept as a backup. Returns the
        sidecars and the backup; nothing when no line is fused."""
        fused = [
            (bad, start)
            for bad in self._bad_lines
            if (start := fused_entry_start(bad.raw)) is not None
        ]
        if not fused:
            return []
        original = handle.read_from(0)
        made = [
            new_files.create_sidecar(handle.real, "torn", bad.raw[:start]) for bad, start in fused
        ]
        pieces, kept_from = [], 0
        for bad, start in fused:
            pieces += [original[kept_from : bad.offset], bad.raw[start:]]
            kept_from = bad.offset + len(bad.raw)
        pieces.append(original[kept_from:])
        kind = f"v{self.loaded.version_read}.bak"
        made.append(handle.replace_contents(b"".join(pieces), kind, built_from=len(original)))
        self.sealed_tails.extend(made[:-1])
        self.backups.append(made[-1])
        self._reload(handle)
        return made

    def _catch_up(self, handle: store.LockedFile) -> None:
        """Take in lines other writers appended since we read (under the lock)."""
        info = os.fstat(handle.fd)
        size = info.st_size
        end = self._end_offset
        if (
            self._stale
            or self.loaded.identity not in (None, (info.st_dev, info.st_ino))
            or size < end
            or (end and handle.byte_at(end - 1) != b"\n")
            or (size != end and self.loaded.needs_rewrite)  # new lines need migrating too
        ):
            self._reload(handle)
            return
        if size == end:
            return
        new = handle.read_from(end)
        self._take_in(new[: consumed_length(new)])

    def _take_in(self, complete: bytes) -> None:
        """Whole lines found at the end of what we had read: index them."""
        read = read_appended(complete, self._end_offset, self.next_line)
        for problem in read.problems:
            self._on_problem(problem)
        self._bad_lines.extend(read.bad)
        for entry in read.entries:
            self._on_entry(entry)
        self.next_line += count_newlines(complete)
        self._end_offset += len(complete)

    def _reload(self, handle: store.LockedFile) -> None:
        loaded = parse_session_bytes(handle.read_from(0), self.path)
        if loaded.header.get("id") != self._session_id:
            raise SessionWriteError(
                f"{self.path}: now holds session {loaded.header.get('id')}, not "
                f"{self._session_id}; nothing written. Open the file again."
            )
        info = os.fstat(handle.fd)
        loaded.identity = (info.st_dev, info.st_ino)
        self._adopt(loaded)
        self._on_reload(loaded)

    @property
    def bad_lines(self) -> list[BadLine]:
        return list(self._bad_lines)
