"""What an agent may ask of its session history, as JSON-ready dicts: list and search
sessions, show one, read its context (trimmed to a budget) or its tree, and, when
writes are allowed by the caller, label an entry, name a session, fork one.

`SessionHistory` confines every file it lists, searches or opens to its session
folders (the default agents' folders, or the roots it is given), symlinks followed,
so a model cannot have it read or append to any other file; a file opened is opened
by its real path, so a fork lands beside the real file. Paths must be absolute.
Errors are the library's (`JsonlSessionError`), with the file named. No MCP here:
mcp_server.py binds these methods to tools. Fitting answers to a budget is
budget.py's; finding and describing files is catalog/'s, reading them session/'s,
one-line entry text views/'s.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from jsonl_session.catalog.finding import session_files
from jsonl_session.catalog.listing import list_sessions
from jsonl_session.catalog.search import search_sessions
from jsonl_session.catalog.session_info import SessionInfo
from jsonl_session.context import EMPTY_LEAF
from jsonl_session.errors import JsonlSessionError
from jsonl_session.integrations.budget import SUMMARY_WIDTH, cut, json_safe, tail_within
from jsonl_session.session import Session
from jsonl_session.storage.cache import CacheOption
from jsonl_session.storage.paths import claude_projects_root, codex_sessions_root, session_roots
from jsonl_session.tree import iter_nodes
from jsonl_session.views.describe import entry_summary

# Defaults sized for a model's context: enough to orient, never a flood.
DEFAULT_LIST_LIMIT = 20
DEFAULT_SEARCH_LIMIT = 20
DEFAULT_CONTEXT_CHARS = 20_000
DEFAULT_TREE_NODES = 200
PROBLEMS_SHOWN = 20
# What a node of read_tree lists of its children, and show_session of the labels.
CHILDREN_SHOWN = 20
LABELS_SHOWN = 50


class SessionHistory:
    """The session files under ``roots`` (default: pi's session folder and ours,
    Claude Code's projects folder, Codex's sessions folder), as an agent sees them.
    ``cwd`` is the project whose sessions are meant when a call names none."""

    def __init__(
        self,
        roots: Sequence[Path | str] | None = None,
        *,
        cwd: str | None = None,
        cache: CacheOption = None,
    ) -> None:
        self.given_roots = [Path(root).expanduser().absolute() for root in roots or ()]
        for root in self.given_roots:
            if not root.is_dir():
                raise JsonlSessionError(f"{root}: no such folder (a session root must exist)")
        self.roots = self.given_roots or [
            *session_roots(),
            claude_projects_root(),
            codex_sessions_root(),
        ]
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self.cache = cache
        # resolved once: a file is allowed when its real path is under one of these
        self._real_roots = [root.resolve() for root in self.roots]

    # --- finding sessions --------------------------------------------------------

    def list_sessions(
        self,
        *,
        cwd: str | None = None,
        all_projects: bool = False,
        agents: Collection[str] | None = None,
        limit: int = DEFAULT_LIST_LIMIT,
    ) -> dict[str, Any]:
        """Sessions, newest first: of ``cwd`` (default: this history's), or all."""
        where = self._cwd(cwd, all_projects)
        agents = list(agents) if agents else None
        if not self.given_roots:
            infos = list_sessions(
                cwd=where, all_projects=all_projects, agents=agents, cache=self.cache
            )
            infos = [info for info in infos if self._allowed(info.path)]
        else:
            infos = self._listed_under_roots(where, agents)
        return {
            "cwd": where,
            "sessions": [_info_json(info) for info in infos[:limit]],
            "total": len(infos),
            "truncated": len(infos) > limit,
        }

    def _listed_under_roots(self, cwd: str | None, agents: list[str] | None) -> list[SessionInfo]:
        seen: dict[Path, SessionInfo] = {}
        for root in self._existing_roots():
            for info in list_sessions(
                root, cwd=cwd, all_projects=True, agents=agents, cache=self.cache
            ):
                path = info.path
                real = path.resolve()
                # not one a symlink leads out of the roots; a file by its own name first
                if self._under_roots(real) and (real not in seen or path == real):
                    seen[real] = info
        return sorted(seen.values(), key=lambda i: (i.modified_ms, i.path_text), reverse=True)

    def search_sessions(
        self,
        query: str,
        *,
        cwd: str | None = None,
        all_projects: bool = False,
        agents: Collection[str] | None = None,
        limit: int = DEFAULT_SEARCH_LIMIT,
    ) -> dict[str, Any]:
        """Hits for ``query`` in message text and session names, in file order."""
        files = self._files(self._cwd(cwd, all_projects), all_projects, agents)
        hits: list[dict[str, Any]] = []
        truncated = False
        for hit in search_sessions(query, files, cache=self.cache):
            if len(hits) == limit:
                truncated = True  # the search stops here: the rest is never read
                break
            hits.append(hit.to_dict())
        return json_safe(
            {"query": query, "hits": hits, "searchedFiles": len(files), "truncated": truncated}
        )

    def _files(
        self, cwd: str | None, all_projects: bool, agents: Collection[str] | None
    ) -> list[Path]:
        wanted = list(agents) if agents else None
        if not self.given_roots:
            files = session_files(cwd=cwd, all_projects=all_projects, agents=wanted)
            return [path for path in files if self._allowed(path)]
        found: dict[Path, Path] = {}
        for root in self._existing_roots():
            for path in session_files(root, cwd=cwd, all_projects=True, agents=wanted):
                real = path.resolve()
                if self._under_roots(real) and (real not in found or path == real):
                    found[real] = path
        return list(found.values())

    def _existing_roots(self) -> list[Path]:
        return [root for root in self.roots if root.is_dir()]

    def _allowed(self, path: Path) -> bool:
        """Whether the file ``path`` really is (symlinks followed) under a root."""
        return self._under_roots(path.resolve())

    def _under_roots(self, real: Path) -> bool:
        return any(real.is_relative_to(root) for root in self._real_roots)

    def _cwd(self, cwd: str | None, all_projects: bool) -> str | None:
        """The project directory a call means: None for every project."""
        return None if all_projects else os.path.abspath(os.path.expanduser(cwd or self.cwd))

    # --- one session ----------------------------------------------------------------

    def open_session(self, path: str) -> Session:
        """The session at ``path``, refused unless it lies under one of the roots
        (symlinks followed). The file opened, and written beside by a fork, is the
        real one: a symlink elsewhere leading into the roots leads no write out."""
        if "\0" in path:
            raise JsonlSessionError(f"{path!r}: a path cannot hold a NUL character")
        given = Path(path).expanduser()
        if not given.is_absolute():
            raise JsonlSessionError(
                f"{path}: a relative path; give the absolute path list_sessions or "
                "search_sessions gave"
            )
        real = given.resolve()
        if not self._under_roots(real):
            folders = ", ".join(map(str, self.roots))
            raise JsonlSessionError(
                f"{path}: not under the session folders this server reads ({folders}); "
                "give a path from list_sessions or search_sessions, or start the server "
                "with --root for another folder"
            )
        if not real.is_file():
            raise JsonlSessionError(f"{path}: no such session file")
        return Session.open(real, cache=self.cache)

    def show_session(self, path: str) -> dict[str, Any]:
        """What the file is: header, agent, name, leaf, labels, counts, problems."""
        session = self.open_session(path)
        entries = session.entries
        problems = session.problems
        labels = session.labels
        return json_safe(
            {
                "path": str(session.path),
                "agent": session.dialect,
                "header": session.header_data,
                "versionRead": session.version_read,
                "name": session.name,
                "leafId": session.leaf_id,
                "labels": {
                    entry_id: cut(label, SUMMARY_WIDTH, 0)
                    for entry_id, label in islice(labels.items(), LABELS_SHOWN)
                },
                "labelCount": len(labels),
                "entryCount": len(entries),
                "byType": dict(Counter(e.type for e in entries).most_common()),
                "byRole": dict(
                    Counter(
                        e.role if e.role is not None else "(no role)"
                        for e in entries
                        if e.type == "message"
                    ).most_common()
                ),
                "problems": [str(p) for p in problems[:PROBLEMS_SHOWN]],
                "problemCount": len(problems),
                "notCarried": session.not_carried,
            }
        )

    def read_context(
        self,
        path: str,
        *,
        leaf: str | None = None,
        last: int | None = None,
        end: int | None = None,
        max_chars: int = DEFAULT_CONTEXT_CHARS,
    ) -> dict[str, Any]:
        """The messages the model sees at ``leaf`` (default: the active leaf), in
        pi's shapes: of those before index ``end``, the ``last`` N newest that fit in
        ``max_chars`` characters of JSON (the newest cut down if it alone does not)."""
        session = self.open_session(path)
        leaf_id = session.resolve_id(leaf) if leaf is not None else session.leaf_id
        built = session.build_context(leaf_id or EMPTY_LEAF)
        total = len(built.messages)
        stop = total if end is None else max(0, min(end, total))
        start = 0 if last is None else max(0, stop - last)
        kept, shortened = tail_within(built.messages[start:stop], max_chars)
        return json_safe(
            {
                "path": str(session.path),
                "leafId": leaf_id,
                "thinkingLevel": built.thinking_level,
                "model": built.model,
                "messageCount": total,
                "firstIndex": stop - len(kept),
                "messages": kept,
                "shortened": shortened,
            }
        )

    def read_tree(self, path: str, *, max_nodes: int = DEFAULT_TREE_NODES) -> dict[str, Any]:
        """The entries as a tree, depth first (leaf markers and labels folded into
        their entries), the active path marked; at most ``max_nodes`` nodes."""
        session = self.open_session(path)
        nodes: list[dict[str, Any]] = []
        shown = 0
        for depth, node in iter_nodes(session.tree()):
            shown += 1
            if len(nodes) < max_nodes:
                entry = node.entry
                nodes.append(
                    {
                        "id": entry.id,
                        "parentId": entry.parent_id,
                        "depth": depth,
                        "type": entry.type,
                        "role": entry.role,
                        "label": cut(node.label, SUMMARY_WIDTH, 0),
                        "active": node.on_active_path,
                        "summary": entry_summary(entry, SUMMARY_WIDTH),
                        "children": [c.entry.id for c in node.children[:CHILDREN_SHOWN]],
                        "childCount": len(node.children),
                    }
                )
        return json_safe(
            {
                "path": str(session.path),
                "leafId": session.leaf_id,
                "nodeCount": shown,
                "nodes": nodes,
                "truncated": shown > len(nodes),
            }
        )

    # --- appending (the caller decides whether these are allowed) ---------------------

    def label_entry(self, path: str, entry: str, label: str | None) -> dict[str, Any]:
        """Label an entry (id or unique prefix); no text clears its label."""
        session = self.open_session(path)
        entry_id = session.resolve_id(entry)
        label_id = session.append_label(entry_id, label or None)
        return {
            "path": str(session.path),
            "entryId": entry_id,
            "label": session.labels.get(entry_id),
            "labelEntryId": label_id,
        }

    def name_session(self, path: str, name: str) -> dict[str, Any]:
        """Name the session (an empty name clears it)."""
        session = self.open_session(path)
        info_id = session.append_session_info(name)
        return {"path": str(session.path), "name": session.name, "entryId": info_id}

    def fork_session(self, path: str, at: str | None = None) -> dict[str, Any]:
        """A new session file beside this one with the path root → ``at`` (default:
        the active leaf), labels included."""
        session = self.open_session(path)
        entry_id = session.resolve_id(at) if at is not None else None
        forked = session.fork(entry_id)
        return {
            "path": str(forked.path),
            "sessionId": forked.id,
            "forkedFrom": str(session.path),
            "at": entry_id or session.leaf_id,
            "leafId": forked.leaf_id,
        }


def _info_json(info: SessionInfo) -> dict[str, Any]:
    return json_safe(info.to_dict())
