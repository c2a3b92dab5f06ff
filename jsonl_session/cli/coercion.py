"""Command-line values read without Typer's pydantic adapters when no check can fail.

Typer 0.29 turns every value a command is given into its Python value through a
pydantic ``TypeAdapter`` it builds for the parameter: importing pydantic and building
the adapters takes about 75 ms, most of a small command's run (an export of a short
session: 0.18 s with them, 0.13 s without). The values our commands take are simple
(texts, paths, counts with a lower bound, a format from a list), so `quick_values`
gives each such parameter a reader that makes the value itself when the result is
certain: the value Typer would give, checked by a differential test against Typer's
own coercion. Anything else, every value that would be refused included, goes to
Typer's coercion, built only then, so the errors are Typer's word for word.

Typer keeps a parameter's coercion in a private attribute, so the readers are given
only under the Typer release the differential test was run against (`CHECKED_TYPER`):
under another, every value is Typer's, only slower (and tests/test_architecture.py's
start-cost test fails, saying pydantic was loaded: run tests/cli/test_coercion.py
against that release, then add it). What the command line looks like and how its
errors are printed is commands.py's.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

import typer

CHECKED_TYPER = ("0.29",)
"""The Typer releases (major.minor) whose coercion the readers here match."""
_CHECKED = ".".join(typer.__version__.split(".")[:2]) in CHECKED_TYPER
_UNSURE: Any = object()
"""A reader's answer when only Typer's coercion can say (a check, or an error)."""

_COUNT = re.compile(r"[0-9]{1,18}")  # (pydantic reads more forms: those go to Typer)

Reader = Callable[[Any, Any], Any]
"""(value, click context) -> the value for the command, or _UNSURE."""


def quick_values(params: Iterable[Any]) -> None:
    """Give each of ``params`` whose type a reader here knows that reader, unless its
    coercion was made already (a parameter is coerced by one or the other)."""
    if not _CHECKED:
        return
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None or getattr(param, "_runtime_param", _UNSURE) is not None:
            continue
        read = _reader_for(descriptor)
        if read is not None:
            param._runtime_param = QuickValue(read)


class QuickValue:
    """A parameter's coercion as Typer calls it (``coerce``), reading certain values
    itself; at the first value it is not sure of, the parameter gets Typer's own."""

    def __init__(self, read: Reader) -> None:
        self._read = read

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        many = param.multiple or param.nargs == -1
        if value is None:  # (Typer's answer for a value not given)
            return () if many else None
        if not many:
            read = self._read(value, ctx)
            if read is not _UNSURE:
                return read
        elif isinstance(value, list | tuple):
            items = [self._read(item, ctx) for item in value]
            if not any(item is _UNSURE for item in items):
                return items
        param._runtime_param = None  # Typer's own, from now on: its checks, its errors
        return param.get_runtime_param().coerce(value, param=param, ctx=ctx)


def _reader_for(descriptor: Any) -> Reader | None:
    """The reader of values of ``descriptor``'s type, or None when this module reads
    none of them (Typer's coercion stays)."""
    info = descriptor.parameter_info
    if info.parser is not None or getattr(descriptor, "file_annotation", None) is not None:
        return None
    annotation = descriptor.annotation
    if get_origin(annotation) is list:
        (annotation,) = get_args(annotation)
    if annotation is str:
        return _text
    if annotation is bool:  # (a flag not given may come as None, a flag's own default)
        return _flag
    if annotation is int and not info.clamp:
        return _counted(info.min, info.max)
    if annotation is Path and info.path_type is None:
        if info.exists or info.resolve_path or info.allow_dash:
            return None
        return _path(info.file_okay, info.dir_okay, info.readable, info.writable)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _choice(annotation, info.case_sensitive)
    return None


def _text(value: Any, _ctx: Any) -> Any:
    return value if value.__class__ is str else _UNSURE


def _flag(value: Any, _ctx: Any) -> Any:
    return value if value.__class__ is bool else _UNSURE


def _counted(low: float | None, high: float | None) -> Reader:
    def read(value: Any, _ctx: Any) -> Any:
        if value.__class__ is str and _COUNT.fullmatch(value):
            number = int(value)
        elif value.__class__ is int:
            number = value
        else:
            return _UNSURE
        if (low is not None and number < low) or (high is not None and number > high):
            return _UNSURE  # out of range: Typer says so
        return number

    return read


def _path(file_okay: bool, dir_okay: bool, readable: bool, writable: bool) -> Reader:
    def read(value: Any, _ctx: Any) -> Any:
        if isinstance(value, Path):
            path = value
        elif value.__class__ is str and value:
            path = Path(value)
        else:
            return _UNSURE
        try:
            found = os.stat(path)
        except ValueError:  # a NUL in it: Typer's answer
            return _UNSURE
        except OSError:  # not there, or not to be looked at: as Typer, a path all the same
            return path
        if (not file_okay and stat.S_ISREG(found.st_mode)) or (
            not dir_okay and stat.S_ISDIR(found.st_mode)
        ):
            return _UNSURE
        if (readable and not os.access(path, os.R_OK)) or (
            writable and not os.access(path, os.W_OK)
        ):
            return _UNSURE
        return path

    return read


def _choice(kind: type[Enum], case_sensitive: bool) -> Reader:
    members = list(kind)

    def read(value: Any, ctx: Any) -> Any:
        if any(value is member for member in members):
            return value
        if value.__class__ is not str or getattr(ctx, "token_normalize_func", None) is not None:
            return _UNSURE
        wanted = value if case_sensitive else value.casefold()
        for member in members:
            name = str(member.value)
            if (name if case_sensitive else name.casefold()) == wanted:
                return member
        return _UNSURE

    return read
