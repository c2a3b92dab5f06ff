"""The HTML export's one stylesheet, embedded in the page (no network).

Owns the look: light and dark colours (the reader's system decides), the header, the
branch index, each kind of entry, rendered Markdown, highlighted code (token colours
are markup.py's `highlight_css`). Entries use ``content-visibility: auto`` so a page
of thousands of entries lays out only what is on screen. The markup is html.py's.
"""

from __future__ import annotations

from functools import lru_cache

from jsonl_session.export.markup import highlight_css

_PAGE = """
:root{--fg:#1f2328;--muted:#59636e;--bg:#fff;--panel:#f6f8fa;--line:#d1d9e0;
--user:#ddf4ff;--user-line:#54aeff;--assistant:#8250df;--tool:#9a6700;--ok:#1a7f37;
--error:#d1242f;--chip:#fff8c5;--chip-line:#d4a72c;--add:#dafbe1;--del:#ffebe9;
color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;
--panel:#151b23;--line:#3d444d;--user:#0c2d6b;--user-line:#1f6feb;--assistant:#ab7df8;
--tool:#d29922;--ok:#3fb950;--error:#f85149;--chip:#3b2e0a;--chip-line:#9e6a03;
--add:#12261e;--del:#25171c}}
*{box-sizing:border-box}
body{font:15px/1.55 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg);max-width:58rem;margin:0 auto;padding:1.5rem 1rem 4rem}
a{color:inherit}
code,pre,kbd,.mono{font-family:ui-monospace,"SF Mono",Menlo,Consolas,monospace;font-size:13px}
header.top h1{font-size:1.45rem;line-height:1.3;margin:.2rem 0 .8rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.15rem 1rem;margin:0;
font-size:.9em}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:2rem 0 .6rem;padding-bottom:.25rem;border-bottom:1px solid var(--line)}
h2 .badge,nav .badge{font-size:.75rem;vertical-align:middle}
.badge{display:inline-block;border:1px solid var(--ok);color:var(--ok);border-radius:1em;
padding:0 .5em;font-weight:600}
nav.branches ul{list-style:none;margin:0;padding-left:1.1rem;border-left:1px dotted var(--line)}
nav.branches>details>ul{padding-left:0;border:0}
nav.branches li{margin:.15rem 0}
nav.branches .run{font-weight:600;color:var(--assistant);margin-right:.3rem}
nav.branches .gist{overflow-wrap:anywhere}
nav.branches .off{color:var(--muted)}
nav.branches .on-path>.line .gist{font-weight:600}
.count{color:var(--muted);font-size:.85em}
.count,.label,.badge,time{white-space:nowrap}
.label{display:inline-block;background:var(--chip);border:1px solid var(--chip-line);
border-radius:1em;padding:0 .5em;font-size:.8em;margin-left:.3rem;text-decoration:none}
.entry{margin:.9rem 0;content-visibility:auto;contain-intrinsic-size:auto 3rem}
.meta{color:var(--muted);font-size:.8em;margin-bottom:.2rem}
.meta .who{font-weight:600;color:var(--fg);margin-right:.35rem}
.meta a.id{text-decoration:none;margin-left:.35rem}.meta a.id:hover{text-decoration:underline}
.entry.user{background:var(--user);border-left:3px solid var(--user-line);
border-radius:6px;padding:.5rem .9rem}
.entry.assistant{border-left:3px solid var(--assistant);padding:.1rem .9rem}
.entry.tool-result,.entry.bash{margin:.35rem 0 .35rem 1.5rem;font-size:.95em}
.entry.tool-result .meta,.entry.bash .meta{margin:0}
.entry.summary{border:1px solid var(--ok);border-radius:6px;padding:.4rem .9rem}
.entry.custom,.entry.unknown{border-left:3px dashed var(--tool);padding:.1rem .9rem}
.entry.note{margin:.35rem 0;color:var(--muted);font-size:.85em}
.entry.note>.note-text::before{content:"•";margin-right:.45rem}
.entry.note summary{color:var(--muted)}
.entry.note .section b{display:block;margin-top:.4rem;color:var(--fg)}
.note-text{color:var(--fg)}
.md>:first-child{margin-top:0}.md>:last-child{margin-bottom:0}
.md p,.md ul,.md ol,.md pre,.md table,.md blockquote{margin:.5rem 0}
.md h1,.md h2,.md h3,.md h4,.md h5,.md h6{font-size:1.05em;margin:.9rem 0 .4rem;
padding:0;border:0}
.md h1{font-size:1.2em}.md h2{font-size:1.12em}
.md code{background:var(--panel);border-radius:4px;padding:.1em .3em}
.md pre code{background:none;padding:0}
.md blockquote{border-left:3px solid var(--line);color:var(--muted);padding-left:.8rem;
margin-left:0}
.md table{border-collapse:collapse;display:block;overflow-x:auto}
.md th,.md td{border:1px solid var(--line);padding:.2rem .6rem}
.md img,img.image{max-width:100%;height:auto;border:1px solid var(--line);border-radius:4px}
img.image{display:block;margin:.4rem 0;max-height:32rem;min-height:2.5rem;width:auto}
pre{background:var(--panel);border:1px solid var(--line);border-radius:6px;
padding:.55rem .75rem;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;
line-height:1.4;margin:.35rem 0}
pre.command{border-left:3px solid var(--tool)}
pre.diff .add{background:var(--add);display:inline-block;min-width:100%}
pre.diff .del{background:var(--del);display:inline-block;min-width:100%}
pre.diff .hunk{color:var(--muted)}
details{margin:.3rem 0}
summary{cursor:pointer;color:var(--muted);overflow-wrap:anywhere}
summary:hover{color:var(--fg)}
details>:not(summary){margin-left:1rem}
details.tool>summary .name{font-weight:600;color:var(--tool)}
details.tool>summary .arg{color:var(--fg)}
details.tool>summary .count{font-size:.75em}
.entry.tool-result details,.entry.bash details{margin:.1rem 0}
details.thinking>summary{font-style:italic}
details.thinking .md{color:var(--muted);font-style:italic}
.error,.is-error{color:var(--error)}
p.error{margin:.4rem 0}
p.stop{color:var(--muted);font-size:.85em;margin:.3rem 0}
"""


@lru_cache(maxsize=1)
def page_css() -> str:
    """The page's stylesheet, highlighted code's colours included."""
    compact = "".join(line.strip() for line in _PAGE.strip().splitlines())
    return compact + "\n" + highlight_css(".hl")
