"""Infrastructure tools whose environment is the directory they run in: `terraform apply` in
`infra/envs/prod`, `pulumi up` in a stack's folder. The command line names no place; the
call's working directory does. Their effects there are in that place (production: what they
destroy is denied, what they apply asks)."""

from __future__ import annotations

from collections.abc import Sequence

from sidecar.effects.catalogue import Catalogue
from sidecar.effects.model import Action, Effect

_PROGRAMS = ("terraform", "tofu", "terragrunt", "pulumi")
_PRODUCTION = frozenset({"production"})
_DEPLOYS = frozenset({"infrastructure", "deploys", "production"})


def in_directory_place(
    effects: Sequence[Effect], directory: str, catalogue: Catalogue
) -> list[Effect]:
    """`effects` with the place their working directory names, for the tools above."""
    found = list(effects)
    if not directory or not catalogue.pattern_matches("production", directory):
        return found
    changed: list[Effect] = []
    for effect in found:
        if not effect.program.startswith(_PROGRAMS) or "production" in effect.flags:
            changed.append(effect)
            continue
        if effect.action is Action.DESTROY:
            changed.append(effect._replace(flags=effect.flags | _PRODUCTION))
        elif effect.action is Action.EXECUTE and "project" in effect.flags:
            changed.append(effect)
            if effect.program.endswith((" apply", " up", " update")):
                # An apply there changes production without review (families.change-production).
                changed.append(
                    Effect(Action.WRITE, f"{effect.program} in {directory}", flags=_DEPLOYS,
                           program=effect.program)
                )  # fmt: skip
        else:
            changed.append(effect)
    return changed
