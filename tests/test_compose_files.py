"""Compose files read as the `docker run` of each service, and hostile texts read as nothing."""

from __future__ import annotations

import shlex

import pytest

from sidecar.shell.compose_files import compose_lines, is_compose_file


def test_each_service_is_the_docker_run_compose_makes() -> None:
    lines = compose_lines(
        "services:\n"
        "  a:\n    image: alpine\n    privileged: true\n    pid: host\n    network_mode: host\n"
        "    cap_add: [SYS_ADMIN]\n    volumes:\n      - /:/host:ro\n"
        "      - {type: bind, source: /var/run/docker.sock, target: /s}\n"
        "    entrypoint: [sh, -c]\n    command: 'echo hi'\n"
        "  b:\n    build: .\n    command: npm run dev\n"
    )
    assert [shlex.split(line) for line in lines] == [
        ["docker", "run", "-d", "--privileged", "--pid", "host", "--network", "host",
         "--cap-add", "SYS_ADMIN", "-v", "/:/host:ro", "-v", "/var/run/docker.sock:/s",
         "--entrypoint", "sh", "alpine", "-c", "echo", "hi"],
        ["docker", "run", "-d", "compose-built-image", "npm", "run", "dev"],
    ]  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "",
        "services: [1, 2]",
        "just text",
        "services:\n  a: 3\n",
        "[" * 5000 + "]" * 5000,  # nesting deeper than the parser's stack
        "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nservices: {s: {image: *c}}\n",
        "services:\n  a:\n    command: 'unbalanced \"quote'\n",
        "\udcff services:",
    ],
)
def test_texts_that_are_not_compose_files_run_nothing_and_never_raise(text: str) -> None:
    lines = compose_lines(text)
    assert all(line.startswith("docker run -d") for line in lines)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("docker-compose.yml", True),
        ("deploy/compose.prod.yaml", True),
        ("docker-compose.override.yml", True),
        ("compose.json", False),
        ("my-compose.yml", False),
    ],
)
def test_compose_file_names(path: str, expected: bool) -> None:
    assert is_compose_file(path) is expected
