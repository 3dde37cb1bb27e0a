"""Checks that a variant is real: bash parses it, probes expand to the original word, code in
other languages compiles. Everything is batched: one bash, one node, one perl process."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Sequence

END = "__EVALGEN_END_OF_SCRIPT_5e1d0c__"
HOME = "/home/evalgen"

_READ = "IFS= read -r -d '' __evalgen_s <<'" + END + "'\n{body}\n" + END + "\n"


def _embed(script: str) -> str:
    if END in script:
        raise ValueError("script contains the batch delimiter")
    return _READ.format(body=script)


def bash_parses(scripts: Sequence[str]) -> list[bool]:
    """Whether bash's parser accepts each script (what `bash -n` checks), in one process.

    Each script becomes the body of a function that `eval` defines but never calls, so
    nothing runs and one script's error cannot leak into the next.
    """
    if not scripts:
        return []
    parts = [
        "__evalgen_check() {\n"
        '  if eval "__evalgen_parse_only() {\n$1\n}" 2>/dev/null; then printf 1; '
        "else printf 0; fi\n}\n"
    ]
    for script in scripts:
        parts.append(_embed(script))
        parts.append('__evalgen_check "$__evalgen_s"\n')
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-s"],
        input="".join(parts).encode(),
        capture_output=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": HOME},
    ).stdout.decode()
    if len(out) != len(scripts):
        raise RuntimeError(f"bash answered {len(out)} of {len(scripts)} parse checks")
    return [c == "1" for c in out]


def run_probes(probes: Sequence[str]) -> list[list[list[str]]]:
    """Run harmless probe scripts (only `__argv`, variables, functions, loops) in one bash.

    Returns, per probe, the argument lists `__argv` printed. Globbing is off so a glob comes
    back as its pattern; brace expansion, quoting, tilde and variables happen as usual.
    """
    if not probes:
        return []
    parts = [
        "set -f\n"
        '__argv() { local a; for a in "$@"; do printf "%s\\037" "$a"; done; printf "\\036"; }\n'
    ]
    for index, probe in enumerate(probes):
        if "$(" in probe or "`" in probe:
            raise ValueError(f"probe {index} would run a command substitution")
        parts.append(f"printf '\\035{index}\\035'\n")
        parts.append(_embed(probe))
        parts.append('( eval "$__evalgen_s" ) 2>/dev/null\n')
    out = subprocess.run(
        ["bash", "--norc", "--noprofile", "-s"],
        input="".join(parts).encode(),
        capture_output=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": HOME},
    ).stdout.decode()
    results: list[list[list[str]]] = [[] for _ in probes]
    pieces = out.split("\x1d")  # ['', '0', records, '1', records, ...]
    for i in range(1, len(pieces) - 1, 2):
        records = pieces[i + 1].split("\x1e")[:-1]
        results[int(pieces[i])] = [record.split("\x1f")[:-1] for record in records]
    return results


def normalise(text: str) -> str:
    """Lexical path normal form: `//`, `/./` and `dir/../` do not change where a path points."""
    text = re.sub(r"/{2,}", "/", text)
    previous = None
    while previous != text:
        previous = text
        text = re.sub(r"/\./", "/", text)
        text = re.sub(r"(^|[=@:])\./", r"\1", text)
        text = re.sub(r"(^|/|[=@:])(?!\.\.(?:/|$))[^/=@:]+/\.\.(/|$)", r"\1", text)
    return text


def glob_matches(path: str, pattern: str) -> bool:
    """Whether a shell glob matches the path (wildcards never cross `/` or match a leading dot)."""
    regex = ""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "*":
            regex += "[^/]*"
        elif char == "?":
            regex += "[^/]"
        elif char == "[":
            close = pattern.index("]", i + 1)
            regex += "[" + pattern[i + 1 : close] + "]"
            i = close
        else:
            regex += re.escape(char)
        i += 1
    return re.fullmatch(regex, path) is not None


def probe_holds(mode: str, canonical: list[list[str]], produced: list[list[str]]) -> bool:
    if len(canonical) != 1 or not canonical[0]:
        return False
    want = [normalise(w) for w in canonical[0]]
    got = [[normalise(w) for w in record] for record in produced]
    if mode == "equal":
        return got == [want]
    if mode == "glob":
        return (
            len(got) == 1
            and len(got[0]) == len(want)
            and all(glob_matches(w, p) for w, p in zip(want, got[0], strict=True))
        )
    if mode == "member":
        return any(all(w in record for w in want) for record in got) or all(
            any(w in record for record in got) for w in want
        )
    raise ValueError(mode)


def python_compiles(code: str) -> bool:
    try:
        compile(code, "<evalgen>", "exec")
    except SyntaxError:
        return False
    return True


def node_compiles(codes: Sequence[str]) -> list[bool] | None:
    """Parse each snippet as a function body in one node process; None when node is absent."""
    if not codes or shutil.which("node") is None:
        return None
    script = (
        "const codes = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(codes.map(c => { try { new Function(c); return '1'; } "
        "catch (e) { return '0'; } }).join(''));"
    )
    out = subprocess.run(
        ["node", "-e", script],
        input=json.dumps(list(codes)).encode(),
        capture_output=True,
        check=False,
    ).stdout.decode()
    return [c == "1" for c in out] if len(out) == len(codes) else None


def perl_compiles(codes: Sequence[str]) -> list[bool] | None:
    """Compile each snippet as an anonymous sub (not run; `use` lines dropped) in one perl."""
    if not codes or shutil.which("perl") is None:
        return None
    script = (
        'local $/ = "\\0"; while (my $c = <STDIN>) { chomp $c; '
        "$c =~ s/\\buse [A-Za-z:]+[^;]*;//g; "
        'my $ok = eval "sub { $c }"; print defined $ok ? "1" : "0"; }'
    )
    payload = "".join(code + "\0" for code in codes)
    out = subprocess.run(
        ["perl", "-e", script], input=payload.encode(), capture_output=True, check=False
    ).stdout.decode()
    return [c == "1" for c in out] if len(out) == len(codes) else None
