"""The hook through which `Session.append_response` turns an SDK reply into a message.

Reading the SDKs' replies and streams is providers/' job, a layer above the session, so
the session cannot import it (the hook sits here, in a light module, because the
package's ``__init__`` imports it); the package's ``__init__`` names the module that does it
here (`register`), and `convert_reply` imports it the first time a reply is appended,
so sessions that never append one never load it. The same pattern as
storage/foreign.py's hook for other agents' files.
"""

from __future__ import annotations

import importlib
from typing import Any

from jsonl_session.errors import JsonlSessionError

_modules: list[str] = []


def register(module: str) -> None:
    """Name a module with ``from_reply(reply, *, on_delta, **options) -> dict``."""
    if module not in _modules:
        _modules.insert(0, module)


def convert_reply(reply: Any, **options: Any) -> dict[str, Any]:
    """pi's assistant message for an SDK reply or stream, by the registered module."""
    if not _modules:
        raise JsonlSessionError("no module to read SDK replies is registered")
    converted: dict[str, Any] = importlib.import_module(_modules[0]).from_reply(reply, **options)
    return converted
