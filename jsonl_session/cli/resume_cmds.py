"""`resume`: continue a session with a real model, streaming each reply to the terminal.

Thin: the turn (request, stream, overflow recovery, append) is the library's
`take_turn`; this module reads prompts (the argument, else lines of standard input
until it ends), prints the reply as it arrives (text on stdout; thinking, tool calls
and notes on stderr), and stops where the model calls tools, since it runs none.
"""

from __future__ import annotations

import itertools
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from jsonl_session.cli.inputs import session_file, telling_rewrites
from jsonl_session.cli.options import FileArg, RedactOption, cache_for, fail, reports_errors, usage
from jsonl_session.cli.output import redactor_if, say_redacted

if TYPE_CHECKING:
    from jsonl_session import CompactionResult, Session, Turn


@reports_errors
def resume(
    ctx: typer.Context,
    file: FileArg,
    prompt: Annotated[
        str | None,
        typer.Argument(help="What to say; without it, each line of standard input is a prompt."),
    ] = None,
    leaf: Annotated[
        str | None,
        typer.Option("--leaf", help="Continue from this entry (a new branch, in place)."),
    ] = None,
    fork: Annotated[
        bool, typer.Option("--fork", help="Fork to a new session file first, and continue there.")
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", help="Model to ask; default: the session's last.")
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider", help="anthropic or openai; default: the session's, else the key set."
        ),
    ] = None,
    api: Annotated[
        str, typer.Option("--api", help="For openai: responses (default) or chat.")
    ] = "responses",
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Most tokens a reply may have.")
    ] = 8192,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="The API's address (default: the SDK's, or *_BASE_URL)."),
    ] = None,
    show_thinking: Annotated[
        bool, typer.Option("--thinking", help="Show the model's thinking (on stderr).")
    ] = False,
    redact: RedactOption = False,
) -> None:
    """Continue a session with a model: append the prompt, stream the reply, append it.

    Stops when a reply calls tools (they are recorded and named, never run). A context
    overflow compacts the session and asks once more. Keys: ANTHROPIC_API_KEY or
    OPENAI_API_KEY. With --redact, secrets in the prompt and the reply are replaced
    before they are written (the model is then sent the transcript as written)."""
    from jsonl_session import AGENT_NAMES, Session, target_for

    if api not in ("responses", "chat"):
        raise usage(f"--api must be responses or chat, not {api!r}")
    path = session_file(ctx, file, writes="appends to FILE and reads prompts from standard input")
    redactor = redactor_if(redact)
    session = Session.open(path, cache=cache_for(ctx), redact=redactor)
    start = session.resolve_id(leaf) if leaf is not None else None
    # Everything that can be refused (provider, model, key) is checked before a write.
    target = target_for(
        session,
        provider=provider,
        model=model,
        api="chat" if api == "chat" else "responses",
        base_url=base_url,
        max_tokens=max_tokens,
    )
    prompts = iter([prompt] if prompt is not None else _lines_of_stdin())
    first = next(prompts, None)
    if first is None:
        return  # no prompt came: nothing to do, nothing written
    if not first.strip():
        raise fail("the prompt is empty")
    if fork:
        session = session.fork(start)
        _note(f"forked to {session.path}")
    elif start is not None:
        session.branch(start, marker=False)
    elif session.dialect != "pi":
        raise fail(
            f"{file}: a {AGENT_NAMES.get(session.dialect, session.dialect)} transcript is "
            "only read here; "
            "continue it in a pi session with --fork"
        )
    turns = 0
    with telling_rewrites(session):
        try:
            for text in itertools.chain([first], prompts):
                turn = _one_turn(session, text, target, show_thinking)
                turns += 1
                if turn.reply.get("stopReason") in ("error", "aborted"):
                    reason = turn.reply.get("errorMessage") or turn.reply.get("stopReason")
                    raise fail(f"the reply ended with an error ({reason}); it was recorded")
                if turn.tool_calls:
                    _stop_at_tools(turn)
                    break
        except KeyboardInterrupt:
            sys.stdout.write("\n")
            last = session.get(session.leaf_id) if session.leaf_id else None
            message = last.data().get("message") if last is not None else None
            if isinstance(message, dict) and message.get("stopReason") == "aborted":
                _note(f"interrupted: the reply so far is recorded in {session.path} (as aborted)")
            else:
                _note("interrupted before the model answered")
            raise typer.Exit(130) from None
    if turns:
        _note(f"{session.path}: {turns} turn(s) appended; leaf {session.leaf_id}")
    say_redacted(redactor)


def _one_turn(session: Session, text: str, target: Any, show_thinking: bool) -> Turn:
    from jsonl_session import take_turn
    from jsonl_session.cli.terminal_text import visible

    def on_delta(kind: str, piece: str) -> None:
        # the model's text can carry control characters too: shown escaped
        if kind == "text":
            sys.stdout.write(visible(piece))
            sys.stdout.flush()
        elif kind == "thinking" and show_thinking:
            sys.stderr.write(visible(piece))
            sys.stderr.flush()

    def compacted(result: CompactionResult) -> None:
        _note(f"the context was too long: compacted ({result.tokens_before} tokens before)")

    turn = take_turn(session, text, target, on_delta=on_delta, on_compaction=compacted)
    if turn.text and not turn.text.endswith("\n"):
        sys.stdout.write("\n")
    sys.stdout.flush()
    return turn


def _stop_at_tools(turn: Turn) -> None:
    import json

    for call in turn.tool_calls:
        arguments = json.dumps(call.get("arguments", {}), ensure_ascii=False)
        _note(f"tool call {call.get('name')} {arguments} (id {call.get('id')})")
    names = ", ".join(str(c.get("name")) for c in turn.tool_calls)
    _note(
        f"stopped: the model called {names}; resume runs no tools "
        "(the calls are recorded, without results)"
    )


def _lines_of_stdin() -> Any:
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            sys.stderr.write("> ")
            sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            return
        if line.strip():
            yield line.rstrip("\n")


def _note(text: str) -> None:
    sys.stderr.write(f"{text}\n")
    sys.stderr.flush()
