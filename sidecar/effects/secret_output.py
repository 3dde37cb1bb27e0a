"""Programs whose output is a credential, and where that output goes.

`gh auth token`, `vault kv get`, `kubectl get secret -o json`, `aws ecr get-login-password`, a
token fetched from a cloud's instance-metadata endpoint: what they print is a secret. The
catalogue says which (`prints_secrets:` on a program or subcommand, see
`sidecar/policy/programs.py`); the line's data flow carries the marker `secret_data(...)`
through pipes, substitutions, variables and files, so a send that carries it is credential
exfiltration (`policies/22-effects-secrets.yaml`). Printing it to the terminal stays what it
was: the marker only matters where data leaves the machine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

import re2

from sidecar.effects.hosts import host_of
from sidecar.policy.programs import SecretOutput

SECRET_PREFIX = "(secret "  # noqa: S105 (a marker, not a password)
SECRET_CLASS = "secret_value"  # noqa: S105 (the data class of a secret that is sent)


def secret_data(source: str) -> str:
    """The data marker for a secret printed by `source` (a program, or where it stood)."""
    return f"{SECRET_PREFIX}from {source[:60]})"


def is_secret_data(item: str) -> bool:
    return item.startswith(SECRET_PREFIX)


class CompiledSecretOutput(NamedTuple):
    when: frozenset[str]
    unless: frozenset[str]
    match: re2._Regexp | None
    not_match: re2._Regexp | None


def compile_secret_outputs(specs: Iterable[SecretOutput]) -> tuple[CompiledSecretOutput, ...]:
    return tuple(
        CompiledSecretOutput(
            frozenset(spec.when),
            frozenset(spec.unless),
            re2.compile(spec.match) if spec.match is not None else None,
            re2.compile(spec.not_match) if spec.not_match is not None else None,
        )
        for spec in specs
    )


def prints_secrets(
    conditions: Sequence[CompiledSecretOutput], named: frozenset[str], line: str
) -> bool:
    """Whether one of the catalogue's conditions holds for a command (its named flags and
    its line, `program word word ...`)."""
    for condition in conditions:
        if condition.when and condition.when.isdisjoint(named):
            continue
        if condition.unless and not condition.unless.isdisjoint(named):
            continue
        if condition.match is not None and condition.match.search(line) is None:
            continue
        if condition.not_match is not None and condition.not_match.search(line) is not None:
            continue
        return True
    return False


# --- Secrets named by variables: `printenv AWS_SECRET_ACCESS_KEY`, `echo "$GITHUB_TOKEN"`.
SECRET_NAME = re2.compile(
    r"(?i)^[A-Za-z0-9_]*(TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|"
    r"PRIVATE_?KEY|CREDENTIALS?|AUTH|SESSION_?KEY|_PAT|_PWD|CLIENT_?KEY|SIGNING_?KEY|"
    r"DATABASE_URL|DSN|WEBHOOK_URL|CONNECTION_STRING)[A-Za-z0-9_]*$"
)
# `$GITHUB_TOKEN`, `${OPENAI_API_KEY}`, `${!NAME}`-free simple references in a word's text.
_VARIABLE_REFERENCE = re2.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def secret_variables(words: Iterable[str]) -> list[str]:
    """Variables with a secret's name referenced in the words' text."""
    found: list[str] = []
    for word in words:
        if "$" not in word:
            continue
        for name in _VARIABLE_REFERENCE.findall(word):
            if SECRET_NAME.search(name) is not None:
                found.append(name)
    return found


def printed_variables(program: str, args: Sequence[str]) -> list[str]:
    """`printenv NAME`, `env | grep` aside: the variables a printing command names."""
    if program == "printenv":
        return [a for a in args if not a.startswith("-") and SECRET_NAME.search(a)]
    return []


# --- Where a credential is presented, not leaked: an auth header or a user option sent to
# the service it is for (`curl -H "Authorization: Bearer $(gcloud auth print-access-token)"`).
_PRESENTING_OPTIONS = frozenset(
    {"-u", "--user", "--oauth2-bearer", "--proxy-user", "-U", "--http-user", "--http-password",
     "--password", "--aws-sigv4", "-E", "--cert", "--key", "--password-stdin", "-p"}
)  # fmt: skip
_HEADER_OPTIONS = frozenset({"-H", "--header", "--proxy-header"})
_AUTH_HEADER = re2.compile(
    r"(?i)^\s*(authorization|proxy-authorization|cookie|x-[a-z0-9-]*(token|key|auth|secret|"
    r"session)[a-z0-9-]*|private-token|api-?key|apikey|token|metadata-flavor|metadata)\s*:"
)


def presented_words(options: Mapping[str, tuple[str, ...]]) -> frozenset[str]:
    """Option values through which a program presents a credential to the host it talks to."""
    found = {v for name in _PRESENTING_OPTIONS for v in options.get(name, ())}
    for name in _HEADER_OPTIONS:
        found.update(v for v in options.get(name, ()) if _AUTH_HEADER.search(v) is not None)
    return frozenset(found)


def carried_by_words(args: Sequence[str], presented: frozenset[str]) -> bool:
    """Whether run-time text (a substitution, a variable) stands in a word that is not just
    a presented credential: a URL, a body, a field."""
    for word in args:
        if type(word) is str and "$(" not in word and "`" not in word:
            continue  # static text carries nothing from elsewhere
        if word in presented:
            continue
        if "$" in word or "`" in word:
            return True
    return False


# --- Instance-metadata endpoints: what they answer holds the machine's cloud credentials.
_METADATA_HOSTS = frozenset(
    {"169.254.169.254", "metadata.google.internal", "metadata", "169.254.170.2",
     "100.100.100.200", "fd00:ec2::254", "[fd00:ec2::254]", "169.254.169.253",
     "metadata.azure.com", "instance-data", "instance-data.ec2.internal"}
)  # fmt: skip


def is_metadata_host(word: str) -> bool:
    host = host_of(word) if "/" in word or ":" in word else word
    return (host or word).lower().rstrip(".") in _METADATA_HOSTS
