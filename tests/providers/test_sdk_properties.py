"""Property: for random session trees with random damage, every leaf's request in
every format passes the stub's checks of the APIs' rules (called directly, no HTTP).

Damage drawn: tool calls never answered, results for calls that do not exist or were
answered already, aborted and failed assistant turns with nothing in them, user
messages in a row, branches from anywhere (so a call's result can sit on another
branch), compactions and branch summaries, commands left out of the context, and
thinking from several providers (signed, unsigned, redacted). A second property draws
tool-call ids the way some OpenAI-compatible servers make them, call_0, call_1, ... in
every turn, so ids repeat across turns.
"""

from __future__ import annotations

import base64
import itertools
import json
import struct
import tempfile
import zlib
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stub_api import check_anthropic_messages, check_openai_chat, check_openai_responses

from jsonl_session import Session
from jsonl_session.providers.anthropic import to_anthropic
from jsonl_session.providers.openai import to_openai_chat, to_openai_responses

SYSTEM = "You are a test."
CALL_NUMBERS = itertools.count()


def png(width: int, height: int) -> str:
    """A real PNG of one grey colour, base64 (the stub checks the bytes)."""
    row = b"\x00" + b"\x80\x80\x80" * width

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + raw).decode()


JPEG = base64.b64encode(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 16 + b"\xff\xd9").decode()
IMAGES = [
    {"type": "image", "data": png(1, 1), "mimeType": "image/png"},
    {"type": "image", "data": png(3, 2), "mimeType": "image/png"},
    {"type": "image", "data": JPEG, "mimeType": "image/jpeg"},
]

# Text as it comes: words, non-ASCII, and sometimes leading or trailing whitespace.
words = st.text(alphabet="abcdefghij XYZ.é→😀\n", min_size=1, max_size=24)
texts = st.one_of(
    words.filter(lambda t: t.strip()), words.map(lambda t: f"x{t}"), words.map(lambda t: f"{t} y")
)
images = st.sampled_from(IMAGES)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | words,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(words, inner, max_size=3),
    max_leaves=6,
)
arguments = st.dictionaries(
    st.sampled_from(["path", "command", "old", "n"]), json_values, max_size=3
)
# pi's tool-call ids: Anthropic's, OpenAI Responses' "call|item" pairs, and odd ones.
call_ids = st.one_of(
    st.from_regex(r"toolu_[A-Za-z0-9]{6}", fullmatch=True),
    st.from_regex(r"call_[A-Za-z0-9]{5}\|fc_[a-z0-9]{6}", fullmatch=True),
    st.from_regex(r"[a-z]{2}\.[0-9]{1,3}:[a-z]{1,70}", fullmatch=True),
)

user_content = st.one_of(
    texts,
    st.lists(
        st.one_of(texts.map(lambda t: {"type": "text", "text": t}), images), min_size=1, max_size=3
    ),
)

PROVIDERS = {
    "anthropic": ("anthropic-messages", "claude-sonnet-4-5"),
    "openai": ("openai-responses", "gpt-5"),
    "google": ("google-generative-ai", "gemini-2.5-pro"),
}


@st.composite
def thinking_blocks(draw: st.DrawFn, provider: str) -> dict[str, Any]:
    text = draw(texts)
    kind = draw(st.sampled_from(["signed", "unsigned", "redacted"]))
    if kind == "unsigned":
        return {"type": "thinking", "thinking": text}
    if provider == "openai":
        item = {"type": "reasoning", "id": f"rs_{draw(st.integers(0, 999))}", "summary": []}
        signature = json.dumps(item)
    else:
        signature = "Eq" + draw(st.from_regex(r"[A-Za-z0-9+/]{8}", fullmatch=True)) + "=="
    if kind == "redacted":
        return {
            "type": "thinking",
            "thinking": "",
            "thinkingSignature": signature,
            "redacted": True,
        }
    return {"type": "thinking", "thinking": text, "thinkingSignature": signature}


