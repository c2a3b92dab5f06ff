"""The MCP server that lets an agent look up its own history: tools to list, search and
show sessions and read a session's context or tree, and, only when the server is made
with ``allow_writes=True``, to label an entry, name a session and fork one.

Read-only by default, and visibly so: without ``allow_writes`` the write tools are not
registered, so a client never sees them listed (a call to one is the SDK's "unknown
tool" error). What each tool does is history.py's (`SessionHistory`, also confining
files to the session folders); this module owns the MCP binding: tool names,
descriptions, argument schemas, and turning library errors into tool errors (the
message names the file and what is wrong; the server keeps running).

The official `mcp` SDK (2.3 or later, the optional extra ``jsonl-session[mcp]``) is
imported only here, and only when a server is made. This module does not use
``from __future__ import annotations``: the SDK reads each tool's argument schema
from its annotations, which must be real objects (pydantic's ``Field``, imported with
the SDK) rather than strings it would look up in this module's globals.
"""

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from jsonl_session._version import __version__
from jsonl_session.errors import JsonlSessionError
from jsonl_session.extras import needs_extra
from jsonl_session.integrations.history import (
    DEFAULT_CONTEXT_CHARS,
    DEFAULT_LIST_LIMIT,
    DEFAULT_SEARCH_LIMIT,
    DEFAULT_TREE_NODES,
    SessionHistory,
)
from jsonl_session.storage.cache import CacheOption

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

SERVER_NAME = "jsonl-session"
READ_TOOLS = ("list_sessions", "search_sessions", "show_session", "read_context", "read_tree")
WRITE_TOOLS = ("label_entry", "name_session", "fork_session")

Agent = Literal["pi", "claude", "codex"]


def mcp_server(
    *,
    allow_writes: bool = False,
    roots: Sequence[Path | str] | None = None,
    cwd: str | None = None,
    cache: CacheOption = None,
) -> "MCPServer[Any]":
    """An MCP server (the SDK's `MCPServer`) over the session files under ``roots``
    (default: pi's session folder and ours, Claude Code's and Codex's), for embedding
    or for `serve_mcp`. ``cwd`` is the project meant when a call names none (default:
    the current directory). The write tools exist only with ``allow_writes``."""
    _require_sdk()
    from mcp.server.mcpserver import MCPServer

    history = SessionHistory(roots, cwd=cwd, cache=cache)
    # WARNING: a refused call is the model's to read in the tool result; the SDK would
    # also log each one at INFO on stderr, which MCP clients show as server noise.
    server: MCPServer[Any] = MCPServer(
        name=SERVER_NAME,
        instructions=_instructions(history, allow_writes),
        version=__version__,
        log_level="WARNING",
    )
    _add_read_tools(server, history)
    if allow_writes:
        _add_write_tools(server, history)
    return server


def serve_mcp(
    *,
    allow_writes: bool = False,
    roots: Sequence[Path | str] | None = None,
    cwd: str | None = None,
    cache: CacheOption = None,
) -> None:
    """Run `mcp_server` over stdio until the client closes it (what ``jsonl-session
    mcp`` does; an MCP client starts it as a subprocess)."""
    mcp_server(allow_writes=allow_writes, roots=roots, cwd=cwd, cache=cache).run("stdio")


def _require_sdk() -> None:
    with needs_extra("mcp", "the MCP server"):
        import mcp.server.mcpserver  # noqa: F401


def _instructions(history: SessionHistory, allow_writes: bool) -> str:
    writes = (
        "label_entry, name_session and fork_session append to session files (never "
        "rewriting a line)."
        if allow_writes
        else "The server is read-only (started without --allow-writes)."
    )
    return (
        "The session files of coding agents (pi, Claude Code, Codex): find a session "
        "with list_sessions or search_sessions, then pass its path to show_session, "
        "read_context or read_tree. A call that names no cwd means the sessions of "
        f"{history.cwd}. Session folders: {', '.join(map(str, history.roots))}. {writes}"
    )


