"""The facts an export's header states, read from the entries it shows: the model and
thinking level in use, messages by role, tool calls, and the tokens and cost the
assistant replies report, with those figures as worker processes read them, in parts
(`LaterFigures`, `parts_of`).

Owns the wording of those facts and how the parts join; reading a reply's figures is
replies.py's, which facts an export states and when they are read is plan.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from jsonl_session.export.replies import ReplyFigures, reply_figures
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.walk import as_text

if TYPE_CHECKING:
    from concurrent.futures import Future


class LaterFigures:
    """The replies' figures as the workers read them, in parts
    (`ExportPlan.figures_later`)."""

    def __init__(self, parts: list[Future[ReplyFigures]]) -> None:
        self._parts = parts

    def ready(self) -> bool:
        """Whether asking `get` would not wait."""
        return all(part.done() for part in self._parts)

    def get(self) -> ReplyFigures | None:
        """The figures, or None when they were not read there (a worker that failed
        included: `facts` then reads them here, and meets any real error itself)."""
        if not self._parts:
            return None
        try:
            first, *later = (part.result() for part in self._parts)
            for figures in later:
                first.then(figures)
        except Exception:
            return None
        return first


def parts_of(entries: Sequence[StoredEntry], count: int) -> list[tuple[int, int]]:
    """``entries`` cut into at most ``count`` runs of about equal bytes of lines."""
    total = sum(entry.length for entry in entries)
    cuts: list[tuple[int, int]] = []
    start = seen = 0
    for index, entry in enumerate(entries):
        seen += entry.length
        if len(cuts) < count - 1 and seen * count >= total * (len(cuts) + 1):
            cuts.append((start, index + 1))
            start = index + 1
    if start < len(entries) or not cuts:
        cuts.append((start, len(entries)))
    return cuts


def model_and_thinking(path: list[StoredEntry]) -> tuple[str, str]:
    """The model of the last model change or reply on the path, and the level of the
    last thinking-level change (read backwards: only those two entries are decoded)."""
    model = thinking = None
    for entry in reversed(path):
        if entry.type == "model_change" or entry.role == "assistant":
            if model is None:
                data = entry.data()
                source = data.get("message", {}) if entry.type == "message" else data
                key = "modelId" if entry.type == "model_change" else "model"
                model = f"{as_text(source.get('provider'))}/{as_text(source.get(key))}"
        elif entry.type == "thinking_level_change" and thinking is None:
            thinking = as_text(entry.data().get("thinkingLevel"))
        if model is not None and thinking is not None:
            break
    return model or "", thinking or ""


def usage_facts(
    entries: list[StoredEntry], figures: ReplyFigures | None = None
) -> list[tuple[str, str]]:
    """Messages by role and the tokens and cost the assistant replies report
    (``figures``: `reply_figures` of those replies, when a worker read them)."""
    roles: dict[str, int] = {}
    replies = []
    for entry in entries:
        if entry.type == "message":
            role = entry.role
            if role is not None:
                roles[role] = roles.get(role, 0) + 1
                if role == "assistant":
                    replies.append(entry)
    if figures is None:
        figures = reply_figures(replies)
    calls, tokens, cost = figures.calls, figures.tokens, figures.cost
    if not roles:
        return []
    said = [f"{roles[r]} {r}" for r in ("user", "assistant") if r in roles]
    said += [_plural(roles["toolResult"], "tool result")] if "toolResult" in roles else []
    said += [_plural(calls, "tool call")] if calls else []
    facts = [("messages", " · ".join(said))]
    if any(tokens.values()):
        names = {
            "input": "in",
            "output": "out",
            "cacheRead": "cache read",
            "cacheWrite": "cache write",
        }
        used = [f"{_count(n)} {names[k]}" for k, n in tokens.items() if n]
        facts.append(("tokens", " · ".join(used) + (f" · ${cost:.2f}" if cost else "")))
    return facts


def _count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
