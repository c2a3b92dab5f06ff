"""jsonl-session: append-only JSONL tree sessions of coding agents (pi format v3).

The public API: every name a user of the library (and the CLI) may import, from here.
No logic lives here. Names are loaded when first used, so `import jsonl_session` costs
only the errors module and a command pays only for what it runs; the SDKs, typer and
rich are never imported by importing this package.
"""

from __future__ import annotations

import importlib
import warnings
from typing import TYPE_CHECKING, Any

from jsonl_session._version import __version__ as __version__
from jsonl_session.errors import (
    CompactionError,
    EntryValidationError,
    JsonlSessionError,
    MissingExtra,
    ModelCallError,
    SessionFormatError,
    SessionTreeError,
    SessionWriteError,
    UnsyncedWrite,
)
from jsonl_session.format import reply_hook as _replies
from jsonl_session.storage import foreign as _foreign

# Other agents' transcripts are read by dialects/, a layer above the loader: name the
# module here so the loader can ask it (imported only when such a file is met).
_foreign.register("jsonl_session.dialects.reading")
# SDK replies are read by providers/, above the session: the same kind of hook.
_replies.register("jsonl_session.providers.streams")

if TYPE_CHECKING:
    from jsonl_session.breakdown import Breakdown
    from jsonl_session.catalog.finding import session_file_texts, session_files
    from jsonl_session.catalog.listing import (
        Progress,
        latest_session,
        list_sessions,
        session_info,
    )
    from jsonl_session.catalog.search import SearchHit, search_sessions
    from jsonl_session.catalog.session_info import SessionInfo
    from jsonl_session.compaction import (
        AnthropicSummarizer,
        BranchSummaryResult,
        CompactionPlan,
        CompactionResult,
        CompactionSettings,
        ExtractiveSummarizer,
        OpenAISummarizer,
        PrunePlan,
        PruneResult,
        PruneSettings,
        Summarizer,
        auto_compact,
        call_with_overflow_recovery,
        choose_summarizer,
        compact,
        is_context_overflow,
        plan_for,
        plan_prune,
        prune,
        summarize_branch,
    )
    from jsonl_session.compaction.planning import DEFAULT_SETTINGS as DEFAULT_COMPACTION_SETTINGS
    from jsonl_session.compaction.summarizers import SUMMARIZER_NAMES
    from jsonl_session.context import (
        EMPTY_LEAF,
        ProjectedEntry,
        Projection,
        SessionContext,
        build_context,
    )
    from jsonl_session.dialects.convert import Conversion, convert
    from jsonl_session.dialects.reading import detect, detect_file
    from jsonl_session.export import (
        FORMATS as EXPORT_FORMATS,
    )
    from jsonl_session.export import (
        ExportChunks,
        ExportFormat,
        ExportResult,
        export_chunks,
        export_html,
        export_json,
        export_markdown,
        export_session,
        write_export,
    )
    from jsonl_session.format.entry import StoredEntry
    from jsonl_session.format.jsonio import dumps as to_json
    from jsonl_session.format.model import (
        CURRENT_VERSION,
        LEAF_MARKER_TYPE,
        PRUNE_MARKER_TYPE,
        AssistantMessage,
        BashExecutionMessage,
        Cost,
        CustomMessage,
        ImageContent,
        SystemMessage,
        TextContent,
        ThinkingContent,
        ToolCall,
        ToolDeclaration,
        ToolResultMessage,
        Usage,
        UserMessage,
        message_from_dict,
    )
    from jsonl_session.format.problems import Problem
    from jsonl_session.format.schema import schema_path
    from jsonl_session.integrations.mcp_server import mcp_server, serve_mcp
    from jsonl_session.integrations.openai_agents_store import AgentsSessionFile
    from jsonl_session.integrations.pydantic_ai_store import SessionFileConversationStore
    from jsonl_session.integrations.resume import ModelTarget, Turn, take_turn, target_for
    from jsonl_session.messages import message_text
    from jsonl_session.providers.accumulate import OnDelta
    from jsonl_session.providers.anthropic import to_anthropic
    from jsonl_session.providers.common import ProviderRequest, ToolSpec
    from jsonl_session.providers.counting import count_tokens_anthropic, count_tokens_openai
    from jsonl_session.providers.history import Repair
    from jsonl_session.providers.openai import to_openai_chat, to_openai_responses
    from jsonl_session.providers.replies import tool_result
    from jsonl_session.providers.streams import (
        afrom_reply,
        from_anthropic,
        from_openai_chat,
        from_openai_responses,
        from_reply,
        partial_reply,
    )
    from jsonl_session.session import Session
    from jsonl_session.session.measured import token_breakdown_of
    from jsonl_session.storage.cache import CacheOption, on_record_not_kept
    from jsonl_session.storage.foreign import AGENT_NAMES
    from jsonl_session.storage.leftovers import abandoned_temps, remove_abandoned_temps
    from jsonl_session.storage.loader import LoadedFile, load_entries
    from jsonl_session.storage.outputs import check_output
    from jsonl_session.storage.paths import (
        claude_dir_for,
        claude_projects_root,
        codex_sessions_root,
        pi_session_root,
        session_dir_for,
        session_root,
        session_roots,
    )
    from jsonl_session.tokens import (
        estimate_context_tokens,
        estimate_projected_context_tokens,
        estimate_tokens,
    )
    from jsonl_session.tree import TreeIndex, TreeNode, iter_nodes
    from jsonl_session.usage import RecordedUsage, UsageTotal, recorded_usage
    from jsonl_session.views.describe import entry_summary
    from jsonl_session.views.redact import Redactor, redact_text
    from jsonl_session.views.textconv import (
        textconv,
        textconv_chunks,
        textconv_encoded,
        write_textconv,
    )
    from jsonl_session.views.visible import json_visible, visible, visible_utf8

