"""Compatibility with pi 1.5.2 on files pi 1.5.2 wrote, without needing node.

`tests/compat/golden/pi15/corpus/` holds sessions pi 1.5.2's own SessionManager wrote
(write_corpus.mjs): system prompts and patches, context edits on several branches,
usage entries, compactions with checkpoints and usage, retain-none and nested
compactions, branch summaries with usage, null contents, a custom session id.
`ours/` holds sessions this library wrote with the same kinds of entries
(write_ours.py), our own compactions among them, and so do the `fixtures/pi15-*`
files (fixtures/generate.py). `expected/<name>.json.xz` holds what
pi's session layer holds for each (record.py): the context at every entry, the
projection's sources, the current prompt and tools at every leaf. See
tests/compat/golden/README.md.
"""

from __future__ import annotations

import json
import lzma
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from locations import FIXTURES, GOLDEN_DIR

from jsonl_session import (
    Session,
    estimate_projected_context_tokens,
    estimate_tokens,
    list_sessions,
    session_info,
    to_json,
)

PI15 = GOLDEN_DIR / "pi15"
FILES = {p.stem: p for folder in ("corpus", "ours") for p in (PI15 / folder).glob("*.jsonl")}
FILES.update({p.stem: p for p in FIXTURES.glob("pi15-*.jsonl")})  # fixtures/ with pi 1.5 entries
NAMES = sorted(FILES)
PI_WROTE = sorted(p.stem for p in (PI15 / "corpus").glob("*.jsonl"))


@cache
def expected(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        lzma.decompress((PI15 / "expected" / f"{name}.json.xz").read_bytes())
    )
    return data


@cache
def opened(name: str) -> Session:
    return Session.open(FILES[name], cache=False)


def every_entry() -> list[tuple[str, str]]:
    return [(name, entry_id) for name in NAMES for entry_id in expected(name)["contexts_by_entry"]]


def every_leaf() -> list[tuple[str, str]]:
    return [(name, leaf) for name in NAMES for leaf in expected(name)["system_by_leaf"]]


class TestTheCorpus:
    def test_every_corpus_file_has_what_pi_recorded_for_it(self) -> None:
        assert NAMES and {
            p.name.removesuffix(".json.xz") for p in (PI15 / "expected").iterdir()
        } == set(NAMES)
        assert {expected(name)["pi_version"] for name in NAMES} == {"1.5.2"}

    @pytest.mark.parametrize("writer", ["pi", "ours"])
    def test_it_holds_every_new_kind_of_entry(self, writer: str) -> None:
        kinds: set[str] = set()
        for name in PI_WROTE if writer == "pi" else sorted(set(NAMES) - set(PI_WROTE)):
            for entry in opened(name).entries:
                data = entry.data()
                kinds.add(entry.type)
                if entry.role:
                    kinds.add(f"role:{entry.role}")
                if entry.type == "compaction":
                    present = (key for key in ("systemMessage", "usage") if key in data)
                    kinds.update(f"compaction:{key}" for key in present)
                    if data["firstKeptEntryId"] == entry.id:
                        kinds.add("compaction:retain-none")
        assert {"usage", "context_edit", "role:system", "compaction:systemMessage"} <= kinds
        assert {"compaction:usage", "compaction:retain-none", "branch_summary"} <= kinds


