"""The MCP server: `jsonl-session mcp` run as a real subprocess and driven by the SDK's
own stdio client (tools listed, search, context, show, tree, the write tools with
--allow-writes, errors as tool errors), and the history it serves in-process
(SessionHistory: roots, context budgets), and what happens without the SDK.

Session folders are the test's own (tmp_path), named to the server through the
environment variables the library reads."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from builders import assistant_message as assistant
from builders import user_message as user
from helpers_cli import invoke
from locations import FIXTURES
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from jsonl_session import JsonlSessionError, Session, mcp_server
from jsonl_session.integrations.history import SessionHistory
from jsonl_session.integrations.mcp_server import READ_TOOLS, WRITE_TOOLS

Client = Callable[[ClientSession], Awaitable[None]]


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Every agent's session folder inside tmp_path, set here and for the server."""
    env = {
        "JSONL_SESSION_DIR": str(tmp_path / "ours"),
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi-agent"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "CODEX_HOME": str(tmp_path / "codex"),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


@pytest.fixture
def session(folders: dict[str, str], project: Path) -> tuple[Path, dict[str, str]]:
    """A session of ``project`` in our session folder: two turns on a topic to find."""
    s = Session.create(cwd=project, fsync="never")
    ids = {"u1": s.append_message(user("how do we parse the zebra config?"))}
    ids["a1"] = s.append_message(assistant("with tomllib, in config.py"))
    ids["u2"] = s.append_message(user("and the defaults?"))
    ids["a2"] = s.append_message(assistant("they live in defaults.toml"))
    return s.path, ids


def serve(
    tmp_path: Path, folders: dict[str, str], project: Path, client: Client, *args: str
) -> str:
    """Start ``jsonl-session mcp ARGS`` in ``project``, run ``client`` on a connected
    session, close everything; the server's stderr, for the test to check."""
    # the SDK passes the server only a few variables (HOME, PATH, ...) besides these
    passed = ("JSONL_SESSION_CACHE_DIR", "PYTHONPATH")
    env = {**folders, **{name: os.environ[name] for name in passed if name in os.environ}}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "jsonl_session", "mcp", *args], env=env, cwd=project
    )
    log = tmp_path / "server-stderr.txt"

    async def run() -> None:
        with open(log, "w", encoding="utf-8") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as connected,
            ):
                await connected.initialize()
                await client(connected)

    anyio.run(run)
    return log.read_text(encoding="utf-8")


async def call(client: ClientSession, tool: str, **arguments: Any) -> dict[str, Any]:
    """A call that must succeed: its structured result (the JSON text says the same)."""
    result = await client.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert json.loads(getattr(result.content[0], "text", "")) == result.structured_content
    return result.structured_content


async def refused(client: ClientSession, tool: str, **arguments: Any) -> str:
    """A call that must come back as a tool error: its text."""
    result = await client.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    assert result.is_error
    return " ".join(getattr(block, "text", "") for block in result.content)


class TestToolsOffered:
    def test_a_read_only_server_lists_the_read_tools_and_no_write_tool(
        self, tmp_path: Path, folders: dict[str, str], project: Path
    ) -> None:
        listed: list[str] = []

        async def client(connected: ClientSession) -> None:
            listed.extend(tool.name for tool in (await connected.list_tools()).tools)

        serve(tmp_path, folders, project, client)
        assert sorted(listed) == sorted(READ_TOOLS)

    def test_allow_writes_adds_label_name_and_fork(
        self, tmp_path: Path, folders: dict[str, str], project: Path
    ) -> None:
        listed: dict[str, bool | None] = {}

        async def client(connected: ClientSession) -> None:
            for tool in (await connected.list_tools()).tools:
                listed[tool.name] = tool.annotations.read_only_hint if tool.annotations else None

        serve(tmp_path, folders, project, client, "--allow-writes")
        assert sorted(listed) == sorted([*READ_TOOLS, *WRITE_TOOLS])
        assert {name for name, read_only in listed.items() if not read_only} == set(WRITE_TOOLS)

    def test_a_write_tool_on_a_read_only_server_is_refused_and_nothing_is_written(
        self, tmp_path: Path, folders: dict[str, str], project: Path, session: tuple[Path, Any]
    ) -> None:
        path, ids = session
        before = path.read_bytes()
        said: list[str] = []

        async def client(connected: ClientSession) -> None:
            said.append(
                await refused(connected, "label_entry", path=str(path), entry=ids["a1"], label="x")
            )

        serve(tmp_path, folders, project, client)
        assert "label_entry" in said[0]
        assert path.read_bytes() == before


