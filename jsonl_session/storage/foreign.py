"""The hook through which the loader reads files other agents wrote.

A file whose first line is not a pi session header may be another agent's transcript
(Claude Code, Codex). Reading those is dialects/' job, a layer above this one, so the
loader cannot import it; instead the package's ``__init__`` names the module that
reads them here (`register`), and the loader imports it and asks its
``read_foreign(data, path)`` the first time it meets such a file, so reading pi files
never loads it. Also the agents' names. Nothing here reads bytes.
"""

from __future__ import annotations

_modules: list[str] = []

AGENT_NAMES = {"pi": "pi", "claude": "Claude Code", "codex": "Codex"}
"""The agents whose files are read, by the short name used in options and output."""


def dialect_name(dialect: str) -> str:
    """The agent's name as people write it ("Claude Code" for "claude")."""
    return AGENT_NAMES.get(dialect, dialect)


def register(module: str) -> None:
    """Name a module with ``read_foreign(data, path) -> LoadedFile | None`` (None: not
    a file it reads). Registering the same module twice has no effect."""
    if module not in _modules:
        _modules.append(module)


def reader_modules() -> tuple[str, ...]:
    """The registered modules, in the order they were named."""
    return tuple(_modules)
