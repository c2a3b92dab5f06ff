"""What a shell command line does, as far as the offline summarizer needs to know.

Owns splitting a command line into pipelines and commands the way a shell would
(quotes, escapes, comments and heredoc bodies respected), the key under which two
runs count as the same command (``cd`` steps, runners such as npx or python -m,
output filters, redirections and verbosity flags left out), how a summary shows a
command, whether a command only looks around (ls, grep, git status…), and which
files common commands read or change (cat, head, sed -n; sed -i, redirections,
tee, touch, rm, mv, cp). Reading messages is gleaning.py's. Pure: no I/O.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex

from jsonl_session.compaction.wording import shorten

COMMAND_CHARS = 120

_ROUTINE = frozenset(
    {
        "ls", "ll", "la", "cat", "head", "tail", "less", "more", "grep", "egrep", "rg", "ag",
        "ack", "find", "fd", "tree", "pwd", "cd", "echo", "printf", "which", "whereis",
        "type", "wc", "file", "stat", "du", "df", "sed", "awk", "sort", "uniq", "cut", "diff",
        "sleep", "true", "false", "test", "[", "date", "env", "printenv", "whoami", "uname",
        "ps", "jq", "bat", "nl", "basename", "dirname", "realpath", "readlink", "xxd", "od",
        "hexdump", "open", "code", "clear", "history", "man", "mkdir", "touch", "for", "do",
        "done", "if", "then", "fi", "while", "export", "source", ".", "set", "column", "tr",
    }
)  # fmt: skip
_ROUTINE_GIT = frozenset({"status", "log", "diff", "show", "branch", "remote", "blame", "ls-files"})
_FILTERS = frozenset(
    {"tail", "head", "grep", "egrep", "tee", "less", "more", "cat", "sort", "uniq", "wc"}
)
_PREFIXES = frozenset({"npx", "bunx", "time", "sudo", "env", "command", "exec", "nohup"})
_RUNNERS = (("uv", "run"), ("poetry", "run"), ("pnpm", "exec"), ("python", "-m"), ("python3", "-m"))
_QUIET = frozenset(
    {"-q", "-qq", "-v", "-vv", "-s", "--quiet", "--verbose", "--silent", "--no-header", "-rA"}
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_][\w-]*)['\"]?")


def pipelines(command: str) -> list[list[str]]:
    """The pipelines of a command line (split at ``&&``, ``||``, ``;``, ``&`` and new
    lines outside quotes), each as the text of its commands (split at ``|``)."""
    found: list[list[str]] = [[]]
    current: list[str] = []
    text = _without_heredoc_bodies(command)
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            current.append(c)
            if c == "\\" and quote == '"' and i + 1 < len(text):
                current.append(text[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 1
        elif c in "'\"":
            quote = c
            current.append(c)
        elif c == "#" and (not current or current[-1].isspace()):
            while i + 1 < len(text) and text[i + 1] != "\n":
                i += 1  # a comment, to the end of the line
        elif c == "|" and text[i : i + 2] != "||":
            found[-1].append("".join(current))
            current = []
            i += 1 if text[i : i + 2] == "|&" else 0
        elif c in ";\n&|" and not (c == "&" and text[i - 1 : i] in "<>" and i > 0):
            if c == "&" and text[i + 1 : i + 2] == ">":
                current.append(c)  # &> redirects
            else:
                found[-1].append("".join(current))
                current = []
                found.append([])
                i += 1 if text[i : i + 2] in ("&&", "||") else 0
        else:
            current.append(c)
        i += 1
    found[-1].append("".join(current))
    cleaned = [[part.strip() for part in line if part.strip()] for line in found]
    return [line for line in cleaned if line]


def _without_heredoc_bodies(command: str) -> str:
    lines = command.split("\n")
    kept: list[str] = []
    delimiter = ""
    for line in lines:
        if delimiter:
            if line.strip() == delimiter:
                delimiter = ""
            continue
        kept.append(line)
        match = _HEREDOC.search(line)
        if match:
            delimiter = match.group(1)
    return "\n".join(kept)


def words_of(part: str) -> list[str]:
    """A simple command's words, quotes removed, redirection operators apart."""
    try:
        lexer = shlex.shlex(part, posix=True, punctuation_chars="<>&")
        lexer.whitespace_split = True
        lexer.commenters = ""
        return list(lexer)
    except ValueError:
        return part.split()


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program a command runs (assignments and prefixes such as sudo skipped)."""
    while words and (_ASSIGNMENT.fullmatch(words[0]) or words[0] in _PREFIXES):
        words = words[1:]
    for runner in _RUNNERS:
        if tuple(words[:2]) == runner:
            words = words[2:]
    if not words:
        return "", []
    return words[0].rsplit("/", 1)[-1], words[1:]


def _kept_parts(line: list[str]) -> list[str]:
    """A pipeline without the filters its output went through (| tail, | grep…)."""
    kept = line[:1]
    for part in line[1:]:
        if _program(words_of(part))[0] not in _FILTERS:
            kept.append(part)
    return kept


def _steps(command: str) -> list[list[str]]:
    """The pipelines that do something: ``cd`` and ``export`` steps left out."""
    steps = []
    for line in pipelines(command):
        program = _program(words_of(line[0]))[0]
        if program not in ("cd", "export", "source", "set"):
            steps.append(_kept_parts(line))
    return steps


def command_key(command: str) -> str:
    """What a command does, for telling whether a later run is the same command."""
    keys = []
    for line in _steps(command) or [[command]]:
        parts = []
        for part in line:
            program, arguments = _program(_without_redirects(words_of(part)))
            parts.append(" ".join([program, *(a for a in arguments if a not in _QUIET)]))
        keys.append(" | ".join(parts))
    return " && ".join(keys)


def _without_redirects(words: list[str]) -> list[str]:
    """A command's words without redirections (``> file``, ``2>&1``, ``< in``)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _REDIRECTS or word in (">&", "<", "<&"):
            skip = True
            if kept and kept[-1].isdigit():
                kept.pop()  # the descriptor of 2>&1 or 2> file
        else:
            kept.append(word)
    return kept


