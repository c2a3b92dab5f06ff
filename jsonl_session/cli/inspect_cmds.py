"""Read-only commands: show, tree, context. None of them writes anything; each reads
FILE, or standard input for '-' (inputs.py). tree's text view (folding, --depth,
--limit) is tree_view.py's.

Each imports the library when it runs, and rich only to print styled text (never
for --json); `context` imports a provider's adapter only for that provider's --format.
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jsonl_session.cli.cells import one_line
from jsonl_session.cli.inputs import session_file
from jsonl_session.cli.options import (
    InputArg,
    JsonOption,
    LeafOption,
    cache_for,
    reports_errors,
    shown,
)
from jsonl_session.cli.output import err, out, print_json, print_json_with_list, styled

if TYPE_CHECKING:
    from collections.abc import Iterator

    from jsonl_session import ProviderRequest, Session, SessionContext, TreeNode


class ContextFormat(StrEnum):
    PI = "pi"
    ANTHROPIC = "anthropic"
    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"


def _provider_request(
    output_format: ContextFormat, built: SessionContext, system: str | None
) -> ProviderRequest:
    """The request ``output_format``'s API would get; imports only that adapter."""
    if output_format is ContextFormat.ANTHROPIC:
        from jsonl_session import to_anthropic

        return to_anthropic(built, system=system)
    if output_format is ContextFormat.OPENAI_CHAT:
        from jsonl_session import to_openai_chat

        return to_openai_chat(built, system=system)
    from jsonl_session import to_openai_responses

    return to_openai_responses(built, instructions=system)


@reports_errors
def show(ctx: typer.Context, file: InputArg, as_json: JsonOption = False) -> None:
    """Header, version, counts by entry type and role, leaf, name, labels, problems."""
    from jsonl_session import Session

    path = session_file(ctx, file)
    session = Session.open(path, cache=cache_for(ctx))
    if as_json:  # the entries written as they are read, never held (a session of GBs)
        print_json_with_list(
            {"agent": session.dialect, "header": session.header_data},
            "entries",
            session.entry_data(),
            {
                "leafId": session.leaf_id,
                "name": session.name,
                "labels": session.labels,
                "systemPrompt": session.system_prompt(),
                "tools": session.tools(),
                "problems": [p.to_dict() for p in session.problems],
                "notCarried": session.not_carried,
            },
        )
        return
    header = session.header_data
    types = Counter(e.type for e in session.entries)
    roles = Counter(e.role for e in session.entries if e.type == "message")
    version = f"{session.version_read}"
    if session.migrations:
        version += " (migrated to 3 in memory; the file is unchanged)"
    if session.dialect != "pi":
        from jsonl_session import AGENT_NAMES

        version = f"{AGENT_NAMES[session.dialect]} transcript, read as a pi session (never written)"
    rows = [
        ("file", shown(session.path)),
        ("session", str(header.get("id"))),
        ("created", str(header.get("timestamp", ""))),
        ("cwd", session.cwd),
        ("forked from", str(header.get("parentSession", "-"))),
        ("version", version),
        ("name", session.name or "-"),
        ("entries", str(len(session.entries))),
        ("by type", ", ".join(f"{k} {v}" for k, v in types.most_common()) or "-"),
        ("by role", ", ".join(f"{k} {v}" for k, v in roles.most_common()) or "-"),
        ("leaf", session.leaf_id or "-"),
        ("labels", ", ".join(f"{k} {v!r}" for k, v in session.labels.items()) or "-"),
        ("prompt", _prompt_summary(session.system_prompt())),
        ("tools", ", ".join(str(tool.get("name")) for tool in session.tools()) or "-"),
    ]
    from rich.table import Table
    from rich.text import Text

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in rows:
        table.add_row(Text(key), Text(value))
    out().print(table)
    problems = session.problems
    if problems:
        out().print(styled("\n", (f"{len(problems)} problem(s):", "yellow")))
        for problem in problems:
            out().print(f"  {problem}")


@reports_errors
def tree(
    ctx: typer.Context,
    file: InputArg,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="Print JSON for scripts: {leafId, roots, nodes}, every node whatever "
            "--full, --depth and --limit say.",
        ),
    ] = False,
    full: Annotated[
        bool,
        typer.Option("--full", help="Every entry; by default long linear runs are folded."),
    ] = False,
    depth: Annotated[
        int | None,
        typer.Option("--depth", min=1, help="Show N levels of branches; say how much is deeper."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most N lines of tree.")
    ] = None,
) -> None:
    """The branch structure, active path marked (*), labels shown, leaf markers folded;
    runs of single entries folded to one line unless --full."""
    from jsonl_session import Session

    path = session_file(ctx, file)
    session = Session.open(path, cache=cache_for(ctx))
    roots = session.tree()
    if as_json:  # the nodes written as they are made (a session of GBs)
        print_json_with_list(
            {"leafId": session.leaf_id, "roots": [n.entry.id for n in roots]},
            "nodes",
            _nodes_json(session, _with_shown_parents(roots)),
            {},
        )
        return
    from jsonl_session.cli.tree_view import render

    if not roots:
        out().print("(no entries)")
    for line in render(roots, full=full, depth=depth, limit=limit):
        out().print(line)
    for problem in session.problems:
        out().print(styled(("problem:", "yellow"), f" {problem}"))