class TestReading:
    def test_search_then_context_find_the_entry_and_read_up_to_it(
        self, tmp_path: Path, folders: dict[str, str], project: Path, session: tuple[Path, Any]
    ) -> None:
        path, ids = session
        got: dict[str, Any] = {}

        async def client(connected: ClientSession) -> None:
            got["list"] = await call(connected, "list_sessions")
            got["search"] = await call(connected, "search_sessions", query="ZEBRA")
            hit = got["search"]["hits"][0]
            got["context"] = await call(connected, "read_context", path=hit["path"], leaf=ids["a1"])
            got["latest"] = await call(connected, "read_context", path=str(path), last=1)

        stderr = serve(tmp_path, folders, project, client)
        assert [s["path"] for s in got["list"]["sessions"]] == [str(path)]
        assert got["list"]["cwd"] == str(project)
        hits = got["search"]["hits"]
        assert [(h["path"], h["entryId"], h["role"]) for h in hits] == [
            (str(path), ids["u1"], "user")
        ]
        assert "zebra config" in hits[0]["snippet"]
        expected = Session.open(path).build_context(ids["a1"]).messages
        assert got["context"]["messages"] == expected
        assert (got["context"]["messageCount"], got["context"]["firstIndex"]) == (2, 0)
        latest = got["latest"]
        assert [m["role"] for m in latest["messages"]] == ["assistant"]
        assert latest["messages"] == Session.open(path).build_context().messages[3:]
        assert (latest["messageCount"], latest["firstIndex"]) == (4, 3)
        assert "Traceback" not in stderr

    def test_show_and_tree_describe_the_session(
        self, tmp_path: Path, folders: dict[str, str], project: Path, session: tuple[Path, Any]
    ) -> None:
        path, ids = session
        got: dict[str, Any] = {}

        async def client(connected: ClientSession) -> None:
            got["show"] = await call(connected, "show_session", path=str(path))
            got["tree"] = await call(connected, "read_tree", path=str(path), max_nodes=3)

        serve(tmp_path, folders, project, client)
        shown = got["show"]
        assert (shown["agent"], shown["leafId"], shown["entryCount"]) == ("pi", ids["a2"], 4)
        assert shown["byRole"] == {"user": 2, "assistant": 2}
        assert shown["header"]["cwd"] == str(project)
        tree = got["tree"]
        assert [n["id"] for n in tree["nodes"]] == [ids["u1"], ids["a1"], ids["u2"]]
        assert (tree["nodeCount"], tree["truncated"]) == (4, True)
        assert tree["nodes"][0]["summary"] == "user: how do we parse the zebra config?"

    def test_bad_calls_are_tool_errors_that_name_the_problem_and_the_server_carries_on(
        self, tmp_path: Path, folders: dict[str, str], project: Path, session: tuple[Path, Any]
    ) -> None:
        path, _ = session
        said: dict[str, str] = {}
        outside = tmp_path / "elsewhere.jsonl"
        outside.write_bytes((FIXTURES / "linear.jsonl").read_bytes())

        async def client(connected: ClientSession) -> None:
            missing = str(path.with_name("missing.jsonl"))
            said["missing"] = await refused(connected, "show_session", path=missing)
            said["bad id"] = await refused(connected, "read_context", path=str(path), leaf="zz")
            said["outside"] = await refused(connected, "read_tree", path=str(outside))
            said["unknown"] = await refused(connected, "no_such_tool")
            said["nul"] = await refused(connected, "read_context", path="a\x00b")
            said["relative"] = await refused(connected, "show_session", path=path.name)
            said["still"] = str((await call(connected, "show_session", path=str(path)))["leafId"])

        stderr = serve(tmp_path, folders, project, client)
        assert "missing.jsonl: no such session file" in said["missing"]
        assert "no entry with id 'zz'" in said["bad id"]
        assert "not under the session folders" in said["outside"]
        assert "no_such_tool" in said["unknown"]
        assert "'a\\x00b': a path cannot hold a NUL character" in said["nul"]
        assert f"{path.name}: a relative path; give the absolute path" in said["relative"]
        assert said["still"] == Session.open(path).leaf_id
        assert "Traceback" not in stderr


