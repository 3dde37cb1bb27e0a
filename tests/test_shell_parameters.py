"""Parameter expansion, arrays, namerefs and field splitting (sidecar/shell/parameters.py and
the walk), checked against the real bash on this machine."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from sidecar.shell import parameters
from sidecar.shell.walk import analyse

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is part of every supported image")


def bash_values(lines: list[str]) -> list[str]:
    """What bash prints for each `setup; printf '%s' "expr"` line (one bash process)."""
    script = "".join(f"( {line} ); printf '\\0'\n" for line in lines)
    done = subprocess.run(
        [BASH or "bash", "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": "/home/dev"},
    )
    return done.stdout.split("\0")[: len(lines)]


def walked_value(setup: str, expression: str) -> str | None:
    """The walk's value for `expression` after `setup`: the argument `cat` receives."""
    analysis = analyse(f'{setup}; cat "{expression}"')
    cat = [c for c in analysis.commands if c.program == "cat"]
    if not cat or analysis.problems:
        return None
    return cat[-1].args[0] if cat[-1].args else ""


FIXED = [
    ("x=/etc/shadowX", "${x%X}"),
    ("x=/etc/shadow.bak.bak", "${x%.*}"),
    ("x=/etc/shadow.bak.bak", "${x%%.*}"),
    ("x=junk/etc/shadow", "${x#junk}"),
    ("x=a/b/etc/shadow", "${x#*/}"),
    ("x=a/b/etc/shadow", "${x##*/}"),
    ("x=/ETC/SHADOW", "${x,,}"),
    ("x=/etc/shadow", "${x^^}"),
    ("x=etc", "${x^}"),
    ("x=/etc/passwd", "${x/passwd/shadow}"),
    ("x=@etc@shadow", "${x//@//}"),
    ("x=xx/etc", "${x/#xx/}"),
    ("x=/etcYY", "${x/%YY/}"),
    ("x=/e_c/shadow", "${x/_/t}"),
    ("x=/e?c/sha", "${x/[?]/t}"),
    ("x=012/etc/shadow", "${x:3}"),
    ("x=/etc/shadow_", "${x:0:11}"),
    ("x=/etc/shadow", "${x: -6}"),
    ("x=/etc/shadowXX", "${x:0:-2}"),
    ("x=/etc/shadow", "${x@U}"),
    ("x=/ETC", "${x@L}"),
    ("v=/etc/shadow; w=v", "${!w}"),
    ("a=(/etc/hosts /etc/shadow)", "${a[1]}"),
    ("a=(/etc/hosts); a+=(/etc/shadow)", "${a[1]}"),
    ("i=1; a=(x /etc/shadow)", "${a[$i]}"),
    ("a[2]=/etc/shadow", "${a[2]}"),
    ("x=/etc; x+=/shadow", "$x"),
    ("declare -n r=v; v=/etc/shadow", "$r"),
    ("printf -v f '%s/%s' /etc shadow", "$f"),
    ("read -r p q <<< '/etc/hosts /etc/shadow'", "$q"),
    ("x=/etc/shadow", "${#x}"),
    ("x=", "${x:-/etc/shadow}"),
    ("x=/etc/shadow", "${x:+/etc/passwd}"),
]


def test_each_expansion_gives_what_bash_gives() -> None:
    lines = [f'{setup}; printf "%s" "{expression}"' for setup, expression in FIXED]
    for (setup, expression), expected in zip(FIXED, bash_values(lines), strict=True):
        assert walked_value(setup, expression) == expected, (setup, expression)


def test_random_patterns_trim_and_replace_like_bash() -> None:
    rng = random.Random(20261201)
    cases: list[tuple[str, str]] = []
    for _ in range(300):
        value = "".join(rng.choice("ab/.X") for _ in range(rng.randint(0, 9)))
        pattern = "".join(
            rng.choice(["a", "b", "/", ".", "*", "?", "[ab]", "[!a]"])
            for _ in range(rng.randint(0, 4))
        )
        operator = rng.choice(["#", "##", "%", "%%", "/", "//", "/#", "/%"])
        tail = "/R" if operator.startswith("/") else ""
        cases.append((f"x='{value}'", f"${{x{operator}{pattern}{tail}}}"))
    lines = [f'{setup}; printf "%s" "{expression}"' for setup, expression in cases]
    compared = 0
    for (setup, expression), expected in zip(cases, bash_values(lines), strict=True):
        got = walked_value(setup, expression)
        if got is not None:  # None: reported as unresolved, which asks
            assert got == expected, (setup, expression)
            compared += 1
    assert compared > 250


def test_unquoted_expansions_split_into_words_like_bash() -> None:
    for line in [
        'cmd="rm -rf /home/dev"; $cmd',
        'IFS=,; cmd="rm,-rf,/home/dev"; $cmd',
        'a=(rm -rf /home/dev); "${a[@]}"',
        'f() { "$@"; }; f rm -rf /home/dev',
    ]:
        commands = [c for c in analyse(line).commands if c.program == "rm"]
        assert commands and commands[0].args == ("-rf", "/home/dev"), line


def test_a_known_value_transformed_beyond_the_model_is_unresolved() -> None:
    assert analyse('x=/etc/shadow; cat "${x@P}"').problems
    assert analyse("x=/etc/shadow; cat ${x/+(s)/S}").problems
    assert analyse('x=/e/t/c; cat "${x//\\//}"').problems  # the grammar misreads `\/`
    assert not analyse('cat "${UNKNOWN@P}"').problems  # nothing known was hidden


def test_long_operands_are_not_matched() -> None:
    long_value = "a" * (parameters.MAX_OPERAND + 1)
    assert parameters.trim(long_value, "%", "a") is None
    assert parameters.glob_matches("*", long_value) is None
    assert parameters.trim("abc", "%", "c") == "ab"


def test_pattern_work_per_line_is_bounded_and_beyond_it_asks() -> None:
    one = "x=" + "a" * 60 + '; cat "${x%%*a*b}"'
    assert not analyse(one).problems  # computed: nothing matches, the value stays
    many = "x=" + "a" * 60 + "; cat " + " ".join(['"${x%%*a*a*a*a*a*a*a*a*a*b}"'] * 400)
    assert analyse(many).problems  # past the line's budget the rest is unresolved
