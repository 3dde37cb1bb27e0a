"""chmod that only takes rights away from group and others (what ssh and gpg ask for) is
everyday work, even on credential files; giving rights to others is not."""

from __future__ import annotations

import pytest

from sidecar.effects.catalogue import mode_flags
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode


async def verdict_of(line: str) -> Verdict:
    engine = engine_for_mode(Mode.AUTO)
    result = await engine.inspect("s", [ToolCall("1", "shell", {"command": line})])
    return result.verdicts[0].verdict


@pytest.mark.parametrize(
    ("modes", "tight"),
    [(["600"], True), (["0700"], True), (["400"], True), (["go-rwx"], True), (["o-rwx"], True),
     (["u=rw,go="], True), (["u+x"], True), (["644"], False), (["g+r"], False), (["4700"], False),
     (["a-w", "o+r"], False), (["$MODE"], False), ([], False)],
)  # fmt: skip
def test_which_modes_only_tighten(modes: list[str], tight: bool) -> None:
    assert ("tighten" in mode_flags(modes)) is tight, modes


@pytest.mark.parametrize(
    "line",
    ["chmod 600 ~/.ssh/id_ed25519", "chmod 700 ~/.ssh", "chmod o-rwx ~/.gnupg",
     "chmod 0600 ~/.netrc", "chmod -R go-rwx ~/.ssh"],
)  # fmt: skip
async def test_tightening_a_credential_file_is_allowed(line: str) -> None:
    assert await verdict_of(line) is Verdict.ALLOW, line


@pytest.mark.parametrize(
    "line", ["chmod 644 ~/.ssh/id_rsa", "chmod g+r ~/.aws/credentials", "chmod 666 /etc/shadow"]
)
async def test_opening_a_credential_file_to_others_is_not(line: str) -> None:
    assert await verdict_of(line) is not Verdict.ALLOW, line
