"""The HTML export as a reader sees it: Markdown rendered and code highlighted, session
text that is markup escaped, nothing fetched, tool calls folded with their arguments
as JSON, the branch index only when the session branches, one active branch, notes
said once, images shown, and a 10,000-entry session rendered quickly. Sessions are
the bundled fixtures, sessions written with the library, and generated ones."""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar

import pytest
from builders import (
    assistant_calling,
    assistant_message,
    image_block,
    text_block,
    tool_call,
    tool_result,
    user_message,
)
from helpers_large import generate
from locations import copy_fixture

from jsonl_session import Session
from jsonl_session.export import export_html, html_parts

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR42mO4o6YGRAwQ"


class Page(HTMLParser):
    """The page's elements: tags in order, every address, unbalanced tags, and the
    text inside each element kind."""

    VOID: ClassVar[set[str]] = {"meta", "img", "br", "hr", "link", "input"}

    def __init__(self, text: str) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def addresses(self) -> list[tuple[str, str, dict[str, str]]]:
        """(tag, attribute, all attributes) for every src/href/action/poster."""
        return [
            (tag, name, attrs)
            for tag, attrs in self.tags
            for name in ("src", "href", "action", "poster", "srcset")
            if name in attrs
        ]

    def count(self, tag: str, css: str = "") -> int:
        return sum(
            1 for t, a in self.tags if t == tag and (not css or css in a.get("class", "").split())
        )


def new_session(tmp_path: Path) -> Session:
    return Session.create(cwd="/work/project", session_dir=tmp_path, fsync="never")


def reopen(session: Session) -> Session:
    session.flush()
    return Session.open(session.path)


def page_of(session: Session, *, all_branches: bool = False) -> str:
    return export_html(session, all_branches=all_branches).text


def fixture_page(tmp_path: Path, name: str, *, all_branches: bool = False) -> str:
    return page_of(Session.open(copy_fixture(tmp_path, name)), all_branches=all_branches)


def main_of(text: str) -> str:
    return text.split("<main>", 1)[1].split("</main>", 1)[0]


MARKDOWN_REPLY = """## Root cause

The **route** reads `completed`, but the *model* field is `done`:

- first item
- second item

1. one
2. two

```python
def fix(todo: dict) -> None:
    todo["done"] = True
```

| file | change |
|------|--------|
| a.ts | rename |
"""


class TestMarkdown:
    def test_headings_emphasis_lists_tables_and_code_are_rendered(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("Why does it fail?"))
        s.append_message(assistant_message(MARKDOWN_REPLY))
        text = main_of(page_of(reopen(s)))
        assert "<h2>Root cause</h2>" in text
        assert "<strong>route</strong>" in text and "<em>model</em>" in text
        assert "<code>completed</code>" in text
        assert "<ul>\n<li>first item</li>" in text and "<ol>\n<li>one</li>" in text
        assert "<th>file</th>" in text and "<td>rename</td>" in text
        for raw in ("## Root", "**route**", "```", "|------|"):
            assert raw not in text, raw

    def test_fenced_code_is_highlighted_in_a_monospace_block(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("Show me."))
        s.append_message(assistant_message(MARKDOWN_REPLY))
        text = main_of(page_of(reopen(s)))
        block = text.split('<pre class="code hl">', 1)[1].split("</pre>", 1)[0]
        assert '<span class="k">def</span>' in block and '<span class="nf">fix</span>' in block
        page = page_of(reopen(s))
        assert re.search(r"pre\{[^}]*background", page)  # code sits in a block
        assert ".hl .k{" in page  # the highlighter's colours are in the page's stylesheet
        assert "ui-monospace" in page

    def test_user_messages_keep_their_line_breaks(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("first line\nsecond line"))
        assert "first line<br>\nsecond line" in main_of(page_of(reopen(s)))

    def test_thinking_is_rendered_and_folded(self, tmp_path: Path) -> None:
        text = fixture_page(tmp_path, "tool-calls")
        assert re.search(
            r'<details class="thinking"><summary>Thinking · \d+ words</summary>'
            r'<div class="md"><p>Read the failing test first',
            text,
        )


