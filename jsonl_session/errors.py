"""The exception hierarchy: one base, a few specific subclasses, all of them here
(UnsyncedWrite too, which storage/store.py raises, and MissingExtra, which
extras.py raises).

Every error names what it can: the file, the line, the entry. The CLI turns these
into one line on stderr; nothing else in the library raises bare exceptions on
purpose for bad input.
"""

from __future__ import annotations

from pathlib import Path


class JsonlSessionError(Exception):
    """Base of every error this library raises for bad input or refused operations."""


class SessionFormatError(JsonlSessionError):
    """A file cannot be read as a session: empty, no header, header not on line 1."""

    def __init__(self, path: Path | str | None, line: int | None, problem: str) -> None:
        self.path = None if path is None else Path(path)
        self.line = line
        self.problem = problem
        where = str(self.path) if self.path is not None else "<session>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {problem}")


class SessionTreeError(JsonlSessionError):
    """The parent links cannot be followed (a cycle) or an entry id is unknown."""

    def __init__(self, message: str, entry_ids: tuple[str, ...] = ()) -> None:
        self.entry_ids = entry_ids
        super().__init__(message)


class SessionWriteError(JsonlSessionError):
    """Writing is refused or failed: newer format, existing target, a changed file, the disk."""


class UnsyncedWrite(SessionWriteError):
    """The lines were written whole, but fsync failed: they are in the file, and a
    crash before the OS writes them out could still lose them."""

    def __init__(self, path: Path, offset: int, cause: OSError) -> None:
        self.offset = offset
        self.line = 0  # set by the writer, which knows the line numbers
        super().__init__(
            f"{path}: the entry was appended, but fsync failed ({cause.strerror}); "
            "it may not survive a crash"
        )


class EntryValidationError(JsonlSessionError):
    """An entry or message handed to an append does not have the shape the format needs."""


class CompactionError(JsonlSessionError):
    """A compaction or branch summary cannot be made: nothing to summarize, no API key
    for the chosen summarizer, or the summarizer failed (the provider's reason is kept)."""


class ModelCallError(JsonlSessionError):
    """A model could not be asked: no provider, model or API key to ask it with, or the
    API refused the request (its status and reason are kept)."""


class MissingExtra(JsonlSessionError, ModuleNotFoundError):
    """A feature needs a package that comes with one of the optional extras, and it is
    not installed. The message names the feature and the ``pip install`` line; it is
    also a ModuleNotFoundError, so ``except ImportError`` keeps working."""

    def __init__(self, feature: str, extra: str, package: str, module: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(
            f"{feature} needs {package}: pip install 'jsonl-session[{extra}]'", name=module
        )
