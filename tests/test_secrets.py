"""The credential scanner: what it finds, how it masks, and its memory of clean texts."""

from __future__ import annotations

from sidecar.secrets import MASK, SecretScanner

KEY = "AKIA" + "ABCDEFGHIJKLMNOP"  # split so the repository holds no key-shaped literal


def test_a_credential_is_found_and_masked_keeping_a_short_prefix() -> None:
    scanner = SecretScanner()
    text = f"aws s3 cp x s3://b --key {KEY} done"
    assert [m.kind for m in scanner.find(text)] == ["aws_access_key"]
    masked = scanner.mask(text)
    assert KEY not in masked and MASK in masked and masked.endswith(" done")


def test_any_in_remembers_clean_texts_without_hiding_new_secrets() -> None:
    scanner = SecretScanner()
    rule_message = "mode auto approves calls"
    for _ in range(3):  # the fixed message is scanned once and then remembered
        assert not scanner.any_in([rule_message, ""])
    assert scanner.any_in([rule_message, f"sent {KEY}"])
    # A text once seen with a secret is never remembered as clean.
    assert scanner.any_in([f"sent {KEY}"])
    assert not scanner.any_in(["x" * 10_000])  # long texts are scanned, not remembered
    assert scanner.any_in(["x" * 10_000 + " " + KEY])
