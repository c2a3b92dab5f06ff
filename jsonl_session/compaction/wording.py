"""What the offline summarizer takes a piece of text to say: the wording rules.

Owns turning message text into clean sentences (code fences, tables, tree drawings,
pasted logs and JSON dropped; Markdown headings, bullets, bold and links stripped),
and the rules that tell what a sentence is: a user's request (not a slash command,
a greeting or a paste), a correction of it, a constraint or preference, a decision
the assistant states, an open task, a statement of finished work, or narration
("Let me look at…") that no summary should hold. Shell commands are shell.py's;
reading messages is gleaning.py's; assembling a summary is extractive.py's. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_BULLET = re.compile(r"^\s*(?:(?:[-*+•]|\d+[.)])\s+)+(?:\[[ xX]\]\s+)?")
_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s+")
_QUOTE = re.compile(r"^\s*>\s?")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_DRAWING = re.compile(r"[├└│┌┐┘┬┴┼═║╔╗╚╝─━⠇⠋⠙⠹⠸⠼⠴⠦⠧⠏]")
_LOG_START = re.compile(
    r"^\s*(?:[{\[<]|at\s+\S+\s+\(|File \"|Traceback|\d{4}-\d\d-\d\d[T ]|\$ |\u279c|\u276f|>>>|"
    r"[+-]\s*\d+\s|@@|diff --git|index [0-9a-f]{7}|\+\+\+|---\s)"
)
_LOG_LINE = re.compile(
    r"^(?:npm ERR!|npm WARN|error\[|warning\[|\w*(?:Error|Exception|Warning):|ERROR|WARN(?:ING)?\b|"
    r"Caused by:|FAIL\b|PASS\b|ok \d|not ok \d|\d+ (?:passed|failed)|at [\w.<>]+ \()"
)
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|cf)\.", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of prose: its text without markup, and what it was."""

    text: str
    heading: bool = False
    level: int = 0  # a heading's level: 1 for "#", 2 for "##"…
    bullet: bool = False
    checked: bool | None = None  # a task list item: done (True) or open (False)


def prose_lines(text: str, keep_pastes: bool = False) -> list[Line]:
    """The lines of ``text`` that are prose, markup stripped; code blocks, tables and
    drawings left out, and (unless ``keep_pastes``) pasted logs, JSON, terminal
    sessions and paths, and whole paragraphs that are mostly such lines."""
    lines: list[Line] = []
    paragraph: list[tuple[str, str]] = []  # (line, "prose" | "paste" | "drawing")

    def flush() -> None:
        pasted = sum(kind != "prose" for _, kind in paragraph)
        mostly = not keep_pastes and len(paragraph) > 1 and pasted * 2 >= len(paragraph)
        for raw, kind in paragraph:
            if (kind == "prose" and not mostly) or (kind == "paste" and keep_pastes):
                line = _line(raw)
                if line is not None:
                    lines.append(line)
        paragraph.clear()

    in_code = False
    for raw in text.splitlines():
        if _FENCE.match(raw):
            flush()
            in_code = not in_code
        elif in_code:
            continue
        elif not raw.strip():
            flush()
        elif _is_drawing(raw.strip()):
            paragraph.append((raw, "drawing"))
        else:
            paragraph.append((raw, "paste" if _is_paste(raw) else "prose"))
    flush()
    return lines


def _line(raw: str) -> Line | None:
    heading_mark = _HEADING.match(raw)
    box = _CHECKBOX.match(raw)
    clean = strip_markup(_BULLET.sub("", _QUOTE.sub("", _HEADING.sub("", raw))))
    if not clean:
        return None
    checked = None if box is None else box.group(1) != " "
    level = heading_mark.group(0).count("#") if heading_mark else 0
    return Line(clean, heading_mark is not None, level, bool(_BULLET.match(raw)), checked)


def strip_markup(text: str) -> str:
    """``text`` without Markdown emphasis, links and heading marks, on one line."""
    text = _LINK.sub(r"\1", text)
    text = _BOLD.sub(r"\2", text)
    text = _EMPHASIS.sub(r"\1", text)
    text = _HEADING.sub("", text)
    return " ".join(text.split()).strip(" -")


def _is_drawing(stripped: str) -> bool:
    """A table row, a tree or box drawing, a spinner."""
    return bool(_DRAWING.search(stripped)) or stripped.startswith("|") or stripped.count(" | ") >= 2


