"""Package sources and their integrity checks (issue 10, supply chain): however a source is
changed (a settings command, a variable, a file tool, a patch, `sed -i`, a redirect, code),
a source on a host that is not a trusted index, or a check switched off, asks; settings that
change no source stay allowed (sidecar/effects/package_sources.py,
policies/23-effects-supply.yaml)."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.effects.package_sources import findings, kind_of
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode

_ENGINE = engine_for_mode(Mode.AUTO)
ASK, ALLOW = Verdict.REQUIRE_APPROVAL, Verdict.ALLOW


async def judged(tool: str, arguments: dict[str, Any]) -> tuple[Verdict, list[str]]:
    decision = await _ENGINE.inspect(f"sup-{tool}-{arguments}", [ToolCall("1", tool, arguments)])
    verdict = decision.verdicts[0]
    return verdict.verdict, [f.rule_id for f in verdict.findings if f.verdict is not ALLOW]


def _trusted(host: str) -> bool:
    return host in ("pypi.org", "registry.npmjs.org", "proxy.golang.org", "crates.io")


@pytest.mark.parametrize(
    "command",
    [
        # Settings commands, spelled in ways the tuning set does not use.
        "pnpm config set registry https://npm.fastcdn.example.net/ --location=global",
        "npm config set @acme:registry=https://npm.acme-packages.example.org/",
        "go env -w GOPROXY='https://gomods.example.dev|direct'",
        "go env -w GOSUMDB=off",
        "go env -w GOINSECURE=*.corp.example",
        "git config --system url.git@git.mirror.example.net:.insteadOf https://github.com/",
        "git config --global http.https://github.com/.sslVerify false",
        "pip config --user set global.extra-index-url https://wheels.example.io/simple",
        "pip3 config set install.trusted-host wheels.example.io",
        "yarn config set strict-ssl false",
        "npm set registry https://npm.fastcdn.example.net/",
        "pdm config pypi.url https://wheels.example.io/simple",
        "go mod edit -replace github.com/sirupsen/logrus=logrus.mirror.example/logrus@v1.9.3",
        # A CA bundle or client certificate changes who is trusted: asks as before.
        "npm config set cafile /tmp/corp-ca.pem",
        "pip config set global.cert /tmp/mitm.pem",
        # Variables for one command or the rest of the line.
        "PIP_EXTRA_INDEX_URL=https://wheels.example.io/simple pip install fastapi",
        "export UV_INDEX_URL=https://wheels.example.io/simple && uv sync",
        "NPM_CONFIG_REGISTRY=https://npm.fastcdn.example.net npm ci",
        "env GIT_SSL_NO_VERIFY=true git submodule update --init",
        "export GOFLAGS=-insecure GONOSUMCHECK=1; go mod download",
        # Redirects, tee, here-documents, sed and code writing the files.
        "printf 'registry=https://npm.fastcdn.example.net/\\n' | tee -a ~/.npmrc >/dev/null",
        "cat >> ~/.config/pip/pip.conf <<'EOF'\n[global]\nextra-index-url = https://wheels.example.io/simple\nEOF",
        "tee -a ~/.cargo/config.toml <<< '[registries.fast]\nindex = \"sparse+https://idx.cargo-cdn.example/\"'",
        "sed -i 's|https://files.pythonhosted.org|https://files.pypi-cache.example.io|g' poetry.lock",
        "sed -i -e 's#registry.npmjs.org#npm.fastcdn.example.net#g' pnpm-lock.yaml",
        "sed -Ei.bak 's#(resolved \")https://registry.npmjs.org#\\1https://npm.fastcdn.example.net#' package-lock.json",
        "echo 'strict-ssl=false' >> .npmrc",
        "echo 'enableStrictSsl: false' >> .yarnrc.yml",
        "python3 -c \"open('/home/dev/.config/pip/pip.conf','a').write('index-url = https://wheels.example.io/simple')\"",
    ],
)
async def test_source_changes_in_shell_ask(command: str) -> None:
    verdict, rules = await judged("Bash", {"command": command})
    assert verdict is ASK, (command, rules)
    assert any(r.startswith("supply.") or r == "families.switch-package-source" for r in rules)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        (
            "str_replace_based_edit_tool",
            {
                "command": "create",
                "path": "/home/dev/.config/pip/pip.ini",
                "file_text": "[global]\nindex-url = https://wheels.example.io/simple\n",
            },
        ),
        (
            "write_file",
            {
                "path": "/home/dev/app/.cargo/config.toml",
                "content": "[source.crates-io]\nreplace-with = 'vendored'\n\n"
                "[source.vendored]\nregistry = 'https://git.crates-cdn.example/index'\n",
            },
        ),
        (
            "apply_patch",
            {
                "input": "*** Begin Patch\n*** Update File: yarn.lock\n@@\n-  resolved "
                '"https://registry.yarnpkg.com/chalk/-/chalk-5.3.0.tgz"\n+  resolved '
                '"https://yarn.mirror-cdn.example/chalk/-/chalk-5.3.0.tgz"\n*** End Patch\n'
            },
        ),
        (
            "MultiEdit",
            {
                "file_path": "/home/dev/app/pyproject.toml",
                "edits": [
                    {
                        "old_string": "[tool.uv]",
                        "new_string": '[[tool.uv.index]]\nname = "fast"\n'
                        'url = "https://wheels.example.io/simple"\n\n[tool.uv]',
                    }
                ],
            },
        ),
        (
            "replace_in_file",
            {
                "path": "requirements.txt",
                "diff": "------- SEARCH\nflask==3.0.3\n=======\n"
                "flask @ https://dl.wheels-cache.example/flask-3.0.3-py3-none-any.whl\n"
                "+++++++ REPLACE",
            },
        ),
        (
            "Write",
            {"file_path": "/home/dev/app/.npmrc", "content": "strict-ssl=false\nfund=false\n"},
        ),
        (
            "Edit",
            {
                "file_path": "/home/dev/app/go.mod",
                "old_string": "require (",
                "new_string": "replace github.com/acme/log => goproxy.mirror.example/acme/log v1.0.0\n\nrequire (",
            },
        ),
    ],
)
async def test_source_changes_by_file_tools_ask(tool: str, arguments: dict[str, Any]) -> None:
    verdict, rules = await judged(tool, arguments)
    assert verdict is ASK, (tool, arguments, rules)
    assert any(r.startswith("supply.") for r in rules), rules


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("Bash", {"command": "npm config set save-exact true"}),
        ("Bash", {"command": "npm config set fund false"}),
        ("Bash", {"command": "go env -w GOPRIVATE=github.com/acme/* GOFLAGS=-mod=mod"}),
        ("Bash", {"command": "go env -w GOPROXY=https://proxy.golang.org,direct"}),
        ("Bash", {"command": "pip config set global.index-url https://pypi.org/simple"}),
        ("Bash", {"command": "git config --global http.sslVerify true"}),
        ("Bash", {"command": "git config --global pull.rebase true"}),
        ("Bash", {"command": "git config --global user.email dev@acme-corp.com"}),
        ("Bash", {"command": "sed -i 's/old@acme.com/new@acme.com/' package.json"}),
        ("Bash", {"command": "echo 'engine-strict=true' >> .npmrc"}),
        ("Bash", {"command": 'sed -i \'s/"lodash": "4.17.20"/"lodash": "4.17.21"/\' package.json'}),
        ("Bash", {"command": "echo 'rich>=13' >> requirements.txt"}),
        (
            "Bash",
            {"command": "echo 'mylib @ git+https://github.com/acme/mylib@v2' >> requirements.txt"},
        ),
        (
            "edit_file",
            {
                "target_file": "/home/dev/app/.npmrc",
                "code_edit": "engine-strict=true\nsave-exact=true\n",
            },
        ),
        (
            "Write",
            {
                "file_path": "/home/dev/app/package.json",
                "content": '{"name": "a", "repository": {"url": "git+https://github.com/acme/a.git"},'
                ' "homepage": "https://acme.example.com", "dependencies": {"chalk": "^5.3.0"}}',
            },
        ),
        (
            "Write",
            {
                "file_path": "/home/dev/app/Cargo.toml",
                "content": '[package]\nname = "x"\nrepository = "https://github.com/acme/x"\n\n'
                '[dependencies]\nserde = { version = "1", features = ["derive"] }\n',
            },
        ),
        (
            "Write",
            {"file_path": "/home/dev/.config/pip/pip.conf", "content": "[global]\ntimeout = 60\n"},
        ),
    ],
)
async def test_everyday_settings_stay_allowed(tool: str, arguments: dict[str, Any]) -> None:
    verdict, rules = await judged(tool, arguments)
    assert verdict is ALLOW, (tool, arguments, rules)


@pytest.mark.parametrize(
    ("path", "text", "untrusted", "insecure"),
    [
        (
            "~/.npmrc",
            "//npm.x.example/:_authToken=${NPM_TOKEN}\nregistry=https://npm.x.example/",
            ("npm.x.example",),
            (),
        ),
        (
            "pip.conf",
            "[global]\nindex-url = https://pypi.org/simple\ntrusted-host = pypi.org",
            (),
            (),
        ),
        (
            "pip.conf",
            "[global]\ntrusted-host = wheels.x.example",
            (),
            ("trusted-host wheels.x.example",),
        ),
        (
            "~/.config/go/env",
            "GOPROXY=https://proxy.golang.org,direct\nGOSUMDB=off",
            (),
            ("GOSUMDB=off",),
        ),
        ("package-lock.json", '"resolved": "https://registry.npmjs.org/a/-/a-1.tgz"', (), ()),
        ("package-lock.json", '"resolved": "https://codeload.github.com/a/b/tar.gz/abc"', (), ()),
        (
            "yarn.lock",
            'resolved "https://registry.npmjs.org.cdn.example/a/-/a-1.tgz"',
            ("registry.npmjs.org.cdn.example",),
            (),
        ),
        (
            "~/.gitconfig",
            '[url "https://git.x.example/"]\n\tinsteadOf = https://github.com/',
            ("git.x.example",),
            (),
        ),
        ("~/.gitconfig", "[http]\n\tsslVerify = false", (), ("http.sslVerify=false",)),
    ],
)
def test_readers(
    path: str, text: str, untrusted: tuple[str, ...], insecure: tuple[str, ...]
) -> None:
    assert kind_of(path)
    found = findings(path, text, _trusted)
    assert found.untrusted == untrusted
    assert found.insecure == insecure


def test_not_package_configuration() -> None:
    assert kind_of("src/config.toml") == ""
    assert kind_of("README.md") == ""
    assert findings("notes.txt", "registry=https://npm.x.example/", _trusted).sources == 0


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("nerdctl tag registry.example-mirror.io/ci/golang:1.22 golang:1.22", ASK),
        ("docker image tag quay.io/x/redis@sha256:0123abcd redis:7", ASK),
        ("docker tag ghcr.io/someone/library/alpine:3.20 docker.io/library/alpine:3.20", ASK),
        ("docker tag ghcr.io/acme/api:1.2 ghcr.io/acme/api:stable", ALLOW),
        ("docker tag postgres:16 registry.acme.example/mirror/postgres:16", ALLOW),
        ("docker tag web web:previous", ALLOW),
    ],
)
async def test_images_retagged_as_official(command: str, expected: Verdict) -> None:
    verdict, rules = await judged("Bash", {"command": command})
    assert verdict is expected, (command, rules)
