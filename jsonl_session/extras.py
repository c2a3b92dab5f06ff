"""The optional extras: which package each one brings, and the one way a feature says
it needs one.

The core install reads, writes, lists, exports and compacts offline; the SDKs and
frameworks come with extras (pyproject.toml declares them, ``[all]`` brings every
one). A feature imports such a package inside ``needs_extra``, when it runs, never
when the library is imported: if the package is missing, the import fails with
MissingExtra (errors.py), whose one line names the feature and the ``pip install``
that brings it, and the CLI prints that line. What each feature does with the
package is its own module's business.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from jsonl_session.errors import MissingExtra

PACKAGES: dict[str, str] = {
    "anthropic": "the anthropic SDK",
    "openai": "the openai SDK",
    "mcp": "the official mcp SDK (2.3 or later)",
    "openai-agents": "the openai-agents SDK",
    "pydantic-ai": "pydantic-ai",
}
"""Each extra, by the name pip knows it by, and what it brings, as messages say it."""


@contextmanager
def needs_extra(extra: str, feature: str) -> Iterator[None]:
    """Run the imports in the block; a module missing among them is MissingExtra.

    ``extra`` is a key of PACKAGES; ``feature`` what needs it, as the start of a
    sentence ("the anthropic summarizer"). A module the extra brings that is
    missing in turn (a broken install) gets the same message: reinstalling the
    extra mends it.
    """
    if extra not in PACKAGES:
        raise ValueError(f"no such extra: {extra!r}")
    try:
        yield
    except MissingExtra:
        raise
    except ModuleNotFoundError as exc:
        raise MissingExtra(feature, extra, PACKAGES[extra], exc.name or "") from exc
