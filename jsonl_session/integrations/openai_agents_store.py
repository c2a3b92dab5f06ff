"""An openai-agents `Session` whose history is one pi session file.

`AgentsSessionFile` meets the SDK's session protocol over a `Session`, so an agent's
turns land in a file pi, the CLI and every reader here understand, and a new store on
the file resumes them. Owns the mapping of Responses input items to pi entries:

- user messages -> user messages (text; images as base64 data URLs); system and
  developer messages -> pi 1.5 system messages (the session's prompt), the item's
  role kept as ``openaiRole``;
- each run of model output items (reasoning, assistant messages, function and custom
  tool calls) -> one assistant message of replies.py's `output_blocks`: api
  ``openai-responses``, provider ``openai``, the store's model, zero usage (the SDK
  gives a session none), stopReason ``toolUse`` when it calls tools;
- ``function_call_output`` / ``custom_tool_call_output`` -> a toolResult answering the
  stored call (replies.py's `tool_result`); parts pi has no shape for (files, images by
  URL or file id) are left out of it and kept whole in ``details.openaiOutput``;
- anything else (hosted tool calls and their outputs, item references, messages with
  such parts) -> a ``custom`` entry ``openai-agents/item`` holding the item as given,
  outside pi's context; one inside a run follows the run's assistant message and
  names the item that came after it.

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
leaf, so the next item starts a new root. Requests are providers/', appends session/'s;
the SDK is imported only when a store is made.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jsonl_session.context import Projection
from jsonl_session.errors import JsonlSessionError
from jsonl_session.extras import needs_extra
from jsonl_session.format.entry import StoredEntry
from jsonl_session.format.ids import now_ms
from jsonl_session.format.model import LEAF_MARKER_TYPE
from jsonl_session.messages import system_message_text, text_parts, tool_calls
from jsonl_session.providers.history import NO_RESULT_TEXT
from jsonl_session.providers.openai import to_openai_responses
from jsonl_session.providers.replies import RESPONSES_API, output_blocks, plain, tool_result
from jsonl_session.session import Session
from jsonl_session.storage.store import FsyncPolicy

if TYPE_CHECKING:
    from agents.items import TResponseInputItem
    from agents.memory import SessionSettings

ITEM_TYPE = "openai-agents/item"
"""customType of the entries holding items pi has no message shape for."""
ROLE_KEY = "openaiRole"
"""On a system message this store wrote: the item's role, ``system`` or ``developer``."""

Item = dict[str, Any]

_OUTPUT_TYPES = frozenset({"reasoning", "function_call", "custom_tool_call"})
_RESULT_TYPES = frozenset({"function_call_output", "custom_tool_call_output"})
_INPUT_ROLES = frozenset({"user", "system", "developer"})
# entry types that may give the model something (the others are passed over by pop_item)
_GIVING_TYPES = frozenset({"message", "custom_message", "branch_summary", "compaction"})
_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+);base64,(?P<data>.*)$", re.DOTALL)


class AgentsSessionFile:
    """The openai-agents session protocol over one pi session file.

    ``path``: the file, opened when it exists, else created there; without it a new
    session goes to ``session_dir`` (default: the library's folder for ``cwd``).
    ``model``: the model name written on assistant messages, and the one whose replies
    are replayed item for item. ``session_settings`` as for the SDK's own sessions
    (its ``limit`` caps `get_items` when no limit is given); ``fsync`` as for
    `Session.open`. ``session`` is the `Session` underneath, for reading.
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
        self.model = model
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
            items = self._items(self.session.projection())
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return cast("list[TResponseInputItem]", items)

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Append ``items`` as pi entries (see the module docstring for the mapping)."""
        async with self._lock:
            run: list[Item] = []  # model output items waiting for the end of their run
            for raw in items:
                item = plain(raw, "an openai-agents input item")
                kind = _kind(item)
                if kind in ("output", "other"):
                    run.append(item)
                    continue
                self._append_run(run)
                run = []
                if kind == "input":
                    self._append_input(item)
                else:
                    self._append_result(item)
            self._append_run(run)

    async def pop_item(self) -> TResponseInputItem | None:
        """Move the leaf back past the newest entry that gives an item, and return the
        last item it gave; None when the history has none. The file keeps the entry."""
        async with self._lock:
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
            if self.session.leaf_id is not None:
                self._move_leaf(None)

    # --- writing -------------------------------------------------------------------

    def _append_run(self, run: Sequence[Item]) -> None:
        """One assistant message for the run's output items, then a custom entry for
        each other item in it, naming the output item that followed it."""
        known = [_output_item(item) for item in run if _kind(item) == "output"]
        if known:
            blocks = output_blocks(known)
            calls = any(block.get("type") == "toolCall" for block in blocks)
            message: Item = {
                "role": "assistant",
                "content": blocks,
                "api": RESPONSES_API,
                "provider": "openai",
                "model": self.model,
                "usage": _zero_usage(),
                "stopReason": "toolUse" if calls else "stop",
                "timestamp": now_ms(),
            }
            self.session.append_message(message)
        for index, item in enumerate(run):
            if _kind(item) == "output":
                continue
            following = next((i for i in run[index + 1 :] if _kind(i) == "output"), None)
            anchor = following.get("id") if following is not None else None
            self._keep(item, anchor if isinstance(anchor, str) and anchor else None)

    def _append_input(self, item: Item) -> None:
        role = item.get("role")
        content, whole = _pi_content(item.get("content"), images=role == "user")
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
        content, whole = _pi_content(output, images=True)
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

    def _convert(self, messages: Sequence[Item]) -> list[Item]:
        request = to_openai_responses(list(messages), model=self.model)
        return list(request.kwargs["input"])

    def _items(self, projection: Projection) -> list[Item]:
        """The converter's items for the projection's messages, with its system
        messages and kept items spliced in at their places."""
        messages = projection.messages
        base = self._convert(messages)
        counts = {0: 0, len(messages): len(_settled(base))}

        def count(k: int) -> int:  # the items the first k messages give
            if k not in counts:
                counts[k] = len(_settled(self._convert(messages[:k])))
            return counts[k]

        placed: list[tuple[int, Item]] = []  # (items before it, item), in path order
        seen = 0  # messages so far
        for projected in projection.entries:
            kept = _kept(projected.entry)
            if kept is not None:
                item, anchor = kept
                at = count(seen)
                if anchor is not None and seen:
                    # the run's assistant message is the message just before
                    start = count(seen - 1)
                    at = next((i for i in range(start, at) if base[i].get("id") == anchor), at)
                placed.append((at, item))
            for message in projected.messages:
                system = _system_item(message) if message.get("role") == "system" else None
                if system is not None:
                    placed.append((count(seen), system))
                seen += 1
        return _merged(base, placed)

    def _item_of(self, path: list[StoredEntry], at: int) -> Item | None:
        """The last item the entry ``path[at]`` gives, with the leaf there; None if none."""
        entry = path[at]
        kept = _kept(entry)
        if kept is not None:
            return kept[0]
        if entry.type not in _GIVING_TYPES:
            return None
        if entry.type == "message" and entry.role == "system":
            message = entry.data().get("message")
            return _system_item(message) if isinstance(message, dict) else None
        after = _settled(self._items(self.session.projection(entry.id)))
        before = _settled(self._items(self.session.projection(path[at - 1].id))) if at else []
        if after[: len(before)] == before:
            return after[-1] if len(after) > len(before) else None
        return after[-1] if after else None  # a compaction: it replaced what came before


