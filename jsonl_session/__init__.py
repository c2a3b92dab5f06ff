"""jsonl-session: append-only JSONL tree sessions of coding agents (pi format v3).

Public names only; no logic lives here.
"""

from jsonl_session.catalog.listing import SessionInfo, latest_session, list_sessions
from jsonl_session.compaction import (
    CompactionSettings,
    ExtractiveSummarizer,
    branch_with_summary,
    compact,
)
from jsonl_session.context import EMPTY_LEAF, SessionContext, build_context
from jsonl_session.errors import (
    CompactionError,
    EntryValidationError,
    JsonlSessionError,
    SessionFormatError,
    SessionTreeError,
    SessionWriteError,
)
from jsonl_session.export import export_session
from jsonl_session.export.plan import ExportResult
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.model import CURRENT_VERSION, LEAF_MARKER_TYPE, PRUNE_MARKER_TYPE
from jsonl_session.format.problems import Problem
from jsonl_session.session.facade import Session
from jsonl_session.storage.loader import LoadedFile, load_entries
from jsonl_session.tree import TreeIndex, TreeNode

__all__ = [
    "CURRENT_VERSION",
    "EMPTY_LEAF",
    "LEAF_MARKER_TYPE",
    "PRUNE_MARKER_TYPE",
    "CompactionError",
    "CompactionSettings",
    "EntryValidationError",
    "ExportResult",
    "ExtractiveSummarizer",
    "JsonlSessionError",
    "LoadedFile",
    "Problem",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionInfo",
    "SessionTreeError",
    "SessionWriteError",
    "StoredEntry",
    "TreeIndex",
    "TreeNode",
    "branch_with_summary",
    "build_context",
    "compact",
    "export_session",
    "latest_session",
    "list_sessions",
    "load_entries",
]