@st.composite
def assistant_ops(draw: st.DrawFn, reuse_ids: bool = False) -> tuple[str, dict[str, Any]]:
    """An assistant turn. Call ids are unique, as most providers make them, or with
    ``reuse_ids`` call_0, call_1, ... in every turn, as some OpenAI-compatible servers
    do."""
    provider = draw(st.sampled_from(sorted(PROVIDERS)))
    shape = draw(
        st.sampled_from(
            [
                "text",
                "thinking",
                "calls",
                "calls",
                "calls",
                "thinking-only",
                "aborted",
                "error",
                "blank",
            ]
        )
    )
    blocks: list[dict[str, Any]] = []
    stop = "stop"
    if shape in ("thinking", "thinking-only"):
        blocks += draw(st.lists(thinking_blocks(provider), min_size=1, max_size=2))
    if shape in ("text", "thinking") or (shape == "calls" and draw(st.booleans())):
        block = {"type": "text", "text": draw(texts)}
        if provider == "openai" and draw(st.booleans()):
            block["textSignature"] = f"msg_{draw(st.integers(0, 999))}"
        blocks.append(block)
    calls: list[tuple[str, str]] = []
    if shape == "calls":
        stop = "toolUse"
        for number in range(draw(st.integers(1, 3))):
            call_id = f"call_{number}" if reuse_ids else f"{draw(call_ids)}{next(CALL_NUMBERS)}"
            name = draw(st.sampled_from(["read", "bash", "edit"]))
            calls.append((call_id, name))
            blocks.append(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": draw(arguments)}
            )
    if shape == "aborted":
        stop = "aborted"
    if shape == "blank":
        blocks = [{"type": "text", "text": draw(st.sampled_from(["", " ", "\n"]))}]
    api, model = PROVIDERS[provider]
    message: dict[str, Any] = {
        "role": "assistant",
        "content": blocks,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": {"input": 10, "output": 5, "totalTokens": 15},
        "stopReason": stop,
        "timestamp": 1_700_000_000_000,
    }
    if shape == "error":
        message["stopReason"] = "error"
        message["errorMessage"] = "overloaded"
    return "assistant", {"message": message, "calls": calls}


results = st.tuples(
    st.just("result"),
    st.fixed_dictionaries(
        {
            "which": st.sampled_from(["next"] * 5 + ["orphan", "again", "again", "any"]),
            "content": st.lists(
                st.one_of(texts.map(lambda t: {"type": "text", "text": t}), images), max_size=2
            ),
            "is_error": st.booleans(),
        }
    ),
)


def operations(reuse_ids: bool = False) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """One step of building a session (weighted towards messages and tool calls)."""
    return st.one_of(
        user_content.map(lambda c: ("user", {"content": c})),
        user_content.map(lambda c: ("user", {"content": c})),
        assistant_ops(reuse_ids),
        assistant_ops(reuse_ids),
        assistant_ops(reuse_ids),
        results,
        results,
        results,
        st.tuples(st.just("branch"), st.fixed_dictionaries({"at": st.integers(0, 10_000)})),
        st.tuples(
            st.just("summary"),
            st.fixed_dictionaries({"at": st.integers(-1, 10_000), "text": texts}),
        ),
        st.tuples(st.just("compaction"), st.fixed_dictionaries({"at": st.integers(0, 10_000)})),
        st.tuples(
            st.just("bash"),
            st.fixed_dictionaries(
                {"exclude": st.booleans(), "output": st.sampled_from(["", "ok\n"])}
            ),
        ),
        user_content.map(lambda c: ("custom", {"content": c})),
        st.tuples(st.just("label"), st.fixed_dictionaries({"at": st.integers(0, 10_000)})),
    )


