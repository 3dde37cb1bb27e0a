"""Programs whose environment is the directory they run in (catalogue: `place_is_directory`):
`terraform apply` in `infra/envs/prod`, `pulumi up` in a stack's folder. The command line
names no place; the call's working directory does. Their destroys there are in production
(denied) and their applies change production (ask)."""

from __future__ import annotations

from collections.abc import Sequence

from sidecar.effects.catalogue import Catalogue
from sidecar.effects.model import PRODUCTION, Action, Effect

_DEPLOYS = frozenset({"infrastructure", "deploys"}) | PRODUCTION
_APPLIES = (" apply", " up", " update")


def in_directory_place(
    effects: Sequence[Effect], directory: str, catalogue: Catalogue
) -> list[Effect]:
    """`effects` with the place their working directory names, for those programs."""
    if not directory or not catalogue.pattern_matches("production", directory):
        return list(effects)
    changed: list[Effect] = []
    for effect in effects:
        spec = catalogue.lookup(effect.program.split(" ", 1)[0]) if effect.program else None
        if spec is None or not spec.place_is_directory or PRODUCTION & effect.flags:
            changed.append(effect)
        elif effect.action is Action.DESTROY:
            changed.append(effect._replace(flags=effect.flags | PRODUCTION))
        else:
            changed.append(effect)
            if (
                effect.action is Action.EXECUTE
                and "project" in effect.flags
                and effect.program.endswith(_APPLIES)
            ):
                changed.append(
                    Effect(Action.WRITE, f"{effect.program} in {directory}", flags=_DEPLOYS,
                           program=effect.program)
                )  # fmt: skip
    return changed
