"""Verdicts, risks and modes: their strictness orders, labels, and stored values."""

from __future__ import annotations

import pytest

from sidecar.inspection.verdict import Mode, Risk, Verdict


def test_verdicts_merge_strictest_first() -> None:
    assert Verdict.ALLOW < Verdict.REQUIRE_APPROVAL < Verdict.DENY
    assert max(Verdict.ALLOW, Verdict.DENY, Verdict.REQUIRE_APPROVAL) is Verdict.DENY
    assert max(Verdict.ALLOW, Verdict.REQUIRE_APPROVAL) is Verdict.REQUIRE_APPROVAL
    assert min(Verdict) is Verdict.ALLOW
    assert len(Verdict) == 3  # no two verdicts share a value


def test_verdict_values_are_what_the_state_file_stores() -> None:
    # Answers are stored as these integers: changing one misreads every stored answer.
    assert [int(v) for v in (Verdict.ALLOW, Verdict.REQUIRE_APPROVAL, Verdict.DENY)] == [1, 2, 3]


def test_labels_are_lower_case_names() -> None:
    assert [v.label for v in Verdict] == ["allow", "require_approval", "deny"]


def test_risks_are_ordered_and_distinct() -> None:
    assert Risk.LOW < Risk.MEDIUM < Risk.HIGH < Risk.CRITICAL
    assert len(Risk) == 4
    assert min(Risk) is Risk.LOW and int(Risk.LOW) >= 1


def test_modes_are_ordered_loosest_to_strictest() -> None:
    assert Mode.AUTO < Mode.SMART_APPROVE < Mode.APPROVE < Mode.CHAT
    assert len(Mode) == 4
    assert min(Mode) is Mode.AUTO and int(Mode.AUTO) >= 1


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("auto", Mode.AUTO),
        ("smart_approve", Mode.SMART_APPROVE),
        (" Approve\n", Mode.APPROVE),
        ("CHAT", Mode.CHAT),
    ],
)
def test_modes_parse_from_text(text: str, mode: Mode) -> None:
    assert Mode.parse(text) is mode


def test_an_unknown_mode_names_the_choices() -> None:
    with pytest.raises(ValueError) as raised:
        Mode.parse("yolo")
    assert str(raised.value) == (
        "unknown permission mode 'yolo' (expected one of auto, smart_approve, approve, chat)"
    )
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
