"""Handlers for effect APIs, shared by the tree-sitter languages: a language's table maps
an API's name (`fs.rmSync`, `FileUtils.rm_rf`, `unlink`) to one of these, told which
argument holds the path, the command or the data.
"""

from __future__ import annotations

from urllib.parse import unquote

from sidecar.code.treewalk import Args, Handle, Handler, TreeAnalyser
from sidecar.code.values import (
    UNKNOWN,
    Data,
    b64decode,
    decoded,
    hexdecode,
    is_list,
    rot13,
    text_of,
)
from sidecar.effects.model import Origin


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, int | str) and bool(value) and value != "0")


def reads(index: int = 0, *, listing: bool = False, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        path = args.get(index, "path")
        a.out.read(path, name, listing=listing)
        if listing:
            base = text_of(path)
            return (base.rstrip("/") + "/*",) if base is not None else UNKNOWN
        return Data(Origin.FILE, (a.out.target(path)[0],))

    return handler


def writes(
    index: int = 0,
    content: int | None = 1,
    *,
    append: bool = False,
    name: str = "",
    flags: tuple[str, ...] = (),
) -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        path = args.get(index, "path")
        text = args.get(content, "content") if content is not None else None
        mode = text_of(args.option("flag", args.option("flags", "")))
        index_ = a.out.write(path, name, text, append=append or mode == "a", flags=flags)
        return Handle("wfile", index_, path)

    return handler


def deletes(index: int = 0, *, recursive: bool | str = False, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        deep = recursive if isinstance(recursive, bool) else _truthy(args.option(recursive))
        a.out.delete(args.get(index, "path"), name, recursive=deep)
        return None

    return handler


def moves(source: int = 0, destination: int = 1, *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.move(args.get(source, "source"), args.get(destination, "destination"), name)
        return None

    return handler


def copies(
    source: int = 0, destination: int = 1, *, recursive: bool | str = False, name: str = ""
) -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        deep = recursive if isinstance(recursive, bool) else _truthy(args.option(recursive))
        a.out.copy(
            args.get(source, "source"), args.get(destination, "destination"), name, recursive=deep
        )
        return None

    return handler


def chmods(path: int = 0, mode: int = 1, *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.chmod(args.get(path, "path"), args.get(mode, "mode"), name)
        return None

    return handler


def chowns(path: int = 0, *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.chown(args.get(path, "path"), name)
        return None

    return handler


def spawns(index: int = 0, *, name: str = "", argv: int | None = None) -> Handler:
    """A command line at `index`; with `argv`, a program at `index` and its arguments as
    a list at `argv` (spawn("ls", ["-l"]))."""

    def handler(a: TreeAnalyser, args: Args) -> object:
        command = args.get(index, "command")
        if argv is not None:
            rest = args.get(argv, "args", ())
            shell = _truthy(args.option("shell", False))
            if is_list(rest) and not shell:
                command = (command, *rest)
            elif is_list(rest) and shell:
                command = " ".join(text_of(p) or "\ufffc" for p in (command, *rest))
            elif rest is not UNKNOWN and rest is not None and not isinstance(rest, dict):
                command = UNKNOWN
        a.out.spawn(command, name)
        return Handle("process", 0, command)

    return handler


def spawns_list(*, name: str = "") -> Handler:
    """system("ls", "-l"): the program and its arguments as separate arguments."""

    def handler(a: TreeAnalyser, args: Args) -> object:
        words = tuple(p for p in args.pos if not isinstance(p, dict))
        if len(words) == 1:
            a.out.spawn(words[0], name)
        elif words:
            a.out.spawn(words, name)
        return Handle("process", 0, words)

    return handler


def evals(index: int = 0, *, name: str = "", language: str | None = None) -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.execute(args.get(index, "code"), name, language)
        return UNKNOWN

    return handler


def fetches(index: int = 0, *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        return a.out.fetch(args.get(index, "url"), name)

    return handler


def sends(url: int = 0, data: tuple[int, ...] = (1,), *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.send(args.get(url, "url"), [args.get(i, "", None) for i in data], name)
        return Data(Origin.NETWORK)

    return handler


def connects(host: int = 0, port: int = 1, *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.connect(args.get(host, "host"), args.get(port, "port"), name)
        return a.new_handle("socket", args.get(host, "host"))

    return handler


def privileges(index: int = 0, *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.privilege(args.get(index, "uid"), name)
        return None

    return handler


def kills(index: int = 0, *, name: str = "") -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        a.out.kill(args.get(index, "pid"), name)
        return None

    return handler


def returns(value: object) -> Handler:
    return lambda a, args: value


def decode(kind: str, index: int = 0, *, binary: bool = False) -> Handler:
    """base64/hex/rot13 of the argument at `index`: data from DECODED."""

    def handler(a: TreeAnalyser, args: Args) -> object:
        return decode_value(args.get(index, "data"), kind, binary=binary)

    return handler


def decode_value(value: object, kind: str, *, binary: bool = False) -> object:
    text = text_of(value)
    if text is None or (isinstance(value, Data) and value.text is None):
        return Data(Origin.DECODED)
    if kind == "base64":
        return decoded(b64decode(text), binary=binary)
    if kind == "base64url":
        return decoded(b64decode(text, altchars=True), binary=binary)
    if kind == "hex":
        return decoded(hexdecode(text), binary=binary)
    if kind == "rot13":
        return Data(Origin.DECODED, (), rot13(text))
    if kind == "uri":
        return Data(Origin.DECODED, (), unquote(text))
    return Data(Origin.DECODED)


def identity(index: int = 0) -> Handler:
    return lambda a, args: args.get(index, "value")
