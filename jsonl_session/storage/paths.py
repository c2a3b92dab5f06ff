"""Where sessions live: pi's session folder and ours, the folder for a working
directory, creating folders with the right permissions, and checking that a name
taken from a file stays one name in its folder. No file contents here (store.py,
outputs.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Literal

from jsonl_session.errors import SessionWriteError

DIR_MODE = 0o700
MAX_NAME_BYTES = 255
"""The longest file name common file systems take (ext4, APFS, NTFS: 255)."""


def session_root() -> Path:
    """``$JSONL_SESSION_DIR``, else the platform's user data folder for sessions."""
    configured = os.environ.get("JSONL_SESSION_DIR")
    if configured:
        return Path(configured).expanduser()
    return user_folder("data") / "jsonl-session" / "sessions"


def pi_session_root() -> Path:
    """pi's own session folder: ``$PI_CODING_AGENT_DIR/sessions``, else
    ``~/.pi/agent/sessions``."""
    agent = os.environ.get("PI_CODING_AGENT_DIR")
    base = Path(agent).expanduser() if agent else Path.home() / ".pi" / "agent"
    return base / "sessions"


def claude_projects_root() -> Path:
    """Claude Code's transcripts: ``$CLAUDE_CONFIG_DIR/projects``, else
    ``~/.claude/projects``."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    base = Path(configured).expanduser() if configured else Path.home() / ".claude"
    return base / "projects"


def codex_sessions_root() -> Path:
    """Codex's rollouts: ``$CODEX_HOME/sessions``, else ``~/.codex/sessions``."""
    configured = os.environ.get("CODEX_HOME")
    base = Path(configured).expanduser() if configured else Path.home() / ".codex"
    return base / "sessions"


def claude_dir_for(cwd: str, root: Path | None = None) -> Path:
    """Claude Code's folder for a working directory: every character that is not an
    ASCII letter or digit becomes ``-`` (each UTF-16 unit, as JavaScript's
    ``/[^a-zA-Z0-9]/g`` replaces them: two for a character beyond U+FFFF)."""
    name = "".join(
        c if c.isascii() and c.isalnum() else "--" if ord(c) > 0xFFFF else "-" for c in cwd
    )
    return (root if root is not None else claude_projects_root()) / name


def session_roots() -> list[Path]:
    """Where sessions are looked for: pi's folder first, then ours (each once)."""
    roots: list[Path] = []
    for root in (pi_session_root(), session_root()):
        if root not in roots:
            roots.append(root)
    return roots


def user_folder(kind: Literal["data", "cache"]) -> Path:
    """The platform's per-user folder for data (sessions) or caches."""
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / ("Application Support" if kind == "data" else "Caches")
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", home / "AppData" / "Local"))
    if kind == "data":
        return Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    return Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache")


def encode_cwd(cwd: str) -> str:
    """The folder name for a working directory, as pi names it."""
    trimmed = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    for char in "/\\:":
        trimmed = trimmed.replace(char, "-")
    return f"--{trimmed}--"


def session_dir_for(cwd: str, root: Path | None = None) -> Path:
    return (root if root is not None else session_root()) / encode_cwd(cwd)


def ensure_dir(path: Path, made: list[Path] | None = None) -> None:
    """Create ``path`` and missing parents with mode 0700 (existing ones are left);
    each folder this call created is appended to ``made`` as it is made (so a caller
    knows them even when a later one fails)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue  # (there already, or made meanwhile: not ours)
        if made is not None:
            made.append(folder)
        os.chmod(folder, DIR_MODE)


def safe_name(name: str, what: str = "file name") -> str:
    """``name`` if it names a file inside a folder and nothing else: not empty, not
    ``.`` or ``..``, no ``/``, ``\\`` or NUL, at most 255 bytes. Names built from what
    a session file says (its id, its timestamp) go through here, so a hostile file
    cannot make the library write outside the folder meant for it."""
    problem = None
    if name in ("", ".", ".."):
        problem = "is not a file name"
    elif any(char in name for char in "/\\\0"):
        problem = "holds a path separator or NUL"
    elif len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        problem = f"is longer than {MAX_NAME_BYTES} bytes"
    if problem is not None:
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise SessionWriteError(f"{what} {shown!r} {problem}; refusing to write there")
    return name
