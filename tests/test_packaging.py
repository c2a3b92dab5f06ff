"""What an installed jsonl-session is: the version in one place and ``--version``, the
extras (the SDKs out of the core, a command that needs a missing one saying which to
install, in one line), the schema shipped as package data, and a wheel that holds
the schema, ``py.typed`` and the licence. Missing SDKs are simulated in a child
interpreter by an import hook that refuses them (BLOCKER), as on a core install."""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers_cli import invoke
from locations import ROOT, copy_fixture

import jsonl_session
from jsonl_session.errors import JsonlSessionError, MissingExtra
from jsonl_session.extras import PACKAGES, needs_extra

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
SDKS = ("anthropic", "openai")

BLOCKER = """
import sys
BLOCKED = set(sys.argv[1].split(","))

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Refuse())
sys.argv = sys.argv[1:]
"""

RUN_CLI = "from jsonl_session.cli import main\nsys.argv[0] = 'jsonl-session'\nmain()\n"


def without(blocked: str, code: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter in which the modules ``blocked`` (comma
    separated top-level names) cannot be imported."""
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + code, blocked, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def cli_without(blocked: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return without(blocked, RUN_CLI, *args)


def requirement_name(requirement: str) -> str:
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower()


class TestTheVersion:
    def test_the_package_says_the_version_it_was_installed_as(self) -> None:
        assert jsonl_session.__version__ == importlib.metadata.version("jsonl-session")

    def test_pyproject_reads_it_from_the_package_and_nowhere_else(self) -> None:
        assert "version" in PROJECT["dynamic"]
        assert "version" not in PROJECT
        dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
        assert dynamic == {"attr": "jsonl_session._version.__version__"}

    def test_the_command_line_prints_it(self) -> None:
        code, out, _ = invoke("--version")
        assert code == 0
        assert out == f"jsonl-session {jsonl_session.__version__}\n"


class TestMetadata:
    def test_the_licence_is_mit_and_its_file_is_shipped(self) -> None:
        assert PROJECT["license"] == "MIT"
        assert PROJECT["license-files"] == ["LICENSE"]
        text = (ROOT / "LICENSE").read_text(encoding="utf-8")
        assert text.startswith("MIT License")
        assert "the jsonl-session authors" in text

    def test_the_project_has_authors_keywords_classifiers_and_urls(self) -> None:
        assert PROJECT["authors"] and PROJECT["keywords"]
        assert "Typing :: Typed" in PROJECT["classifiers"]
        for minor in (11, 12, 13):
            assert f"Programming Language :: Python :: 3.{minor}" in PROJECT["classifiers"]
        assert set(PROJECT["urls"]) >= {"Homepage", "Source", "Issues"}


class TestExtras:
    def test_the_core_install_brings_no_sdk_but_the_cli_and_the_lock(self) -> None:
        core = {requirement_name(r) for r in PROJECT["dependencies"]}
        assert core.isdisjoint({*SDKS, "mcp", "openai-agents", "pydantic-ai-slim"})
        assert core >= {"typer", "rich", "filelock", "orjson", "msgspec"}

    def test_each_extra_the_code_names_is_declared_and_all_brings_every_one(self) -> None:
        assert set(PACKAGES) <= set(EXTRAS)
        (everything,) = EXTRAS["all"]
        named = set(everything.removeprefix("jsonl-session[").removesuffix("]").split(","))
        # but "fast", a speed-up that pip could not build where it has no wheel
        assert named == set(EXTRAS) - {"all", "dev", "fast"}

    def test_dev_brings_all_fast_and_the_tools(self) -> None:
        dev = EXTRAS["dev"]
        assert "jsonl-session[all,fast]" in dev
        assert {requirement_name(r) for r in dev} >= {"pytest", "ruff", "mypy"}

    def test_a_module_missing_in_the_block_is_an_error_naming_the_extra(self) -> None:
        with pytest.raises(MissingExtra) as caught, needs_extra("anthropic", "the thing"):
            import jsonl_session_no_such_module  # type: ignore[import-not-found]  # noqa: F401
        assert str(caught.value) == (
            "the thing needs the anthropic SDK: pip install 'jsonl-session[anthropic]'"
        )
        assert isinstance(caught.value, JsonlSessionError)
        assert isinstance(caught.value, ImportError)  # `except ImportError` still catches it
        assert caught.value.extra == "anthropic"

    def test_an_extra_no_one_declared_is_a_programming_error(self) -> None:
        with pytest.raises(ValueError, match="no such extra"), needs_extra("nope", "the thing"):
            pass

    def test_the_block_passes_other_errors_through(self) -> None:
        with pytest.raises(KeyError), needs_extra("openai", "the thing"):
            raise KeyError("x")


class TestCommandsWithoutTheirExtra:
    @pytest.mark.parametrize(
        ("blocked", "args", "line"),
        [
            (
                "anthropic",
                ["compact", "{file}", "--summarizer", "anthropic", "--keep-recent-tokens", "1"],
                "error: the anthropic summarizer needs the anthropic SDK: "
                "pip install 'jsonl-session[anthropic]'",
            ),
            (
                "openai",
                ["compact", "{file}", "--summarizer", "openai-chat", "--keep-recent-tokens", "1"],
                "error: the openai summarizer needs the openai SDK: "
                "pip install 'jsonl-session[openai]'",
            ),
            (
                "anthropic",
                ["resume", "{file}", "hello", "--provider", "anthropic", "--model", "claude-x"],
                "error: the anthropic provider needs the anthropic SDK: "
                "pip install 'jsonl-session[anthropic]'",
            ),
            (
                "openai",
                ["resume", "{file}", "hello", "--provider", "openai", "--model", "gpt-x"],
                "error: the openai provider needs the openai SDK: "
                "pip install 'jsonl-session[openai]'",
            ),
            (
                "mcp",
                ["mcp"],
                "error: the MCP server needs the official mcp SDK (2.3 or later): "
                "pip install 'jsonl-session[mcp]'",
            ),
        ],
    )
    def test_the_command_exits_1_with_one_line_naming_the_extra_and_writes_nothing(
        self, tmp_path: Path, blocked: str, args: list[str], line: str
    ) -> None:
        session = copy_fixture(tmp_path, "branching")
        before = session.read_bytes()
        done = cli_without(blocked, *(a.replace("{file}", str(session)) for a in args))
        assert (done.returncode, done.stderr) == (1, line + "\n")
        assert session.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == [session.name]

    def test_a_key_without_its_sdk_leaves_auto_to_the_offline_summarizer(self) -> None:
        code = (
            "import os\nos.environ['ANTHROPIC_API_KEY'] = 'k'\nos.environ['OPENAI_API_KEY'] = 'k'\n"
            "from jsonl_session import choose_summarizer\nprint(choose_summarizer('auto').name)\n"
        )
        done = without("anthropic,openai", code)
        assert (done.returncode, done.stdout, done.stderr) == (0, "offline\n", "")

    def test_reading_commands_need_no_extra(self, tmp_path: Path) -> None:
        session = copy_fixture(tmp_path, "branching")
        blocked = "anthropic,openai,mcp,agents,pydantic_ai"
        commands: list[list[str | Path]] = [
            ["show", session],
            ["context", session, "--json"],
            ["tree", session],
        ]
        for args in commands:
            done = cli_without(blocked, *args)
            assert (done.returncode, done.stderr) == (0, ""), args


class TestTheSchema:
    def test_the_package_ships_the_schema_the_spec_links_to(self) -> None:
        path = jsonl_session.schema_path()
        assert path.is_file()
        assert path.parent == Path(jsonl_session.__file__).parent / "format"
        spec_copy = ROOT / "spec" / "schema" / "session.schema.json"
        assert path.read_bytes() == spec_copy.read_bytes()

    def test_the_generator_writes_and_checks_both_copies(self) -> None:
        done = subprocess.run(
            [sys.executable, str(ROOT / "spec" / "schema" / "generate.py"), "--check"],
            capture_output=True,
            text=True,
        )
        assert (done.returncode, done.stderr) == (0, "")
        source = (ROOT / "spec" / "schema" / "generate.py").read_text(encoding="utf-8")
        assert '"jsonl_session" / "format" / "session.schema.json"' in source


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built by pip from a copy of what the sdist holds (so the checkout is
    left without build/ or egg-info)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "jsonl_session",
        source / "jsonl_session",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), "."],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("jsonl_session-*.whl")
    return built


class TestTheWheel:
    def test_it_holds_the_schema_the_typing_marker_and_the_licence(self, wheel: Path) -> None:
        version = jsonl_session.__version__
        assert wheel.name == f"jsonl_session-{version}-py3-none-any.whl"
        names = set(zipfile.ZipFile(wheel).namelist())
        assert {
            "jsonl_session/format/session.schema.json",
            "jsonl_session/py.typed",
            "jsonl_session/_version.py",
            f"jsonl_session-{version}.dist-info/licenses/LICENSE",
        } <= names
        assert not any("__pycache__" in name or name.startswith("tests/") for name in names)

    def test_its_metadata_has_the_licence_the_extras_and_no_sdk_in_the_core(
        self, wheel: Path
    ) -> None:
        with zipfile.ZipFile(wheel) as archive:
            metadata = archive.read(
                f"jsonl_session-{jsonl_session.__version__}.dist-info/METADATA"
            ).decode()
        assert "License-Expression: MIT" in metadata
        extras = set(re.findall(r"^Provides-Extra: (\S+)$", metadata, re.MULTILINE))
        assert extras >= {"anthropic", "openai", "mcp", "openai-agents", "pydantic-ai", "all"}
        core = [
            line
            for line in re.findall(r"^Requires-Dist: (.+)$", metadata, re.MULTILINE)
            if "extra ==" not in line
        ]
        assert not any(requirement_name(line) in SDKS for line in core)
        assert "Project-URL: Homepage, https://github.com/jsonl-session/jsonl-session" in metadata
