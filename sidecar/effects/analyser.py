"""One policy's effect model, compiled: the catalogue, the path classes and the effect rules.

`EffectAnalyser.line(analysis)` turns a parsed shell line into effects;
`EffectAnalyser.judge(effects)` says which effect rules they match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import re2

from sidecar.effects.catalogue import Catalogue
from sidecar.effects.model import Action, Effect
from sidecar.effects.own_endpoints import OwnEndpoints
from sidecar.effects.package_sources import judged_write
from sidecar.effects.packages import PackageNames
from sidecar.effects.paths import ClassSpec, PathClasses, class_specs
from sidecar.effects.rules import EffectJudge, compile_rules
from sidecar.effects.secret_output import secret_data
from sidecar.effects.shell_effects import LineEffects, line_effects
from sidecar.effects.startup_settings import only_settings
from sidecar.effects.url_secrets import secrets_in_urls
from sidecar.matching.globs import GlobSet
from sidecar.policy.loader import bundled_policy_dir
from sidecar.policy.schema import EffectRule, Policy
from sidecar.secrets import SecretScanner
from sidecar.shell.walk import ShellAnalysis
from sidecar.shell.walk import analyse as shell_analyse

CREDENTIALS = "credentials"
_MAX_SHOWN = 120


_URL_ACTIONS = frozenset({Action.FETCH, Action.SEND})
_SECRET_IN_URL = frozenset({"secret_in_url"})
_STARTUP = "startup"
_SETTINGS_ONLY = frozenset({"settings_only"})


class Judged(NamedTuple):
    """An effect rule that an effect matched."""

    rule: EffectRule
    effect: Effect

    def message(self) -> str:
        effect = self.effect
        data = ", ".join(effect.data[:3]) or "data"
        return (
            self.rule.message.replace("{target}", effect.target[:_MAX_SHOWN])
            .replace("{program}", effect.program or "a program")
            .replace("{data}", data[:_MAX_SHOWN])
        )


_CREDENTIAL_CLASSES = frozenset({"credentials", "key_stores"})


class EffectAnalyser:
    def __init__(
        self,
        policy: Policy,
        host_allowed: Callable[[str], bool],
        own_paths: Iterable[str] = (),
        own_endpoints: OwnEndpoints | None = None,
        policy_dirs: Sequence[Path] = (),
    ) -> None:
        """`policy_dirs`: where the policy's data files are (the package name lists); by
        default the bundled policy's directory."""
        self.own_endpoints = own_endpoints or OwnEndpoints()
        self.programs = policy.programs
        indexes = GlobSet(
            g for domain in policy.egress.package_indexes for g in (domain, "*." + domain)
        )
        self.catalogue = Catalogue(policy.programs, indexes.matches, policy.text_patterns)
        specs = _with_credentials(class_specs(policy.path_classes), policy.sensitive_paths)
        specs = _with_own_paths(specs, own_paths)
        self.classes = PathClasses(specs, policy.permission.workspace_roots)
        self.rules = tuple(policy.effect_rules)
        # Rules with a session condition (untrusted input seen) are judged apart, by the
        # integrity inspector, only for sessions in that state.
        self.session_rules = tuple(r for r in self.rules if r.session)
        plain = tuple(r for r in self.rules if not r.session)
        self.judge_rules = EffectJudge(plain, self.classes, host_allowed)
        self._session_judge = EffectJudge(self.session_rules, self.classes, host_allowed)
        self.packages = PackageNames(policy.packages, tuple(policy_dirs) or (bundled_policy_dir(),))
        # Examples show a rule's logic, whatever hosts an operator allows.
        self._example_judge = EffectJudge(self.rules, self.classes, lambda host: False)
        self.scanner = SecretScanner()  # shared with CallEffects: one compile per policy

    def problems(self) -> list[str]:
        """Rules naming unknown classes, and examples that do not behave as written."""
        found = compile_rules(self.rules, self.classes.names) + self.packages.problems()
        if found:
            return found
        return self._check_rule_examples() + self._check_program_examples()

    def line(
        self, analysis: ShellAnalysis, kube_context: str = "", written: Sequence[Effect] = ()
    ) -> LineEffects:
        """`kube_context`: the Kubernetes context an earlier call made current; `written`:
        files the code that runs this line wrote before (a download saved, then run)."""
        found = line_effects(analysis, self.catalogue, kube_context=kube_context, written=written)
        if self.packages.active and any(e.action is Action.INSTALL for e in found.effects):
            # Installs of names one edit from a popular package get the flag `typosquat`.
            found = found._replace(effects=self.packages.mark(found.effects))
        found = self._staged_secrets_pushed(found)
        carried = self._secrets_in_urls(analysis, found.effects)
        return found._replace(effects=found.effects + carried) if carried else found

    def _staged_secrets_pushed(self, found: LineEffects) -> LineEffects:
        """`git add -f .env && git commit && git push`: the push sends what the line staged;
        staged credential files become the push's data (other files stay ordinary work)."""
        pushes = [i for i, e in enumerate(found.effects)
                  if e.action is Action.SEND and e.program == "git push"]  # fmt: skip
        if not pushes:
            return found
        staged = [
            e.target
            for e in found.effects
            if e.action is Action.READ
            and e.program == "git add"
            and self.classes.classify(e.target) & _CREDENTIAL_CLASSES
        ]
        if not staged:
            return found
        effects = list(found.effects)
        for index in pushes:
            push = effects[index]
            effects[index] = push._replace(data=tuple(dict.fromkeys((*push.data, *staged))))
        return found._replace(effects=tuple(effects))

    def _secrets_in_urls(
        self, analysis: ShellAnalysis, effects: tuple[Effect, ...]
    ) -> tuple[Effect, ...]:
        """A line that fetches or sends, whose words (code given to an interpreter too)
        hold a URL carrying a credential: a send of it to each host contacted."""
        hosts = [e.target for e in effects if e.action in _URL_ACTIONS]
        if not hosts:
            return ()
        words = (w for command in analysis.commands for w in command.args if "://" in w)
        kinds = secrets_in_urls("\n".join(words), self.scanner)
        if not kinds:
            return ()
        data = (secret_data(f"a URL: {', '.join(kinds)}"),)
        return tuple(
            Effect(Action.SEND, host, data=data, flags=_SECRET_IN_URL)
            for host in dict.fromkeys(hosts)
        )

    def judge(self, effects: Iterable[Effect], workspace: str = "") -> list[Judged]:
        """`workspace`: the call's working directory when known (paths below it are the
        workspace's)."""
        found: list[Judged] = []
        for effect in effects:
            effect = self.own_endpoints.mark(self._with_sources(effect))
            for rule in self.judge_rules.matching(effect, workspace):
                found.append(Judged(rule.rule, effect))
        return found

    def _with_sources(self, effect: Effect) -> Effect:
        """A write to a package configuration, lockfile or manifest, with the flags of what
        it says about package sources (`untrusted_source`, `benign_config`, ...); a write
        to a startup file of shell settings only (an alias, a PATH entry), `settings_only`."""
        if effect.action is not Action.WRITE or not effect.content:
            return effect
        if (
            # Replacing a login file loses what it held; a project's .envrc is its own.
            ("truncate" not in effect.flags or effect.target.endswith(".envrc"))
            and _STARTUP in self.classes.classify(effect.target)
            and only_settings(effect.content)
        ):
            effect = effect._replace(flags=effect.flags | _SETTINGS_ONLY)
        judged = judged_write(
            effect.target, effect.content, effect.flags, self.catalogue.trusted_index
        )
        if judged is None:
            return effect
        flags, named = judged
        return effect._replace(flags=effect.flags | flags, data=named or effect.data)

    def judge_in_session(
        self, effects: Iterable[Effect], states: frozenset[str], workspace: str = ""
    ) -> list[Judged]:
        """The session-conditioned rules these effects match, for a session in `states`."""
        found: list[Judged] = []
        if not self.session_rules or not states:
            return found
        for effect in effects:
            for rule in self._session_judge.matching(effect, workspace):
                if set(rule.rule.session) <= states:
                    found.append(Judged(rule.rule, effect))
        return found

    def _check_rule_examples(self) -> list[str]:
        problems: list[str] = []
        for rule in self.rules:
            cases = [(e, True) for e in rule.examples.match]
            cases += [(e, False) for e in rule.examples.no_match]
            for example, expected in cases:
                if not isinstance(example, str):
                    continue
                effects = [self._with_sources(e) for e in self.line(shell_analyse(example)).effects]
                marked = [self.own_endpoints.mark(e) for e in effects]
                matched = any(
                    r.rule.id == rule.id for e in marked for r in self._example_judge.matching(e)
                )
                if matched is not expected:
                    verb = "should match" if expected else "should not match"
                    shown = ", ".join(_describe(e) for e in effects) or "no effects"
                    problems.append(
                        f"effect rule {rule.id}: example {example!r} {verb} (effects: {shown})"
                    )
        return problems

    def _check_program_examples(self) -> list[str]:
        problems: list[str] = []
        for name, spec in self.programs.items():
            for example in spec.examples:
                effects = self.line(shell_analyse(example.command)).effects
                got = sorted(_describe(e, with_flags=False) for e in effects)
                wanted = sorted(_strip_flags(e) for e in example.effects)
                missing_flags = [e for e in example.effects if not _has_flags(e, effects)]
                if got != wanted or missing_flags:
                    problems.append(
                        f"program {name}: example {example.command!r} has effects "
                        f"{got}, expected {wanted}"
                    )
        return problems