class TestWriting:
    def test_label_name_and_fork_land_in_the_files(
        self, tmp_path: Path, folders: dict[str, str], project: Path, session: tuple[Path, Any]
    ) -> None:
        path, ids = session
        got: dict[str, Any] = {}

        async def client(connected: ClientSession) -> None:
            got["label"] = await call(
                connected, "label_entry", path=str(path), entry=ids["a1"][:6], label="the answer"
            )
            got["name"] = await call(connected, "name_session", path=str(path), name="zebra")
            got["fork"] = await call(connected, "fork_session", path=str(path), at=ids["a1"])

        serve(tmp_path, folders, project, client, "--allow-writes")
        assert got["label"]["entryId"] == ids["a1"]
        reopened = Session.open(path)
        assert reopened.labels == {ids["a1"]: "the answer"}
        assert reopened.get(got["label"]["labelEntryId"]) is not None
        assert reopened.name == "zebra"
        fork = Session.open(got["fork"]["path"])
        assert [e.id for e in fork.branch_path() if e.type == "message"] == [ids["u1"], ids["a1"]]
        assert fork.labels == {ids["a1"]: "the answer"}
        assert fork.header_data["parentSession"] == str(path)


class TestTheHistoryServed:
    def test_roots_confine_listing_and_opening_to_their_folders(
        self, tmp_path: Path, session: tuple[Path, Any]
    ) -> None:
        root = tmp_path / "mine"
        root.mkdir()
        kept = root / "a" / "linear.jsonl"
        kept.parent.mkdir()
        kept.write_bytes((FIXTURES / "linear.jsonl").read_bytes())
        history = SessionHistory([root])
        listed = history.list_sessions(all_projects=True)
        assert [s["path"] for s in listed["sessions"]] == [str(kept)]
        assert history.show_session(str(kept))["entryCount"] > 0
        with pytest.raises(JsonlSessionError, match="not under the session folders"):
            history.show_session(str(session[0]))
        with pytest.raises(JsonlSessionError, match="no such folder"):
            SessionHistory([tmp_path / "nowhere"])

    def test_context_pages_back_within_a_budget_and_cuts_one_long_message(
        self, folders: dict[str, str], project: Path
    ) -> None:
        s = Session.create(cwd=project, fsync="never")
        for n in range(6):
            s.append_message(user(f"question {n} " + "x" * 300))
            s.append_message(assistant(f"answer {n}"))
        s.append_message(user("y" * 5000))
        history = SessionHistory(cwd=str(project))
        page = history.read_context(str(s.path), end=12, max_chars=1000)
        assert page["messageCount"] == 13
        assert 0 < page["firstIndex"] < 12
        assert page["messages"][-1]["content"] == [{"type": "text", "text": "answer 5"}]
        assert len(json.dumps(page["messages"])) <= 1000
        earlier = history.read_context(str(s.path), end=page["firstIndex"], last=2)
        assert earlier["firstIndex"] == page["firstIndex"] - 2
        newest = history.read_context(str(s.path), max_chars=1000)
        assert newest["shortened"] is True
        assert len(newest["messages"]) == 1
        assert "characters cut]" in newest["messages"][0]["content"]

    def test_lone_surrogates_are_sent_as_replacement_characters(
        self, folders: dict[str, str], project: Path
    ) -> None:
        s = Session.create(cwd=project, fsync="never")
        s.append_message(user("half an emoji \ud83d"))
        context = SessionHistory(cwd=str(project)).read_context(str(s.path))
        assert context["messages"][0]["content"] == "half an emoji \ufffd"


