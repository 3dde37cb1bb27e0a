"""Code that model and dataset hubs serve (`trust_remote_code=True`, `torch.hub.load`).

Which publishers' repositories are trusted like a package from the usual registries is
policy data: the `trusted_model_publisher` pattern in 29-programs-text-patterns.yaml.
"""

from __future__ import annotations

from sidecar.effects.catalogue import Catalogue
from sidecar.effects.model import Action, Effect

_TRUSTED = frozenset({"trusted_publisher"})


def with_known_publishers(effects: list[Effect], catalogue: Catalogue) -> list[Effect]:
    """Mark hub code whose publisher the policy trusts; other publishers' code asks."""
    if not any("model_hub" in e.flags for e in effects):
        return effects
    return [
        e._replace(flags=e.flags | _TRUSTED)
        if e.action is Action.EXECUTE
        and "model_hub" in e.flags
        and catalogue.pattern_matches("trusted_model_publisher", e.target)
        else e
        for e in effects
    ]
