"""Cost of analysing code handed to interpreters (sidecar.code), as a ratio to a bare
parse of the same snippet measured in the same run.

1. Typical one-liners per language, every snippet new (a changing number inside it), so
   the analysis cache never answers: p50 of one analysis, and p50 of a bare parse
   (`ast.parse` for Python, the tree-sitter grammar for the others).
2. Linear time: hostile shapes at a size and at 4x that size; the time ratio should stay
   near 4 (a quadratic path would show 16).

Run: .venv/bin/python -m bench.code_bench
"""

from __future__ import annotations

import ast
import functools
import statistics
import time
from collections.abc import Callable

from sidecar.code.analysis import _analyse
from sidecar.code.syntax import parse, source_bytes

ROUNDS = 400

# {n} changes every round. Realistic: what agents run with -c/-e.
TYPICAL: dict[str, list[str]] = {
    "python": [
        "import sys; print(sys.version_info[:{n}])",
        "import json; print(json.load(open('package.json'))['version'], {n})",
        "import os; print(os.listdir('src{n}'))",
        "import subprocess; subprocess.run(['git', 'log', '-{n}'], check=True)",
        "for i in range({n}): print(i * i)",
        "import shutil; shutil.rmtree('build{n}')",
    ],
    "javascript": [
        "console.log(process.version, {n})",
        "console.log(require('./package.json').version, {n})",
        "const fs = require('fs'); console.log(fs.readdirSync('src{n}'))",
        "require('child_process').execSync('git log -{n}', {{stdio: 'inherit'}})",
        "fetch('https://registry.npmjs.org/pkg{n}').then(r => r.json()).then(console.log)",
        "require('fs').rmSync('dist{n}', {{recursive: true, force: true}})",
    ],
    "powershell": [
        "Get-ChildItem -Path src{n} -Filter *.cs",
        "Write-Host $PSVersionTable.PSVersion {n}",
        "Get-Content package.json | ConvertFrom-Json | Select-Object -ExpandProperty version{n}",
        "Remove-Item -Recurse -Force bin{n}",
        "dotnet build -c Release /p:Build={n}",
        "$r = Invoke-RestMethod https://api.github.com/repos/o/r{n}; $r.stargazers_count",
    ],
    "ruby": [
        "puts RUBY_VERSION, {n}",
        "require 'json'; puts JSON.parse(File.read('package.json'))['version'], {n}",
        "puts Dir.glob('lib{n}/**/*.rb')",
        "system('bundle', 'exec', 'rspec', 'spec/a{n}_spec.rb')",
        "FileUtils.rm_rf('tmp/cache{n}')",
    ],
    "perl": [
        "print $], {n}",
        "while (<STDIN>) {{ s/foo{n}/bar/g; print }}",
        "print join(',', map {{ $_ * {n} }} (1, 2, 3))",
        "unlink 'build/out{n}.o'",
        "system('make', '-j{n}')",
    ],
    "php": [
        "echo PHP_VERSION, {n};",
        "$j = json_decode(file_get_contents('composer.json'), true); echo $j['name'], {n};",
        "foreach (scandir('src{n}') as $f) {{ echo $f, PHP_EOL; }}",
        "echo shell_exec('git describe --tags --abbrev={n}');",
        "unlink('cache/{n}.php');",
    ],
}


def _bare_parse(language: str) -> Callable[[str], object]:
    if language == "python":
        return ast.parse
    return lambda code: parse(language, source_bytes(language, code))


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def _measure(function: Callable[[str], object], texts: list[str]) -> float:
    samples = []
    for text in texts:
        start = time.perf_counter()
        function(text)
        samples.append(time.perf_counter() - start)
    return _p50(samples)