class TestConfinement:
    @pytest.fixture
    def tangled(self, tmp_path: Path) -> dict[str, Path]:
        """A root holding a session, a file symlink and a folder symlink to a session
        outside it; outside, a symlink to the session inside."""
        root, outside = tmp_path / "root", tmp_path / "outside"
        root.mkdir()
        outside.mkdir()
        for path, text in ((root / "in.jsonl", "inside"), (outside / "secret.jsonl", "SECRET")):
            s = Session.create(cwd=tmp_path, path=path, fsync="never")
            s.append_message(user(f"{text} words"))
            s.append_message(assistant("noted"))
        (root / "link.jsonl").symlink_to(outside / "secret.jsonl")
        (root / "linkdir").symlink_to(outside)
        (outside / "alias.jsonl").symlink_to(root / "in.jsonl")
        return {"root": root, "outside": outside, "inside": root / "in.jsonl"}

    def test_listing_and_search_leave_out_files_symlinks_lead_out_of_the_roots(
        self, tangled: dict[str, Path]
    ) -> None:
        history = SessionHistory([tangled["root"]])
        listed = history.list_sessions(all_projects=True)
        assert [s["path"] for s in listed["sessions"]] == [str(tangled["inside"])]
        assert history.search_sessions("SECRET", all_projects=True)["hits"] == []
        found = history.search_sessions("inside", all_projects=True)
        assert [h["path"] for h in found["hits"]] == [str(tangled["inside"])]

    def test_a_fork_through_a_symlink_from_outside_lands_beside_the_real_file(
        self, tangled: dict[str, Path]
    ) -> None:
        history = SessionHistory([tangled["root"]])
        forked = history.fork_session(str(tangled["outside"] / "alias.jsonl"))
        assert Path(forked["path"]).parent == tangled["root"]
        assert forked["forkedFrom"] == str(tangled["inside"])
        assert sorted(p.name for p in tangled["outside"].iterdir()) == [
            "alias.jsonl",
            "secret.jsonl",
        ]

    def test_paths_with_a_nul_or_relative_are_library_errors(
        self, tangled: dict[str, Path], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        history = SessionHistory([tangled["root"]])
        with pytest.raises(JsonlSessionError, match="NUL character"):
            history.read_context("a\x00b")
        monkeypatch.chdir(tangled["root"])
        with pytest.raises(JsonlSessionError, match=r"in\.jsonl: a relative path"):
            history.show_session("in.jsonl")

    def test_other_value_errors_of_a_tool_are_tool_errors(self) -> None:
        from mcp.server.mcpserver.exceptions import ToolError

        from jsonl_session.integrations.mcp_server import _as_tool_errors

        with pytest.raises(ToolError, match="invalid argument: bad"), _as_tool_errors():
            raise ValueError("bad")


class TestAnswersStayWithinTheirBounds:
    def test_a_message_of_thousands_of_blocks_is_cut_to_the_budget(
        self, folders: dict[str, str], project: Path
    ) -> None:
        s = Session.create(cwd=project, fsync="never")
        s.append_message(user("go"))
        s.append_message({**assistant("x"), "content": [{"type": "text", "text": "ab"}] * 30_000})
        context = SessionHistory(cwd=str(project)).read_context(str(s.path), max_chars=500)
        (message,) = context["messages"]
        assert context["shortened"] is True
        assert len(json.dumps(message, ensure_ascii=False, separators=(",", ":"))) <= 500
        assert message["content"][-1]["text"].endswith("more items cut]")
        assert message["content"][0] == {"type": "text", "text": "ab"}

    def test_a_message_too_large_even_when_cut_keeps_a_note_instead_of_its_content(
        self, folders: dict[str, str], project: Path
    ) -> None:
        s = Session.create(cwd=project, fsync="never")
        nested: Any = "deep"
        for _ in range(60):  # each level costs characters no cut removes
            nested = {"inner": nested}
        s.append_message(
            {**assistant("x"), "content": [{"type": "text", "text": "a"}], "x": nested}
        )
        context = SessionHistory(cwd=str(project)).read_context(str(s.path), max_chars=500)
        (message,) = context["messages"]
        assert message["role"] == "assistant"
        assert message["content"].startswith("[message of ")
        assert "x" not in message

    def test_tree_nodes_and_shown_labels_are_capped_with_counts(
        self, folders: dict[str, str], project: Path
    ) -> None:
        s = Session.create(cwd=project, fsync="never")
        root = s.append_message(user("start"))
        replies = []
        for n in range(300):
            s.branch(root, marker=False)
            replies.append(s.append_message(assistant(f"reply {n}")))
        for reply in replies[:80]:
            s.append_label(reply, "a long label " * 30)
        history = SessionHistory(cwd=str(project))
        tree = history.read_tree(str(s.path), max_nodes=1)
        (node,) = tree["nodes"]
        assert node["children"] == replies[:20] and node["childCount"] == 300
        assert len(json.dumps(tree)) < 2000
        shown = history.show_session(str(s.path))
        assert (len(shown["labels"]), shown["labelCount"]) == (50, 80)
        assert all(len(label) < 150 for label in shown["labels"].values())
        assert len(json.dumps(shown)) < 10_000


class TestWithoutTheSdk:
    def test_making_a_server_names_the_extra_to_install(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
        with pytest.raises(JsonlSessionError, match=r"jsonl-session\[mcp\]"):
            mcp_server()

    def test_the_command_says_so_in_one_line(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
        code, _, err = invoke("mcp")
        assert code == 1
        assert "pip install 'jsonl-session[mcp]'" in err
