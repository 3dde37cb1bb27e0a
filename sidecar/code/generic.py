"""Code in languages without a parser here (Lua, R, Julia, Tcl, AppleScript, Scheme, ...).

Without a grammar, the analysis reads what every such language shares: calls with literal
arguments. A call named like a process start (`os.execute`, `system`, `run`, Tcl's `exec`,
AppleScript's `do shell script`, Julia's backtick commands) hands its string to the shell
analyser; a call named like a deletion (`os.remove`, `unlink`, `rm`, `file.remove`) deletes
its literal path, a whole tree when the call says `recursive`; `open(path, "w")` and the
`write*` family write it; other path literals are taken as reads. What this misses is code
that computes its names, which these one-liners rarely do; it never makes a call stricter
than "what its literals say".
"""

from __future__ import annotations

import shlex

import re2

from sidecar.code.collector import Collector, Nested
from sidecar.effects.model import CodeAnalysis

_STRING = r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
# name(  "literal"  [, ...)]   -- the first argument a literal, or a literal inside calls
# that only spell a path (`unlink(path.expand("~"), recursive = TRUE)`,
# `File.Delete(Path.GetFullPath("x"))`); the rest of the call kept
_CALL = re2.compile(
    rf"([A-Za-z_][\w.:$]*)\s*\(?\s*(?:(?:path\.expand|normalizePath|expanduser|abspath|"
    rf"realpath|GetFullPath|File\.expand_path|filepath\.Clean|fs\.realpathSync)\s*\(\s*)?"
    rf"({_STRING})(?:\s*\))?([^)\n]*)"
)
_STRING_LITERAL = re2.compile(_STRING)
_TCL_EXEC = re2.compile(r"(?m)(?:^|[;\[{]\s*)exec\s+([^\]\n;}]+)")
_APPLESCRIPT = re2.compile(rf"(?i)do\s+shell\s+script\s+({_STRING})")
_BACKTICKS = re2.compile(r"`([^`\n]+)`")

_SPAWNS = frozenset({
    "command", "commandcontext",  # Go's exec.Command("sh", "-c", ...)
    "system", "system2", "shell", "execute", "exec", "popen", "spawn", "run", "call",
    "shell_exec", "passthru", "pipeline", "process", "open3", "capture", "spawnsync",
    "execsync", "read_process", "readchomp", "processbuilder", "startprocess",
})  # fmt: skip
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "cmd", "cmd.exe", "powershell", "pwsh"})
_SCRIPT_FLAGS = frozenset({"-c", "-lc", "-ic", "/c", "-command", "-Command"})
_DELETES = frozenset({
    "remove", "unlink", "rm", "rmdir", "rmtree", "rm_rf", "delete", "remove_file",
    "removefile", "deletefile", "delete_file", "removedir", "remove_dir", "remove_dir_all",
    "unlink_all", "dir_delete", "file_delete",
})  # fmt: skip
_WRITES = frozenset({
    "writelines", "write_file", "writefile", "write", "sink", "saverds", "save", "spit",
    "write_string", "writestring", "write_lines", "writetable", "write.csv", "write.table",
    "writealltext", "writeallbytes", "writealllines", "appendalltext", "appendalllines",
})  # fmt: skip
_OPENS = frozenset({"open", "io.open", "file", "fopen", "openfile"})
_RECURSIVE = re2.compile(r"(?i)recursive|\brf\b|tree|force|_all\b|\bTRUE\b")
_MAX_CALLS = 256
# Rust's Command::new("sh").arg("-c").arg("...") / .args(["-c", "..."]): one argv, built up.
_RUST_COMMAND = re2.compile(
    rf"Command::new\(\s*({_STRING})\s*\)((?:\s*\.\s*args?\(\s*(?:\[[^\]\n]*\]|&?\[[^\]\n]*\]|{_STRING})"
    rf"\s*\))*)"
)
# A connection out to a literal address: Go's net.Dial("tcp", "h:p"), Rust's
# TcpStream::connect("h:p"), Java's new Socket("h", p), C#'s TcpClient("h", p).
_DIAL = re2.compile(
    rf"(?i)(?:net\.dial(?:timeout)?\(\s*(?:{_STRING})\s*,|tcpstream::connect\(|new\s+socket\(|"
    rf"tcpclient\(|socket\.connect\(|connect\(\s*\(?)\s*({_STRING})(?:\s*,\s*(\d{{1,5}}))?"
)
# A process's standard streams set to something other than a pipe or null: in code that
# also connects out and starts a shell, that something is the connection.
_STREAMS_WIRED = re2.compile(
    r"(?i)\.(?:stdin|stdout|stderr)\s*=\s*[a-z_]\w*|\.std(?:in|out|err)\(\s*(?:unsafe\s*\{\s*)?"
    r"Stdio::from_raw_fd|from_raw_fd\(|redirectInput\(|getInputStream\(\)|dup2\("
)