class TestPiAndUsReadTheSameFiles:
    @pytest.mark.parametrize("name", NAMES)
    def test_leaf_name_and_labels_are_pis(self, name: str) -> None:
        session, pi = opened(name), expected(name)
        pi_leaf = session.get(pi["leaf_id"])
        assert pi_leaf is not None
        # pi's leaf is our leaf marker when we wrote one; its context is the target's
        through_marker = pi_leaf.parent_id if pi_leaf.is_leaf_marker else pi_leaf.id
        assert session.leaf_id == through_marker
        assert session.name == pi["session_name"]
        assert session.labels == {target: value["label"] for target, value in pi["labels"].items()}

    @pytest.mark.parametrize(("name", "entry_id"), every_entry())
    def test_the_context_at_every_entry_is_pis(self, name: str, entry_id: str) -> None:
        pi_context = expected(name)["contexts_by_entry"][entry_id]
        ours = opened(name).build_context(entry_id, pruning=False)
        assert to_json(ours.to_dict()) == to_json(pi_context)

    @pytest.mark.parametrize(("name", "entry_id"), every_entry())
    def test_each_message_comes_from_the_entry_pi_says(self, name: str, entry_id: str) -> None:
        projection = opened(name).projection(entry_id)
        ours = [[item.entry.id, item.entry.type, len(item.messages)] for item in projection.entries]
        assert ours == expected(name)["projection_by_entry"][entry_id]

    @pytest.mark.parametrize(("name", "leaf"), every_leaf())
    def test_the_prompt_and_tools_at_every_leaf_are_pis(self, name: str, leaf: str) -> None:
        session, pi = opened(name), expected(name)["system_by_leaf"][leaf]
        current = session.system_message(leaf)
        assert (to_json(current) if current else None) == (
            to_json(pi["current"]) if pi["current"] else None
        )
        assert session.system_prompt(leaf) == pi["text"]
        assert [tool["name"] for tool in session.tools(leaf)] == pi["tools"]

    @pytest.mark.parametrize("name", NAMES)
    def test_each_message_at_the_leaf_is_estimated_as_pi_15_does(self, name: str) -> None:
        messages = opened(name).build_context(pruning=False).messages
        assert [estimate_tokens(m) for m in messages] == expected(name)["estimate_tokens"]

    @pytest.mark.parametrize("name", NAMES)
    def test_the_context_at_the_leaf_is_estimated_as_pi_15_does(self, name: str) -> None:
        session = opened(name)
        projection = session.projection(pruning=False)
        estimate = estimate_projected_context_tokens(projection, session.branch_path())
        pi = expected(name)["estimate_context"]
        assert (estimate.tokens, estimate.usage_tokens, estimate.trailing_tokens) == (
            pi["tokens"],
            pi["usageTokens"],
            pi["trailingTokens"],
        )
        assert estimate.last_usage_index == pi["lastUsageIndex"]


def pi_wrote_leaves() -> list[tuple[str, str]]:
    return [(name, leaf) for name in PI_WROTE for leaf in expected(name)["forks"]["branched"]]


def normalized(file: Path, known: set[str]) -> str:
    """A fork's lines as the oracle records them: the header's id and time, and ids
    the source does not have, replaced by placeholders; the parent session by its
    file name."""
    new: dict[str, str] = {}

    def id_of(value: Any) -> Any:
        if isinstance(value, str) and value not in known:
            return new.setdefault(value, f"<new{len(new)}>")
        return value

    out = []
    for line in file.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["type"] == "session":
            rest = {k: v for k, v in entry.items() if k not in ("id", "timestamp")}
            if "parentSession" in rest:
                rest["parentSession"] = Path(rest["parentSession"]).name
            out.append({**rest, "id": "<session-id>", "timestamp": "<now>"})
        else:
            out.append({**entry, "id": id_of(entry["id"]), "parentId": id_of(entry["parentId"])})
    return json.dumps(out, ensure_ascii=False)


class TestForksAreThoseOfPi15:
    """pi 1.5.2's createBranchedSession at every leaf and forkFrom, on the files it
    wrote: the same lines, key order included (ids it generates aside)."""

    @pytest.mark.parametrize(("name", "leaf"), pi_wrote_leaves())
    def test_a_fork_at_every_leaf_writes_the_lines_pi_writes(
        self, name: str, leaf: str, tmp_path: Path
    ) -> None:
        pi = expected(name)["forks"]["branched"][leaf]
        fork = opened(name).fork(leaf, tmp_path / "fork.jsonl", cache=False)
        known = {entry.id for entry in opened(name).entries}
        assert normalized(fork.path, known) == json.dumps(pi["entries"], ensure_ascii=False)

    @pytest.mark.parametrize("name", PI_WROTE)
    def test_a_fork_to_another_folder_copies_what_pi_copies(
        self, name: str, tmp_path: Path
    ) -> None:
        pi = expected(name)["forks"]["fork_from"]
        fork = Session.fork_from(
            FILES[name], "/home/dev/elsewhere", path=tmp_path / "copy.jsonl", cache=False
        )
        known = {entry.id for entry in opened(name).entries}
        assert normalized(fork.path, known) == json.dumps(pi["entries"], ensure_ascii=False)
        assert fork.leaf_id == pi["leaf_id"]

    def test_the_forks_cover_labels_re_chained_and_a_first_kept_label(self) -> None:
        data = FILES["fork-cases"].read_text(encoding="utf-8").splitlines()
        entries = [json.loads(line) for line in data[1:]]
        labels = {e["id"] for e in entries if e["type"] == "label"}
        assert any(e.get("firstKeptEntryId") in labels for e in entries)
        assert any(e["parentId"] in labels and e["type"] != "label" for e in entries)


