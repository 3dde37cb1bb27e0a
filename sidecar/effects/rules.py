"""Effect rules compiled for judging: each effect is matched on its action, the classes of its
target (and of the data it sends), its origin and its flags."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import re2

from sidecar.bounded_cache import BoundedCache
from sidecar.effects.model import (
    ENVIRONMENT,
    STDIN,
    UNRESOLVED,
    Action,
    Effect,
    Origin,
    is_local_facts,
)
from sidecar.effects.paths import (
    OUTSIDE_WORKSPACE,
    UNRESOLVED_CLASS,
    WORKSPACE,
    PathClasses,
    glob_directory,
    is_glob,
)
from sidecar.effects.secret_output import SECRET_CLASS, is_secret_data
from sidecar.policy.schema import EffectRule

ENVIRONMENT_CLASS = "environment"
FILE_CLASS = "file"  # any local path, as data sent
LOCAL_FACTS_CLASS = "local_facts"  # what uname, ip addr, ps print, as data sent
BUILT_IN_CLASSES = frozenset(
    {WORKSPACE, OUTSIDE_WORKSPACE, UNRESOLVED_CLASS, ENVIRONMENT_CLASS, FILE_CLASS, SECRET_CLASS,
     LOCAL_FACTS_CLASS}
)  # fmt: skip
# Actions whose target is a path (others name hosts, packages, processes or resources).
PATH_ACTIONS = frozenset(
    {
        Action.READ,
        Action.WRITE,
        Action.DELETE,
        Action.MOVE,
        Action.CHMOD,
        Action.CHOWN,
        Action.EXECUTE,
        Action.PERSIST,
    }
)
_RECURSIVE = "recursive"
_PLACES = frozenset({WORKSPACE, OUTSIDE_WORKSPACE})


@dataclass(frozen=True, slots=True)
class CompiledEffectRule:
    rule: EffectRule
    actions: frozenset[Action]
    classes: frozenset[str]
    not_classes: frozenset[str]
    data_classes: frozenset[str]
    origins: frozenset[Origin]
    flags_any: frozenset[str]
    flags_all: frozenset[str]
    not_flags: frozenset[str]
    target: re2._Regexp | None
    content: re2._Regexp | None

    def matches(
        self,
        effect: Effect,
        classes: frozenset[str],
        direct: frozenset[str],
        data_classes: Callable[[], frozenset[str]],
        host_allowed: Callable[[str], bool],
    ) -> bool:
        if self.classes and self.classes.isdisjoint(classes):
            return False
        if self.not_classes and not self.not_classes.isdisjoint(direct):
            return False  # where the target itself is, not what lies below it
        if self.origins and effect.origin not in self.origins:
            return False
        flags = effect.flags
        if self.flags_any and self.flags_any.isdisjoint(flags):
            return False
        if self.flags_all and not self.flags_all <= flags:
            return False
        if self.not_flags and not self.not_flags.isdisjoint(flags):
            return False
        if self.target is not None and self.target.search(effect.target) is None:
            return False
        if self.content is not None and self.content.search(effect.content) is None:
            return False
        if self.data_classes and self.data_classes.isdisjoint(data_classes()):
            return False
        return not (self.rule.host_not_allowed and host_allowed(effect.target))


def compile_rules(rules: Iterable[EffectRule], known_classes: Iterable[str]) -> list[str]:
    """Problems with the rules' class names (a typo would silently weaken a rule)."""
    known = set(known_classes) | BUILT_IN_CLASSES
    problems: list[str] = []
    for rule in rules:
        for name in (*rule.classes, *rule.not_classes, *rule.data_classes):
            if name not in known:
                problems.append(
                    f"effect rule {rule.id}: unknown path class {name!r} "
                    f"(known: {', '.join(sorted(known))})"
                )
    return problems


def compiled_rule(rule: EffectRule) -> CompiledEffectRule:
    return CompiledEffectRule(
        rule=rule,
        actions=frozenset(Action(a) for a in rule.action),
        classes=frozenset(rule.classes),
        not_classes=frozenset(rule.not_classes),
        data_classes=frozenset(rule.data_classes),
        origins=frozenset(Origin(o) for o in rule.origin),
        flags_any=frozenset(rule.flags_any),
        flags_all=frozenset(rule.flags_all),
        not_flags=frozenset(rule.not_flags),
        target=re2.compile(rule.target) if rule.target else None,
        content=re2.compile(rule.content) if rule.content else None,
    )


