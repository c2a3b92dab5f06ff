"""The text view of `jsonl-session tree`: lines from the library's tree nodes.

A chain of single children stays at one indent, so a long linear session does not
drift to the right; children of a branch point are drawn with ├─ └─ one level in.
By default a chain is folded: its first and last entries are shown, and so are the
entries worth finding (labelled ones, compactions, branch summaries, the active
leaf); each run of two or more others becomes one line, "… 980 entries …". `full`
shows every entry; `depth` leaves out what is nested in more than that many levels
of branches (one line says how much); `limit` stops after that many lines and says
how many entries are left. The command, and its JSON (always every node), are in
inspect_cmds.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from jsonl_session.cli.cells import fit
from jsonl_session.cli.output import styled

if TYPE_CHECKING:
    from rich.text import Text

    from jsonl_session import TreeNode

HEAD = 3  # entries shown at the start of a folded chain
TAIL = 3  # and at its end (the last one is where it ends or branches)
NOTABLE_TYPES = ("compaction", "branch_summary")
SUMMARY_CELLS = 60  # an entry's summary: at most this wide on screen


def render(
    roots: list[TreeNode],
    *,
    full: bool = False,
    depth: int | None = None,
    limit: int | None = None,
) -> list[Text]:
    """The lines of the tree; with ``limit``, at most that many and then one saying
    how many entries were not shown."""
    lines: list[Text] = []
    covered = 0
    for line, entries in _lines(roots, full=full, depth=depth):
        if limit is not None and len(lines) == limit:
            left = _count(roots) - covered
            more = f"{left:,} more entr{'y' if left == 1 else 'ies'}"
            lines.append(styled((f"… {more} (--limit {limit})", "dim")))
            break
        lines.append(line)
        covered += entries
    return lines


def _lines(roots: list[TreeNode], *, full: bool, depth: int | None) -> Iterator[tuple[Text, int]]:
    """Each line with the number of entries it stands for."""
    from rich.text import Text

    stack: list[tuple[TreeNode, str, str, int]] = []
    for i in reversed(range(len(roots))):
        branch = "" if len(roots) == 1 else ("├─ " if i < len(roots) - 1 else "└─ ")
        stack.append((roots[i], "", branch, 1))
    while stack:
        node, indent, branch, level = stack.pop()
        child_indent = indent + ("" if not branch else ("│  " if branch == "├─ " else "   "))
        chain = _chain(node)
        for i, item in enumerate(chain if full else _folded(chain)):
            lead = indent + branch if i == 0 else child_indent
            if isinstance(item, list):
                yield Text(lead) + _fold_text(item), len(item)
            else:
                yield Text(lead) + _node_text(item), 1
        kids = chain[-1].children
        if not kids:
            continue
        if depth is not None and level >= depth:
            hidden = sum(_count([kid]) for kid in kids)
            active = any(kid.on_active_path for kid in kids)
            what = f"{len(kids)} branches, {_entries(hidden)}"
            text = styled(
                ("*" if active else " ", "bold green"), " ", (f"… {what} (--depth {depth})", "dim")
            )
            yield Text(child_indent + "└─ ") + text, hidden
            continue
        for i in reversed(range(len(kids))):
            glyph = "├─ " if i < len(kids) - 1 else "└─ "
            stack.append((kids[i], child_indent, glyph, level + 1))


def _chain(node: TreeNode) -> list[TreeNode]:
    """``node`` and its single children after it, down to an entry with none or several."""
    chain = [node]
    while len(chain[-1].children) == 1:
        chain.append(chain[-1].children[0])
    return chain


def _folded(chain: list[TreeNode]) -> list[TreeNode | list[TreeNode]]:
    """The chain with each run of two or more unremarkable entries as one list."""
    items: list[TreeNode | list[TreeNode]] = []
    run: list[TreeNode] = []
    last = len(chain) - 1
    for i, node in enumerate(chain):
        if i < HEAD or i > last - TAIL or _notable(node):
            items.extend([run] if len(run) > 1 else run)
            run = []
            items.append(node)
        else:
            run.append(node)
    items.extend([run] if len(run) > 1 else run)
    return items


def _notable(node: TreeNode) -> bool:
    """Shown even inside a folded chain: labelled, a compaction or branch summary, or
    the active leaf."""
    if node.label or node.entry.type in NOTABLE_TYPES:
        return True
    return node.on_active_path and not any(kid.on_active_path for kid in node.children)


def _count(roots: list[TreeNode]) -> int:
    count, stack = 0, list(roots)
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node.children)
    return count


def _entries(count: int) -> str:
    return f"{count:,} entr{'y' if count == 1 else 'ies'}"


def _fold_text(run: list[TreeNode]) -> Text:
    active = any(node.on_active_path for node in run)
    return styled(("*" if active else " ", "bold green"), " ", (f"… {_entries(len(run))} …", "dim"))


def _node_text(node: TreeNode) -> Text:
    from jsonl_session import entry_summary

    marker = ("*", "bold green") if node.on_active_path else " "
    label = (f" [{node.label}]", "magenta") if node.label else ""
    summary = fit(entry_summary(node.entry, SUMMARY_CELLS), SUMMARY_CELLS)  # wide text: cells
    return styled(marker, " ", (node.entry.id, "dim"), " ", summary, label)
