"""An openai-agents `Session` whose history is one pi session file.

`AgentsSessionFile` meets the SDK's session protocol over a `Session`, so an agent's
turns land in a file pi, the CLI and every reader here understand, and a new store on
the file resumes them. Owns the protocol: each call, under the store's lock, first
reads the file again, so items another store or pi appended meanwhile are seen and
the file's leaf is the one continued from; `add_items` writes the file at once (a new
file too, whatever the items). How items map to pi entries and back is
openai_agents_items.py's:

- user, system and developer messages -> user and pi 1.5 system messages; each run
  of model output items -> one assistant message (api ``openai-responses``, provider
  ``openai``, the store's model, zero usage, stopReason ``toolUse`` when it calls
  tools); tool call outputs -> toolResults answering the stored call;
- anything else (hosted tool calls and their outputs, item references, messages with
  parts pi has no shape for) -> a ``custom`` entry ``jsonl-session/openai-agents-item`` holding the
  item as given, outside pi's context; one inside a run follows the run's assistant
  message and names the item that came after it.

`get_items` is providers/openai.py's `to_openai_responses` of the context for the
store's model (its reasoning, message and function-call items come back as it sent
them), with system messages and custom items put back in their places. Lossy on the
way back: shapes are normalized (easy messages come back typed); an output message's
parts become one text (annotations, logprobs, refusal kinds go), an image's ``detail``
``auto``; ``status`` fields go; arguments are re-encoded; the converter's rules apply
(tool output as text, its images after it; an assistant message of only reasoning and
an output whose call is not on the branch left out; a call without output answered
"no result"); replies of another model come back as plain text and calls.

`pop_item` moves the leaf back one entry (past entries giving no item, e.g. labels)
with `Session.branch`'s leaf marker, so the file keeps every entry; an assistant
message, a whole model turn, goes at once and its last item is returned. Emptying the
history (`clear_session`, popping the first entry) appends a leaf marker with no
parent: pi's leaf is then an entry whose path has no messages and our loader finds no
leaf, so the next item starts a new root. Requests are built by providers/, entries
appended by session/; the SDK is imported only when a store is made.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from jsonl_session.errors import JsonlSessionError
from jsonl_session.extras import needs_extra
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.ids import now_ms
from jsonl_session.format.model import LEAF_MARKER_TYPE
from jsonl_session.integrations.openai_agents_items import (
    ITEM_TYPE,
    ROLE_KEY,
    Item,
    history_items,
    kept,
    kind,
    output_item,
    pi_content,
    real_id,
    settled,
    system_item,
    zero_usage,
)
from jsonl_session.messages import tool_calls
from jsonl_session.providers.replies import RESPONSES_API, output_blocks, tool_result
from jsonl_session.providers.reply_parts import plain
from jsonl_session.session import Session
from jsonl_session.storage.store import FsyncPolicy

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings

# entry types that may give the model something (the others are passed over by pop_item)
_GIVING_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})


class AgentsSessionFile:
    """The openai-agents session protocol over one pi session file.

    ``path``: the file, opened when it exists, else created there; without it a new
    session goes to ``session_dir`` (default: the library's folder for ``cwd``).
    A new file given by ``path`` is written at once, so a store made again on the
    path has the same session id. ``model``: the model name written on assistant
    messages, and the one whose replies are replayed item for item.
    ``session_settings`` as for the SDK's own sessions (its ``limit`` caps `get_items`
    when no limit is given); ``fsync`` as for `Session.open`. ``session`` is the
    `Session` underneath, for reading (read again from the file at each call).
    """

    session_id: str
    session_settings: SessionSettings | None

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        model: str,
        cwd: str | Path = ".",
        session_dir: str | Path | None = None,
        session_settings: SessionSettings | None = None,
        fsync: FsyncPolicy = "always",
    ) -> None:
        settings_type = _settings_type()
        if not isinstance(model, str) or not model:
            raise JsonlSessionError("AgentsSessionFile needs the model name (model=...)")
        if path is not None and Path(path).exists():
            self.session = Session.open(path, fsync=fsync)
        else:
            self.session = Session.create(cwd, session_dir, path=path, fsync=fsync)
            if path is not None:
                self.session.flush()
        self.model = model
        self.fsync: FsyncPolicy = fsync
        self.session_id = self.session.id
        self.session_settings = session_settings or settings_type()
        # the SDK may call from several tasks; each call reads and appends as one step
        self._lock = asyncio.Lock()

    @property
    def path(self) -> Path:
        return self.session.path

    # --- the protocol --------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history as Responses input items, oldest first; with ``limit`` (else the
        settings' limit) only that many of the newest."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        async with self._lock:
            self._refresh()
            items = history_items(self.session.projection(), self.model)
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` as pi entries (see the module docstring for the mapping)."""
        async with self._lock:
            self._refresh()
            run: list[Item] = []  # model output items waiting for the end of their run
            for raw in items:
                item = plain(raw, "an openai-agents input item")
                item_kind = kind(item)
                if item_kind in ("output", "other"):
                    run.append(item)
                    continue
                self._append_run(run)
                run = []
                if item_kind == "input":
                    self._append_input(item)
                else:
                    self._append_result(item)
            self._append_run(run)
            if items:
                # a new session is written at its first user or assistant message: items
                # that are neither would be lost to a restart until one came
                self.session.flush()

    async def pop_item(self) -> TResponseInputItem | None:
        """Move the leaf back past the newest entry that gives an item, and return the
        last item it gave; None when the history has none. The file keeps the entry."""
        async with self._lock:
            self._refresh()
            path = self.session.branch_path()
            for at in range(len(path) - 1, -1, -1):
                item = self._item_of(path, at)
                if item is not None:
                    self._move_leaf(path[at - 1].id if at else None)
                    return cast("TResponseInputItem", item)
            return None

    async def clear_session(self) -> None:
        """Start over: the next item starts a new root; the old entries stay in the file."""
        async with self._lock:
            self._refresh()
            if self.session.leaf_id is not None:
                self._move_leaf(None)

    def _refresh(self) -> None:
        """The file as it is now: entries other stores or pi appended since this one
        last looked, and the file's leaf, which the next item continues from."""
        if self.session.is_persisted:
            self.session = Session.open(self.path, fsync=self.fsync)

    # --- writing -------------------------------------------------------------------

    def _append_run(self, run: Sequence[Item]) -> None:
        """One assistant message for the run's output items, then a custom entry for
        each other item in it, naming the output item that followed it."""
        known = [output_item(item) for item in run if kind(item) == "output"]
        if known:
            blocks = output_blocks(known)
            calls = any(block.get("type") == "toolCall" for block in blocks)
            message: Item = {
                "role": "assistant",
                "content": blocks,
                "api": RESPONSES_API,
                "provider": "openai",
                "model": self.model,
                "usage": zero_usage(),
                "stopReason": "toolUse" if calls else "stop",
                "timestamp": now_ms(),
            }
            self.session.append_message(message)
        for index, item in enumerate(run):
            if kind(item) == "output":
                continue
            following = next((i for i in run[index + 1 :] if kind(i) == "output"), None)
            self._keep(item, real_id(following) if following is not None else None)

    def _append_input(self, item: Item) -> None:
        role = item.get("role")
        content, whole = pi_content(item.get("content"), images=role == "user")
        if not whole:
            self._keep(item)
        elif role == "user":
            self.session.append_message({"role": "user", "content": content, "timestamp": now_ms()})
        else:
            system = {"role": "system", "content": content, ROLE_KEY: role, "timestamp": now_ms()}
            self.session.append_message(system)

    def _append_result(self, item: Item) -> None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            self._keep(item)
            return
        # a call not on the branch still gets its result written (replay leaves it out)
        call = self._stored_call(call_id) or {"type": "toolCall", "id": call_id, "name": ""}
        output = item.get("output")
        content, whole = pi_content(output, images=True)
        details = None if whole else {"openaiOutput": output}
        self.session.append_message(tool_result(call, content, details=details))

    def _keep(self, item: Item, before: str | None = None) -> None:
        data = {"item": item} if before is None else {"item": item, "before": before}
        self.session.append_custom(ITEM_TYPE, data)

    def _stored_call(self, call_id: str) -> Item | None:
        """The newest toolCall on the branch that ``call_id`` answers: stored as the
        call id itself or as pi's ``call_id|item id``."""
        for entry in reversed(self.session.branch_path()):
            if entry.type != "message" or entry.role != "assistant":
                continue
            message = entry.data().get("message")
            for block in tool_calls(message) if isinstance(message, dict) else ():
                stored = str(block.get("id", ""))
                if stored == call_id or stored.partition("|")[0] == call_id:
                    return block
        return None

    def _move_leaf(self, target: str | None) -> None:
        if target is not None:
            self.session.branch(target)
            return
        # No entry stands for "no history": a root leaf marker makes the file's last
        # entry one whose path has no messages (pi) and no leaf (our loader).
        self.session.reset_leaf()
        self.session.append_custom(LEAF_MARKER_TYPE)
        self.session.reset_leaf()

    # --- reading -------------------------------------------------------------------

    def _item_of(self, path: list[StoredEntry], at: int) -> Item | None:
        """The last item the entry ``path[at]`` gives, with the leaf there; None if none."""
        entry = path[at]
        found = kept(entry)
        if found is not None:
            return found[0]
        if entry.type not in _GIVING_TYPES:
            return None
        if entry.type == "message" and entry.role == "system":
            message = entry.data().get("message")
            return system_item(message) if isinstance(message, dict) else None
        after = settled(history_items(self.session.projection(entry.id), self.model))
        before = (
            settled(history_items(self.session.projection(path[at - 1].id), self.model))
            if at
            else []
        )
        if after[: len(before)] == before:
            return after[-1] if len(after) > len(before) else None
        return after[-1] if after else None  # a compaction: it replaced what came before


def _settings_type() -> type[SessionSettings]:
    with needs_extra("openai-agents", "the openai-agents session store"):
        from agents.memory import SessionSettings
    return SessionSettings
