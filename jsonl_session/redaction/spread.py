"""A huge text's keyword scans made by a worker process while this one runs the
other rules: the redaction of one text on two cores, with the same result.

Owns which scans go (the places of the words the rules without anchors look for,
context.py's keyword probes), from what length a text is shared (`SPREAD_CHARS`),
and `SharedScans`, which hands the scans out and takes them back. A scan is a pattern
over the text's lowercased ASCII image (hay.py's ``low``): the worker is given that
image (in a block of shared memory when there is room for it, else sent through the
pool's pipe, which a busy process feeds slowly: each write waits for the GIL) and
the patterns, runs them, and sends back where each matched; this process
puts those places in its `Hay` as if it had made them, then runs the rules that read
them. Nothing else crosses: the rules, what they make of each place, and the order
of what they find stay here, so what is found is what one process finds. A worker
that cannot take the scans (its pool gone, the process ended) leaves them to this
process. Which executor to use is the caller's (views/slices.py hands the export's
pool to `Redactor(helpers=...)`); which rules there are, finding.py's.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from jsonl_session.redaction import context
from jsonl_session.redaction.hay import Group, Hay, Probe, places_of
from jsonl_session.redaction.shapes import Rule, Span

if TYPE_CHECKING:
    from concurrent.futures import Future
    from multiprocessing.shared_memory import SharedMemory


class Helpers(Protocol):
    """Where a scan can be sent: a ``concurrent.futures`` executor of worker
    processes, or anything whose ``submit`` gives a future (processes.py's
    `WarmHelpers`); one that raises leaves the work to this process."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future[Any]: ...


SPREAD_CHARS = 8 << 20
"""A text this long has its keyword scans made by a worker: each scan of a long text
costs about 0.5 ms a MB, and handing the image over about as much as one, so from a
few MB it pays; from 8 M characters, only the huge texts an export renders in its
own process (views/slices.py's HERE_BYTES) come here."""


def _scans() -> tuple[list[Group | Probe], list[tuple[bytes, int]]]:
    """What the worker is asked to scan: the places of context.py's keyword probes,
    which the rules without anchors read (every long text runs them; the anchors and
    the token runs are this process's share): each probe's group (`Probe.via`) or the
    probe itself, once each, and their patterns."""
    made: dict[int, Group | Probe] = {}
    for probe in context.KEYWORD_PROBES:
        owner: Group | Probe = probe.via.group if probe.via is not None else probe
        made.setdefault(id(owner), owner)
    owners = list(made.values())
    assert all(owner.folded for owner in owners)  # the worker scans the lowercased image
    patterns = [
        (owner.pattern.pattern, owner.pattern.flags)
        if isinstance(owner, Group)
        else (owner.fast.pattern, owner.fast.flags)
        for owner in owners
    ]
    return owners, patterns


_OWNERS, _PATTERNS = _scans()


def scan_image(
    low: bytes | memoryview, patterns: Sequence[tuple[bytes, int]]
) -> list[dict[int, list[int]]]:
    """A worker's work: where each pattern matches in ``low``, by the group that
    matched (0 for a pattern without groups), as `Hay.scan` keeps it."""
    return [places_of(re.compile(pattern, flags), low) for pattern, flags in patterns]


def scan_shared(
    name: str, size: int, patterns: Sequence[tuple[bytes, int]]
) -> list[dict[int, list[int]]]:
    """A worker's work: `scan_image` of the image `_shared_image` put in the block of
    shared memory ``name`` (its first ``size`` bytes), read where it lies. The name is
    removed as soon as the block is mapped (the mapping stays): a process killed with
    its resource tracker then leaves nothing behind."""
    from multiprocessing.shared_memory import SharedMemory

    # registered with the resource tracker this process shares with the one that made
    # the block (spawn hands it over), and unregistered by the unlink
    block = SharedMemory(name=name)
    try:
        with contextlib.suppress(OSError):  # (Windows: nothing to remove)
            block.unlink()
        buffer = block.buf
        if buffer is None:  # (a closed block: none that was just attached)
            raise OSError(f"shared memory {name} is closed")
        view = buffer[:size]
        try:
            return scan_image(view, patterns)
        finally:
            view.release()
    finally:
        block.close()


_SHM_FOLDER = "/dev/shm"