# What `EffectJudge.matching` remembers: effects of at most this many characters.
_MATCHED_ENTRIES = 8192
_MATCHED_BYTES = 8 * 1024 * 1024
_MATCHED_MAX_CHARS = 4096


class EffectJudge:
    """Matches effects against the effect rules, indexed by action."""

    def __init__(
        self,
        rules: Sequence[EffectRule],
        classes: PathClasses,
        host_allowed: Callable[[str], bool],
    ) -> None:
        self.classes = classes
        self._host_allowed = host_allowed
        self._by_action: dict[Action, list[CompiledEffectRule]] = {}
        self._matched: BoundedCache[tuple[Effect, str], tuple[CompiledEffectRule, ...]] = (
            BoundedCache(_MATCHED_ENTRIES, _MATCHED_BYTES)
        )
        for rule in rules:
            compiled = compiled_rule(rule)
            for action in compiled.actions:
                self._by_action.setdefault(action, []).append(compiled)

    def classes_of(
        self, effect: Effect, recursive: bool | None = None, workspace: str = ""
    ) -> frozenset[str]:
        if effect.action not in PATH_ACTIONS:
            return frozenset()
        if effect.target.startswith(UNRESOLVED + "/"):
            # `?/.sidecar/state.db`: judged by what its end names, wherever it starts
            # (classes matched by a path's end only: credentials, the sidecar's state, ...).
            tail = self.classes.classify(effect.target[2:], False, "")
            return (tail - _PLACES) | {UNRESOLVED_CLASS}
        if effect.target in (UNRESOLVED, STDIN) or effect.has("unresolved"):
            return frozenset({UNRESOLVED_CLASS}) if effect.target != STDIN else frozenset()
        if recursive is None:
            recursive = _RECURSIVE in effect.flags
        return self.classes.classify(effect.target, recursive, workspace)

    def data_classes_of(self, effect: Effect, workspace: str = "") -> frozenset[str]:
        names: set[str] = set()
        for item in effect.data:
            if item == ENVIRONMENT:
                names.add(ENVIRONMENT_CLASS)
            elif is_secret_data(item):
                names.add(SECRET_CLASS)  # a secret value a program printed, not a file
            elif is_local_facts(item):
                names.add(LOCAL_FACTS_CLASS)
            elif item not in (STDIN, ""):
                names.add(FILE_CLASS)
                names |= self.classes.classify(item, True, workspace)
        return frozenset(names)

    def matching(self, effect: Effect, workspace: str = "") -> list[CompiledEffectRule]:
        """The rules the effect matches. Remembered by the effect's value: the rules, the
        classes and the allowed hosts are the policy's, fixed for this judge, and a familiar
        command in a new line has the same effects again."""
        rules = self._by_action.get(effect.action)
        if not rules:
            return []
        size = len(effect.target) + len(effect.content) + sum(map(len, effect.data))
        if size > _MATCHED_MAX_CHARS:
            return self._matching(rules, effect, workspace)
        key = (effect, workspace)
        found = self._matched.get(key)
        if found is None:
            found = tuple(self._matching(rules, effect, workspace))
            self._matched.put(key, found, 2 * size + len(workspace) + 100 * len(effect.flags))
        return list(found)

    def _matching(
        self, rules: list[CompiledEffectRule], effect: Effect, workspace: str
    ) -> list[CompiledEffectRule]:
        classes = self.classes_of(effect, None, workspace)
        if is_glob(effect.target) and effect.action in PATH_ACTIONS:
            # `not_classes` asks where the target itself is: for a glob, the directory it
            # lies in (`/*` is in /, not in /tmp, although it matches /tmp).
            # Only what the matches share with it: `~/Documents/*.pdf` lies in a home's main
            # folder but is no main folder itself (home_root exempts nothing of it).
            where = effect._replace(target=glob_directory(effect.target), flags=frozenset())
            direct = self.classes_of(where, False, workspace) & classes
        elif _RECURSIVE in effect.flags:
            direct = self.classes_of(effect, False, workspace)
        else:
            direct = classes
        cached: list[frozenset[str]] = []

        def data_classes() -> frozenset[str]:
            if not cached:
                cached.append(self.data_classes_of(effect, workspace))
            return cached[0]

        return [
            r for r in rules if r.matches(effect, classes, direct, data_classes, self._host_allowed)
        ]
