"""Container images retagged as official ones: `docker tag x/library-mirror/node:20 node:20`
makes every later `FROM node:20` and `docker run node:20` on this machine use an image from
somewhere else. An official name is one without a namespace (`node`, `library/node`,
`docker.io/library/node`); the source is another repository of the same image name."""

from __future__ import annotations

from collections.abc import Sequence

_RETAGGERS = frozenset({"docker", "podman", "nerdctl", "finch"})
_OFFICIAL_PREFIXES = ("docker.io/library/", "index.docker.io/library/", "library/")


def shadowed_official(program: str, positionals: Sequence[str]) -> tuple[str, str] | None:
    """(source, official name) when the command retags an image from another repository as
    the official image of the same name; None otherwise."""
    if program not in _RETAGGERS or not positionals:
        return None
    words = list(positionals)
    if words[:2] == ["image", "tag"]:
        words = words[2:]
    elif words[0] == "tag":
        words = words[1:]
    else:
        return None
    if len(words) != 2 or not all(type(w) is str for w in words):
        return None
    source, target = words
    official = _official_name(target)
    if official is None or _official_name(source) is not None:
        return None
    if _repository(source).rsplit("/", 1)[-1] != official:
        return None
    return source, target


def _official_name(image: str) -> str | None:
    repository = _repository(image)
    for prefix in _OFFICIAL_PREFIXES:
        if repository.startswith(prefix):
            repository = repository[len(prefix) :]
            break
    return repository if repository and "/" not in repository else None


def _repository(image: str) -> str:
    """The name without tag or digest: `ghcr.io/x/node:20@sha256:..` is `ghcr.io/x/node`."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[: len(name) - len(last)] + last.split(":", 1)[0]
    return name.lower()