def _shared_image(low: bytes) -> SharedMemory | None:
    """``low`` copied into a new block of shared memory, or None when it cannot be (no
    shared memory here, or no room for it). On Linux a block is a file of a tmpfs,
    often small in a container, where a copy into memory the tmpfs cannot give would
    end this process (SIGBUS): its free space is asked first, with room to spare for
    others, and the block's pages are then taken (posix_fallocate), which fails
    cleanly when another process took the room meanwhile."""
    try:
        from multiprocessing.shared_memory import SharedMemory
    except ImportError:  # (a Python built without it)
        return None
    size = len(low)
    linux = sys.platform.startswith("linux")
    if linux:
        try:
            room = os.statvfs(_SHM_FOLDER)
        except OSError:
            return None
        if room.f_bavail * room.f_frsize < 2 * size:
            return None
    try:
        block = SharedMemory(create=True, size=size)
    except (OSError, ValueError):
        return None
    try:
        if linux:
            fd = os.open(os.path.join(_SHM_FOLDER, block.name.lstrip("/")), os.O_RDWR)
            try:
                os.posix_fallocate(fd, 0, size)
            finally:
                os.close(fd)
        if block.buf is None:  # (a block just made is open)
            raise OSError("shared memory block closed")
        block.buf[:size] = low
    except OSError:
        _let_go(block)
        return None
    except BaseException:
        _let_go(block)
        raise
    return block


def _let_go(block: SharedMemory) -> None:
    """Close and remove a block made by `_shared_image` (the worker is done with it,
    and removed its name when it mapped it, if it did)."""
    with contextlib.suppress(OSError, BufferError):
        block.close()
    with contextlib.suppress(OSError):
        block.unlink()


class SharedScans:
    """The shared scans of one huge text, asked of ``helpers`` as soon as its `Hay`
    is made (before the anchors are looked for, which are this process's)."""

    def __init__(self, hay: Hay, helpers: Helpers) -> None:
        self._future: Future[list[dict[int, list[int]]]] | None = None
        accepts = getattr(helpers, "accepts", None)  # (processes.WarmHelpers')
        if accepts is not None and not accepts():
            return  # no worker would take it: the scans are made here, nothing copied
        block = _shared_image(hay.low)
        try:
            if block is not None:
                self._future = helpers.submit(scan_shared, block.name, len(hay.low), _PATTERNS)
            else:
                self._future = helpers.submit(scan_image, hay.low, _PATTERNS)
        except Exception:  # (a pool shut down or broken, no worker: made here)
            self._future = None
        finally:
            if block is not None:
                if self._future is None:
                    _let_go(block)
                else:  # (once the worker is done with it, or will never be)
                    self._future.add_done_callback(lambda _: _let_go(block))

    def find(self, hay: Hay, rules: Sequence[Rule]) -> list[Span]:
        """What ``rules`` find in ``hay``, in their order, as one process finds it:
        the rules that read no shared probe first, while the worker scans; then the
        worker's places put in ``hay`` (`_take`), and the rest."""
        theirs = {id(rule) for rule in rules if rule.find in context.KEYWORD_FINDERS}
        by_rule: dict[int, list[Span]] = {}
        for rule in rules:
            if id(rule) not in theirs:
                by_rule[id(rule)] = list(rule.find(hay))
        self._take(hay)
        for rule in rules:
            if id(rule) in theirs:
                by_rule[id(rule)] = list(rule.find(hay))
        return [span for rule in rules for span in by_rule[id(rule)]]

    def _take(self, hay: Hay) -> None:
        """The worker's places put in ``hay``. Until it answers, this process makes
        the scans itself, one by one, and takes from the worker only those left when
        it does: a worker still starting (a warm pool's), or busy with an export's
        slices, never holds this process up longer than one scan."""
        future = self._future
        if future is None:
            return
        made = 0
        while made < len(_OWNERS) and not future.done():
            hay.make_scan(_OWNERS[made])
            made += 1
        if made == len(_OWNERS):
            future.cancel()  # (not taken back from a worker already at it: let go)
            return
        try:
            found = future.result()
        except Exception:  # the worker ended, or could not take it: the rules scan here
            return
        for owner, places in zip(_OWNERS[made:], found[made:], strict=True):
            if isinstance(owner, Group):
                hay.remember_scan(owner, places)
            else:
                starts = places.get(0, [])
                hay.remember_scan(owner, {0: [at - owner.back for at in starts]})


def spread_worthy(hay: Hay) -> bool:
    """Whether ``hay``'s scans are worth sharing: a long text on the fast path (the
    path whose scans run over the image)."""
    return hay.fast and not hay.short and len(hay.text) >= SPREAD_CHARS
