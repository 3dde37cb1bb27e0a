"""Platform CLIs that run a command somewhere else: `heroku run CMD -a APP`, `fly ssh console
-C CMD`, `gcloud compute ssh HOST --command CMD`, `az vm run-command invoke --scripts CMD`,
`aws ssm send-command --parameters commands=CMD`, `docker compose exec SERVICE CMD`,
`ansible HOSTS -m shell -a CMD`.

The command is judged like one run here, as ssh's remote command is. `via` names the runner
and the place (app, host, targets, service, context), so what it does there can be weighed
by where: a production app's data is not a laptop's.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import NamedTuple


class Remote(NamedTuple):
    script: str
    via: str  # "remote heroku run -a shop-production"


# Options whose value names the place a command runs in.
_PLACE_OPTIONS = frozenset({
    "-a", "--app", "-r", "--remote", "--zone", "--project", "--region", "-g",
    "--resource-group", "-n", "--name", "--targets", "--instance-ids", "--context",
    "--namespace", "--profile", "-s", "--service", "--machine", "--env", "-e",
    "--environment", "--cluster",
})  # fmt: skip
_MAX_VIA = 120


def remote_commands(program: str, args: Sequence[str]) -> list[Remote]:
    """The commands a platform CLI runs elsewhere, with where."""
    words = list(args)
    if program == "heroku" and words[:1] in (["run"], ["run:detached"]):
        return _trailing(program, words, 1, _HEROKU_VALUES)
    if program in ("fly", "flyctl") and words[:2] == ["ssh", "console"]:
        return _option_command(program, words, ("-C", "--command"))
    if program == "gcloud" and "ssh" in words[:3]:
        found = _option_command(program, words, ("--command",))
        return found or _after_double_dash(program, words)
    if program == "az" and words[:3] == ["vm", "run-command", "invoke"]:
        return _option_command(program, words, ("--scripts",))
    if program == "aws" and words[:2] == ["ssm", "send-command"]:
        return _ssm(program, words)
    if program in ("docker", "podman") and words[:1] == ["compose"] and "exec" in words:
        at = words.index("exec")
        return _trailing(program, words, at + 1, _COMPOSE_VALUES, service=True)
    if program in ("docker-compose", "podman-compose") and words[:1] == ["exec"]:
        return _trailing(program, words, 1, _COMPOSE_VALUES, service=True)
    if program == "ansible":
        return _ansible(program, words)
    return []


# Modules that run their argument as a command line (the default module is `command`).
_ANSIBLE_COMMAND_MODULES = frozenset(
    {"command", "shell", "raw", "win_shell", "win_command", "ansible.builtin.command",
     "ansible.builtin.shell", "ansible.builtin.raw", "ansible.windows.win_shell",
     "ansible.windows.win_command"}
)  # fmt: skip


def _ansible(program: str, words: list[str]) -> list[Remote]:
    """`ansible prod -b -m shell -a 'rm -rf /var/lib/x'`: the command runs on every host of
    the pattern; the pattern is the place."""
    module = "command"
    script = ""
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word in ("-m", "--module-name"):
            module = following
        elif word.startswith("--module-name="):
            module = word.partition("=")[2]
        elif word.startswith("-m") and len(word) > 2:
            module = word[2:]
        elif word in ("-a", "--args"):
            script = following
        elif word.startswith("--args="):
            script = word.partition("=")[2]
    if module not in _ANSIBLE_COMMAND_MODULES or not script.strip():
        return []
    return [Remote(script, _place(program, words))]


# How a command reached a remote host, container or app: the `via` of what it runs there.
REMOTE_VIAS = ("remote ", "ssh ", "kubectl exec", "oc exec", "kubecolor exec", "docker exec",
               "podman exec", "nerdctl exec", "finch exec")  # fmt: skip

REMOTE_RUNNERS = frozenset(
    {
        "heroku",
        "fly",
        "flyctl",
        "gcloud",
        "az",
        "aws",
        "docker-compose",
        "podman-compose",
        "ansible",
    }
)

_HEROKU_VALUES = frozenset({"-a", "--app", "-r", "--remote", "-s", "--size", "-e", "--env",
                            "--type", "-t", "--team"})  # fmt: skip
_COMPOSE_VALUES = frozenset({"-e", "--env", "-u", "--user", "-w", "--workdir", "--index",
                             "-f", "--file", "-p", "--project-name"})  # fmt: skip


def _place(program: str, words: list[str]) -> str:
    """The runner and the words that say where it runs."""
    # The first words (subcommand, host) and every place option's value, in order.
    shown = [program, *(w for w in words[:6] if not w.startswith("-"))]
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if option in _PLACE_OPTIONS:
            if equals:
                shown.append(f"{option} {value}")
            elif index + 1 < len(words):
                shown.append(f"{word} {words[index + 1]}")
    return ("remote " + " ".join(dict.fromkeys(shown)))[:_MAX_VIA]


def _trailing(
    program: str, words: list[str], start: int, values: frozenset[str], service: bool = False
) -> list[Remote]:
    """`heroku run [options] CMD...`, `docker compose exec [options] SERVICE CMD...`."""
    position = start
    while position < len(words):
        word = words[position]
        if word == "--":
            position += 1
            break
        if not word.startswith("-"):
            break
        position += 2 if word in values else 1
    if service:
        position += 1  # the service the command runs in
    command = words[position:]
    if not command:
        return []
    script = command[0] if len(command) == 1 else shlex.join(command)
    return [Remote(script, _place(program, words))]


def _option_command(program: str, words: list[str], options: tuple[str, ...]) -> list[Remote]:
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if option in options:
            script = value if equals else (words[index + 1] if index + 1 < len(words) else "")
            if script.strip():
                return [Remote(script, _place(program, words))]
    return []


def _after_double_dash(program: str, words: list[str]) -> list[Remote]:
    if "--" not in words:
        return []
    command = words[words.index("--") + 1 :]
    return [Remote(shlex.join(command), _place(program, words))] if command else []


def _ssm(program: str, words: list[str]) -> list[Remote]:
    """`--parameters commands=a,b` or `--parameters '{"commands": ["a", "b"]}'`."""
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if option != "--parameters":
            continue
        text = value if equals else (words[index + 1] if index + 1 < len(words) else "")
        commands = _ssm_commands(text)
        if commands:
            return [Remote("\n".join(commands), _place(program, words))]
    return []


def _ssm_commands(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            return []
        found = data.get("commands") if isinstance(data, dict) else None
        if isinstance(found, str):
            return [found]
        return [c for c in found if isinstance(c, str)] if isinstance(found, list) else []
    key, equals, value = text.partition("=")
    if not equals or key.strip() != "commands":
        return []
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    return [value.strip("\"'")] if value else []
