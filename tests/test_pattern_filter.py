"""PatternFilter answers exactly what searching each pattern on its own answers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.matching.pattern_filter import LARGE_TEXT, PatternFilter
from sidecar.policy.loader import bundled_policy_dir, load_policy

POLICY = load_policy([bundled_policy_dir()]).policy
BUNDLED = [
    f"(?m){rule.shell.argument}"
    for rule in POLICY.security.rules
    if rule.shell and rule.shell.argument
]
FILTER = PatternFilter(BUNDLED)
SENSITIVE = PatternFilter(POLICY.sensitive_paths)
# Pieces of the patterns' own literals, so that random texts hit them often.
PIECES = ["/dev/tcp/", "/dev/udp/", "exec", "EXEC", "system:", "popen", "subprocess", "-c",
          "history", "HISTFILE", "child_process", "|&", "/bin/sh", "\n", " ", "x", "é", ":"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=12))
def test_the_filter_agrees_with_one_search_per_pattern(parts: list[str]) -> None:
    text = "".join(parts)
    assert FILTER.matching(text) == FILTER.matching_one_by_one(text)


PATH_PIECES = ["/", ".", "~", "ssh", ".ssh", "id_rsa", "id_ed25519", ".pub", ".env", ".local",
               "example", ".aws", "credentials", ".json", "bash_history", "/etc/", "shadow",
               "/proc/", "self", "environ", "Cookies", "Login Data", ".pem", "KEY", "x", "é"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PATH_PIECES) | st.text(max_size=3), max_size=8))
def test_the_sensitive_path_filter_agrees_with_one_search_per_pattern(parts: list[str]) -> None:
    path = "".join(parts)
    assert SENSITIVE.matching(path) == SENSITIVE.matching_one_by_one(path)


def test_bundled_argument_patterns_are_found_and_long_texts_too() -> None:
    assert len(BUNDLED) >= 5
    hits = FILTER.matching("-la\n/dev/tcp/10.0.0.1/4444")
    assert BUNDLED.index("(?m)^/dev/(tcp|udp)/") in hits
    assert FILTER.matching("-la\nsrc") == frozenset()
    long_text = "a" * (LARGE_TEXT + 10) + "\n/dev/udp/1.2.3.4/53"
    assert BUNDLED.index("(?m)^/dev/(tcp|udp)/") in FILTER.matching(long_text)


def test_an_empty_filter_matches_nothing() -> None:
    assert PatternFilter([]).matching("anything") == frozenset()
