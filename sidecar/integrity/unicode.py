"""Text a person cannot see but a model reads: invisible characters, hidden tag text and
look-alike letters, found and undone before the injection rules look at a text.

- Tag characters (U+E0000-U+E007F) spell ASCII that no font draws: decoded, so the hidden
  text is shown and scanned. Emoji subdivision flags (a black flag, lowercase tags, a cancel
  tag) are the one legitimate use and are left alone.
- Bidi controls (embeddings, overrides, isolates) reorder what a person sees.
- Zero-width characters inside a word split it for a reader's eye and for naive matching.
  The joiners are legitimate between emoji and in scripts that need them (Persian, Indic),
  so only a joiner between two Latin letters counts.
- Runs of variation selectors carry bytes ("emoji smuggling").
- Words mixing Latin with Cyrillic or Greek look-alikes (`Ign\\u043ere`: a Cyrillic o).

`reveal` returns the text made plain (invisibles removed, NFKC, look-alikes mapped to
Latin, tag text appended) and what was found. Pure ASCII text costs one `isascii` call.
"""

from __future__ import annotations

import unicodedata
from typing import NamedTuple

import re2

# Characters that draw nothing (besides the ones handled on their own below).
_INVISIBLE = re2.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff"
    "\U000e0000-\U000e007f\ufe00-\ufe0f\U000e0100-\U000e01ef]"
)
_TAG_RUN = re2.compile("[\U000e0000-\U000e007f]+")
_BIDI = re2.compile("[\u202a-\u202e\u2066-\u2069]")
# What a right-to-left override turns around: up to the pop, the next override or the line end.
_OVERRIDDEN = re2.compile("\u202e([^\u202a-\u202e\n]+)")
# A zero-width character with a Latin letter on both sides (also the joiners: between two
# Latin letters they have no job to do).
_ZERO_WIDTH_IN_WORD = re2.compile("[A-Za-z0-9_][\u200b-\u200d\u2060\ufeff\u00ad]+[A-Za-z0-9_]")
# T h e s e  w o r d s: letters spaced out so that no word matches, words two spaces apart.
_SPACED_OUT = re2.compile(r"(?:\S {1,2}){12,}\S")
_SELECTOR_RUN = re2.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")
# A run of zero-width characters carries bits (two of them as 0 and 1: "zero-width smuggling").
_ZERO_WIDTH_RUN = re2.compile("[\u200b-\u200d\u2060\ufeff]{8,}")
_MIXED_SCRIPT = re2.compile(
    r"[\p{Latin}][\p{Cyrillic}\p{Greek}]|[\p{Cyrillic}\p{Greek}][\p{Latin}]"
)
_WORD = re2.compile(r"[\p{L}\p{M}\p{N}_]+")
_BLACK_FLAG = "\U0001f3f4"
_CANCEL_TAG = "\U000e007f"

# Cyrillic and Greek letters drawn like Latin ones.
_LOOK_ALIKES = str.maketrans(
    "аеорсухіјѕԁԛԝһӏАВЕКМНОРСТХЅІЈοαινρτκυχΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
    "aeopcyxijsdqwhlABEKMHOPCTXSIJoaivptkuxABEHIKMNOPTXYZ",
)


class UnicodeSign(NamedTuple):
    kind: str  # tag_text | bidi_controls | zero_width | variation_selectors | confusables
    detail: str  # what a person should see: the hidden text, the words, the code points


class Revealed(NamedTuple):
    text: str  # what the rules read
    signs: tuple[UnicodeSign, ...]


