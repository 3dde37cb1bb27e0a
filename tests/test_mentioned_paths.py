"""A line that reads a path it computes in a way the analysis cannot follow, while naming (or
encoding) a sensitive path, is judged as reading that path."""

from __future__ import annotations

import pytest

from sidecar.effects.mentioned_paths import possible_reads
from sidecar.effects.model import UNRESOLVED, Action, Effect
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode


async def verdict_of(line: str) -> Verdict:
    engine = engine_for_mode(Mode.AUTO)
    result = await engine.inspect("s", [ToolCall("1", "shell", {"command": line})])
    return result.verdicts[0].verdict


@pytest.mark.parametrize(
    "line",
    ['read -r x <<< /etc/shadow; cat "$x"',
     'x=$(echo L2V0Yy9zaGFkb3c= | base64 -d); cat "$x"',
     'arr=(/etc/shadow /etc/passwd); cat "${arr[0]}"',
     "printf -v f '%s' /etc/shadow; cat \"$f\"",
     'set -- ~/.ssh/id_rsa; cat "$1"',
     "xargs cat <<< /etc/shadow",
     'IFS=: read -r a b <<< "x:$HOME/.aws/credentials"; head -c 300 "$b"',
     "perl -ne print /etc/shadow",
     "perl -lane 'print $F[0]' ~/.aws/credentials"],
)  # fmt: skip
async def test_a_sensitive_path_read_through_an_unfollowed_value_is_denied(line: str) -> None:
    assert await verdict_of(line) is Verdict.DENY, line


@pytest.mark.parametrize(
    "line",
    ['f=$(mktemp); date > "$f"; cat "$f"',
     'read -r name < VERSION; cat "dist/$name/README.md"',
     "perl -pe 's/foo/bar/' src/app.txt",
     'for f in $(git ls-files "*.md"); do wc -l "$f"; done'],
)  # fmt: skip
async def test_unfollowed_reads_without_a_sensitive_path_stay_allowed(line: str) -> None:
    assert await verdict_of(line) is Verdict.ALLOW, line


def test_only_a_line_with_an_unresolved_read_gets_possible_reads() -> None:
    resolved = [Effect(Action.READ, "/etc/hosts", program="cat")]
    assert possible_reads("cat /etc/hosts # /etc/shadow", resolved) == []
    unresolved = [Effect(Action.READ, UNRESOLVED, program="cat")]
    paths = [e.target for e in possible_reads("X=$HOME/.ssh/id_rsa; cat $Y", unresolved)]
    assert paths == ["~/.ssh/id_rsa"]
