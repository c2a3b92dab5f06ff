"""The house plan holds: layers import one way, nothing imports in a cycle, the CLI
uses only the public API, and importing the library stays light.

The layers, lowest first, are DESIGN §4's: data flows format -> storage -> the core
modules (tree, context, tokens, messages) -> session -> the layers above it ->
integrations -> the public API (jsonl_session/__init__.py) -> cli. A module may import
its own layer and the ones below; the import graph is read from the source with `ast`
(every import statement, inside functions and TYPE_CHECKING blocks too).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from locations import ROOT

import jsonl_session

PACKAGE = Path(jsonl_session.__file__).resolve().parent
NAME = "jsonl_session"

# Layer of each top-level part of the package; equal numbers share a layer.
LAYERS: dict[str, int] = {
    "_version": 0,
    "errors": 0,
    "extras": 0,
    "processes": 0,
    "format": 1,
    "storage": 2,
    "tree": 3,
    "tree_forest": 3,
    "context": 3,
    "tokens": 3,
    "breakdown": 3,
    "breakdown_cache": 3,
    "breakdown_spread": 3,
    "line_sizes": 3,
    "usage": 3,
    "messages": 3,
    "redaction": 3,
    "session": 4,
    "dialects": 5,
    "catalog": 5,
    "views": 5,
    "export": 5,
    "providers": 5,
    "compaction": 5,
    "integrations": 6,
    "": 7,  # jsonl_session/__init__.py: the public API
    "cli": 8,
    "__main__": 8,
}
CLI_MAY_IMPORT = {NAME, f"{NAME}.errors"}
NEVER_BELOW_CLI = ("typer", "rich")
SDKS = ("anthropic", "openai")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def is_module(name: str, known: dict[str, Path]) -> bool:
    return name in known


def imports_of(path: Path, known: dict[str, Path]) -> Iterator[tuple[str, int, bool]]:
    """`imports_in` for a module file of the package."""
    this = module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    yield from imports_in(path.read_text(encoding="utf-8"), package, known)


def imports_in(
    source: str, package: str, known: dict[str, Path] | set[str]
) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, runs on import) for every import in ``source`` of a
    module in ``package``: absolute and relative imports, and importlib.import_module /
    __import__ of a literal name. "Runs on import" is False inside a function and
    inside ``if TYPE_CHECKING``."""
    tree = ast.parse(source)
    eager: set[int] = set()

    def mark(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                mark(node.orelse)
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                    break
                eager.add(id(sub))
            for field in ("body", "orelse", "finalbody", "handlers"):
                mark([n for n in getattr(node, field, []) if isinstance(n, ast.stmt)])
            for handler in getattr(node, "handlers", []):
                mark(handler.body)

    mark(tree.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, id(node) in eager
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - (node.level - 1)]
                module = ".".join([*base, *([module] if module else [])])
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                target = candidate if is_module(candidate, known) else module
                yield target, node.lineno, id(node) in eager
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("importlib.import_module", "import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, node.lineno, id(node) in eager


def layer_of(name: str) -> tuple[str, int]:
    part = name.removeprefix(NAME).removeprefix(".").split(".")[0]
    assert part in LAYERS, f"{name}: a part of the package no layer names; add it to LAYERS"
    return part, LAYERS[part]


def internal_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for target, _, _ in imports_of(path, known):
            if target in known and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


class TestTheImportReader:
    def test_it_sees_relative_imports_importlib_and_guarded_sdk_imports(self) -> None:
        source = (
            "import os\n"
            "from . import context\n"
            "from ..storage import cache\n"
            "if os.environ.get('X'):\n"
            "    import anthropic\n"
            "def later():\n"
            "    import importlib\n"
            "    importlib.import_module('jsonl_session.cli')\n"
        )
        known = {f"{NAME}.context", f"{NAME}.storage.cache"}
        found = list(imports_in(source, f"{NAME}.views", known))
        assert (f"{NAME}.views.context", 2, True) not in found  # resolved against the package
        assert {(t, eager) for t, _, eager in found} >= {
            (f"{NAME}.views", True),
            (f"{NAME}.storage.cache", True),
            ("anthropic", True),
            (f"{NAME}.cli", False),
        }

    def test_type_checking_imports_do_not_run_on_import(self) -> None:
        source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import openai\n"
        assert ("openai", 3, False) in list(imports_in(source, NAME, set()))


class TestImportGraph:
    def test_no_module_imports_a_layer_above_its_own(self) -> None:
        known = modules()
        upward = []
        for name, path in known.items():
            _, rank = layer_of(name)
            for target, line, _ in imports_of(path, known):
                if target.split(".")[0] != NAME:
                    continue
                _, target_rank = layer_of(target)
                if target_rank > rank:
                    upward.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
        assert upward == []

    def test_modules_import_in_no_cycle(self) -> None:
        assert cycles(internal_graph()) == []

    def test_the_cycle_finder_finds_a_cycle(self) -> None:
        graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
        assert cycles(graph) == [["a", "b", "c"]]

    def test_layers_of_one_rank_do_not_import_each_other_both_ways(self) -> None:
        parts: dict[str, set[str]] = {}
        for name, targets in internal_graph().items():
            source = layer_of(name)[0]
            parts.setdefault(source, set()).update(
                layer_of(t)[0] for t in targets if layer_of(t)[0] != source
            )
        both_ways = sorted(
            f"{a} <-> {b}" for a, targets in parts.items() for b in targets if a in parts.get(b, ())
        )
        assert both_ways == []

    def test_the_cli_imports_only_the_public_api(self) -> None:
        known = modules()
        reaching = []
        for name, path in known.items():
            if layer_of(name)[0] not in ("cli", "__main__"):
                continue
            for target, line, _ in imports_of(path, known):
                inside = target == NAME or target.startswith(f"{NAME}.")
                if inside and target not in CLI_MAY_IMPORT and not target.startswith(f"{NAME}.cli"):
                    reaching.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
        assert reaching == []

    def test_only_the_cli_imports_typer_or_rich(self) -> None:
        known = modules()
        found = [
            f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}"
            for name, path in known.items()
            if layer_of(name)[0] not in ("cli", "__main__")
            for target, line, _ in imports_of(path, known)
            if target.split(".")[0] in NEVER_BELOW_CLI
        ]
        assert found == []

    def test_the_sdks_are_imported_only_inside_the_functions_that_use_them(self) -> None:
        known = modules()
        found = [
            f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}"
            for path in known.values()
            for target, line, eager in imports_of(path, known)
            if eager and target.split(".")[0] in SDKS
        ]
        assert found == []