# The home folder however a language spells it: Lua's os.getenv("HOME"), R's
# Sys.getenv("HOME") and path.expand("~"), Julia's homedir(), Go's os.Getenv("HOME") and
# os.UserHomeDir(), Ruby-like Dir.home; read as the literal "~" so paths built on it are seen.
_HOME = re2.compile(
    r"(?:\b(?:os\.getenv|Sys\.getenv|os\.Getenv|getenv|System\.getenv|ENV\.fetch)\(\s*[\"']HOME[\"']\s*\)"
    r"|\bENV\[\s*[\"']HOME[\"']\s*\]|\bhomedir\(\s*\)|\bDir\.home\b|\bos\.UserHomeDir\(\s*\))"
)
# "a" .. "b" (Lua), "a" + "b", paste0("a", "b"), joinpath("a", "b"), file.path("a", "b"):
# two literals joined into one, so `os.remove(os.getenv("HOME") .. "/.ssh/x")` names its path.
_CONCAT = re2.compile(r"\"([^\"\n]*)\"\s*(?:\.\.|\+|<>)\s*\"([^\"\n]*)\"")
_JOIN = re2.compile(
    r"\b(joinpath|file\.path|filepath\.Join|paste0|path\.Join)\(\s*\"([^\"\n]*)\"\s*,\s*\"([^\"\n]*)\"\s*\)"
)
# A download saved to a file: R's download.file(url, dest), Julia's download(url, dest),
# C#'s WebClient.DownloadFile(url, dest), Groovy/Kotlin-style copies of a URL.
_DOWNLOAD = re2.compile(
    r"(?i)\b(?:download\.file|download|downloadfile|curl_download)\(\s*\"(https?://[^\"\n]+)\"\s*,"
    r"\s*(?:destfile\s*=\s*)?\"([^\"\n]+)\""
)
# Julia's pipeline(`a`, `b`): one shell line, a | b.
_PIPELINE = re2.compile(r"\bpipeline\(\s*`([^`\n]+)`\s*,\s*`([^`\n]+)`\s*\)")


def _spelled_paths(code: str) -> str:
    """The code with home folders and joins of two literals written as one literal."""
    if "HOME" in code or "home" in code.lower():
        code = _HOME.sub('"~"', code)
    for _ in range(4):  # a .. b .. c
        joined = _CONCAT.sub(lambda m: f'"{m.group(1)}{m.group(2)}"', code)
        joined = _JOIN.sub(
            lambda m: (
                f'"{m.group(2)}{m.group(3)}"'
                if m.group(1) == "paste0"
                else f'"{m.group(2).rstrip("/")}/{m.group(3).lstrip("/")}"'
            ),
            joined,
        )
        if joined == code:
            break
        code = joined
    return code


def analyse_generic(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    out = Collector("generic", nested, depth)
    code = code.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # RE2 takes UTF-8
    code = _spelled_paths(code)
    for match in _PIPELINE.finditer(code):
        out.spawn(f"{match.group(1)} | {match.group(2)}", "pipeline()")
    for match in _DOWNLOAD.finditer(code):
        out.fetch(match.group(1), "download()", saved_to=match.group(2))
    used: set[str] = set()
    for count, match in enumerate(_CALL.finditer(code)):
        if count >= _MAX_CALLS:
            break
        name = str(match.group(1)).lower().replace("::", ".")
        last = name.rsplit(".", 1)[-1].rsplit("$", 1)[-1]
        literal = str(match.group(2))
        value = _unquote(literal)
        rest = str(match.group(3))
        if last in _SPAWNS or name in _SPAWNS:
            out.spawn(_command_of(value, rest), f"{name}()")
        elif last in _DELETES or name in ("file.remove", "fs.rm"):
            recursive = _RECURSIVE.search(rest) is not None or last in ("rmtree", "rm_rf")
            out.delete(value, f"{name}()", recursive=recursive)
        elif last in _WRITES or name in _WRITES:
            out.write(value, f"{name}()")
        elif last in _OPENS or name in _OPENS:
            mode = _STRING_LITERAL.search(rest)
            if mode is not None and any(c in _unquote(str(mode.group(0))) for c in "wa+"):
                out.write(value, f"{name}()")
            else:
                out.read(value, f"{name}()")
        else:
            continue
        used.add(literal)
    for match in _RUST_COMMAND.finditer(code):
        argv = [_unquote(str(match.group(1)))]
        argv += [_unquote(str(m.group(0))) for m in _STRING_LITERAL.finditer(str(match.group(2)))]
        out.spawn(_argv_command(argv), "Command::new()")
        used.add(str(match.group(1)))
    dialled = False
    for match in _DIAL.finditer(code):
        address = _unquote(str(match.group(1)))
        host, _, port = (
            address.rpartition(":")
            if match.group(2) is None
            else (address, "", str(match.group(2)))
        )
        if host:
            out.connect(host, port, "a connection in code")
            dialled = True
    shells = any(line.split(" ", 1)[0].rsplit("/", 1)[-1] in _SHELLS for line in out.shell)
    if dialled and shells and _STREAMS_WIRED.search(code) is not None:
        out.stdio_to_socket()  # a shell whose streams are the connection
    for match in _TCL_EXEC.finditer(code):
        out.spawn(str(match.group(1)).strip(), "exec")
    for match in _APPLESCRIPT.finditer(code):
        out.spawn(_unquote(str(match.group(1))), "do shell script")
        used.add(str(match.group(1)))
    for match in _BACKTICKS.finditer(code):
        out.spawn(str(match.group(1)), "`command`")
    for match in _STRING_LITERAL.finditer(code):
        literal = str(match.group(0))
        value = _unquote(literal)
        if literal not in used and value.startswith(("/", "~")) and " " not in value:
            out.read(value, "a path in code")
    return out.result()


def _argv_command(argv: list[str]) -> str:
    """What an argv runs: the script of `sh -c SCRIPT`, else the words as one line."""
    if argv[0].rsplit("/", 1)[-1] in _SHELLS and len(argv) > 2 and argv[1] in _SCRIPT_FLAGS:
        return argv[2]
    return shlex.join(argv)


def _command_of(first: str, rest: str) -> str:
    """The command line a process start runs: one string, or an argv of literals
    (`ProcessBuilder("sh", "-c", "curl ... | sh")` runs the script after `-c`)."""
    more = [_unquote(str(m.group(0))) for m in _STRING_LITERAL.finditer(rest)]
    if not more:
        return first
    return _argv_command([first, *more])


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    if "\\" not in body:
        return body
    return body.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\")