def _is_paste(line: str) -> bool:
    stripped = line.strip()
    if _BULLET.match(line):
        return False
    if _LOG_START.match(line) or _LOG_LINE.match(stripped):
        return True
    if re.search(r'["\]}],\s*"|":\s*["{\[\d]', stripped):
        return True  # JSON
    if line.startswith(("    ", "\t")) or re.search(r"\S {3,}\S", stripped):
        return True  # indented code or output, or columns
    if re.fullmatch(r"['\"]?[~./\w-]*/[\w./ -]*(?::\d+)*['\"]?", stripped):
        return True  # a bare path, as a dropped file pastes it
    letters = sum(c.isalpha() or c.isspace() for c in stripped)
    return len(stripped) > 12 and letters / len(stripped) < 0.6


def sentences(text: str) -> list[str]:
    """The prose sentences of ``text`` (headings left out), each on one line."""
    found: list[str] = []
    for line in prose_lines(text):
        if not line.heading:
            found.extend(split_sentences(line.text))
    return found


def split_sentences(text: str) -> list[str]:
    protected = _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\0"), text)
    parts = (p.replace("\0", ".").strip() for p in _SENTENCE_END.split(protected))
    return [p for p in parts if len(p) > 3]


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word before ``limit`` characters with "…"."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def words(text: str) -> list[str]:
    return re.findall(r"[\w'\u2019./-]+", text)


# -- the user's requests --------------------------------------------------------------

_SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w:.-]*(?:\s[^\n/]*)?$")
_GREETING = re.compile(
    r"^(?:(?:hi|hey|hello|yo|hiya|good (?:morning|afternoon|evening)|thanks|thank you|thx|"
    r"ok(?:ay)?|k|alright|all right|cool|great|nice|perfect|awesome|sure|yes|yeah|yep|yup|"
    r"right|so+|well|hm+|wow|lol|please|pls|continue|go on|go ahead|proceed|do it|"
    r"sounds good|looks good|lgtm|got it|makes sense|done|there)\b[\s,.!?:;-]*)+",
    re.IGNORECASE,
)
_CORRECTION = re.compile(
    r"^(?:actually|wait|no(?=[,.!:])|nope|nah|instead|scratch that|change of plan|correction|"
    r"on second thought|rather|that'?s not|that is not|this is not|not what i|"
    r"forget (?:it|that|about)|not (?:that|quite)|hold on|"
    r"hmm+,? (?:actually|no|rather|instead|wait)|oh,? (?:and|wait|actually)|one more thing|"
    r"let'?s (?:switch|change|instead|rather|do \S+ instead))\b",
    re.IGNORECASE,
)


def is_slash_command(text: str) -> bool:
    """Whether a user message is a command to the agent (``/model x``), not a request."""
    return bool(_SLASH_COMMAND.match(text.strip()))


_INLINE_JSON = re.compile(r"\s[\[{]\s*[\"{\[]")  # where pasted JSON starts in a line
_ADDITION = re.compile(
    r"^(?:(?:ok(?:ay)?|and|now|so|alright|great|cool|then|oh)[,\s]+)*(?:also|additionally|"
    r"in addition|on top of that|plus)\b|\b(?:let'?s|can you|could you|please|we|you) "
    r"(?:\w+ )?also\b",
    re.IGNORECASE,
)


def request_text(text: str) -> str | None:
    """What a user message asks, in the user's words: its prose without pasted
    logs or code; None for a slash command, a greeting or thanks, or a paste alone."""
    stripped = text.strip()
    if not stripped or is_slash_command(stripped):
        return None
    prose = " ".join(_INLINE_JSON.split(line.text)[0] for line in prose_lines(stripped))
    rest = _GREETING.sub("", prose).strip()
    if len(words(rest)) < 3 or len(rest) < 12:
        return None
    return prose


def is_correction(request: str) -> bool:
    """Whether a request corrects or redirects an earlier one."""
    return bool(_CORRECTION.match(request.strip()))


def is_addition(request: str) -> bool:
    """Whether a request adds to the goal ("also support X", "can you also…")."""
    return bool(_ADDITION.search(request.strip()))


# -- constraints and preferences -------------------------------------------------------

