"""No input makes a code analysis raise, crash the process or hang; past the size limit
the code is not analysed but reported; deep nesting is bounded."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidecar.code import LANGUAGES, analyse_code, code_invocations
from sidecar.effects.model import CodeAnalysis

# Fragments of real syntax in every language, so generated text reaches deep into the
# grammars and the analysers, not only their error paths.
FRAGMENTS = [
    "import os", "os.system(", "exec(", "eval(", "require(", '"', "'", "`", "(", ")", "{",
    "}", "[", "]", "$x", "${", "#{", "<<E\n", "<<<E\n", "@\"\n", "\"@", "|", ";", "\n",
    "\\", "rm -rf /", "fs.rmSync(", "Remove-Item ", "-Recurse", "iex ", "unlink ", "qx{",
    "system ", "base64_decode(", "<?php ", "?>", "=>", "->", "::", "def f(a):\n  ",
    "function f(a){", "sub f {", "for x in [1,2]:", "foreach ($a in $b) {", "\x00",
    "\ud800", "\U0001f600", "é", "\u2028", "%x{", "lambda: ", "async ", "await ",
]  # fmt: skip
code_text = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=5), max_size=40).map("".join),
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(language=st.sampled_from(LANGUAGES), code=code_text)
def test_no_input_raises(language: str, code: str) -> None:
    analysis = analyse_code(language, code)
    assert isinstance(analysis, CodeAnalysis)
    # the last guard in analyse_code turns an analyser's exception into this problem:
    # it must never be needed
    assert not any("could not be analysed" in p for p in analysis.problems), analysis


@settings(max_examples=200, deadline=None)
@given(
    program=st.sampled_from(
        ["python3", "node", "deno", "bun", "ruby", "perl", "php", "pwsh", "lua", "Rscript", "tclsh"]
    ),
    args=st.lists(
        st.sampled_from(["-c", "-e", "-E", "-r", "-ne", "-", "-enc", "-Command", "-W", "-I", "x"])
        | st.text(max_size=8),
        max_size=6,
    ),
    stdin=st.none() | st.text(max_size=20),
)
def test_no_command_line_raises(program: str, args: list[str], stdin: str | None) -> None:
    for language, code in code_invocations(program, args, stdin):
        assert language in LANGUAGES
        analysis = analyse_code(language, code)
        assert not any("could not be analysed" in p for p in analysis.problems), analysis


@pytest.mark.parametrize("language", LANGUAGES)
def test_code_past_the_size_limit_is_a_problem(language: str) -> None:
    analysis = analyse_code(language, "x = 1\n" * 20, max_bytes=64)
    assert analysis.problems and "too large" in analysis.problems[0]
    assert not analysis.effects


NESTED = {
    "python": "x = " + "(" * 150 + "1" + ")" * 150 + "\n" + "[" * 5000,
    "javascript": "x = " + "(" * 3000 + "1" + ")" * 3000,
    "powershell": "$x = " + "(" * 2000 + "1" + ")" * 2000,
    "ruby": "x = " + "[" * 3000 + "]" * 3000,
    "perl": "my $x = " + "(" * 3000 + "1" + ")" * 3000 + ";",
    "php": "$x = " + "(" * 3000 + "1" + ")" * 3000 + ";",
    "ipython": "if x:\n" + "    !ls {" * 2000 + "}" * 2000 + "\n" + "x = " + "(" * 150 + ")" * 150,
    "generic": "f(" * 5000 + "'/etc/x'" + ")" * 5000,
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_deep_nesting_is_bounded(language: str) -> None:
    analysis = analyse_code(language, NESTED[language])
    assert isinstance(analysis, CodeAnalysis)


def test_deeply_nested_python_is_a_problem_not_a_crash() -> None:
    code = "import os\nos.system(" + "str(" * 400 + "'x'" + ")" * 400 + ")"
    analysis = analyse_code("python", code)
    assert analysis.problems or analysis.parse_error


# Each grammar, in a child process so a crash or a hang cannot take the test run with it:
# generated text through every analyser, including the shapes that hung tree-sitter-perl.
_FUZZ = r"""
import random, sys
from sidecar.code import analyse_code, LANGUAGES
rng = random.Random(int(sys.argv[1]))
pieces = ["<<E\n", "$x", "@x", "\\", "<<\"E\"", "<<'E'", "\n", "q{", "qx{", "s/a/", "#{", "${",
          "`", "'", "\"", "(", ")", "{", "}", "<?php", "?>", "@\"", "\"@", "\x00", "\ud800",
          "\U0001f600", "é", "=>", "->", "$", "@", "%", "EOF", "E"]
for _ in range(int(sys.argv[2])):
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
    for language in LANGUAGES:
        analyse_code(language, text)
print("done")
"""


def test_grammars_survive_generated_text_in_a_child_process() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _FUZZ, "7", "400"],
        capture_output=True,
        text=True,
        timeout=300,  # a hang, not a measurement: the run takes seconds
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "done"


def test_perl_here_document_open_at_the_end_does_not_hang() -> None:
    code = "from sidecar.code import analyse_code\nfor t in ['<<E\\n$x', '<<\"\"\\n$p', 'print <<E\\n@x']:\n    analyse_code('perl', t)\nprint('done')"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.stdout.strip() == "done", result.stderr[-2000:]