# name -> (module, attribute there); loaded on first use by __getattr__ below
_LAZY: dict[str, tuple[str, str]] = {
    "AGENT_NAMES": ("storage.foreign", "AGENT_NAMES"),
    "Conversion": ("dialects.convert", "Conversion"),
    "convert": ("dialects.convert", "convert"),
    "detect": ("dialects.reading", "detect"),
    "detect_file": ("dialects.reading", "detect_file"),
    "CURRENT_VERSION": ("format.model", "CURRENT_VERSION"),
    "LEAF_MARKER_TYPE": ("format.model", "LEAF_MARKER_TYPE"),
    "PRUNE_MARKER_TYPE": ("format.model", "PRUNE_MARKER_TYPE"),
    "AssistantMessage": ("format.model", "AssistantMessage"),
    "BashExecutionMessage": ("format.model", "BashExecutionMessage"),
    "Cost": ("format.model", "Cost"),
    "CustomMessage": ("format.model", "CustomMessage"),
    "ImageContent": ("format.model", "ImageContent"),
    "SystemMessage": ("format.model", "SystemMessage"),
    "TextContent": ("format.model", "TextContent"),
    "ThinkingContent": ("format.model", "ThinkingContent"),
    "ToolCall": ("format.model", "ToolCall"),
    "ToolDeclaration": ("format.model", "ToolDeclaration"),
    "ToolResultMessage": ("format.model", "ToolResultMessage"),
    "Usage": ("format.model", "Usage"),
    "UserMessage": ("format.model", "UserMessage"),
    "message_from_dict": ("format.model", "message_from_dict"),
    "Problem": ("format.problems", "Problem"),
    "schema_path": ("format.schema", "schema_path"),
    "StoredEntry": ("format.entry", "StoredEntry"),
    "to_json": ("format.jsonio", "dumps"),
    "CacheOption": ("storage.cache", "CacheOption"),
    "on_record_not_kept": ("storage.cache", "on_record_not_kept"),
    "abandoned_temps": ("storage.leftovers", "abandoned_temps"),
    "remove_abandoned_temps": ("storage.leftovers", "remove_abandoned_temps"),
    "check_output": ("storage.outputs", "check_output"),
    "LoadedFile": ("storage.loader", "LoadedFile"),
    "load_entries": ("storage.loader", "load_entries"),
    "session_dir_for": ("storage.paths", "session_dir_for"),
    "session_root": ("storage.paths", "session_root"),
    "session_roots": ("storage.paths", "session_roots"),
    "pi_session_root": ("storage.paths", "pi_session_root"),
    "claude_dir_for": ("storage.paths", "claude_dir_for"),
    "claude_projects_root": ("storage.paths", "claude_projects_root"),
    "codex_sessions_root": ("storage.paths", "codex_sessions_root"),
    "TreeIndex": ("tree", "TreeIndex"),
    "TreeNode": ("tree", "TreeNode"),
    "iter_nodes": ("tree", "iter_nodes"),
    "EMPTY_LEAF": ("context", "EMPTY_LEAF"),
    "SessionContext": ("context", "SessionContext"),
    "Projection": ("context", "Projection"),
    "ProjectedEntry": ("context", "ProjectedEntry"),
    "build_context": ("context", "build_context"),
    "Breakdown": ("breakdown", "Breakdown"),
    "RecordedUsage": ("usage", "RecordedUsage"),
    "UsageTotal": ("usage", "UsageTotal"),
    "recorded_usage": ("usage", "recorded_usage"),
    "estimate_context_tokens": ("tokens", "estimate_context_tokens"),
    "estimate_projected_context_tokens": ("tokens", "estimate_projected_context_tokens"),
    "estimate_tokens": ("tokens", "estimate_tokens"),
    "message_text": ("messages", "message_text"),
    "Session": ("session", "Session"),
    "Progress": ("catalog.listing", "Progress"),
    "SessionInfo": ("catalog.session_info", "SessionInfo"),
    "latest_session": ("catalog.listing", "latest_session"),
    "list_sessions": ("catalog.listing", "list_sessions"),
    "session_file_texts": ("catalog.finding", "session_file_texts"),
    "session_files": ("catalog.finding", "session_files"),
    "session_info": ("catalog.listing", "session_info"),
    "SearchHit": ("catalog.search", "SearchHit"),
    "search_sessions": ("catalog.search", "search_sessions"),
    "entry_summary": ("views.describe", "entry_summary"),
    "Redactor": ("views.redact", "Redactor"),
    "redact_text": ("views.redact", "redact_text"),
    "textconv": ("views.textconv", "textconv"),
    "token_breakdown_of": ("session.measured", "token_breakdown_of"),
    "textconv_chunks": ("views.textconv", "textconv_chunks"),
    "textconv_encoded": ("views.textconv", "textconv_encoded"),
    "write_textconv": ("views.textconv", "write_textconv"),
    "visible": ("views.visible", "visible"),
    "visible_utf8": ("views.visible", "visible_utf8"),
    "json_visible": ("views.visible", "json_visible"),
    "EXPORT_FORMATS": ("export", "FORMATS"),
    "ExportFormat": ("export", "ExportFormat"),
    "ExportResult": ("export", "ExportResult"),
    "ExportChunks": ("export", "ExportChunks"),
    "export_chunks": ("export", "export_chunks"),
    "export_html": ("export", "export_html"),
    "export_json": ("export", "export_json"),
    "export_markdown": ("export", "export_markdown"),
    "export_session": ("export", "export_session"),
    "write_export": ("export", "write_export"),
    "ProviderRequest": ("providers.common", "ProviderRequest"),
    "ToolSpec": ("providers.common", "ToolSpec"),
    "Repair": ("providers.history", "Repair"),
    "to_anthropic": ("providers.anthropic", "to_anthropic"),
    "to_openai_chat": ("providers.openai", "to_openai_chat"),
    "to_openai_responses": ("providers.openai", "to_openai_responses"),
    "tool_result": ("providers.replies", "tool_result"),
    "ModelTarget": ("integrations.resume", "ModelTarget"),
    "Turn": ("integrations.resume", "Turn"),
    "take_turn": ("integrations.resume", "take_turn"),
    "target_for": ("integrations.resume", "target_for"),
    "OnDelta": ("providers.accumulate", "OnDelta"),
    "partial_reply": ("providers.streams", "partial_reply"),
    "afrom_reply": ("providers.streams", "afrom_reply"),
    "from_anthropic": ("providers.streams", "from_anthropic"),
    "from_openai_chat": ("providers.streams", "from_openai_chat"),
    "from_openai_responses": ("providers.streams", "from_openai_responses"),
    "from_reply": ("providers.streams", "from_reply"),
    "count_tokens_anthropic": ("providers.counting", "count_tokens_anthropic"),
    "count_tokens_openai": ("providers.counting", "count_tokens_openai"),
    "AnthropicSummarizer": ("compaction", "AnthropicSummarizer"),
    "BranchSummaryResult": ("compaction", "BranchSummaryResult"),
    "CompactionPlan": ("compaction", "CompactionPlan"),
    "CompactionResult": ("compaction", "CompactionResult"),
    "CompactionSettings": ("compaction", "CompactionSettings"),
    "DEFAULT_COMPACTION_SETTINGS": ("compaction.planning", "DEFAULT_SETTINGS"),
    "ExtractiveSummarizer": ("compaction", "ExtractiveSummarizer"),
    "OpenAISummarizer": ("compaction", "OpenAISummarizer"),
    "PrunePlan": ("compaction", "PrunePlan"),
    "PruneResult": ("compaction", "PruneResult"),
    "PruneSettings": ("compaction", "PruneSettings"),
    "SUMMARIZER_NAMES": ("compaction.summarizers", "SUMMARIZER_NAMES"),
    "Summarizer": ("compaction", "Summarizer"),
    "auto_compact": ("compaction", "auto_compact"),
    "call_with_overflow_recovery": ("compaction", "call_with_overflow_recovery"),
    "choose_summarizer": ("compaction", "choose_summarizer"),
    "compact": ("compaction", "compact"),
    "is_context_overflow": ("compaction", "is_context_overflow"),
    "plan_for": ("compaction", "plan_for"),
    "plan_prune": ("compaction", "plan_prune"),
    "prune": ("compaction", "prune"),
    "summarize_branch": ("compaction", "summarize_branch"),
    "mcp_server": ("integrations.mcp_server", "mcp_server"),
    "serve_mcp": ("integrations.mcp_server", "serve_mcp"),
    "AgentsSessionFile": ("integrations.openai_agents_store", "AgentsSessionFile"),
    "SessionFileConversationStore": (
        "integrations.pydantic_ai_store",
        "SessionFileConversationStore",
    ),
}