# --- items and pi shapes -------------------------------------------------------------


def _settings_type() -> type[SessionSettings]:
    with needs_extra("openai-agents", "the openai-agents session store"):
        from agents.memory import SessionSettings
    return SessionSettings


def _kind(item: Item) -> str:
    """input (a user, system or developer message), output (what output_blocks takes),
    result (a tool call's output) or other."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        role = item.get("role")
        return "output" if role == "assistant" else "input" if role in _INPUT_ROLES else "other"
    if kind in _OUTPUT_TYPES:
        return "output"
    return "result" if kind in _RESULT_TYPES else "other"


def _output_item(item: Item) -> Item:
    """An assistant message as output_blocks reads one: content as output_text parts
    (an easy message may give a string, or input_text parts)."""
    content = item.get("content")
    if item.get("type", "message") != "message" or not isinstance(content, str | list):
        return item
    if isinstance(content, str):
        return {**item, "content": [{"type": "output_text", "text": content}]}
    parts = [p for p in content if isinstance(p, dict)]
    plain_text = [
        {**p, "type": "output_text"} if p.get("type") == "input_text" else p for p in parts
    ]
    return {**item, "content": plain_text}


def _pi_content(content: Any, *, images: bool) -> tuple[str | list[Item], bool]:
    """Input content as pi content: a string stays one; text parts, and image parts
    holding base64 data URLs when ``images``, become blocks. The flag says whether
    every part fitted (the blocks hold those that did)."""
    if isinstance(content, str):
        return content, True
    if not isinstance(content, list):
        return [], False
    blocks: list[Item] = []
    whole = True
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        url = part.get("image_url") if isinstance(part, dict) else None
        found = _DATA_URL.match(url) if images and isinstance(url, str) else None
        if kind == "input_text" and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "input_image" and found is not None:
            blocks.append({"type": "image", "data": found["data"], "mimeType": found["mime"]})
        else:
            whole = False
    return blocks, whole


def _system_item(message: Item) -> Item | None:
    """A system message of the context as the message item it was: one input_text
    part per text block (a prompt with named sections as one text)."""
    sections = message.get("sections")
    texts = [system_message_text(message)] if sections else text_parts(message.get("content"))
    parts = [{"type": "input_text", "text": text} for text in texts if text]
    role = "developer" if message.get(ROLE_KEY) == "developer" else "system"
    return {"type": "message", "role": role, "content": parts} if parts else None


def _kept(entry: StoredEntry) -> tuple[Item, str | None] | None:
    """The item a custom entry of ITEM_TYPE keeps and the id it came before."""
    mine = entry.type == "custom" and entry.custom_type == ITEM_TYPE
    data = entry.data().get("data") if mine else None
    if not isinstance(data, dict) or not isinstance(data.get("item"), dict):
        return None
    before = data.get("before")
    return data["item"], before if isinstance(before, str) else None


def _settled(items: list[Item]) -> list[Item]:
    """``items`` without the "no result" outputs the converter adds at the end for calls
    whose outputs had not come yet (they come after whatever is added next)."""
    end = len(items)
    while end:
        last = items[end - 1]
        if last.get("type") != "function_call_output" or last.get("output") != NO_RESULT_TEXT:
            break
        end -= 1
    return items[:end]


def _merged(base: list[Item], placed: list[tuple[int, Item]]) -> list[Item]:
    """``base`` with each placed item before ``base[at]``, in their order."""
    keyed = [(at, 0, n, item) for n, (at, item) in enumerate(placed)]
    keyed += [(index, 1, 0, item) for index, item in enumerate(base)]
    return [item for *_, item in sorted(keyed, key=lambda key: key[:3])]


def _zero_usage() -> Item:
    """pi's usage shape with nothing counted: the SDK gives a session no usage."""
    counts = dict.fromkeys(("input", "output", "cacheRead", "cacheWrite"), 0)
    return {**counts, "totalTokens": 0, "cost": {**counts, "total": 0}}
