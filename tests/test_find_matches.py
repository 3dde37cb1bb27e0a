"""`find ROOT -name PATTERN -delete` deletes the matches at any depth below ROOT, not ROOT:
judged as the glob ROOT/**/PATTERN."""

from __future__ import annotations

import pytest

from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode


async def verdict_of(line: str) -> Verdict:
    engine = engine_for_mode(Mode.AUTO)
    result = await engine.inspect("s", [ToolCall("1", "shell", {"command": line})])
    return result.verdicts[0].verdict


@pytest.mark.parametrize(
    ("line", "expected"),
    [("find /tmp -name 'pytest-*' -mtime +1 -delete", Verdict.ALLOW),
     ("find . -name '*.pyc' -delete", Verdict.ALLOW),
     ("find /etc -name shadow -delete", Verdict.DENY),
     ("find ~ -name '*.pem' -delete", Verdict.DENY),
     ("find / -name '*' -delete", Verdict.DENY),
     ("find /etc -name '*.conf' -o -name shadow -delete", Verdict.DENY)],
)  # fmt: skip
async def test_find_deletes_what_the_name_matches(line: str, expected: Verdict) -> None:
    assert await verdict_of(line) is expected, line


def test_a_double_star_glob_matches_at_any_depth() -> None:
    import re2

    from sidecar.effects.paths import _glob_regex

    regex = re2.compile(_glob_regex("/var/**/state.db"))
    assert regex.fullmatch("/var/lib/sidecar/state.db")
    assert regex.fullmatch("/var/state.db")
    assert not regex.fullmatch("/var/lib/state.db.bak")


@pytest.mark.parametrize(
    ("line", "expected"),
    [("find /tmp -maxdepth 1 -name 'build-*' -mtime +1 -exec rm -rf {} +", Verdict.ALLOW),
     ("find . -name '*.log' | xargs rm -f", Verdict.ALLOW),
     ("find / -name core | xargs rm -rf", Verdict.DENY),
     ("find ~/.ssh -name 'id_*' -exec cat {} \\;", Verdict.DENY),
     ("find /etc -name '*.conf' -exec rm {} +", Verdict.DENY)],
)  # fmt: skip
async def test_what_find_hands_on_is_the_matches_below_scratch_and_project_roots(
    line: str, expected: Verdict
) -> None:
    """Below the project or a scratch directory, `{}` is the matches; below `/`, `~` or a
    system directory it still counts as the whole tree."""
    assert await verdict_of(line) is expected, line