def _with_shown_parents(roots: list[TreeNode]) -> list[tuple[TreeNode, str | None]]:
    from jsonl_session import iter_nodes

    parent_of: dict[int, str] = {
        id(child): node.entry.id for _, node in iter_nodes(roots) for child in node.children
    }
    return [(node, parent_of.get(id(node))) for _, node in iter_nodes(roots)]


def _nodes_json(
    session: Session, nodes: list[tuple[TreeNode, str | None]]
) -> Iterator[dict[str, Any]]:
    """Each node as --json writes it, its summary from its entry's body as
    Session.entry_data reads them (a batch of neighbours at a time)."""
    from jsonl_session import entry_summary

    bodies = session.entry_data([node.entry for node, _ in nodes])
    for (node, shown_parent), data in zip(nodes, bodies, strict=True):
        entry = node.entry
        yield {
            "id": entry.id,
            "parentId": entry.parent_id,
            "shownParentId": shown_parent,
            "type": entry.type,
            "role": entry.role,
            "label": node.label,
            "active": node.on_active_path,
            "summary": entry_summary(entry, data=data),
            "children": [c.entry.id for c in node.children],
        }


@reports_errors
def context(
    ctx: typer.Context,
    file: InputArg,
    leaf: LeafOption = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="pi format: {messages, thinkingLevel, model} as pi builds it (with our "
            "prune entries applied; add --no-prune for pi's exact view); "
            "provider formats: {request, repairs}.",
        ),
    ] = False,
    output_format: Annotated[
        ContextFormat,
        typer.Option("--format", help="pi's messages, or a request for a provider's API."),
    ] = ContextFormat.PI,
    system: Annotated[
        str | None, typer.Option(help="System prompt (instructions) for provider formats.")
    ] = None,
    no_prune: Annotated[
        bool,
        typer.Option(
            "--no-prune",
            help="Show tool outputs our prune entries replaced, whole (pi's view).",
        ),
    ] = False,
) -> None:
    """The context the model sees from the active leaf (or --leaf), or the request a
    provider's API would get for it."""
    from jsonl_session import EMPTY_LEAF, Session

    path_read = session_file(ctx, file)
    session = Session.open(path_read, cache=cache_for(ctx))
    leaf_id = session.resolve_id(leaf) if leaf is not None else (session.leaf_id or EMPTY_LEAF)
    built = session.build_context(leaf_id, pruning=not no_prune)
    path = session.branch_path(leaf_id) if leaf_id else []
    if path and path[0].parent_id is not None:
        err().print(
            f"warning: {shown(session.path)}: entry {path[0].id} (line {path[0].line}) has parent "
            f"{path[0].parent_id}, which does not exist; the context starts there, as in pi"
        )
    if output_format is not ContextFormat.PI:
        import json

        request = _provider_request(output_format, built, system)
        repairs = [r.to_dict() for r in request.repairs]
        if as_json:
            print_json({"request": request.kwargs, "repairs": repairs})
            return
        out().print(json.dumps(request.kwargs, indent=2, ensure_ascii=False))
        for repair in request.repairs:
            err().print(f"repair: message {repair.index}: {repair.detail} ({repair.kind})")
        return
    if as_json:
        print_json(built.to_dict())
        return
    model = built.model or {}
    out().print(
        styled(
            ("model", "bold"),
            f" {model.get('provider', '-')}/{model.get('modelId', '-')}   ",
            ("thinking", "bold"),
            f" {built.thinking_level}   ",
            ("messages", "bold"),
            f" {len(built.messages)}",
        )
    )
    for message in built.messages:
        out().print(styled("\n", (f"── {message.get('role')}", "bold cyan")))
        out().print(_message_body(message))


def _message_body(message: dict[str, Any], limit: int = 2000) -> str:
    from jsonl_session import message_text

    role = message.get("role")
    if role == "system":
        text = _system_body(message)
    elif role in ("compactionSummary", "branchSummary"):
        text = str(message.get("summary", ""))
    elif role == "bashExecution":
        text = f"$ {message.get('command')}\n{message.get('output', '')}"
    else:
        text = message_text(message)
        content = message.get("content")
        if isinstance(content, list):
            calls = [
                f"→ {b.get('name')}({one_line(str(b.get('arguments')), 100)})"
                for b in content
                if isinstance(b, dict) and b.get("type") == "toolCall"
            ]
            text = "\n".join([text, *calls]) if calls else text
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit} more characters)"
    return text


def _prompt_summary(prompt: str) -> str:
    """The system prompt in a line: its size and how it starts ("-" when none)."""
    if not prompt:
        return "-"
    return f"{len(prompt):,} characters: {one_line(prompt, 40)}"


def _system_body(message: dict[str, Any]) -> str:
    """A system message as its content, each section it sets (or removes) by name,
    and the tools it adds and removes."""
    from jsonl_session import message_text

    text = message_text(message)
    parts = [text] if text else []
    sections = message.get("sections")
    for name, text in (sections if isinstance(sections, dict) else {}).items():
        parts.append(f"[{name}] removed" if text is None else f"[{name}]\n{text}")
    for key, sign in (("toolsAdded", "+"), ("toolsRemoved", "-")):
        listed = message.get(key)
        names = (
            [str(t.get("name")) for t in listed if isinstance(t, dict)]
            if isinstance(listed, list)
            else []
        )
        if names:
            parts.append("tools " + " ".join(sign + name for name in names))
    return "\n".join(parts)
