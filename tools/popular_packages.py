"""Write the popular-package lists the typosquat check compares installs against.

Run by hand, once, when the lists should be refreshed; the output is committed under
`policies/packages/` and nothing downloads at test or run time:

    python -m tools.popular_packages --npm NPM.tsv --pypi PYPI.tsv --debian [--out DIR]

Sources of popularity, named in each file's header:

- npm: monthly downloads as the npm registry counts them, from a table of packages with a
  `downloads_a_month` column (name, version, downloads_a_month, summary).
- PyPI: the rank among the 15,000 most downloaded projects, from a table with a
  `rank_among_15000_most_downloaded` column (name, version, month, rank, summary).
- crates.io and RubyGems: neither registry is reachable from our machines, so the Debian
  archive stands in: the crates (`librust-NAME-dev`) and gems (`ruby-NAME` built by gem2deb)
  that Debian 12 packages, ranked by how many Debian packages depend on them. Read from
  `apt-cache dumpavail` (the local package lists, after `apt-get update`).

Each file lists names most popular first, one a line; `#` lines are comments.
"""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "policies" / "packages"
NPM_NAMES = 25_000  # the policy trusts the top 20,000; the rest is the evaluation's held-out band
PYPI_NAMES = 15_000
_DEPENDENCY = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]*)")
_RUST_DEV = re.compile(r"^librust-(.+)-dev$")
_VERSIONED = re.compile(r"^(.+)-\d+(\.\d+)*$")


def csv_rows(path: Path) -> Iterator[list[str]]:
    csv.field_size_limit(sys.maxsize)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(reader, None)  # the header
        yield from reader


def npm_names(path: Path, limit: int) -> list[str]:
    ranked: list[tuple[int, str]] = []
    for row in csv_rows(path):
        if len(row) >= 3 and row[2].isdigit():
            ranked.append((-int(row[2]), row[0]))
    return [name for _, name in sorted(ranked)[:limit]]


def pypi_names(path: Path, limit: int) -> list[str]:
    ranked: list[tuple[int, str]] = []
    for row in csv_rows(path):
        if len(row) >= 4 and row[3].isdigit():
            ranked.append((int(row[3]), row[0]))
    return [name for _, name in sorted(ranked)[:limit]]


def debian_records(text: str) -> Iterator[dict[str, str]]:
    for block in text.split("\n\n"):
        record: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and key:
                record[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                record[key] = value.strip()
        if "Package" in record:
            yield record


def _dependencies(record: dict[str, str]) -> Iterator[str]:
    for field in ("Depends", "Pre-Depends", "Recommends"):
        for clause in record.get(field, "").split(","):
            for alternative in clause.split("|"):
                match = _DEPENDENCY.match(alternative)
                if match:
                    yield match.group(1).split(":")[0]


def debian_names(text: str) -> tuple[list[str], list[str]]:
    """(crates, gems), most depended on first."""
    records = list(debian_records(text))
    crate_of: dict[str, str] = {}  # Debian package or virtual name -> crate
    gem_of: dict[str, str] = {}
    rust = {m.group(1) for r in records if (m := _RUST_DEV.match(r["Package"]))}
    for record in records:
        package = record["Package"]
        match = _RUST_DEV.match(package)
        if match and "+" not in match.group(1):
            crate = match.group(1)
            versioned = _VERSIONED.match(crate)
            if versioned and versioned.group(1) in rust:
                crate = versioned.group(1)  # librust-nom-3-dev is nom
            crate_of[package] = crate
            for provided in record.get("Provides", "").split(","):
                name = provided.strip().split(" ")[0]
                if name:
                    crate_of[name] = crate
        if package.startswith("ruby-") and _is_gem(record):
            gem_of[package] = package.removeprefix("ruby-")
    crates: Counter[str] = Counter({c: 0 for c in crate_of.values()})
    gems: Counter[str] = Counter({g: 0 for g in gem_of.values()})
    for record in records:
        seen_crates: set[str] = set()
        seen_gems: set[str] = set()
        for dependency in _dependencies(record):
            if dependency in crate_of and crate_of[dependency] != crate_of.get(record["Package"]):
                seen_crates.add(crate_of[dependency])
            if dependency in gem_of:
                seen_gems.add(gem_of[dependency])
        crates.update(seen_crates)
        gems.update(seen_gems)
    return _ranked(crates), _ranked(gems)


def _is_gem(record: dict[str, str]) -> bool:
    """A gem packaged by gem2deb: pure Ruby ones say Ruby-Versions; compiled ones depend on
    the interpreter. The interpreter's own packages (ruby-dev, ruby-full) are not gems."""
    source = record.get("Source", record["Package"]).split(" ")[0]
    if source in ("ruby-defaults",) or re.match(r"^ruby\d", source):
        return False
    if "Ruby-Versions" in record:
        return True
    return any(d in ("ruby", "libruby") or d.startswith("libruby") for d in _dependencies(record))


def _ranked(counts: Counter[str]) -> list[str]:
    return [name for name, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def write(path: Path, header: Iterable[str], names: list[str]) -> None:
    lines = [f"# {line}" for line in header]
    path.write_text("\n".join(lines + names) + "\n", encoding="utf-8")
    print(f"{path}: {len(names)} names")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--npm", type=Path, help="TSV with a downloads_a_month column")
    parser.add_argument("--pypi", type=Path, help="TSV with a rank_among_15000 column")
    parser.add_argument("--debian", action="store_true", help="crates and gems from apt")
    parser.add_argument("--date", default="2026-11-25", help="when the sources were taken")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    common = [
        "Generated by tools/popular_packages.py; do not edit by hand.",
        "One name a line, most popular first.",
    ]
    if args.npm:
        write(
            args.out / "npm.txt",
            [
                f"npm packages by monthly downloads as the npm registry counts them "
                f"(snapshot of {args.date}), top {NPM_NAMES:,}.",
                *common,
            ],
            npm_names(args.npm, NPM_NAMES),
        )
    if args.pypi:
        write(
            args.out / "pypi.txt",
            [
                f"PyPI projects by their rank among the 15,000 most downloaded "
                f"(snapshot of {args.date}).",
                *common,
            ],
            pypi_names(args.pypi, PYPI_NAMES),
        )
    if args.debian:
        text = subprocess.run(
            ["apt-cache", "dumpavail"], check=True, capture_output=True, text=True
        ).stdout
        crates, gems = debian_names(text)
        release = "Debian 12 (bookworm)"
        write(
            args.out / "crates.txt",
            [
                f"Rust crates packaged in {release} (librust-NAME-dev), ranked by how many "
                "Debian packages depend on them: crates.io is not reachable from our "
                f"machines, so this stands in for its download counts ({args.date}).",
                *common,
            ],
            crates,
        )
        write(
            args.out / "gems.txt",
            [
                f"Ruby gems packaged in {release} (ruby-NAME built by gem2deb), ranked by "
                "how many Debian packages depend on them: RubyGems is not reachable from our "
                f"machines, so this stands in for its download counts ({args.date}). Debian "
                "writes '_' in gem names as '-'.",
                *common,
            ],
            gems,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