@dataclass
class Builder:
    """Applies drawn operations to a real session, tracking the calls made so far."""

    session: Session
    ids: list[str] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)  # every call ever made
    open_calls: list[tuple[str, str]] = field(default_factory=list)  # of the last call turn
    answered: list[tuple[str, str]] = field(default_factory=list)

    def add(self, entry_id: str | None) -> None:
        if entry_id is not None:
            self.ids.append(entry_id)

    def apply(self, op: str, args: dict[str, Any]) -> None:
        s = self.session
        if op == "user":
            self.add(s.append_message({"role": "user", "content": args["content"], "timestamp": 1}))
        elif op == "assistant":
            self.add(s.append_message(args["message"]))
            self.calls += args["calls"]
            self.open_calls = list(args["calls"])
        elif op == "result":
            self.add(s.append_message(self.result(args)))
        elif op == "branch":
            self.add(s.branch(self.ids[args["at"] % len(self.ids)]))
        elif op == "summary":
            at = None if args["at"] < 0 else self.ids[args["at"] % len(self.ids)]
            self.add(s.branch_with_summary(at, args["text"]))
        elif op == "compaction":
            path = [e.id for e in s.branch_path()] or self.ids
            kept = path[args["at"] % len(path)]
            self.add(s.append_compaction("We did several things.", kept, 1234))
        elif op == "bash":
            message = {
                "role": "bashExecution",
                "command": "ls",
                "output": args["output"],
                "exitCode": 0,
                "timestamp": 2,
            }
            if args["exclude"]:
                message["excludeFromContext"] = True
            self.add(s.append_message(message))
        elif op == "custom":
            self.add(s.append_custom_message("note", args["content"]))
        elif op == "label":
            self.add(s.append_label(self.ids[args["at"] % len(self.ids)], "mark"))

    def result(self, args: dict[str, Any]) -> dict[str, Any]:
        which = args["which"]
        if which == "next" and self.open_calls:
            call_id, name = self.open_calls.pop(0)
            self.answered.append((call_id, name))
        elif which == "again" and self.answered:
            call_id, name = self.answered[-1]
        elif which == "any" and self.calls:
            call_id, name = self.calls[len(self.ids) % len(self.calls)]
        else:
            call_id, name = f"toolu_orphan{len(self.ids)}", "read"
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": args["content"],
            "isError": args["is_error"],
            "timestamp": 3,
        }


def sent(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request body as it travels: through JSON and back."""
    return json.loads(json.dumps(kwargs))


def failures_at(session: Session, leaf: str) -> list[str]:
    context = session.build_context(leaf)
    found: list[str] = []
    if context.messages:
        request = to_anthropic(context, system=SYSTEM)
        body = sent({"model": "claude-test", "max_tokens": 16, **request.kwargs})
        found += [f"anthropic: {r}" for r in check_anthropic_messages(body)]
        assert to_anthropic(context, system=SYSTEM) == request  # deterministic
    request = to_openai_chat(context, system=SYSTEM)
    found += [
        f"chat: {r}" for r in check_openai_chat(sent({"model": "gpt-test", **request.kwargs}))
    ]
    request = to_openai_responses(context, instructions=SYSTEM)
    body = sent({"model": "gpt-test", **request.kwargs})
    found += [f"responses: {r}" for r in check_openai_responses(body)]
    return [f"leaf {leaf}: {f}" for f in found]


def check_every_leaf(first: Any, ops: list[tuple[str, dict[str, Any]]]) -> None:
    """Build the session (written, then read back), then check every leaf."""
    with tempfile.TemporaryDirectory() as folder:
        session = Session.create(folder, session_dir=folder, fsync="never")
        builder = Builder(session)
        builder.apply("user", {"content": first})
        session.flush()
        for op, args in ops:
            builder.apply(op, args)
        reread = Session.open(session.path)
        failures = []
        for leaf in dict.fromkeys(e.id for e in reread.entries):
            failures += failures_at(reread, leaf)
    assert not failures, "\n".join(failures[:20])


PROPERTY_SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class TestRandomDamagedSessions:
    @PROPERTY_SETTINGS
    @given(first=user_content, ops=st.lists(operations(), min_size=6, max_size=40))
    def test_every_leaf_passes_the_api_checks_in_every_format(
        self, first: Any, ops: list[tuple[str, dict[str, Any]]]
    ) -> None:
        check_every_leaf(first, ops)

    @PROPERTY_SETTINGS
    @given(first=user_content, ops=st.lists(operations(reuse_ids=True), min_size=6, max_size=40))
    def test_tool_call_ids_reused_across_turns_still_pass(
        self, first: Any, ops: list[tuple[str, dict[str, Any]]]
    ) -> None:
        check_every_leaf(first, ops)