if not TYPE_CHECKING:  # for type checkers every public name is imported above

    def __getattr__(name: str) -> Any:
        if name == "branch_with_summary":
            warnings.warn(
                "jsonl_session.branch_with_summary is now summarize_branch "
                "(Session.branch_with_summary appends a summary you already have)",
                DeprecationWarning,
                stacklevel=2,
            )
            name = "summarize_branch"
        try:
            module, attribute = _LAZY[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
        globals()[name] = value  # the old alias is never kept, so it warns on each use
        return value

    def __dir__() -> list[str]:
        return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})


__all__ = [
    "AGENT_NAMES",
    "CURRENT_VERSION",
    "DEFAULT_COMPACTION_SETTINGS",
    "EMPTY_LEAF",
    "EXPORT_FORMATS",
    "LEAF_MARKER_TYPE",
    "PRUNE_MARKER_TYPE",
    "SUMMARIZER_NAMES",
    "AgentsSessionFile",
    "AnthropicSummarizer",
    "AssistantMessage",
    "BashExecutionMessage",
    "BranchSummaryResult",
    "Breakdown",
    "CacheOption",
    "CompactionError",
    "CompactionPlan",
    "CompactionResult",
    "CompactionSettings",
    "Conversion",
    "Cost",
    "CustomMessage",
    "EntryValidationError",
    "ExportChunks",
    "ExportFormat",
    "ExportResult",
    "ExtractiveSummarizer",
    "ImageContent",
    "JsonlSessionError",
    "LoadedFile",
    "MissingExtra",
    "ModelCallError",
    "ModelTarget",
    "OnDelta",
    "OpenAISummarizer",
    "Problem",
    "Progress",
    "ProjectedEntry",
    "Projection",
    "ProviderRequest",
    "PrunePlan",
    "PruneResult",
    "PruneSettings",
    "RecordedUsage",
    "Redactor",
    "Repair",
    "SearchHit",
    "Session",
    "SessionContext",
    "SessionFileConversationStore",
    "SessionFormatError",
    "SessionInfo",
    "SessionTreeError",
    "SessionWriteError",
    "StoredEntry",
    "Summarizer",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolDeclaration",
    "ToolResultMessage",
    "ToolSpec",
    "TreeIndex",
    "TreeNode",
    "Turn",
    "UnsyncedWrite",
    "Usage",
    "UsageTotal",
    "UserMessage",
    "abandoned_temps",
    "afrom_reply",
    "auto_compact",
    "build_context",
    "call_with_overflow_recovery",
    "check_output",
    "choose_summarizer",
    "claude_dir_for",
    "claude_projects_root",
    "codex_sessions_root",
    "compact",
    "convert",
    "count_tokens_anthropic",
    "count_tokens_openai",
    "detect",
    "detect_file",
    "entry_summary",
    "estimate_context_tokens",
    "estimate_projected_context_tokens",
    "estimate_tokens",
    "export_chunks",
    "export_html",
    "export_json",
    "export_markdown",
    "export_session",
    "from_anthropic",
    "from_openai_chat",
    "from_openai_responses",
    "from_reply",
    "is_context_overflow",
    "iter_nodes",
    "json_visible",
    "latest_session",
    "list_sessions",
    "load_entries",
    "mcp_server",
    "message_from_dict",
    "message_text",
    "on_record_not_kept",
    "partial_reply",
    "pi_session_root",
    "plan_for",
    "plan_prune",
    "prune",
    "recorded_usage",
    "redact_text",
    "remove_abandoned_temps",
    "schema_path",
    "search_sessions",
    "serve_mcp",
    "session_dir_for",
    "session_file_texts",
    "session_files",
    "session_info",
    "session_root",
    "session_roots",
    "summarize_branch",
    "take_turn",
    "target_for",
    "textconv",
    "textconv_chunks",
    "textconv_encoded",
    "to_anthropic",
    "to_json",
    "to_openai_chat",
    "to_openai_responses",
    "token_breakdown_of",
    "tool_result",
    "visible",
    "visible_utf8",
    "write_export",
    "write_textconv",
]