_OPENER = r"(?:^|[,;:!(]\s*|\b(?:and|but|so|also|then|just|oh|plus|please|pls|ok|okay|again)\s+)"
_STRONG = re.compile(
    r"\b(?:must(?:n'?t| not)?|(?:you|we) (?:must |should )?(?:always|never)|shall not|"
    r"may not|under no circumstances|"
    r"not allowed|forbidden|off[- ]limits|(?:backwards?[- ])?compatib(?:le|ility)|"
    r"make sure|ensure that|stay away from|have to|has to|need(?:s)? to stay|"
    r"prefer(?:red|ably)?|i'?d rather|i would rather|avoid(?:ing)?|"
    r"(?:we|you) (?:can'?t|cannot|can not) (?:\w+)|"
    r"stick(?:s)? (?:to|with)|"
    r"stays?(?: as (?:it|they) (?:is|are)| as is| the same| unchanged| untouched| intact|"
    r" where (?:it is|they are))|as (?:it|they) (?:is|are)\b|as is\b|byte[- ]for[- ]byte)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    _OPENER + r"(?:don'?t|do not|dont|never|always|avoid|keep|leave|only|just use|use|"
    r"stick|stay|no (?!(?:idea|worries|problem|need|way|clue|luck|matter|one|more|longer)\b)"
    r"[\w`'\"-]+)\b",
    re.IGNORECASE,
)
_ELSEWHERE = re.compile(
    r"\b(?:rather than|instead of|without (?:changing|touching|breaking|adding|using|"
    r"modifying|removing|renaming|any|a |new )|only (?:use|change|touch|edit|modify|want|run|"
    r"add|test|e2e|in)|(?:i|we) (?:would |'d )?only want|should(?:n'?t| not)? "
    r"(?:not |never |always |only |be |stay |remain |keep |use |return |have |change |"
    r"touch |break )|,\s*not\s+(?:\w+\s+)?\w+\s*(?:,|[.!]?$))",
    re.IGNORECASE,
)
_NOT_A_RULE = re.compile(
    r"\b(?:i|we) (?:do not|don'?t|dont) (?:think|tink|understand|know|see|get|remember|"
    r"believe|recall|mean|care|mind|have)\b|\bshould be (?:good|fine|ok|okay|done|ready|able|"
    r"enough|possible|working|there|easy|simple)\b|\bno (?:idea|worries|problem)\b",
    re.IGNORECASE,
)


def is_constraint(sentence: str) -> bool:
    """Whether a user's sentence sets a rule or states a preference."""
    if _NOT_A_RULE.search(sentence) and not _STRONG.search(_NOT_A_RULE.sub("", sentence)):
        return False
    if sentence.rstrip().endswith("?"):
        return bool(_STRONG.search(sentence))  # a question sets a rule only in strong words
    return bool(
        _STRONG.search(sentence) or _IMPERATIVE.search(sentence) or _ELSEWHERE.search(sentence)
    )


# -- what the assistant says -----------------------------------------------------------

_NARRATION = re.compile(
    r"^(?:(?:ok(?:ay)?|alright|great|perfect|good|excellent|nice|now|first|next|then|"
    r"hmm+|sure|right|so|finally)\b[\s,.!:;-]*)*"
    r"(?:let me|let's (?:check|look|see|read|run|try|start|verify|examine|find|search|"
    r"inspect|open|view|update|fix|add|create|make|write|test|take)|"
    r"(?:i'll|i will|i'm going to|i am going to|i need to|i should|i want to|we need to look)"
    r" (?:now |first |also |quickly )?(?:check|look|read|search|run|start|see|examine|inspect|"
    r"open|find|verify|review|explore|investigate|take a look|update|fix|add|create|write|"
    r"edit|modify|make|try|test|search|grep|dig|trace|figure|understand|get|view|study|"
    r"begin|continue|do|implement|apply|rebuild|build|compile|re-?run)\b|"
    r"looking (?:at|into)|checking|reading|searching|running|investigating|examining|"
    r"i see\b|now i see|i understand|got it|understood|noted|sure[,!.]|done[.!]|"
    r"here(?:'s| is| are) (?:the|what|a|my)|this (?:is|looks) (?:good|fine|right)|"
    r"that (?:worked|works|looks)|"
    r"(?:would you like|want me|want to|should i|do you want|shall i|let me know))",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:i'll use|i will use|we'll use|we will use|let's use|decided|decision|going with|"
    r"go with|went with|chose|choosing|opted|opt for|settled on|switch(?:ed|ing)? to|"
    r"instead of|rather than|in favou?r of|over \S+ (?:since|because)|the fix (?:is|was)|"
    r"fixed (?:it )?by|root cause|the (?:real |actual )?(?:problem|issue|cause|bug) "
    r"(?:is|was)|the plan is|approach|best option|better (?:fit|option|choice)|from now on|"
    r"i'm (?:using|routing|going to use|keeping|switching)|"
    r"we(?:'ll| will) (?:store|keep|use|route|go)|"
    r"(?:so|therefore|hence) (?:i|we) (?:moved|changed|kept|switched|used|dropped|replaced))\b",
    re.IGNORECASE,
)
_GUESS = re.compile(
    r"^(?:if|i bet|i guess|i suspect|maybe|perhaps|possibly|probably|it might|this might|"
    r"that might|it may|this may|could it|might)\b",
    re.IGNORECASE,
)
_OPEN_TASK = re.compile(
    r"(?-i:\bTODO\b)|\bto-?do:|\bstill (?:need|needs|have|has) to\b|\bstill to do\b|"
    r"\bremaining\b(?! (?:tokens|lines|bytes|characters|time))|\bnot (?:\w+ )?yet\b|"
    r"\bleft to do\b|\bnext step|\bfollow[- ]?up\b|\bopen questions?\b|\bunresolved\b|"
    r"\b(?:is|are|still|remains?) pending\b|\bpending (?:tasks?|items?|work|changes|review)\b|"
    r"\b(?:do|handle|fix|revisit|address|tackle|look at|add) (?:it|this|that|them|\S+) later\b|"
    r"\bfor later\b|\bdon'?t forget\b|\bremember to\b|\bafterwards\b|"
    r"\bonce (?:this|that|it|everything) (?:works|is done|passes|lands|is in)\b|"
    r"\bhaven'?t (?:\w+ed|done|written|run)\b|\bstill (?:open|missing|failing|broken)\b",
    re.IGNORECASE,
)
_TASK_INTRO = re.compile(
    r"\b(?:remaining|todo|to do|next steps?|still (?:need|to do)|open (?:tasks|items|"
    r"questions)|follow[- ]ups?|left|not (?:yet )?done|pending)\b",
    re.IGNORECASE,
)
_LATER = re.compile(r"\blater\b", re.IGNORECASE)
_LATER_START = re.compile(r"^later\b(?!,? (?:we|i|you) (?:should|need|can|will|might))", re.I)
_DONE = re.compile(
    r"^(?:done|fixed|added|updated|changed|removed|created|moved|renamed|implemented|"
    r"refactored|replaced|wrote|written|committed|deleted|tidied|cleaned|converted|ported|"
    r"merged|reverted|installed|built|extracted|split|simplified|restored)(?![-\w])|"
    r"\b(?:i've|i have|we've|we have) (?:now )?(?:\w+ed|done|written|made|built|run|split)\b|"
    r"\b(?:all )?(?:the )?tests? (?:now )?pass(?:es)?\b|\bis now\b|\bare now\b|\bnow (?:uses|works|"
    r"passes|renders|returns|shows|has|handles|reads|writes)\b",
    re.IGNORECASE,
)


def is_narration(sentence: str) -> bool:
    """Whether an assistant's sentence only says what it is about to do or see."""
    return bool(_NARRATION.match(sentence.strip())) or sentence.rstrip().endswith(":")


def is_decision(sentence: str) -> bool:
    """Whether an assistant's sentence states a choice or a finding to act on."""
    if is_narration(sentence) or sentence.rstrip().endswith("?") or len(words(sentence)) < 6:
        return False
    return bool(_DECISION.search(sentence)) and not _GUESS.match(sentence)


def is_open_task(sentence: str) -> bool:
    """Whether a sentence names work that is left to do."""
    if _NARRATION.match(sentence.strip()) and not _OPEN_TASK.search(sentence):
        return False
    if _OPEN_TASK.search(sentence):
        return True
    return bool(_LATER.search(sentence)) and not _LATER_START.match(sentence.strip())


def is_done_statement(sentence: str) -> bool:
    """Whether an assistant's sentence reports finished work."""
    if is_narration(sentence) or sentence.rstrip().endswith("?") or len(words(sentence)) < 4:
        return False
    return bool(_DONE.search(sentence))


def is_task_intro(line: Line) -> bool:
    """A heading or an intro line after which list items are open tasks."""
    intro = line.heading or line.text.endswith(":")
    return intro and bool(_TASK_INTRO.search(line.text))
