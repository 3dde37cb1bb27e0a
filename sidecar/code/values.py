"""Values the analysers compute from code, and the folding helpers every language shares.

A value is a constant (`str`, `int`, `float`, `bool`, `None`, a tuple of values for a
list, a dict for a mapping), `UNKNOWN` (known only at run time), or `Data`: text whose
content the code does not spell out but whose provenance is known (read from a file or
the environment, downloaded, decoded). Languages add their own object values (modules,
sockets, paths) on top; nothing here knows any language.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import codecs
import lzma
import posixpath
import zlib
from collections.abc import Iterable
from typing import NamedTuple, TypeGuard
from urllib.parse import urlsplit

from sidecar.effects.model import ENVIRONMENT, UNRESOLVED, Origin

MAX_TEXT = 64 * 1024  # longest string a fold may build; longer results are UNKNOWN
MAX_ITEMS = 256  # longest list a fold may build (and a loop may be unrolled over)
# Names code uses for places: what the analysed code would touch, never used here.
TEMP_DIR = "/tmp"  # noqa: S108
ANY_ADDRESS = "0.0.0.0"  # noqa: S104


class Unknown:
    """A value known only at run time."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = Unknown()


class Ref(NamedTuple):
    """A module, class or function of a library, by dotted name (`os.system`)."""

    name: str


# Library values that are the whole process environment (where API keys live).
ENVIRONMENT_REFS = frozenset(
    {"os.environ", "process.env", "ENV", "%ENV", "$_ENV", "$_SERVER", "env:", "Deno.env"}
)


def is_list(value: object) -> TypeGuard[tuple[object, ...]]:
    """Lists are plain tuples (named tuples are other values: Data, Ref, ...)."""
    return type(value) is tuple


class Data(NamedTuple):
    """Text whose provenance is known: `origin` says where it came from, `sources` which
    paths (or ENVIRONMENT, or hosts) it holds, `text` its content when that can be told
    (a decoded constant). `partial` is the text with HOLE where parts are not known
    (`"https://x.example/?k=" + secret`): enough to tell a host, never to run."""

    origin: Origin
    sources: tuple[str, ...] = ()
    text: str | None = None
    partial: str | None = None


HOLE = "\ufffc"  # stands for an unknown part of a partially known text


def is_text(value: object) -> bool:
    return isinstance(value, str)