def alone(name: str, folder: Path) -> Path:
    """The file alone in a folder, as the oracle lists it."""
    folder.mkdir()
    copy = folder / f"{name}.jsonl"
    copy.write_bytes(FILES[name].read_bytes())
    return copy


LISTED_BY_PI = [name for name in NAMES if expected(name)["list_info"] is not None]


class TestListingIsPis:
    @pytest.mark.parametrize("name", LISTED_BY_PI)
    def test_the_listing_fields_are_pis(self, name: str, tmp_path: Path) -> None:
        pi = expected(name)["list_info"]
        ours = session_info(alone(name, tmp_path / "dir"), cache=False).to_dict()
        assert ours["problem"] is None
        assert Path(ours["path"]).name == pi["path"]
        assert (ours["id"], ours["cwd"], ours["name"]) == (pi["id"], pi["cwd"], pi.get("name"))
        assert ours["parentSession"] == pi.get("parentSessionPath")
        assert (ours["created"], ours["messageCount"]) == (pi["created"], pi["messageCount"])
        assert ours["firstMessage"] == pi["firstMessage"]
        if not expected(name)["list_info_mtime_dependent"]:
            assert ours["modified"] == pi["modified"]

    def test_a_session_pi_fails_to_list_is_listed_here(self, tmp_path: Path) -> None:
        # pi's listing reads a null user content as text and drops the whole file
        assert expected("null-contents")["list_info"] is None
        ours = session_info(alone("null-contents", tmp_path / "dir"), cache=False)
        assert ours.problem is None and ours.first_message == "Still here?"

    @pytest.mark.parametrize("name", NAMES)
    def test_listing_a_folder_for_a_cwd_keeps_the_sessions_started_there(
        self, name: str, tmp_path: Path
    ) -> None:
        pi = expected(name)["list_cwd_filter"]
        folder = alone(name, tmp_path / "dir").parent
        cwd = opened(name).cwd
        # pi finds none for null-contents only because it fails to list it (above)
        found = 1 if name == "null-contents" else pi["header_cwd"]
        assert len(list_sessions(folder, cwd=cwd, cache=False)) == found == 1
        assert len(list_sessions(folder, cwd="/nonexistent-cwd", cache=False)) == pi["other_cwd"]
        assert len(list_sessions(folder, cache=False)) == 1


class TestWhatTheProjectionMeans:
    def test_an_omitted_tool_output_leaves_no_message_but_keeps_its_entry(self) -> None:
        session = opened("context-edits")
        hidden = {
            item.entry.id
            for leaf in expected("context-edits")["system_by_leaf"]
            for item in session.projection(leaf).entries
            if item.entry.role == "toolResult" and not item.messages
        }
        assert len(hidden) == 1, "one branch omits the build log"
        (entry_id,) = hidden
        stored = session.get(entry_id)
        assert (
            stored is not None and "BUILD FAILED" in stored.data()["message"]["content"][0]["text"]
        )
        assert "BUILD FAILED" in to_json(session.build_context(entry_id).to_dict()).decode()

    def test_a_retain_none_compaction_keeps_nothing_before_it(self) -> None:
        session = opened("compaction-checkpoints")
        retain_none = next(
            e
            for e in session.entries
            if e.type == "compaction" and e.data()["firstKeptEntryId"] == e.id
        )
        after = next(e for e in session.entries if e.parent_id == retain_none.id)
        sources = [item.entry.id for item in session.projection(after.id).entries]
        assert sources == [retain_none.id, after.id]
        first = session.build_context(after.id).messages
        assert [m["role"] for m in first] == ["system", "compactionSummary", "user"]