def reveal(text: str) -> Revealed:
    if text.isascii():
        spaced = _spaced_out(text)
        return Revealed(f"{text}\n{spaced}" if spaced else text, ())
    signs: list[UnicodeSign] = []
    hidden = _tag_text(text)
    if hidden:
        signs.append(UnicodeSign("tag_text", hidden))
    bidi = _BIDI.findall(text)
    if bidi:
        shown = ", ".join(sorted({f"U+{ord(c):04X}" for c in bidi}))
        signs.append(UnicodeSign("bidi_controls", f"{len(bidi)} ({shown})"))
    split = _ZERO_WIDTH_IN_WORD.findall(text)
    if split:
        words = ", ".join(escaped(w) for w in split[:3])
        signs.append(UnicodeSign("zero_width", f"{len(split)} inside words ({words})"))
    runs = _ZERO_WIDTH_RUN.findall(text)
    smuggled = " ".join(filter(None, (_bits_as_text(run) for run in runs[:8])))
    if runs and not split:
        longest = max(len(run) for run in runs)
        signs.append(UnicodeSign("zero_width", f"a run of {longest}: {smuggled[:120]!r}"))
    selectors = _SELECTOR_RUN.findall(text)
    if selectors:
        longest = max(len(run) for run in selectors)
        signs.append(UnicodeSign("variation_selectors", f"a run of {longest}"))
    plain = _INVISIBLE.sub("", text) if _INVISIBLE.search(text) else text
    plain = unicodedata.normalize("NFKC", plain)
    if _MIXED_SCRIPT.search(plain):
        mixed = [
            w for w in _WORD.findall(plain) if _MIXED_SCRIPT.search(w) and not _UNIT.fullmatch(w)
        ]
        if mixed:
            signs.append(UnicodeSign("confusables", ", ".join(mixed[:5])[:200]))
            plain = _WORD.sub(_latin_if_mixed, plain)
    # What is revealed goes after a blank line: a quote mark left open above it (`sellers'`)
    # must not make it read as quoted.
    if hidden:
        plain = f"{plain}\n\n{hidden}"
    if "\u202e" in text:
        # Right-to-left override: the reader sees the characters after it in reverse, so
        # text written backwards reads forwards. What the reader sees is scanned too.
        turned = [run[:2000][::-1] for run in _OVERRIDDEN.findall(text)[:8]]
        plain = "\n\n".join([plain, *(_INVISIBLE.sub("", r) for r in turned)])
    if smuggled:
        plain = f"{plain}\n\n{smuggled}"
    spaced = _spaced_out(plain)
    if spaced:
        plain = f"{plain}\n{spaced}"
    return Revealed(plain, tuple(signs))


# `µs`, `µm`, `µF`: the micro sign (NFKC makes it Greek mu) before a unit is no look-alike.
_UNIT = re2.compile("[\u00b5\u03bc](?:s|ms|m|g|l|L|A|V|F|W|Hz|mol|Pa)")


def _spaced_out(text: str) -> str:
    """Spaced-out letters closed up (`N o t e  f o r` -> `Note for`), appended for the
    rules to read; "" when the text has none."""
    if "  " not in text:
        return ""
    found = [
        " ".join(word.replace(" ", "") for word in str(m.group(0)).split("  "))
        for m in _SPACED_OUT.finditer(text[:_MAX_SPACED_TEXT])
    ]
    return "\n".join(found[:8])


_MAX_SPACED_TEXT = 64 * 1024


def _bits_as_text(run: str) -> str:
    """The ASCII a run of two zero-width characters spells as bits, in either order of the
    two, if one reading is mostly printable; else ""."""
    kinds = sorted(set(run))
    if len(kinds) != 2 or len(run) < 16:
        return ""
    for zero in kinds:
        bits = "".join("0" if c == zero else "1" for c in run)
        decoded = "".join(chr(int(bits[i : i + 8], 2)) for i in range(0, len(bits) - 7, 8))
        printable = sum(c.isprintable() and c.isascii() for c in decoded)
        if decoded and printable >= 0.9 * len(decoded):
            return decoded
    return ""


def _latin_if_mixed(match: re2._Match) -> str:
    word = str(match.group(0))
    return word.translate(_LOOK_ALIKES) if _MIXED_SCRIPT.search(word) else word


def _tag_text(text: str) -> str:
    """ASCII spelled in tag characters, except emoji subdivision flags."""
    if max(text) < "\U000e0000":
        return ""
    pieces: list[str] = []
    for match in _TAG_RUN.finditer(text):
        run = match.group(0)
        start = match.start()
        if (
            start > 0
            and text[start - 1] == _BLACK_FLAG
            and run.endswith(_CANCEL_TAG)
            and len(run) <= 8
            and all("a" <= chr(ord(c) - 0xE0000) <= "z" or c == _CANCEL_TAG for c in run)
        ):
            continue  # a subdivision flag, e.g. Scotland's
        decoded = "".join(chr(ord(c) - 0xE0000) for c in run if ord(c) - 0xE0000 >= 0x20)
        if decoded.strip():
            pieces.append(decoded.replace("\x7f", ""))
    return " ".join(pieces)


def escaped(text: str) -> str:
    """Invisible and control characters written out (`\\u200b`), so a prompt shows them."""
    if text.isascii() and text.isprintable():
        return text
    out: list[str] = []
    for char in text:
        code = ord(char)
        if char in "\n\t":
            out.append(char)
        elif (
            unicodedata.category(char) in ("Cf", "Cc", "Co", "Cn", "Zl", "Zp")
            or 0xFE00 <= code <= 0xFE0F
            or 0xE0100 <= code <= 0xE01EF
        ):
            out.append(f"\\u{{{code:04x}}}")
        else:
            out.append(char)
    return "".join(out)
