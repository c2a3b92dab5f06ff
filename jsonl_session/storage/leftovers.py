"""What an interrupted write leaves beside a session file, and how it is told from
anything else: our temporary files and our backup links.

Owns the names (``.jsonl-session-<random>.tmp`` for temporary files, new_files.py's and
outputs.py's; ``<file>.v<N>.bak-<n>`` for the backups of a rewrite) and two rules:

- A temporary file is *abandoned* when it carries our name, is a regular file of
  ours, has not been written to for `ABANDONED_AFTER_SECONDS`, and no one holds its
  lock (new_files.py holds the lock on its temporary files from creation until they are
  renamed in or removed, where the system allows). A live write keeps its file's
  mtime fresh and its lock held, so it is never taken for abandoned; and should a
  write paused for longer lose its temporary file, it fails without touching the
  session (the file is only renamed or linked in when complete).
- An extra hard link of a session file is *our backup* when it sits in the same
  folder, is named as a backup of that file and is the same inode: a rewrite killed
  between linking the backup and renaming the new file in leaves exactly that. It is
  *our temporary name* when it carries our temporary name instead: a new file (a
  session, a fork) killed between being linked in and losing its temporary name.

Removing abandoned files is `remove_abandoned_temps` (store.py calls it before it
writes a new file or rewrites one; `doctor --repair` too); `abandoned_temps` lists
them (`doctor`).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from pathlib import Path

from jsonl_session.storage.portable import BINARY, NOFOLLOW, NONBLOCK, close_locked, try_lock

TEMP_PREFIX = ".jsonl-session-"
TEMP_SUFFIX = ".tmp"
ABANDONED_AFTER_SECONDS = 15 * 60.0
"""A temporary file unchanged for this long, and unlocked, belongs to a write that
was killed: writing one takes seconds, and it is renamed in as soon as it is whole."""

_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"[A-Za-z0-9_]+" + re.escape(TEMP_SUFFIX))


def abandoned_temps(folder: Path, *, older_than: float | None = None) -> list[Path]:
    """Our temporary files in ``folder`` that no write is using (see the module doc);
    ``older_than``: seconds unchanged (default `ABANDONED_AFTER_SECONDS`)."""
    if older_than is None:
        older_than = ABANDONED_AFTER_SECONDS
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    for name in names:
        if _TEMP_NAME.fullmatch(name):
            candidate = folder / name
            if _looks_abandoned(candidate, older_than) and _unlocked(candidate):
                found.append(candidate)
    return found


def remove_abandoned_temps(folder: Path, *, older_than: float | None = None) -> list[Path]:
    """Remove our abandoned temporary files from ``folder``; the ones removed.
    Each is removed while we hold its lock, so a writer cannot take it up meanwhile."""
    if older_than is None:
        older_than = ABANDONED_AFTER_SECONDS
    removed = []
    for candidate in abandoned_temps(folder, older_than=older_than):
        try:
            fd = os.open(candidate, os.O_RDWR | NOFOLLOW | NONBLOCK | BINARY)
        except OSError:
            continue
        try:
            if not try_lock(fd):
                continue
            same = os.fstat(fd).st_ino == os.lstat(candidate).st_ino
            if same and _looks_abandoned(candidate, older_than):
                os.unlink(candidate)
                removed.append(candidate)
        except OSError:
            continue
        finally:
            close_locked(fd)
    return removed


def _looks_abandoned(path: Path, older_than: float) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    ours = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    old = time.time() - max(info.st_mtime, info.st_ctime) >= older_than
    return stat.S_ISREG(info.st_mode) and ours and old


def _unlocked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | NONBLOCK | BINARY)
    except OSError:
        return False
    try:
        return try_lock(fd)
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            close_locked(fd)


def backup_name_pattern(path: Path) -> re.Pattern[str]:
    """The names store.py gives the backups of a rewrite of ``path``."""
    return re.compile(re.escape(path.name) + r"\.v[0-9]+\.bak-[0-9]+")


def own_backup_links(path: Path, info: os.stat_result) -> list[Path]:
    """The backups beside ``path`` (whose stat is ``info``) that are the same inode:
    hard links our rewrite made. Sorted by name."""
    return _links_named(path, info, backup_name_pattern(path))


def own_temp_links(path: Path, info: os.stat_result) -> list[Path]:
    """Our temporary names beside ``path`` (whose stat is ``info``) that are the same
    inode: a new file is written under a temporary name and linked in, so a write
    killed between the link and removing the temporary name leaves one. Sorted."""
    return _links_named(path, info, _TEMP_NAME)


def _links_named(path: Path, info: os.stat_result, pattern: re.Pattern[str]) -> list[Path]:
    """The regular files beside ``path`` named by ``pattern`` that are its inode."""
    try:
        names = sorted(os.listdir(path.parent))
    except OSError:
        return []
    links = []
    for name in names:
        if not pattern.fullmatch(name):
            continue
        try:
            other = os.lstat(path.parent / name)
        except OSError:
            continue
        if stat.S_ISREG(other.st_mode) and (other.st_dev, other.st_ino) == (
            info.st_dev,
            info.st_ino,
        ):
            links.append(path.parent / name)
    return links