def _describe(effect: Effect, with_flags: bool = True) -> str:
    text = f"{effect.action.value} {effect.target}"
    if with_flags and effect.flags:
        text += " " + " ".join(f"+{f}" for f in sorted(effect.flags))
    return text


def _strip_flags(expected: str) -> str:
    return " ".join(w for w in expected.split() if not w.startswith("+"))


def _has_flags(expected: str, effects: Sequence[Effect]) -> bool:
    words = expected.split()
    flags = {w[1:] for w in words if w.startswith("+")}
    head = " ".join(w for w in words if not w.startswith("+"))
    return any(_describe(e, with_flags=False) == head and flags <= e.flags for e in effects)


def _with_credentials(specs: list[ClassSpec], sensitive: Sequence[str]) -> list[ClassSpec]:
    """The `credentials` class also holds every `sensitive_paths` pattern."""
    result: list[ClassSpec] = []
    seen = False
    for spec in specs:
        if spec.name == CREDENTIALS:
            spec = replace(spec, patterns=(*spec.patterns, *sensitive))
            seen = True
        result.append(spec)
    if not seen and sensitive:
        result.append(ClassSpec(CREDENTIALS, tuple(sensitive)))
    return result


CODE_PREFIX = "code:"  # an own path that is the sidecar's code (class `sidecar_code`)


def _with_own_paths(specs: list[ClassSpec], own_paths: Iterable[str]) -> list[ClassSpec]:
    """The sidecar's configured state file, policy directories, sockets and secrets join
    `sidecar`; the directory of its code (`code:` paths) joins `sidecar_code`."""
    for name, paths in (
        ("sidecar", [p for p in own_paths if p and not p.startswith(CODE_PREFIX)]),
        (
            "sidecar_code",
            [p.removeprefix(CODE_PREFIX) for p in own_paths if p.startswith(CODE_PREFIX)],
        ),
    ):
        patterns = tuple("^" + re2.escape(path.rstrip("/")) + "(/|$)" for path in paths)
        if not patterns:
            continue
        current = next((s for s in specs if s.name == name), ClassSpec(name, ()))
        specs = [s for s in specs if s.name != name]
        # The paths are members too: a glob or a tree above one finds them.
        examples = (*current.examples, *(p.rstrip("/") for p in paths))
        specs.append(replace(current, patterns=(*current.patterns, *patterns), examples=examples))
    return specs
