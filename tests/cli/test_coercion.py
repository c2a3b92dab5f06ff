"""Values read without Typer's pydantic adapters (cli/coercion.py) are the values and
errors Typer's own coercion gives, for every parameter of every command."""

from __future__ import annotations

import os
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
import typer.main
from typer import _click
from typer._coercion import build_runtime_param

from jsonl_session.cli import app
from jsonl_session.cli.coercion import QuickValue, _reader_for

_UNANSWERED = object()


def every_param() -> Iterator[tuple[str, Any, Any]]:
    """(command path, parameter, a context for it) of the app and every command."""
    group = typer.main.get_command(app)
    group_ctx = _click.Context(group)
    for param in group.get_params(group_ctx):
        yield "jsonl-session", param, group_ctx
    for name in group.list_commands(group_ctx):  # type: ignore[attr-defined]
        command = group.get_command(group_ctx, name)  # type: ignore[attr-defined]
        ctx = _click.Context(command, parent=group_ctx, info_name=name)
        for param in command.get_params(ctx):
            yield name, param, ctx


def candidates(annotation: Any, folder: Path) -> list[Any]:
    """Values a parameter of ``annotation`` may be given: good ones and bad ones."""
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        single = candidates(item, folder)
        return [(), tuple(single[:2]), tuple(single)]
    if annotation is bool:
        return [True, False, "true", "0", ""]
    if annotation is int:
        return ["0", "1", "7", "05", "-1", "+3", " 4", "4 ", "1_000", "abc", "1.5", "9" * 30, 3, 0]
    if annotation is str:
        return ["", "text", "ünïcode", "-", "two words", b"bytes"]
    if annotation is Path:
        made = folder / "a-file.jsonl"
        made.write_text("{}\n")
        inside = f"{made}/inside"  # (a file where a folder would be: not ENOENT)
        return ["", "missing/here.jsonl", str(made), str(folder), "-", "a\0b", made, "~/x", inside]
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        members = list(annotation)
        return [
            *(str(m.value) for m in members),
            *(str(m.value).upper() for m in members),
            members[0],
            "none-of-them",
        ]
    raise AssertionError(f"a parameter of a type this test has no values for: {annotation}")


def outcome(coercion: Any, value: Any, param: Any, ctx: Any) -> tuple[Any, ...]:
    try:
        made = coercion.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # (the error itself is what is compared)
        message = exc.format_message() if isinstance(exc, _click.ClickException) else str(exc)
        return ("error", type(exc).__name__, message)
    return ("value", type(made).__name__, made)


class TestTheSameAsTypers:
    def test_every_value_of_every_parameter(self, tmp_path: Path) -> None:
        answered: dict[str, int] = {}
        compared = 0
        for where, param, ctx in every_param():
            descriptor = getattr(param, "type_descriptor", None)
            if descriptor is None:
                continue
            read = _reader_for(descriptor)
            if read is None:  # Typer's own, untouched
                continue
            for value in [None, *candidates(descriptor.annotation, tmp_path)]:
                typers = outcome(build_runtime_param(descriptor), value, param, ctx)
                param._runtime_param = None
                quick = QuickValue(read)
                ours = outcome(quick, value, param, ctx)
                assert ours == typers, (where, param.name, value)
                if param._runtime_param is None:  # answered without Typer's coercion
                    key = getattr(descriptor.annotation, "__name__", str(descriptor.annotation))
                    answered[key] = answered.get(key, 0) + 1
                compared += 1
        assert compared > 300
        # the good values of each kind are read here, not handed to Typer
        assert set(answered) >= {"str", "int", "Path", "bool", "Format", "list"}, answered

    def test_a_value_it_is_unsure_of_goes_to_typer_from_then_on(self, tmp_path: Path) -> None:
        _, param, ctx = next(
            (w, p, c) for w, p, c in every_param() if w == "export" and p.name == "workers"
        )
        param._runtime_param = QuickValue(_reader_for(param.type_descriptor))  # type: ignore[arg-type]
        assert param.process_value(ctx, "2") == 2 and isinstance(param._runtime_param, QuickValue)
        with pytest.raises(_click.exceptions.BadParameter):
            param.process_value(ctx, "0")  # below its minimum: Typer's error
        assert not isinstance(param._runtime_param, QuickValue)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_is_left_to_typer(tmp_path: Path) -> None:
    secret = tmp_path / "closed.jsonl"
    secret.write_text("{}\n")
    secret.chmod(0)
    for _, param, ctx in every_param():
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or descriptor.annotation is not Path:
            continue
        read = _reader_for(descriptor)
        if read is not None and descriptor.parameter_info.readable:
            assert read(str(secret), ctx) is not str(secret)
            typers = outcome(build_runtime_param(descriptor), str(secret), param, ctx)
            param._runtime_param = None
            assert outcome(QuickValue(read), str(secret), param, ctx) == typers
            return
    pytest.fail("no parameter asks for a readable path")


def test_under_another_typer_release_every_value_is_typers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from jsonl_session.cli import coercion

    group = typer.main.get_command(app)
    params = list(group.params)
    monkeypatch.setattr(coercion, "_CHECKED", False)
    coercion.quick_values(params)
    assert not any(isinstance(p._runtime_param, QuickValue) for p in params)
    monkeypatch.setattr(coercion, "_CHECKED", True)
    coercion.quick_values(params)
    assert all(isinstance(p._runtime_param, QuickValue) for p in params)
