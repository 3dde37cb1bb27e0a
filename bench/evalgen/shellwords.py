"""Just enough shell lexing to find a word in a command line and to quote text safely."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

OPERATORS = set(";|&()<>\n")
SPACE = set(" \t")


@dataclass(frozen=True)
class Occurrence:
    """Where `target` sits in a command: the enclosing word and its quoting context."""

    start: int  # of the target
    end: int
    word_start: int  # of the whole shell word around it
    word_end: int
    in_double_quotes: bool
    standalone: bool  # the target is the whole word
    redirect: bool  # the word is the operand of a redirection


def _quote_states(text: str) -> list[str]:
    """For each character: '' outside quotes, "'" or '"' inside, '\\' when escaped."""
    states: list[str] = []
    state = ""
    escaped = False
    for char in text:
        if escaped:
            states.append("\\")
            escaped = False
            continue
        if state == "'":
            states.append("'")
            if char == "'":
                state = ""
            continue
        if char == "\\":
            states.append(state)
            escaped = True
            continue
        if state == '"':
            states.append('"')
            if char == '"':
                state = ""
            continue
        states.append("")
        if char in "'\"":
            state = char
            states[-1] = char
    return states


def find(command: str, target: str) -> Occurrence | None:
    """The single occurrence of `target` as a word or a word's tail after `=`/`@`/`:`."""
    states = _quote_states(command)
    found: list[Occurrence] = []
    for match in re.finditer(re.escape(target), command):
        start, end = match.start(), match.end()
        before = command[start - 1] if start else " "
        after = command[end] if end < len(command) else " "
        if before not in ' \t\n=@:<>"(' or after not in ' \t\n;|&)<>"':
            continue
        if states[start] == "'" or states[start] == "\\":
            continue
        in_dq = states[start] == '"'
        word_start = start
        while word_start > 0:
            prev = word_start - 1
            if states[prev] == "" and (command[prev] in SPACE or command[prev] in OPERATORS):
                break
            word_start = prev
        word_end = end
        while word_end < len(command):
            if states[word_end] == "" and (
                command[word_end] in SPACE or command[word_end] in OPERATORS
            ):
                break
            word_end += 1
        redirect = False
        back = word_start - 1
        while back >= 0 and command[back] in SPACE:
            back -= 1
        if back >= 0 and command[back] in "<>" and states[back] == "":
            redirect = True
        found.append(
            Occurrence(
                start,
                end,
                word_start,
                word_end,
                in_dq,
                standalone=(word_start == start and word_end == end),
                redirect=redirect,
            )
        )
    return found[0] if len(found) == 1 else None


def is_simple(command: str) -> bool:
    """One simple command: no pipes, lists, redirections, subshells or newlines."""
    if "\n" in command or "$(" in command or "`" in command:
        return False
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        tokens = list(lexer)
    except ValueError:
        return False
    return not any(token and set(token) <= set(";|&()<>") for token in tokens)


def first_word(command: str) -> str | None:
    """The program name, when the command starts with a plain one."""
    match = re.match(r"([a-z][a-z0-9._+-]*)[ \t]", command)
    return match.group(1) if match else None


def quote(text: str) -> str:
    return shlex.quote(text)


def heredoc_delimiter(body: str, preferred: str) -> str:
    delimiter = preferred
    while any(line.strip() == delimiter for line in body.splitlines()):
        delimiter += "_"
    return delimiter