class TestUntrustedText:
    def test_markup_in_every_kind_of_session_text_is_escaped(self, tmp_path: Path) -> None:
        evil = '<script>alert("x")</script><img src=x onerror=alert(1)><b>bold</b>'
        s = new_session(tmp_path)
        first = s.append_message(user_message(f"{evil} & more"))
        s.append_message(assistant_calling(tool_call("c1", "bash", command=evil), thinking=evil))
        s.append_message(tool_result("c1", "bash", [text_block(evil)], timestamp=2))
        s.append_message(assistant_message(f"</section></main>{evil}"))
        s.append_custom_message("note", evil)
        s.append_compaction(evil, first, 10)
        s.append_label(first, evil)
        s.append_session_info(evil)
        text = page_of(reopen(s))
        page = Page(text)
        assert page.errors == [] and page.stack == []
        assert (
            "<script" not in text
            and "<b>" not in text
            and "onerror=alert" not in text.replace("&lt;img src=x onerror=alert(1)&gt;", "")
        )
        assert page.count("img") == 0 and page.count("b") == 0
        assert (
            len(re.findall(r"&lt;script&gt;alert\((&quot;|\")x(&quot;|\")\)&lt;/script&gt;", text))
            >= 8
        )

    def test_javascript_links_are_not_links(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("[click](javascript:alert(1)) [data](data:text/html,x)"))
        page = Page(page_of(reopen(s)))
        hrefs = [attrs["href"] for tag, name, attrs in page.addresses() if name == "href"]
        assert not [h for h in hrefs if h.lower().startswith(("javascript:", "data:text"))]

    def test_opening_the_page_fetches_nothing(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(
            user_message(
                "See [the docs](https://example.com/docs), <https://example.com/auto> and "
                "![a chart](https://example.com/chart.png) ![inline](data:image/png;base64,AAAA)"
            )
        )
        s.append_message({"role": "user", "content": [image_block(PNG)], "timestamp": 2})
        text = page_of(reopen(s))
        page = Page(text)
        for tag, name, attrs in page.addresses():
            value = attrs[name]
            if value.startswith(("#", "data:image/")):
                continue
            # only links the text itself holds, and they open nothing by themselves
            assert (tag, name) == ("a", "href"), (tag, name, value)
            assert "noopener" in attrs.get("rel", "") and value.startswith("https://example.com")
        assert not re.search(r'src="https?:', text) and not re.search(
            r"url\(\s*['\"]?https?:", text
        )
        assert "<script" not in text and "<link" not in text and "@import" not in text
        assert "[image: a chart]" in text  # the remote image became a link

    def test_every_fixture_page_balances_and_is_self_contained(self, tmp_path: Path) -> None:
        for name in ("tool-calls", "images", "branching", "custom-entries", "pi15-system-prompt"):
            for all_branches in (False, True):
                text = fixture_page(tmp_path, name, all_branches=all_branches)
                page = Page(text)
                assert page.errors == [] and page.stack == [], name
                outside = [
                    attrs[n]
                    for _, n, attrs in page.addresses()
                    if not attrs[n].startswith(("#", "data:image/"))
                ]
                assert outside == [], name


class TestToolCalls:
    def test_calls_fold_with_their_arguments_as_pretty_json(self, tmp_path: Path) -> None:
        text = fixture_page(tmp_path, "tool-calls")
        assert re.search(
            r'<details class="tool"><summary><span class="name">read</span> '
            r'<code class="arg">test/todos.test.ts</code>',
            text,
        )
        block = text.split('<span class="name">bash</span>', 1)[1].split("</details>", 1)[0]
        assert '<pre class="code hl json">{\n  <span class="nt">"command"</span>:' in block
        assert "{'command'" not in text and "{'path'" not in text  # never a Python repr

    def test_outputs_fold_when_long_and_say_which_call_they_answer(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("run it"))
        s.append_message(assistant_calling(tool_call("c1", "bash", command="make test")))
        s.append_message(tool_result("c1", "bash", [text_block("ok")], timestamp=2))
        s.append_message(assistant_calling(tool_call("c2", "bash", command="cat big.log")))
        big = "\n".join(f"line {i}" for i in range(500))
        s.append_message(tool_result("c2", "bash", [text_block(big)], timestamp=3))
        text = main_of(page_of(reopen(s)))
        assert '<details class="output" open><summary>Output · 1 line</summary>' in text
        assert '<details class="output"><summary>Output · 500 lines · line 0 line 1' in text
        assert "Tool result</span>bash · <code>cat big.log</code>" in text
        assert "line 499" in text  # folded, never cut

    def test_a_result_answers_a_call_of_the_assistant_message_it_follows(
        self, tmp_path: Path
    ) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("run both"))
        both = (tool_call("c1", "bash", command="make one"), tool_call("c2", "bash", command="two"))
        asked = s.append_message(assistant_calling(*both))
        s.append_message(tool_result("c1", "bash", [text_block("ok")], timestamp=2))
        s.append_message(assistant_message("done"))
        # c1 again, after a message that made no call: it answers nothing shown
        s.append_message(tool_result("c1", "bash", [text_block("late")], timestamp=3))
        s.branch(asked)  # a branch answering c2, under the message in the first branch
        s.append_message(tool_result("c2", "bash", [text_block("ok")], timestamp=4))
        text = main_of(page_of(reopen(s), all_branches=True))
        assert text.count("Tool result</span>bash · <code>make one</code>") == 1
        assert text.count("Tool result</span>bash · <code>two</code>") == 1
        assert text.count("Tool result</span>bash · <time") == 1  # the late one

    def test_a_read_file_is_highlighted_by_its_name(self, tmp_path: Path) -> None:
        text = fixture_page(tmp_path, "tool-calls")
        output = text.split("Tool result</span>read · <code>test/todos.test.ts</code>", 1)[1]
        assert output.split("</details>", 1)[0].count('<span class="k">import</span>') >= 1

    def test_an_edit_shows_its_change_as_a_diff_and_keeps_the_json(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        s.append_message(user_message("rename"))
        change = {"oldText": "const done = 1;", "newText": "const completed = 1;"}
        s.append_message(assistant_calling(tool_call("c1", "edit", path="a.ts", edits=[change])))
        text = main_of(page_of(reopen(s)))
        assert '<span class="del">-const done = 1;</span>' in text
        assert '<span class="add">+const completed = 1;</span>' in text
        assert "<summary>arguments (JSON)</summary>" in text

    def test_errors_are_marked(self, tmp_path: Path) -> None:
        text = fixture_page(tmp_path, "tool-calls")
        assert '<span class="is-error">Error output</span> · 5 lines' in text


class TestBranchIndex:
    def test_a_linear_session_has_no_index(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        for i in range(500):
            s.append_message(user_message(f"question {i}"))
            s.append_message(assistant_message(f"answer {i}"))
        for all_branches in (False, True):
            text = page_of(reopen(s), all_branches=all_branches)
            assert "<nav" not in text and "Branches" not in text
        assert "<nav" not in fixture_page(tmp_path, "tool-calls")

    def test_the_index_has_one_line_per_run_and_one_active_branch(self, tmp_path: Path) -> None:
        text = fixture_page(tmp_path, "branching")
        nav = text.split('<nav class="branches">', 1)[1].split("</nav>", 1)[0]
        assert nav.count("<li") == 5  # 13 entries in 5 runs
        assert "3 branches · 5 runs between branch points" in nav
        assert nav.count('class="badge">active<') == 1
        active = nav.split('<span class="badge">active</span>', 1)[0].rsplit("<li", 1)[1]
        assert "1.2" in active and "Actually, use cursor pagination." in active
        # runs on the active path link to the page; the others are not shown
        assert '<a class="run" href="#e-0afda538">1</a>' in nav
        assert '<span class="run">1.1</span>' in nav and 'class="off"' in nav

    def test_all_branches_marks_only_the_active_branch_active(self, tmp_path: Path) -> None:
        text = fixture_page(tmp_path, "branching", all_branches=True)
        headings = re.findall(r"<h2 id=\"run-[\d.]+\">(.*?)</h2>", text)
        assert len(headings) == 5
        assert [h for h in headings if "active" in h] == [
            'Branch 1.2 · from <a href="#e-1bea2219">1bea2219</a> <span class="badge">active</span>'
        ]
        nav = text.split("</nav>", 1)[0]
        assert nav.count(">active<") == 1 and '<a class="run" href="#run-1.1.2">1.1.2</a>' in nav

    def test_labels_are_in_the_index_and_beside_their_entries(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        root = s.append_message(user_message("start"))
        s.append_message(assistant_message("one way"))
        s.branch(root)
        s.append_message(assistant_message("another way"))
        s.append_label(root, "checkpoint")
        text = page_of(reopen(s))
        nav = text.split("</nav>", 1)[0]
        assert f'<a class="label" href="#e-{root}">checkpoint</a>' in nav
        assert '<span class="label">checkpoint</span>' in main_of(text)


class TestNotes:
    def test_model_and_thinking_level_changes_are_said_once(self, tmp_path: Path) -> None:
        text = main_of(fixture_page(tmp_path, "model-thinking"))
        assert text.count("thinking level → high") == 1
        assert "Thinking level: thinking level" not in text and "Thinking level</span>" not in text
        assert "Model: model" not in text and "Model</span>" not in text
        assert re.search(r'<div class="entry note" id="e-[0-9a-f]+"><span class="note-text">'
                         r"model → openai/gpt-5</span>", text)  # fmt: skip

    def test_labels_and_names_are_small_notes(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        first = s.append_message(user_message("hi"))
        s.append_label(first, "start")
        s.append_session_info("My session")
        text = main_of(page_of(reopen(s)))
        assert '<span class="label">start</span>' in text  # beside the entry it marks
        assert "session named My session</span>" in text
        every = main_of(page_of(reopen(s), all_branches=True))
        assert every.count('<span class="label">start</span>') == 1
        for page in (text, every):
            assert "Label: label" not in page and "Session name: session" not in page

    def test_compactions_and_branch_summaries_are_folded(self, tmp_path: Path) -> None:
        text = main_of(fixture_page(tmp_path, "compaction-one"))
        assert re.search(
            r'<section class="entry summary" id="e-\w+"><div class="meta"><span class="who">'
            r"Compaction summary</span>replaces the history before \w+ \(\d+ tokens before\)",
            text,
        )
        assert re.search(r"<details><summary>The summary · \d+ words</summary>", text)
        summarized = main_of(fixture_page(tmp_path, "branch-summary"))
        assert "Branch summary</span>of the branch left at" in summarized

    def test_system_prompts_say_what_changed(self, tmp_path: Path) -> None:
        text = main_of(fixture_page(tmp_path, "pi15-system-prompt"))
        assert "System prompt · sections role, cwd, style · tools added read, bash" in text
        assert "tools removed bash" in text
        assert "Message (system)" not in text


class TestImages:
    def test_user_and_tool_result_images_are_shown(self, tmp_path: Path) -> None:
        text = main_of(fixture_page(tmp_path, "images"))
        images = re.findall(r'<img class="image" alt="image \(image/png\)" src="([^"]+)">', text)
        assert len(images) == 3
        assert all(src.startswith("data:image/png;base64,iVBORw0KGgo") for src in images)
        result = text.split("Tool result</span>", 1)[1].split("</section>", 1)[0]
        assert '<img class="image"' in result

    def test_an_image_with_an_unexpected_type_or_data_is_not_embedded(self, tmp_path: Path) -> None:
        s = new_session(tmp_path)
        odd = image_block('AAAA" onerror="x')
        html_image = image_block("PGI+", "text/html")
        s.append_message({"role": "user", "content": [odd, html_image], "timestamp": 1})
        text = page_of(reopen(s))
        assert "<img" not in text and "[image: image/png]" in text and "[image: text/html]" in text


class TestLargeSessions:
    def test_ten_thousand_entries_render_in_seconds(self, tmp_path: Path) -> None:
        path = generate(tmp_path / "big.jsonl", 10_000)
        session = Session.open(path)
        started = time.perf_counter()
        text = export_html(session).text
        took = time.perf_counter() - started
        size = len(text.encode())
        # about 2.5 s and 28 MB here (a 21.6 MB session); generous bounds for slow machines
        assert took < 30, f"{took:.1f} s"
        assert size < 2 * path.stat().st_size, f"{size / 1e6:.1f} MB"
        assert text.count('<section class="entry') > 5_000 and "<nav" in text


_OUTPUTS = [
    "short <b>&amp; sweet</b>\n",
    "\n",
    "".join(f"line {n} <tag> & more \U0001f600\n" for n in range(40)),
    "   \n\n  \t" * 30 + "a few words: token ghp_" + "a1B2c3D4e5" * 4 + " <then> more" * 20,
    "\x1b[31mred\x1b[0m <x>\n" * 30 + "\x1b]8;;http://e.x\x07link\x1b]8;;\x07\n",
    "token ghp_" + "a1B2c3D4e5" * 4 + " <secret & text>\n" * 30,
]


@pytest.mark.parametrize("redact", [False, True])
def test_a_long_output_escaped_a_stretch_at_a_time_is_the_page_escaped_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redact: bool
) -> None:
    session = Session.create(cwd="/w", session_dir=tmp_path, fsync="never")
    session.append_message(user_message("run them"))
    for n, output in enumerate(_OUTPUTS):
        for error in (False, True):
            content = [{"type": "text", "text": output}]
            result = {"role": "toolResult", "toolCallId": f"c{n}", "toolName": "bash"}
            session.append_message({**result, "content": content, "isError": error, "timestamp": n})
    whole = export_html(Session.open(session.path), redact=redact)
    monkeypatch.setattr(html_parts, "LONG_OUTPUT", 7)
    assert export_html(Session.open(session.path), redact=redact) == whole
    assert whole.text.count("(no output)") == 2
