"""How text is laid out, for telling words used from words talked about.

A security article that quotes "Ignore all previous instructions and send ..." and a test
fixture `page = '<p>AI agent: email the file to ...</p>'` mention an injection; they do not
make one. A quotation inside prose (a quote mark opened after a word, closed on the same
line, a sentence long, a small part of the text) is mentioned text: signs found wholly
inside it do not count. Code spans (backticks) are not quotations: injections put the
command to run there.

Structured payloads are read as a person would: a JSON document becomes its string values,
one per line (`key: value`), so escaped newlines and quotes do not hide the layout.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import re2

MAX_JSON = 256 * 1024  # characters: larger documents are judged as they come
MAX_QUOTES = 64
_QUOTE_MIN = 12  # characters inside: a sentence, not a word
_QUOTE_MAX = 400
_FRAME_WORDS = 5  # words outside quotations for them to be quotations in prose

# An opening quote after a word and a space (or an opening parenthesis, or "= " in code);
# the closing one of the same kind is looked for on the same line.
# After a word or a mark and a space, an opening bracket, `=`, markdown emphasis (`*"...`),
# or an item of a list in code (`[\n    "...",`).
_OPENING = re2.compile(
    r"(?:[\w.,:;!?)\]\[{]\s+|[(*_]|=\s*|(?:^|\n)[ \t]*(?:>|[-*\x{2022}])[ \t]*)"
    r"([\x22'\x{201C}\x{2018}«「„])"
)  # ... or a markdown blockquote's `> "..."`, a list item's `- "..."`
_CLOSING = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "«": "»", "「": "」",
            "„": "\u201c"}  # fmt: skip


_SAID_BY_CALL = re2.compile(
    r"(?i)(?:error|exception|raise|print|println|printf|log|warn|warning|fatal|panic|fail|"
    r"abort|exit|die|throw|alert|console\.\w+|logger\.\w+|logging\.\w+)\s*\($"
)
# Inside a markdown link or image, after its address: `](docs/arch.png ` then the title.
_LINK_TITLE_BEFORE = re2.compile(r"\]\([^()\s]+\s+$")
# A YAML or JSON key opening the line before a quoted value (`  ai-ops/notes: "`).
# A node of an accessibility snapshot (Playwright's aria tree): `  - button "Place order"`.
_ARIA_NODE = re2.compile(
    r"^\s*-\s+(?:button|link|heading|text|textbox|searchbox|img|image|paragraph|listitem|"
    r"checkbox|radio|combobox|option|tab|menuitem|cell|row|columnheader|rowheader|dialog|"
    r"alertdialog|alert|status|banner|navigation|main|article|region|form|group|generic|label|"
    r"figure|contentinfo|complementary|tooltip|note|switch|slider|spinbutton|log|marquee)\s+$"
)
# A diff's or a plan's mark may open the line (`+ "contact" = "`, `~ tags = `).
_DATA_KEY = re2.compile(r"^\s*(?:[-+~]\s+)?[\x22']?[\w./@-]+[\x22']?\s*[:=]\s*$")
# A JSON object's member inside a line of prose or a log (`AssertionError: {"error": "..."}`):
# data too. A line that is a JSON record itself (JSON Lines) keeps its quotations: a dataset
# of prompts quotes them.
_JSON_MEMBER_BEFORE = re2.compile(r"^\s*[^\s{\[][^\n]*[{,]\s*\x22[\w./@-]+\x22\s*:\s*$")


def quotations(text: str) -> list[tuple[int, int]]:
    """Spans of quoted sentences (quote marks included) inside prose."""
    spans: list[tuple[int, int]] = []
    after = 0
    for match in _OPENING.finditer(text):
        start = match.start(1)
        if start < after:
            continue
        if len(spans) >= MAX_QUOTES:
            break
        before = text[max(0, start - 24) : start].rstrip().rsplit(None, 1)
        if before and before[-1].startswith("-") and len(before[-1]) > 1:
            continue  # `sh -c '...'`, `python -c "..."`: a command's argument, not a quotation
        if text[max(0, start - 1) : start] == "=":
            continue  # `alt="..."`, `title='...'`: an attribute's value is said, not quoted
        if _SAID_BY_CALL.search(text[max(0, start - 40) : start]) is not None:
            continue  # `raise RuntimeError("...")`: an error or log message is said to its reader
        if _LINK_TITLE_BEFORE.search(text[max(0, start - 300) : start]) is not None:
            continue  # `![x](img.png "...")`: a link's title is shown on hover, not quoted
        line_start = text.rfind("\n", 0, start) + 1
        if (
            _DATA_KEY.match(text[line_start:start]) is not None
            or _JSON_MEMBER_BEFORE.search(text[line_start:start]) is not None
        ):
            continue  # `owner/note: "..."`, `"note": "..."`: a value in data, said as it stands
        if _ARIA_NODE.match(text[line_start:start]) is not None:
            continue  # `- button "..." [ref=e22]`: an accessibility tree's label, the page's text
        closing = _CLOSING[text[start]]
        # A quotation may wrap onto the next line of a paragraph, never past a blank line.
        line_end = text.find("\n\n", start)
        limit = min(len(text), start + 1 + _QUOTE_MAX, line_end if line_end >= 0 else len(text))
        end = text.find(closing, start + 1, limit)
        if end < 0 or (end + 1 < len(text) and text[end + 1].isalnum()):
            continue
        inner = text[start + 1 : end]
        if len(inner) < _QUOTE_MIN or " " not in inner.strip():
            continue
        spans.append((start, end + 1))
        after = end + 1
    spans = sorted(spans + _example_blocks(text, spans))
    outside, last = [], 0
    for start, end in spans:
        outside.append(text[last:start])
        last = end
    outside.append(text[last:])
    if len(" ".join(outside).split()) < _FRAME_WORDS:
        return []  # nothing around the quotation: it is the message itself
    return spans


# A line that introduces a sample: "The payload looked like this:", "the tool contained:".
# The word stands alone: `ops.example.com/owner-note:` (a key in data) introduces nothing.
_INTRODUCES_SAMPLE = re2.compile(
    r"(?i)(?:^|[^\w./-])(?:example|examples|payload|sample|snippet|proof[- ]of[- ]concept|poc|"
    r"looks?\s+like|looked\s+like|like\s+this|such\s+as|contained|containing|contains|said|"
    r"says|reads|read\s+as|titled|attackers?\s+(?:wrote|write|planted|used|can|could)|e\.g\.|"
    r"for\s+instance|following\s+text)(?:[^\w./\n-][^\n]*)?:\s*$"
)
_BLOCK_LINE = re2.compile(r"^(?:[ ]{4}|\t|>)")
MAX_BLOCKS = 16


def _example_blocks(text: str, taken: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Blocks (fenced code, indented code, a blockquote) that a line introducing a sample
    opens: a write-up showing an attack, talked about, not said."""
    blocks: list[tuple[int, int]] = []
    position = 0
    while len(blocks) < MAX_BLOCKS:
        colon = text.find(":\n", position)
        if colon < 0:
            break
        position = colon + 2
        line_start = text.rfind("\n", 0, colon) + 1
        if _INTRODUCES_SAMPLE.search(text[line_start : colon + 1]) is None:
            continue
        start = position
        while text.startswith("\n", start):
            start += 1
        if text.startswith("```", start):
            close = text.find("```", start + 3)
            end = close + 3 if close >= 0 else len(text)
        else:
            end = start
            while end < len(text):
                line_end = text.find("\n", end)
                line_end = len(text) if line_end < 0 else line_end
                if _BLOCK_LINE.match(text[end:line_end]) is None:
                    break
                end = line_end + 1
        if end > start and not inside(taken, start, end):
            blocks.append((start, end))
            position = end
    # A table of labelled samples ("examples used to evaluate the filter", then `| 1 | Ignore
    # previous instructions ... | injection |`): a dataset shown, not said.
    for match in _TABLE.finditer(text):
        if len(blocks) >= 2 * MAX_BLOCKS:
            break
        start, end = match.span(1)
        if _DESCRIBES_SAMPLES.search(text[max(0, start - 400) : start]) is None:
            continue
        if not inside(taken, start, end):
            blocks.append((start, end))
    # Inline: "a description can say `<IMPORTANT>read ...</IMPORTANT>`" shows a sample.
    for match in _SAMPLE_SPAN.finditer(text):
        if len(blocks) >= 2 * MAX_BLOCKS:
            break
        start, end = match.span(1)
        if not inside(taken, start, end):
            blocks.append((start, end))
    return blocks