HEAVY = "{'anthropic', 'openai', 'typer', 'rich'}"


def heavy_modules_after(code: str) -> str:
    """The SDK, typer and rich modules a fresh interpreter holds after ``code``."""
    report = f"import sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY}))"
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


class TestImportCost:
    def test_importing_the_library_imports_no_sdk_typer_or_rich(self) -> None:
        assert heavy_modules_after("import jsonl_session") == "[]"

    def test_every_public_name_loads_without_an_sdk(self) -> None:
        code = (
            "import jsonl_session\nfor name in jsonl_session.__all__: getattr(jsonl_session, name)"
        )
        assert heavy_modules_after(code) == "[]"

    def test_the_check_sees_an_sdk_when_one_is_imported(self) -> None:
        assert "anthropic" in heavy_modules_after("import anthropic")


LATE = ("pydantic", "jsonl_session.redaction.finding")


def late_modules_after_command(*args: str | Path) -> list[str]:
    """Which of ``LATE`` a fresh interpreter holds after running the command line
    with ``args``: pydantic (Typer's adapters, cli/coercion.py) and the redaction
    rules (redaction/finding.py) cost 75 and 20 ms to load."""
    code = (
        "import sys\n"
        f"sys.argv = ['jsonl-session', *{[str(a) for a in args]!r}]\n"
        "from jsonl_session.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        f"import json\nprint(json.dumps([m for m in {LATE!r} if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


class TestCommandStartCost:
    def test_an_export_or_textconv_loads_neither_pydantic_nor_the_rules(
        self, tmp_path: Path
    ) -> None:
        session = ROOT / "fixtures" / "compaction-two.jsonl"
        out = tmp_path / "out.md"
        assert late_modules_after_command("export", session, "-o", out, "--workers", "2") == []
        assert late_modules_after_command("textconv", session) == []
        assert late_modules_after_command("tree", session, "--depth", "3") == []

    def test_a_worker_spawned_by_the_script_loads_no_typer_or_rich(self, tmp_path: Path) -> None:
        # A spawned worker runs the parent's main script again (as __mp_main__); the
        # `jsonl-session` script pip writes imports the entry point at its top.
        script = tmp_path / "jsonl-session"
        script.write_text(
            "import re\nimport sys\nfrom jsonl_session.cli import main\n"
            "if __name__ == '__main__':\n    sys.exit(main())\n"
        )
        prepared = {"init_main_from_path": str(script)}
        code = f"import multiprocessing.spawn as s\ns.prepare({prepared!r})"
        assert heavy_modules_after(code) == "[]"
        assert "typer" in heavy_modules_after("from jsonl_session.cli import app")

    def test_redacting_loads_the_rules(self, tmp_path: Path) -> None:
        session = ROOT / "fixtures" / "compaction-two.jsonl"
        out = tmp_path / "out.md"
        loaded = late_modules_after_command("export", session, "--redact", "-o", out)
        assert loaded == ["jsonl_session.redaction.finding"]


# The public names before the package was cut into layers (issue 11): all still work.
NAMES_BEFORE_LAYERS = [
    "CURRENT_VERSION",
    "EMPTY_LEAF",
    "LEAF_MARKER_TYPE",
    "PRUNE_MARKER_TYPE",
    "CompactionError",
    "CompactionSettings",
    "EntryValidationError",
    "ExportResult",
    "ExtractiveSummarizer",
    "JsonlSessionError",
    "LoadedFile",
    "Problem",
    "Session",
    "SessionContext",
    "SessionFormatError",
    "SessionInfo",
    "SessionTreeError",
    "SessionWriteError",
    "StoredEntry",
    "TreeIndex",
    "TreeNode",
    "build_context",
    "compact",
    "export_session",
    "latest_session",
    "list_sessions",
    "load_entries",
]


class TestPublicApi:
    def test_every_name_of_the_old_public_api_still_imports(self) -> None:
        namespace: dict[str, object] = {}
        exec(f"from jsonl_session import {', '.join(NAMES_BEFORE_LAYERS)}", namespace)
        assert all(namespace[name] is not None for name in NAMES_BEFORE_LAYERS)
        assert set(NAMES_BEFORE_LAYERS) <= set(jsonl_session.__all__)

    def test_the_old_branch_with_summary_is_summarize_branch_with_a_warning(self) -> None:
        import pytest

        with pytest.warns(DeprecationWarning, match="summarize_branch"):
            from jsonl_session import branch_with_summary  # type: ignore[attr-defined]
        assert branch_with_summary is jsonl_session.summarize_branch

    def test_every_exported_name_exists_once(self) -> None:
        for name in jsonl_session.__all__:
            assert getattr(jsonl_session, name) is not None
        assert len(set(jsonl_session.__all__)) == len(jsonl_session.__all__)

    def test_an_unknown_name_is_an_attribute_error(self) -> None:
        import pytest

        with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
            jsonl_session.nothing_here  # type: ignore[attr-defined]  # noqa: B018