def typical() -> None:
    print("1. typical one-liners, every snippet new (no cache), p50 per snippet")
    print(f"   {'language':<11} {'analysis':>10} {'bare parse':>11} {'ratio':>7}")
    for language, templates in TYPICAL.items():
        texts = [t.format(n=n) for n in range(ROUNDS) for t in templates]
        parse_texts = [t.format(n=n + ROUNDS) for n in range(ROUNDS) for t in templates]
        analyse_texts = [t.format(n=n + 2 * ROUNDS) for n in range(ROUNDS) for t in templates]
        bare = _bare_parse(language)
        for text in texts[:50]:  # warm up both paths
            bare(text)
            _analyse(language, text, 0)
        parsed = _measure(bare, parse_texts)
        analysed = _measure(functools.partial(_analyse, language, depth=0), analyse_texts)
        ratio = analysed / parsed if parsed else float("nan")
        print(f"   {language:<11} {analysed:>8.1f}us {parsed:>9.1f}us {ratio:>6.1f}x")


def _hostile(language: str, size: int) -> list[str]:
    shapes = {
        "python": [
            "x = 'a'\n"
            + "".join(f"x = x + 'b{i}'\n" for i in range(size))
            + "import os\nos.system(x)",
            "import os\n" + "".join(f"os.remove('/tmp/f{i}')\n" for i in range(size)),
            "".join(f"def f{i}(a):\n    return f{i + 1}(a)\n" for i in range(size)) + "f0('x')",
            "x = ["
            + ",".join(f"'{i}'" for i in range(size))
            + "]\nfor a in x:\n    for b in x:\n        print(a, b)",
        ],
        "javascript": [
            "let x = 'a';\n" + "".join(f"x = x + 'b{i}';\n" for i in range(size)),
            "".join(f"function f{i}(a) {{ return f{i + 1}(a) }}\n" for i in range(size))
            + "f0('x')",
            "const fs = require('fs');\n"
            + "".join(f"fs.unlinkSync('/tmp/f{i}');\n" for i in range(size)),
            "x = " + "(" * min(size, 500) + "1" + ")" * min(size, 500),
        ],
        "powershell": [
            "$x = 'a'\n" + "".join(f"$x = $x + 'b{i}'\n" for i in range(size)),
            "".join(f"Remove-Item /tmp/f{i}\n" for i in range(size)),
            "".join(f"function f{i}($p) {{ f{i + 1} $p }}\n" for i in range(size)) + "f0 x",
        ],
        "ruby": [
            "x = 'a'\n" + "".join(f"x = x + 'b{i}'\n" for i in range(size)),
            "".join(f"File.delete('/tmp/f{i}')\n" for i in range(size)),
        ],
        "perl": [
            "my $x = 'a';\n" + "".join(f"$x = $x . 'b{i}';\n" for i in range(size)),
            "".join(f"unlink '/tmp/f{i}';\n" for i in range(size)),
        ],
        "php": [
            "$x = 'a';\n" + "".join(f"$x = $x . 'b{i}';\n" for i in range(size)),
            "".join(f"unlink('/tmp/f{i}');\n" for i in range(size)),
        ],
    }
    return shapes[language]


def linear() -> None:
    print("2. hostile shapes at size n=250 and 4n: time ratio (4 is linear, 16 quadratic),")
    print("   and the time at 4n. A loop over a literal list is unrolled while the step")
    print("   budget lasts (nested loops over 250 items), not past 256 items.")
    for language in TYPICAL:
        ratios = []
        for index in range(len(_hostile(language, 10))):
            small = _hostile(language, 250)[index]
            large = _hostile(language, 1000)[index]
            times = []
            for text in (small, large):
                runs = []
                for _ in range(3):
                    start = time.perf_counter()
                    _analyse(language, text, 0)
                    runs.append(time.perf_counter() - start)
                times.append(min(runs))
            ratios.append((times[1] / times[0], times[1] * 1e3))
        print(f"   {language:<11} " + "  ".join(f"{r:4.1f}x ({ms:.0f} ms)" for r, ms in ratios))


def main() -> None:
    typical()
    linear()


if __name__ == "__main__":
    main()
