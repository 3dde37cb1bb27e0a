"""Assemble, check and write the generated evaluation (deterministic: fixed seed, sorted input).

Run: python -m bench.evalgen          (writes tests/data/eval/generated/)
     python -m bench.evalgen --check  (exit 1 when the committed files differ)
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.evalgen import benign, runtimes, sequences, transforms, validate
from bench.evalgen.model import Case, Seed
from bench.evalgen.seeds import SEEDS
from bench.evalgen.transforms import Variant

RANDOM_SEED = 20261130
SHELL_SHAPES_PER_SEED = 4
OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "eval" / "generated"
FILES = ("risky.jsonl", "sequences.jsonl", "benign.jsonl")


@dataclass
class Stats:
    candidates: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    unchecked_code: Counter[str] = field(default_factory=Counter)

    def render(self) -> str:
        lines = [f"risky variants: {self.candidates} candidates, {self.kept} kept"]
        for reason, count in sorted(self.dropped.items()):
            lines.append(f"  dropped ({reason}): {count}")
        for language, count in sorted(self.unchecked_code.items()):
            lines.append(f"  code without a syntax checker here ({language}): {count}")
        return "\n".join(lines)


def candidates(rng: random.Random) -> list[tuple[Seed, Variant]]:
    found: list[tuple[Seed, Variant]] = []
    for seed in SEEDS:
        variants = [Variant("identity", seed.command)]
        variants += transforms.program_variants(seed, rng)
        variants += transforms.target_variants(seed, rng)
        variants += transforms.wrapper_variants(seed)
        variants += transforms.interpreter_variants(seed)
        variants += transforms.encoding_variants(seed)
        variants += transforms.split_variants(seed)
        found += [(seed, v) for v in variants]
    return found


def check(found: list[tuple[Seed, Variant]], stats: Stats) -> list[bool]:
    """Keep a variant only when bash parses it and its own check (probe, code, decoding) holds."""
    keep = validate.bash_parses([v.command for _, v in found])
    stats.dropped["bash does not parse it"] += keep.count(False)
    # Probes: the original word once per seed and word, then every variant's probe.
    probe_index: dict[str, int] = {}
    probe_texts: list[str] = []
    for _, v in found:
        if v.probe:
            for text in (f"__argv {v.probe_word}", v.probe):
                if text not in probe_index:
                    probe_index[text] = len(probe_texts)
                    probe_texts.append(text)
    parses = validate.bash_parses(probe_texts)
    outputs = validate.run_probes(
        [p if ok else ":" for p, ok in zip(probe_texts, parses, strict=True)]
    )
    for i, (_, v) in enumerate(found):
        if not keep[i] or not v.probe:
            continue
        base = outputs[probe_index[f"__argv {v.probe_word}"]]
        got = outputs[probe_index[v.probe]]
        if not parses[probe_index[v.probe]] or not validate.probe_holds(v.probe_mode, base, got):
            keep[i] = False
            stats.dropped["respelled word does not expand to the original"] += 1
    # Code in other languages.
    by_language: dict[str, list[int]] = {}
    for i, (_, v) in enumerate(found):
        if v.code is not None and keep[i]:
            by_language.setdefault(v.code[0], []).append(i)
    for language, indices in sorted(by_language.items()):
        codes = [found[i][1].code[1] for i in indices]  # type: ignore[index]
        results: list[bool] | None
        if language == "python":
            results = [validate.python_compiles(c) for c in codes]
        elif language == "node":
            results = validate.node_compiles(codes)
        elif language == "perl":
            results = validate.perl_compiles(codes)
        else:
            results = None
        if results is None:
            stats.unchecked_code[language] += len(indices)
            continue
        for i, ok in zip(indices, results, strict=True):
            if not ok:
                keep[i] = False
                stats.dropped[f"{language} code does not compile"] += 1
    for i, (_, v) in enumerate(found):
        if v.decoded is not None and keep[i] and v.decoded[0] != v.decoded[1]:
            keep[i] = False
            stats.dropped["decoding does not give the original"] += 1
    return keep


def risky_cases(rng: random.Random, stats: Stats) -> list[Case]:
    found = candidates(rng)
    keep = check(found, stats)
    stats.candidates = len(found)
    cases: list[Case] = []
    counters: Counter[str] = Counter()

    def add(seed: Seed, transform: str, call: runtimes.Call, shape: str) -> None:
        counters[seed.id] += 1
        tool, args = call
        cases.append(
            Case(
                f"{seed.id}-{counters[seed.id]:03d}",
                seed.cls,
                seed.expect,
                transform,
                seed.id,
                tool,
                args,
                tool_shape=shape,
            )
        )

    for (seed, variant), ok in zip(found, keep, strict=True):
        if ok:
            add(seed, variant.transform, runtimes.generic_shell(variant.command), "generic")
    stats.kept = len(cases)
    for seed in SEEDS:
        for shape in rng.sample(sorted(runtimes.SHELL), SHELL_SHAPES_PER_SEED):
            add(seed, "tool:shell", runtimes.SHELL[shape](seed.command), shape)
        if seed.write is not None:
            path, content = seed.write
            add(seed, "tool:write", runtimes.generic_write(path, content), "generic")
            for shape, build in sorted(runtimes.WRITE.items()):
                call = build(path, content)
                if shape == "codex:apply_patch" and runtimes.parse_patch_adds(call[1]["input"]) != [
                    (path, content)
                ]:
                    raise AssertionError(f"{seed.id}: the patch does not round-trip")
                add(seed, "tool:write", call, shape)
        if seed.read is not None:
            add(seed, "tool:read", runtimes.generic_read(seed.read), "generic")
            for shape, build_read in sorted(runtimes.READ.items()):
                add(seed, "tool:read", build_read(seed.read), shape)
        if seed.fetch is not None:
            add(seed, "tool:fetch", runtimes.generic_fetch(seed.fetch), "generic")
            for shape, build_fetch in sorted(runtimes.FETCH.items()):
                add(seed, "tool:fetch", build_fetch(seed.fetch), shape)
    return cases


def generate() -> tuple[dict[str, str], Stats]:
    """The generated files' text, by name."""
    rng = random.Random(RANDOM_SEED)
    stats = Stats()
    files = {
        "risky.jsonl": risky_cases(rng, stats),
        "sequences.jsonl": sequences.cases(random.Random(RANDOM_SEED + 1)),
        "benign.jsonl": benign.cases(random.Random(RANDOM_SEED + 2)),
    }
    text = {
        name: "".join(json.dumps(case.to_json(), sort_keys=False) + "\n" for case in cases)
        for name, cases in files.items()
    }
    return text, stats


def main(argv: list[str]) -> int:
    text, stats = generate()
    if "--check" in argv:
        stale = [n for n in FILES if not (OUT / n).exists() or (OUT / n).read_text() != text[n]]
        if stale:
            print(f"stale: {', '.join(stale)} (run python -m bench.evalgen)")
            return 1
        print("generated files are current")
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, body in text.items():
        (OUT / name).write_text(body)
        print(f"{name}: {body.count(chr(10))} cases")
    print(stats.render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