def text_of(value: object) -> str | None:
    """The text a value stands for, when it is known (a constant or decoded data)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, Data):
        return value.text
    return None


def concat(parts: Iterable[object]) -> object:
    """Several values joined as text: a constant when every part is; data (with merged
    provenance, and what is known of the text) when some part is data or unknown."""
    texts: list[str] = []
    origin: Origin | None = None
    sources: list[str] = []
    known = True
    total = 0
    for part in parts:
        if isinstance(part, Data):
            origin = _stronger(origin, part.origin)
            sources.extend(part.sources)
            text = part.text
            if text is None:
                known = False
                text = part.partial if part.partial is not None else HOLE
        else:
            text = text_of(part)
            if text is None:
                if is_list(part) or isinstance(part, dict):
                    return UNKNOWN
                origin = _stronger(origin, Origin.UNKNOWN)
                known = False
                text = HOLE
        total += len(text)
        if total > MAX_TEXT:
            return UNKNOWN
        texts.append(text)
    joined = "".join(texts)
    if origin is None:
        return joined
    if known:
        return Data(origin, tuple(dict.fromkeys(sources)), joined)
    return Data(origin, tuple(dict.fromkeys(sources)), None, joined)


# When data from several origins meets, the one a reader can least see wins.
_ORIGIN_RANK = {
    Origin.NONE: 0,
    Origin.LITERAL: 1,
    Origin.FILE: 2,
    Origin.UNKNOWN: 3,
    Origin.DECODED: 4,
    Origin.NETWORK: 5,
}


def _stronger(a: Origin | None, b: Origin) -> Origin:
    if a is None or _ORIGIN_RANK[b] > _ORIGIN_RANK[a]:
        return b
    return a


def derived(value: object, text: str | None) -> object:
    """A string method's result on `value`: a constant for a constant, data keeps its
    provenance."""
    if isinstance(value, Data):
        return Data(value.origin, value.sources, text)
    if text is None:
        return UNKNOWN
    return text


def sources_of(value: object) -> tuple[str, ...]:
    """The paths and ENVIRONMENT a value carries, looking inside lists and mappings."""
    if isinstance(value, Data):
        return value.sources
    if isinstance(value, Ref):
        return (ENVIRONMENT,) if value.name in ENVIRONMENT_REFS else ()
    if is_list(value):
        return tuple(dict.fromkeys(s for item in value for s in sources_of(item)))
    if isinstance(value, dict):
        return tuple(dict.fromkeys(s for item in value.values() for s in sources_of(item)))
    return ()


def carried_through(values: Iterable[object]) -> object:
    """What a function the analysers do not model returns of the values it was given: their
    sources (`base64.b64encode(open(key).read())` still holds the key, a compressed download
    is still a download), else UNKNOWN. Only what is sent, written or run gets stricter."""
    given = list(values)
    sources = tuple(dict.fromkeys(s for v in given for s in sources_of(v)))
    if not sources:
        return UNKNOWN
    origins = [v.origin for v in given if isinstance(v, Data)]
    return Data(origins[0] if origins else Origin.UNKNOWN, sources)


def printf(template: str, values: object) -> object:
    """sprintf/format with %s and %d (what commands are built with); anything fancier is
    not folded."""
    items = values if is_list(values) else (values,)
    assert isinstance(items, tuple)
    out: list[object] = []
    index = 0
    position = 0
    while position < len(template):
        char = template[position]
        if char != "%":
            out.append(char)
            position += 1
            continue
        conversion = template[position + 1 : position + 2]
        position += 2
        if conversion == "%":
            out.append("%")
        elif conversion in ("s", "d", "i"):
            out.append(items[index] if index < len(items) else UNKNOWN)
            index += 1
        else:
            return UNKNOWN
    return concat(out)


# --- paths ---------------------------------------------------------------------------

_HOME_PREFIXES = ("$HOME", "${HOME}", "%USERPROFILE%", "$env:HOME", "${env:HOME}")


def home_form(path: str) -> str:
    """`$HOME/x`, `${HOME}/x` → `~/x`: one spelling of the home directory."""
    for prefix in _HOME_PREFIXES:
        if path == prefix or path.startswith((prefix + "/", prefix + "\\")):
            return "~" + path[len(prefix) :]
    return path


def normal_path(path: str, cwd: str | None = None) -> str:
    """A path as effects carry it: home spelled `~`, `..` and `.` folded, relative paths
    joined to a known working directory."""
    path = home_form(path.strip())
    if not path:
        return UNRESOLVED
    if cwd and not path.startswith(("/", "~")) and "://" not in path:
        path = posixpath.join(cwd, path)
    if path.startswith(("/", "~")):
        folded = posixpath.normpath(path)
        if path.startswith("//"):  # normpath keeps a leading //; it names the root here
            folded = "/" + folded.lstrip("/")
        if folded.startswith("~/..") or folded == "~/..":  # above home: cannot tell where
            return folded
        return folded
    return path


def join_path(parts: Iterable[object]) -> object:
    """os.path.join / Path / ...: a later absolute part starts over, like the real thing."""
    texts: list[str] = []
    for part in parts:
        text = text_of(part)
        if text is None or isinstance(part, Data):
            return UNKNOWN
        texts.append(text)
    if not texts:
        return UNKNOWN
    return posixpath.join(*texts)


def host_of(url: object) -> str | None:
    """The host a URL (or host[:port], or host name) names; None when it cannot be told.
    A partly known URL still names its host when the host part is known."""
    text = text_of(url)
    if isinstance(url, Data):
        if url.origin not in (Origin.LITERAL, Origin.UNKNOWN):
            return None
        text = url.text if url.text is not None else url.partial
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    if "://" not in text:
        if text.count(":") > 1 and not text.startswith("["):
            return text.lower()  # a bare IPv6 address (`::1`), as sockets take it
        text = "//" + text
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        return None
    if not host or HOLE in host:
        return None
    return host


# --- permission modes ----------------------------------------------------------------


def mode_flags(mode: object) -> frozenset[str]:
    """Flags of a chmod mode: "loosen" (group/world writable), "setuid", "exec";
    "unresolved" when the mode is not known."""
    if isinstance(mode, bool):
        return frozenset({"unresolved"})
    if isinstance(mode, int):
        return _numeric_mode_flags(mode)
    text = text_of(mode)
    if text is None:
        return frozenset({"unresolved"})
    text = text.strip()
    if text and all(c in "01234567" for c in text):
        return _numeric_mode_flags(int(text, 8))
    flags: set[str] = set()
    for clause in text.split(","):
        who, _, perms = _split_symbolic(clause)
        if "s" in perms and ("u" in who or "g" in who or not who or "a" in who):
            flags.add("setuid")
        if "w" in perms and (not who or "a" in who or "g" in who or "o" in who):
            flags.add("loosen")
        if "x" in perms:
            flags.add("exec")
    return frozenset(flags) if text else frozenset({"unresolved"})


def _split_symbolic(clause: str) -> tuple[str, str, str]:
    for index, char in enumerate(clause):
        if char in "+-=":
            if char == "-":
                return clause[:index], char, ""  # taking permissions away loosens nothing
            return clause[:index], char, clause[index + 1 :]
    return "", "", ""


def _numeric_mode_flags(mode: int) -> frozenset[str]:
    flags: set[str] = set()
    if mode & 0o022:
        flags.add("loosen")
    if mode & 0o6000:
        flags.add("setuid")
    if mode & 0o111:
        flags.add("exec")
    return frozenset(flags)


# --- decoders: bytes in, bytes out; None when the input does not decode -------------


def b64decode(text: str, altchars: bool = False) -> bytes | None:
    cleaned = "".join(text.split())
    if altchars:
        cleaned = cleaned.replace("-", "+").replace("_", "/")
    cleaned = cleaned.rstrip("=")
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        return None


def b32decode(text: str) -> bytes | None:
    cleaned = "".join(text.split()).upper().rstrip("=")
    cleaned += "=" * (-len(cleaned) % 8)
    try:
        return base64.b32decode(cleaned)
    except (binascii.Error, ValueError):
        return None


def hexdecode(text: str) -> bytes | None:
    cleaned = "".join(text.split()).removeprefix("0x").replace("\\x", "")
    try:
        return bytes.fromhex(cleaned)
    except ValueError:
        return None


def rot13(text: str) -> str:
    return codecs.decode(text, "rot13")


def decompress(raw: bytes, kind: str) -> bytes | None:
    """zlib/gzip/deflate/bz2/lzma of constant bytes, stopping at MAX_TEXT (no bombs)."""
    try:
        if kind in ("zlib", "gzip", "deflate", "auto"):
            wbits = {"zlib": 15, "gzip": 31, "deflate": -15, "auto": 47}[kind]
            out = zlib.decompressobj(wbits).decompress(raw, MAX_TEXT + 1)
        elif kind == "bz2":
            out = bz2.BZ2Decompressor().decompress(raw, MAX_TEXT + 1)
        elif kind == "lzma":
            out = lzma.LZMADecompressor().decompress(raw, MAX_TEXT + 1)
        else:
            return None
    except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError):
        return None
    return out if len(out) <= MAX_TEXT else None


def decoded(raw: bytes | None, *, binary: bool = False) -> object:
    """Decoded bytes as data from DECODED: text as UTF-8, or (binary) one character
    per byte, as Python bytes and JavaScript binary strings hold it."""
    if raw is None:
        return Data(Origin.DECODED)
    text = raw.decode("latin-1") if binary else raw.decode("utf-8", "replace")
    return Data(Origin.DECODED, (), text)


def env_value(name: object) -> object:
    """An environment variable's value: HOME is `~`; the rest is data from the environment
    (where API keys live)."""
    text = text_of(name)
    if text in ("HOME", "USERPROFILE"):
        return "~"
    if text in ("TMPDIR", "TEMP", "TMP"):
        return TEMP_DIR
    folder = _WINDOWS_FOLDERS.get(text.upper()) if isinstance(text, str) else None
    if folder is not None:
        return folder  # $env:LOCALAPPDATA, process.env.APPDATA: where Windows keeps them
    return Data(Origin.UNKNOWN, (ENVIRONMENT,), None)


# Windows' folder variables (their names are case-insensitive there).
_WINDOWS_FOLDERS = {
    "APPDATA": "~/AppData/Roaming", "LOCALAPPDATA": "~/AppData/Local", "HOMEPATH": "~",
    "PROGRAMDATA": "C:/ProgramData", "SYSTEMROOT": "C:/Windows", "WINDIR": "C:/Windows",
    "PROGRAMFILES": "C:/Program Files", "PUBLIC": "C:/Users/Public",
}  # fmt: skip


ENVIRONMENT_DATA = Data(Origin.UNKNOWN, (ENVIRONMENT,), None)