@contextlib.contextmanager
def _as_tool_errors() -> Iterator[None]:
    """Library, OS and value errors as the SDK's ToolError: the call returns an error
    result with this text for the model to read, and the server carries on (the SDK
    would answer any other exception with a bare "Error executing tool" and print its
    traceback on stderr)."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        yield
    except JsonlSessionError as exc:
        raise ToolError(str(exc)) from exc
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        raise ToolError(f"{where}{exc.strerror or exc}") from exc
    except ValueError as exc:  # e.g. a path the OS cannot take
        raise ToolError(f"invalid argument: {exc}") from exc


def _add_read_tools(server: "MCPServer[Any]", history: SessionHistory) -> None:
    from mcp.types import ToolAnnotations
    from pydantic import Field

    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    SessionPath = Annotated[
        str,
        Field(
            description="A session file's absolute path, as list_sessions or search_sessions "
            "give it."
        ),
    ]
    Cwd = Annotated[
        str | None,
        Field(description="A project directory; default: the one the server was started for."),
    ]
    AllProjects = Annotated[
        bool, Field(description="Every project's sessions instead of one directory's.")
    ]
    Agents = Annotated[
        list[Agent] | None, Field(description="Only these agents' sessions (default: all).")
    ]

    def list_sessions(
        cwd: Cwd = None,
        all_projects: AllProjects = False,
        agent: Agents = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = DEFAULT_LIST_LIMIT,
    ) -> dict[str, Any]:
        """Sessions, newest first: path, id, name or first message, when, how many
        messages, which agent wrote it. `total` counts all; `limit` caps the list."""
        with _as_tool_errors():
            return history.list_sessions(
                cwd=cwd, all_projects=all_projects, agents=agent, limit=limit
            )

    def search_sessions(
        query: Annotated[str, Field(min_length=1, description="Text to find, any case.")],
        cwd: Cwd = None,
        all_projects: AllProjects = False,
        agent: Agents = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = DEFAULT_SEARCH_LIMIT,
    ) -> dict[str, Any]:
        """Find text in user and assistant messages and session names. Each hit names
        the session file (`path`), the entry (`entryId`, null for a name), its line,
        role and a snippet; pass the entry as `leaf` to read_context to read up to it."""
        with _as_tool_errors():
            return history.search_sessions(
                query, cwd=cwd, all_projects=all_projects, agents=agent, limit=limit
            )

    def show_session(path: SessionPath) -> dict[str, Any]:
        """One session's header (id, cwd, created, parent), agent, name, active leaf,
        labels (the first 50; `labelCount` counts all), entry counts by type and role,
        and problems reading it."""
        with _as_tool_errors():
            return history.show_session(path)

    def read_context(
        path: SessionPath,
        leaf: Annotated[
            str | None,
            Field(description="An entry id or unique prefix; default: the active leaf."),
        ] = None,
        last: Annotated[int | None, Field(ge=1, description="Only the newest N messages.")] = None,
        end: Annotated[
            int | None,
            Field(
                ge=0,
                description="Only messages before this index: an earlier "
                "answer's firstIndex, to page back.",
            ),
        ] = None,
        max_chars: Annotated[
            int, Field(ge=500, description="Budget for the messages' JSON, in characters.")
        ] = DEFAULT_CONTEXT_CHARS,
    ) -> dict[str, Any]:
        """The messages the model sees at a leaf, as pi builds them (compactions
        applied): the newest that fit the budget. `messageCount` counts all of them,
        `firstIndex` is the index of the first one returned; `shortened` says the
        newest had its long texts and lists cut (or its content left out) to fit."""
        with _as_tool_errors():
            return history.read_context(path, leaf=leaf, last=last, end=end, max_chars=max_chars)

    def read_tree(
        path: SessionPath,
        max_nodes: Annotated[int, Field(ge=1, le=10_000)] = DEFAULT_TREE_NODES,
    ) -> dict[str, Any]:
        """The session's branches, depth first: each entry's id, parent, depth, type,
        label, a one-line summary and children (the first 20 ids; `childCount` counts
        all); `active` marks the path to the leaf."""
        with _as_tool_errors():
            return history.read_tree(path, max_nodes=max_nodes)

    for tool in (list_sessions, search_sessions, show_session, read_context, read_tree):
        server.add_tool(tool, annotations=reads)


def _add_write_tools(server: "MCPServer[Any]", history: SessionHistory) -> None:
    from mcp.types import ToolAnnotations
    from pydantic import Field

    SessionPath = Annotated[str, Field(description="The session file's path.")]
    Entry = Annotated[str, Field(description="An entry id or unique prefix.")]
    # Each appends an entry (or writes a new file): nothing is ever overwritten.
    appends = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    def label_entry(
        path: SessionPath,
        entry: Entry,
        label: Annotated[
            str | None, Field(description="The label; leave out (or empty) to clear it.")
        ] = None,
    ) -> dict[str, Any]:
        """Label an entry of a session (appends a label entry), to find it again."""
        with _as_tool_errors():
            return history.label_entry(path, entry, label)

    def name_session(
        path: SessionPath,
        name: Annotated[str, Field(description="The name; empty clears it.")],
    ) -> dict[str, Any]:
        """Name a session (appends a session_info entry; the latest name counts)."""
        with _as_tool_errors():
            return history.name_session(path, name)

    def fork_session(
        path: SessionPath,
        at: Annotated[
            str | None, Field(description="Entry to fork at; default: the active leaf.")
        ] = None,
    ) -> dict[str, Any]:
        """Copy the path from the root to an entry into a new session file beside this
        one (labels come along); returns the new file's path."""
        with _as_tool_errors():
            return history.fork_session(path, at)

    for tool in (label_entry, name_session, fork_session):
        server.add_tool(tool, annotations=appends)
