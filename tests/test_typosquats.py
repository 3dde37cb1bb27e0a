"""Typosquatted package names: installs one edit from a popular name ask; popular names,
legitimately similar names, scoped names and paths do not."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from sidecar.effects.packages import names_in, one_edit_apart, package_name
from sidecar.policy.loader import bundled_policy_dir
from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell, write_policy
from tools.popular_packages import debian_names, npm_names, pypi_names

SQUATS = [
    "npm install lodahs",
    "npm i expres",
    "pnpm add crossenv",
    "yarn add @types/nodee",
    "bun add reactt",
    "npx nodemno server.js",
    "pnpm dlx prettir --write .",
    "bunx typescirpt",
    "npm install left-pad lodahs",  # one bad name among good ones
    "pip install reqeusts",
    "pip3 install 'colourama>=0.4'",
    "python -m pip install --upgrade python3-dateutil",
    "uv pip install nunpy",
    "uv add flaks",
    "uvx blackk .",
    "pipx install poetyr",
    "cargo install sered",
    "cargo add toikio",
    "gem install faradya",
    # Names the popularity source undercounts (protect_also): scaffolders, Debian-renamed gems.
    "npx create-raect-app web",
    "pnpm dlx craete-vite@latest web",
    "gem install rials",
]
POPULAR = [
    "npm install lodash",
    "npm install react react-dom",
    "pnpm add preact",
    "npm i -D @types/node typescript",
    "yarn add express@4",
    "npx create-react-app my-app",
    "npm create vite@latest web",
    "gem install rails",
    "pip install requests",
    "pip install 'requests[socks]>=2.31'",
    "pip install python-dateutil==2.9",
    "pip install Django",
    "uv pip install numpy pandas",
    "pipx install black",
    "cargo install ripgrep",
    "cargo add serde@1 tokio -F full",
    "gem install faraday",
    # Not registry names: paths, URLs, manifests.
    "npm install ./vendor/lodahs",
    "pip install -r requirements.txt",
    "npm ci",
]


@pytest.fixture
async def stub(start_sidecar: StartSidecar) -> pb_grpc.PolicyServiceStub:
    sidecar: Sidecar = await start_sidecar(mode="auto")
    channel = grpc.aio.insecure_channel(sidecar.addresses[0])
    return pb_grpc.PolicyServiceStub(channel)


async def _verdict(stub: pb_grpc.PolicyServiceStub, command: str) -> pb.ToolVerdict:
    response = await stub.Inspect(
        pb.InspectRequest(session_id=f"s-{command}", tool_calls=[shell("1", command)])
    )
    return response.verdicts[0]


async def test_typosquat_installs_ask_and_popular_ones_do_not(
    stub: pb_grpc.PolicyServiceStub,
) -> None:
    for command in SQUATS:
        found = await _verdict(stub, command)
        assert found.verdict == pb.VERDICT_REQUIRE_APPROVAL, command
        squat = next(f for f in found.findings if f.rule_id == "effects.install-typosquat")
        assert "one letter away from the popular package" in squat.message, squat.message
    for command in POPULAR:
        found = await _verdict(stub, command)
        rules = {f.rule_id for f in found.findings}
        assert "effects.install-typosquat" not in rules, (command, found.reason)
        assert found.verdict == pb.VERDICT_ALLOW, (command, found.reason)


async def test_the_prompt_names_the_popular_package(stub: pb_grpc.PolicyServiceStub) -> None:
    found = await _verdict(stub, "npm install lodahs")
    assert "lodahs" in found.approval_prompt and "lodash" in found.approval_prompt


async def test_an_operator_allows_a_name_and_replaces_a_list(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    write_policy(
        operator_policies,
        "60-packages.yaml",
        "packages:\n  ecosystems:\n    npm:\n      programs: [npm, npx, yarn, bun]\n"
        "      names: packages/npm.txt\n      normalise: npm\n      protect: 2\n"
        "      known: 2\n      allow: [lodahs]\n",
    )
    (operator_policies / "packages").mkdir()
    (operator_policies / "packages" / "npm.txt").write_text("# ours\nour-ui-kit\nlodash\n")
    sidecar = await start_sidecar(mode="auto")
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        assert (await _verdict(stub, "npm install our-ui-kt")).verdict == (
            pb.VERDICT_REQUIRE_APPROVAL
        )
        assert (await _verdict(stub, "npm install lodahs")).verdict == pb.VERDICT_ALLOW
        # Only the operator's list is used now: expres is one edit from nothing in it.
        assert (await _verdict(stub, "npm install expres")).verdict == pb.VERDICT_ALLOW


@pytest.mark.parametrize(
    ("spec", "kind", "name"),
    [
        ("lodash@4.17.21", "npm", "lodash"),
        ("@types/node@^20", "npm", "@types/node"),
        ("@types/node", "npm", "@types/node"),
        ("alias@npm:lodahs@1", "npm", "lodahs"),
        ("user/repo", "npm", None),
        ("github:user/repo", "npm", None),
        ("./pkg.tgz", "npm", None),
        ("https://x.example/p.tgz", "npm", None),
        ("Requests[socks]>=2", "pypi", "requests"),
        ("python_dateutil==2.9", "pypi", "python-dateutil"),
        ("zope.interface", "pypi", "zope-interface"),
        ("pkg @ https://x.example/p.whl", "pypi", None),  # from a URL, not the registry
        ("git+https://github.com/x/y", "pypi", None),
        ("dist/p-1.0-py3-none-any.whl", "pypi", None),
        ("serde@1.0", "cargo", "serde"),
        ("proc_macro2", "cargo", "proc-macro2"),
        ("method_source", "gem", "method-source"),
        ("(project dependencies)", "npm", None),
    ],
)
def test_package_names_are_read_from_install_specs(spec: str, kind: str, name: str | None) -> None:
    assert package_name(spec, kind) == name


def test_one_edit_means_one_insertion_deletion_substitution_or_transposition() -> None:
    assert one_edit_apart("lodash", "lodahs")  # transposition
    assert one_edit_apart("express", "expres")  # deletion
    assert one_edit_apart("react", "reactt")  # insertion
    assert one_edit_apart("numpy", "nunpy")  # substitution
    assert not one_edit_apart("react", "react")
    assert not one_edit_apart("react", "react-dom")
    assert not one_edit_apart("lodash", "ldoahs")
    assert not one_edit_apart("abc", "cba")


def test_the_lists_are_committed_with_their_sources() -> None:
    directory = bundled_policy_dir() / "packages"
    for name, source, at_least in (
        ("npm.txt", "monthly downloads", 20_000),
        ("pypi.txt", "15,000 most downloaded", 12_000),
        ("crates.txt", "Debian", 1_000),
        ("gems.txt", "Debian", 500),
    ):
        path = directory / name
        assert source in path.read_text().split("\n", 1)[0]
        names = names_in(path)
        assert len(names) >= at_least and len(set(names)) == len(names)
    npm = names_in(directory / "npm.txt")
    assert npm.index("lodash") < 1_000 and "lodahs" not in npm[:20_000]


def test_the_generator_ranks_by_popularity(tmp_path: Path) -> None:
    npm = tmp_path / "npm.tsv"
    npm.write_text(
        "name\tversion\tdownloads_a_month\tsummary\nb\t1\t5\tx\na\t1\t50\ty\nc\t1\t\tz\n"
    )
    assert npm_names(npm, 10) == ["a", "b"]
    pypi = tmp_path / "pypi.tsv"
    pypi.write_text(
        "name\tversion\tmonth\trank_among_15000_most_downloaded\tsummary\n"
        "x\t1\t2024-01\t2\t\ny\t1\t2024-01\t1\t\nz\t1\t2024-01\t\t\n"
    )
    assert pypi_names(pypi, 10) == ["y", "x"]
    archive = "\n\n".join(
        [
            "Package: librust-serde-dev\nProvides: librust-serde+derive-dev (= 1)",
            "Package: librust-nom-dev",
            "Package: librust-nom-3-dev",
            "Package: librust-toml-dev\nDepends: librust-serde+derive-dev (>= 1), librust-nom-3-dev",
            "Package: librust-app-dev\nDepends: librust-serde-dev | librust-toml-dev",
            "Package: ruby-method-source\nRuby-Versions: all",
            "Package: ruby-pry\nRuby-Versions: all\nDepends: ruby-method-source",
            "Package: ruby-dev\nDepends: ruby-method-source",
        ]
    )
    crates, gems = debian_names(archive)
    assert crates[:2] == ["serde", "nom"] and set(crates) == {"serde", "nom", "toml", "app"}
    assert gems == ["method-source", "pry"]
