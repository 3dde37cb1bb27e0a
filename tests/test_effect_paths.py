"""Path normalisation and path classes (sidecar/effects/paths.py)."""

from __future__ import annotations

import pytest

from sidecar.effects.paths import ClassSpec, PathClasses, is_glob, normalise


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("~/.ssh/../.aws/credentials", "~/.aws/credentials"),
        ("~/../../etc/passwd", "/etc/passwd"),
        ("/etc//./shadow", "/etc/shadow"),
        ("/proc/self/root/etc/shadow", "/etc/shadow"),
        ("/proc/1/root/etc/passwd", "/etc/passwd"),
        ("./a/../b", "b"),
        ("a/../../x", "../x"),
        ("~", "~"),
        ("~/", "~"),
        ("~root/.ssh", "/root/.ssh"),
        ("~bob/x", "/home/bob/x"),
        ("file:///etc/hosts", "/etc/hosts"),
        ("/usr/../etc/./sudoers", "/etc/sudoers"),
        ("//etc", "/etc"),
        (".", "."),
    ],
)
def test_every_spelling_of_a_path_normalises_to_one(path: str, expected: str) -> None:
    assert normalise(path) == expected


def test_relative_paths_resolve_against_a_given_workspace() -> None:
    assert normalise("src/x.py", "/work/p") == "/work/p/src/x.py"
    assert normalise("../../etc/passwd", "/work/p") == "/etc/passwd"


CLASSES = PathClasses(
    [
        ClassSpec(
            "system",
            (r"^/$", r"^/(etc|usr|bin|var)(/|$)"),
            (r"^/var/tmp(/|$)",),
            ("/etc/passwd", "/usr/bin/ls"),
        ),
        ClassSpec(
            "secrets",
            (r"(^|/)\.ssh(/|$)", r"(^|/)\.aws(/|$)", r"(^|/)\.env$"),
            (),
            ("~/.ssh/id_rsa", "~/.aws/credentials", ".env"),
        ),
        ClassSpec("temp", (r"^/tmp(/|$)",), (), ("/tmp/x",)),
    ],
    ["/work/proj"],
)


@pytest.mark.parametrize(
    ("path", "recursive", "expected"),
    [
        ("/etc/shadow", False, {"system"}),
        ("~/.aws/*", False, {"secrets"}),  # a glob counts as what it could match
        ("/e*", False, {"system"}),  # /e* matches /etc
        ("/r*", True, {"secrets"}),  # /root holds ~/.ssh/id_rsa as root sees it
        ("/", True, {"system", "secrets", "temp"}),
        ("/home", True, {"secrets"}),  # ~/x is also /home/<user>/x
        ("/var/tmp/x", True, set()),  # excluded from system
        ("src/x", False, {"workspace"}),
        ("../x", False, {"outside_workspace"}),
        ("/work/proj/a", False, {"workspace"}),
        ("*.pyc", False, {"workspace"}),
        (".en*", False, {"workspace", "secrets"}),
        ("*", False, {"workspace"}),  # a leading * does not match dotfiles (.env)
        ("~/.ss?/id_rsa", False, {"secrets"}),
        ("/etc/[ps]*", False, {"system"}),
    ],
)
def test_classes_of_paths_globs_and_trees(path: str, recursive: bool, expected: set[str]) -> None:
    assert set(CLASSES.classify(normalise(path), recursive)) == expected


def test_glob_detection() -> None:
    assert is_glob("*.py") and is_glob("a/[bc]") and is_glob("x?")
    assert not is_glob("plain/path")