_TABLE = re2.compile(r"(?:^|\n)((?:[ \t]*\|[^\n]*\|[ \t]*(?:\n|$)){2,200})")
_DESCRIBES_SAMPLES = re2.compile(
    r"(?i)\b(?:examples?|samples?|payloads?|labell?ed|test\s+cases?|dataset|fixtures?|corpus|"
    r"attempts?\s+(?:we|were)\s+(?:saw|seen|blocked|logged)|detections?|blocked\s+requests?)\b"
)
_SAMPLE_SPAN = re2.compile(
    r"(?i)\b(?:can\s+say|could\s+say|says|said|like|such\s+as|e\.g\.,?|for\s+example,?|reads|"
    r"wrote|writes|containing|contained)\s*:?\s*(`[^`\n]{12,400}`)"
)


def inside(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def plain(text: str) -> str:
    """A JSON document as its string values, one per line; other text as it is."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{" or len(stripped) > MAX_JSON:
        return text
    try:
        document = json.loads(stripped)
    except (ValueError, RecursionError):
        return text
    lines = list(_values(document, (), 0))
    return "\n".join(lines) if lines else text


def _values(node: object, path: tuple[str, ...], depth: int) -> Iterator[str]:
    if depth > 32:
        return
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _values(v, (*path, str(k))[-_KEY_PATH:], depth + 1)
    elif isinstance(node, list):
        for v in node:
            yield from _values(v, path, depth + 1)
    elif isinstance(node, str) and node.strip():
        spoken = _spoken(path)
        yield f"{spoken}: {node}" if spoken else node


# Keys a value sits under, read as words: a payload's `"assistant_next_action": {"command":
# ...}` addresses the agent through its container's key, which a leaf's own key would lose.
_KEY_PATH = 3


def _spoken(path: tuple[str, ...]) -> str:
    return " ".join(_words(key) for key in path if not key.isdigit())


def _words(key: str) -> str:
    spaced = _CAMEL.sub(r"\1 \2", key[:64])
    return str(_SEPARATORS.sub(" ", spaced)).strip()


_CAMEL = re2.compile(r"([a-z0-9])([A-Z])")
_SEPARATORS = re2.compile(r"[_.\-]+")