def command_display(command: str) -> str:
    """A command as a summary shows it: its steps without ``cd``, output filters and
    redirections of standard error, on one line."""
    steps = _steps(command)
    shown = " && ".join(" | ".join(line) for line in steps) if steps else command.strip()
    shown = re.sub(r"\s*\d?>&\d|\s*\d?>\s*/dev/null", "", shown)
    return shorten(shown, COMMAND_CHARS)


def is_routine(command: str) -> bool:
    """Whether every step of a command only looks around (ls, cat, grep, git status…),
    so neither its success nor its failure is worth a summary's line."""
    for line in pipelines(command):
        for part in line:
            words = words_of(part)
            program, arguments = _program(words)
            if not program:
                continue
            if program == "git" and arguments[:1] and arguments[0] in _ROUTINE_GIT:
                continue
            if program == "sed" and any(a.startswith("-i") for a in arguments):
                return False
            if program not in _ROUTINE or any(w in _REDIRECTS for w in words):
                return False
    return True


def shell_files(command: str) -> tuple[list[str], list[str]]:
    """(files read, files changed) by a command line, as far as common commands show
    it: cat, head, tail, sed -n read; sed -i, perl -i, redirections, tee, touch, rm,
    mv and cp change."""
    reads: list[str] = []
    changes: list[str] = []
    cwd = ""  # where ``cd`` steps went, when they name an absolute folder
    for line in pipelines(command):
        cwd = _after_cd(cwd, words_of(line[0]))
        first_read, first_change = len(reads), len(changes)
        for part in line:
            words = words_of(part)
            for operator, target in itertools.pairwise(words):
                if operator in _REDIRECTS and target != "/dev/null" and _is_path(target):
                    changes.append(target)
            program, arguments = _program(_without_redirects(words))
            operands = _operands(program, arguments)
            if program in ("sed", "perl") and any(a.startswith(("-i", "-pi")) for a in arguments):
                changes += operands
            elif program in ("cat", "head", "tail", "less", "more", "bat", "nl", "sed"):
                reads += operands
            elif program in ("tee", "touch", "rm", "truncate"):
                changes += operands
            elif program in ("mv", "cp"):
                named = [a for a in arguments if a and not a.startswith("-")]
                target = named[-1] if len(named) >= 2 else ""
                file_target = _is_path(target) and not target.endswith("/")
                moved = [a for a in named[:-1] if _is_path(a)] if program == "mv" else []
                changes += [*moved, target] if file_target else moved
            elif program == "git" and arguments[:1] in (["mv"], ["rm"]):
                changes += [a for a in arguments[1:] if not a.startswith("-") and _is_path(a)]
        reads[first_read:] = [_resolved(cwd, p) for p in reads[first_read:]]
        changes[first_change:] = [_resolved(cwd, p) for p in changes[first_change:]]
    return reads, changes


def _after_cd(cwd: str, words: list[str]) -> str:
    """The folder after a ``cd`` step (unknown, "", when it is not absolute)."""
    if len(words) != 2 or words[0] != "cd" or words[1].startswith(("~", "$", "-")):
        return cwd
    if words[1].startswith("/"):
        return posixpath.normpath(words[1])
    return posixpath.normpath(posixpath.join(cwd, words[1])) if cwd else ""


def _resolved(cwd: str, path: str) -> str:
    if not cwd or path.startswith(("/", "~")):
        return path
    return posixpath.normpath(posixpath.join(cwd, path))


def _operands(program: str, arguments: list[str]) -> list[str]:
    """The arguments that name files: options, and a sed or perl script, left out."""
    found: list[str] = []
    scripted = program not in ("sed", "perl")
    skip = False
    for argument in arguments:
        if skip:
            skip = False
        elif program in ("sed", "perl") and argument in ("-e", "--expression", "-f"):
            scripted = skip = True
        elif argument == "" or argument.startswith("-"):
            continue  # an option, or macOS sed's empty backup suffix (-i '')
        elif not scripted:
            scripted = True  # the first operand is the script
        elif _is_path(argument):
            found.append(argument)
    return found


def _is_path(word: str) -> bool:
    if word in (".", "..") or not re.fullmatch(r"[~\w./@+-]+", word):
        return False
    return "." in word or "/" in word
