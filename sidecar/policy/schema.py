"""The policy document: one pydantic schema for every policy file."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Annotated, Any, Literal

import re2
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from sidecar.inspection.verdict import Mode
from sidecar.policy.programs import (
    ActionName,
    OriginName,
    ProgramSpec,
    Re2Text,
    resolve_text_patterns,
)

OnError = Literal["skip", "require_approval", "deny"]
VerdictName = Literal["allow", "require_approval", "deny"]
RiskName = Literal["low", "medium", "high", "critical"]
ToolAction = Literal["always_allow", "ask_before", "never_allow"]

INSPECTOR_NAMES = ("security", "egress", "integrity", "adversary", "permission", "repetition")
# The most calls a policy may allow in one Inspect (limits.max_tool_calls); also counted
# on the wire before a request is parsed.
MAX_TOOL_CALLS = 10_000


def _compiles_in_re2(pattern: str) -> str:
    try:
        re2.compile(pattern)
    except re2.error as error:
        raise ValueError(f"not a valid RE2 pattern: {error}") from None
    return pattern


Re2Pattern = Annotated[str, AfterValidator(_compiles_in_re2)]


class Strict(BaseModel):
    """Unknown keys are errors: a typo must not silently weaken a policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class InspectorSettings(Strict):
    enabled: bool = True
    timeout_ms: float = Field(default=50.0, gt=0, le=60_000)
    on_error: OnError = "skip"


# The model reviewer is opt-in, may take seconds, and never fails open by default.
_ADVERSARY_DEFAULTS = InspectorSettings(enabled=False, timeout_ms=5000, on_error="require_approval")


class ToolRule(Strict):
    tool: str = Field(min_length=1, description="Glob on the tool name, e.g. 'mcp__github__*'.")
    action: ToolAction
    reason: str = ""


ModeName = Literal["auto", "smart_approve", "approve", "chat"]


class CommandPattern(Strict):
    """A program and its leading subcommand words, e.g. 'git push' or 'kubectl get'."""

    command: str = Field(min_length=1, pattern=r"^\S+( \S+)*$")
    unless_flags: tuple[str, ...] = Field(
        default=(), description="The pattern does not apply when one of these flags is given."
    )

    @functools.cached_property
    def words(self) -> tuple[str, ...]:
        return tuple(self.command.split())  # read on every permission check: split once


class CommandRule(CommandPattern):
    """Argument-level permission on parsed shell commands, e.g. `git push` ask."""

    action: ToolAction
    reason: str = ""
    outside_workspace: bool = Field(
        default=False,
        description="Only when a path argument leaves the workspace (absolute, ~ or ..).",
    )


class PermissionPolicy(Strict):
    mode: ModeName = "smart_approve"
    max_request_mode: ModeName = Field(
        default="chat", description="The strictest mode a request may ask for."
    )
    tools: tuple[ToolRule, ...] = ()
    commands: tuple[CommandRule, ...] = ()
    read_only_tools: tuple[str, ...] = Field(
        default=(), description="Globs of tools known to only read (used by smart_approve)."
    )
    read_only_commands: tuple[CommandPattern, ...] = Field(
        default=(),
        description="Shell commands known to only read; a shell call made only of these, "
        "writing no files, runs without asking under smart_approve.",
    )
    workspace_roots: tuple[str, ...] = Field(
        default=(), description="Absolute paths inside the workspace; relative paths always are."
    )

    @property
    def default_mode(self) -> Mode:
        return Mode.parse(self.mode)

    @property
    def request_mode_limit(self) -> Mode:
        return Mode.parse(self.max_request_mode)


class RepetitionPolicy(Strict):
    max_consecutive: int = Field(default=5, ge=1, le=10_000)


class ShellTool(Strict):
    """A tool whose argument is a shell command line."""

    tool: str = Field(min_length=1, description="Glob on the tool name.")
    argument: str = "command"


class ShellMatch(Strict):
    """Conditions on one parsed simple command; all given conditions must hold."""

    program: tuple[str, ...] = ()
    program_pattern: Re2Pattern | None = None
    subcommand: tuple[str, ...] = ()
    flags_any: tuple[str, ...] = ()
    flags_all: tuple[tuple[str, ...], ...] = ()
    positional: Re2Pattern | None = Field(default=None, description="RE2; any positional matches.")
    argument: Re2Pattern | None = Field(default=None, description="RE2; any argument matches.")
    arguments_text: Re2Pattern | None = Field(
        default=None, description="RE2 on the joined arguments."
    )
    arguments_text_not: Re2Pattern | None = Field(
        default=None,
        description="RE2 on the joined arguments; the rule does not apply when it matches.",
    )
    redirect_target: Re2Pattern | None = Field(
        default=None, description="RE2 on any redirect's target, input or output."
    )
    input_from: tuple[str, ...] = Field(
        default=(), description="The command runs or reads the output of one of these programs."
    )
    input_flags_any: tuple[str, ...] = Field(
        default=(), description="...and that program has one of these flags (base64 -d)."
    )
    writes_to: Re2Pattern | None = Field(
        default=None, description="RE2 on any file written: redirects, tee, cp/mv, dd of=."
    )
    reads_sensitive: bool = Field(
        default=False, description="The command reads a file matching sensitive_paths."
    )
    recursive_function: bool = Field(
        default=False, description="The script defines a function that calls itself."
    )
    runs_input: bool = Field(
        default=False,
        description="The program runs what it is fed (stdin, <(...), $(...) in its code) as code.",
    )
    wrapped_by: tuple[str, ...] = Field(
        default=(), description="The command runs under one of these wrappers (sudo, doas)."
    )
    unless_output_to_flags: tuple[str, ...] = Field(
        default=(),
        description="Not when the command's output feeds a command with one of these flags "
        '(`echo "$TOKEN" | docker login --password-stdin` presents, it does not print).',
    )
    runs_download: bool = Field(
        default=False,
        description="The script fetches a file and runs it, or makes it executable.",
    )
    pushes_new_remote: bool = Field(
        default=False,
        description="The script adds a git remote and pushes to it.",
    )
    fills_disk: bool = Field(
        default=False,
        description="The script writes an endless stream (/dev/zero, yes) to a file, unbounded.",
    )


class ArgumentCondition(Strict):
    keys: tuple[str, ...] = Field(min_length=1, description="Argument names to look at.")
    pattern: Re2Pattern | None = Field(default=None, description="RE2 on the value.")
    sensitive: bool = Field(default=False, description="The value is a sensitive path.")

    @model_validator(mode="after")
    def _something_to_match(self) -> ArgumentCondition:
        if self.pattern is None and not self.sensitive:
            raise ValueError("a condition needs 'pattern' or 'sensitive: true'")
        return self


class ArgumentMatch(Strict):
    """Conditions on a non-shell tool's arguments; all must hold."""

    tool: tuple[str, ...] = Field(min_length=1, description="Globs on the tool name.")
    where: tuple[ArgumentCondition, ...] = Field(min_length=1)


Example = str | dict[str, str]


class RuleExamples(Strict):
    """Shell rules take command lines; argument rules take argument objects."""

    match: tuple[Example, ...] = ()
    no_match: tuple[Example, ...] = ()


class SecurityRule(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    category: str = Field(min_length=1)
    risk: RiskName
    message: str = Field(min_length=1)
    verdict: VerdictName | None = Field(default=None, description="Overrides the risk mapping.")
    shell: ShellMatch | None = None
    arguments: ArgumentMatch | None = None
    examples: RuleExamples = RuleExamples()

    @model_validator(mode="after")
    def _one_target(self) -> SecurityRule:
        if (self.shell is None) == (self.arguments is None):
            raise ValueError("a rule needs exactly one of 'shell' or 'arguments'")
        return self


class SecurityPolicy(Strict):
    shell_tools: tuple[ShellTool, ...] = (
        ShellTool(tool="shell"),
        ShellTool(tool="bash"),
        ShellTool(tool="run_shell_command"),
        ShellTool(tool="execute_command"),
    )
    extra_wrappers: tuple[str, ...] = Field(
        default=(), description="More commands that run their first argument as a command."
    )
    risk_verdicts: dict[RiskName, VerdictName] = {
        "critical": "deny",
        "high": "require_approval",
        "medium": "allow",
        "low": "allow",
    }
    unresolved_verdict: VerdictName = "require_approval"
    max_command_bytes: int = Field(
        default=128 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description="Longer command lines are not parsed (parsing blocks the server); they "
        "get unresolved_verdict.",
    )
    rules: tuple[SecurityRule, ...] = ()

    @field_validator("rules")
    @classmethod
    def _unique_ids(cls, value: tuple[SecurityRule, ...]) -> tuple[SecurityRule, ...]:
        seen: set[str] = set()
        for rule in value:
            if rule.id in seen:
                raise ValueError(f"rule id {rule.id!r} is used twice")
            seen.add(rule.id)
        return value


class EgressPolicy(Strict):
    allowed_domains: tuple[str, ...] = ()
    denied_domains: tuple[str, ...] = ()
    url_tools: tuple[str, ...] = ("fetch", "http_request", "web_fetch", "browser_*")
    url_arguments: tuple[str, ...] = ("url", "uri", "endpoint", "href")
    outbound_tools: tuple[str, ...] = Field(
        default=("send_email", "send_message", "slack_*", "post_*", "webhook*", "upload*"),
        description="Tools whose arguments leave the machine even without a URL.",
    )
    read_tools: tuple[str, ...] = Field(
        default=("read_file", "read", "view", "open_file", "cat", "get_file_contents"),
        description="Tools that read a file; reading a sensitive one taints the session.",
    )
    path_arguments: tuple[str, ...] = ("path", "file_path", "filename", "file", "target_file")
    package_indexes: tuple[str, ...] = Field(
        default=(
            "pypi.org", "files.pythonhosted.org", "download.pytorch.org", "pypi.nvidia.com",
            "registry.npmjs.org", "registry.yarnpkg.com", "npm.pkg.github.com",
            "rubygems.org", "crates.io", "index.crates.io", "repo.maven.apache.org",
            "proxy.golang.org", "conda.anaconda.org", "repo.anaconda.com",
            "packagist.org", "api.nuget.org", "repo1.maven.org", "plugins.gradle.org",
            "hex.pm", "pub.dev",
        ),
        description="Package indexes (domains and their subdomains) that installs may use "
        "without asking; any other index or registry asks.",
    )  # fmt: skip


class ModelEndpoint(Strict):
    """An OpenAI-compatible chat-completions endpoint (sidecar/model_client.py)."""

    base_url: str | None = Field(default=None, description="OpenAI-compatible, e.g. .../v1")
    model: str | None = None
    api_key_env: str | None = Field(default=None, description="Environment variable with the key.")
    api_key_file: Path | None = Field(default=None, description="File with the key.")
    retries: int = Field(default=1, ge=0, le=5)

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


class AdversaryPolicy(ModelEndpoint):
    """The model reviewer. Enable it with inspectors.adversary.enabled: true."""

    tools: tuple[str, ...] = Field(
        default=("shell", "bash", "run_shell_command", "execute_command", "write_file",
                 "edit_file", "http_request", "fetch", "send_*"),
        description="Globs of the tools the model reviews; others are not sent to it.",
    )  # fmt: skip
    block_verdict: VerdictName = "deny"


class KindVisibility(Strict):
    user_visible: bool
    agent_visible: bool


class SummarizerPolicy(ModelEndpoint):
    """A model for summaries; without one, a deterministic summary is used."""

    timeout_ms: float = Field(default=20_000, gt=0, le=300_000)
    retries: int = Field(default=2, ge=0, le=5)


_DURATION_UNITS = {"s": 1, "m": 60, "h": 3_600, "d": 86_400}


class ContextPolicy(Strict):
    compaction_threshold: float = Field(
        default=0.8,
        gt=0,
        lt=1,
        description="Compact when tokens reach this share of the context limit (>=).",
    )
    max_recovery_compactions: int = Field(
        default=2,
        ge=1,
        le=10,
        description="context_exceeded compactions in a row before giving up.",
    )
    default_context_limit: int = Field(
        default=0, ge=0, description="Used when neither the request nor usage gives one; 0: none."
    )
    tool_pair_batch: int = Field(default=10, ge=1, le=100)
    tool_pair_cutoff_ratio: float = Field(
        default=0.2,
        gt=0,
        le=1,
        description="Summarise old tool results once they hold this share of the context limit.",
    )
    tool_pair_keep_recent: int = Field(
        default=4, ge=0, description="The most recent groups of calls are never summarised."
    )
    tool_pair_min_tokens: int = Field(
        default=200, ge=0, description="Smaller tool results are not worth summarising."
    )
    kinds: dict[
        Literal["ordinary", "reminder", "summary", "continuation", "receipt", "refusal"],
        KindVisibility,
    ] = Field(default={}, description="Visibility for messages that set no flags, per kind.")
    summarizer: SummarizerPolicy = SummarizerPolicy()
    tool_result_max_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="A tool result larger than this share of the context limit is shown to "
        "the agent elided (head and tail); History keeps it whole.",
    )
    retention: str = Field(
        default="off",
        pattern=r"^(off|[1-9][0-9]{0,8}[smhd])$",
        description="Delete sessions idle (no Append or Project) for longer than this, "
        "e.g. 30d, 12h, 90m; 'off' keeps them.",
    )

    @field_validator("retention", mode="before")
    @classmethod
    def _unquoted_off(cls, value: object) -> object:
        return "off" if value is False else value  # YAML reads a bare `off` as false

    @property
    def retention_seconds(self) -> int | None:
        if self.retention == "off":
            return None
        return int(self.retention[:-1]) * _DURATION_UNITS[self.retention[-1]]


class PathClass(Strict):
    """A class of paths (system, credentials, ...): what effect rules are written against."""

    description: str = ""
    patterns: tuple[Re2Pattern, ...] = Field(default=(), description="RE2 on normalised paths.")
    exclude: tuple[Re2Pattern, ...] = Field(default=(), description="RE2; these are not in it.")
    examples: tuple[str, ...] = Field(
        default=(),
        description="Members of the class: a glob or a recursive operation that could reach "
        "one of them counts as touching the class.",
    )
    run_by: tuple[str, ...] = Field(
        default=(),
        description="Programs that run these files by themselves (ssh runs its configuration's "
        "ProxyCommand, every Python start runs .pth files): a file of the class that an "
        "earlier call of the session wrote is judged as run when a later call runs one.",
    )


class EffectRuleExamples(Strict):
    match: tuple[Example, ...] = ()
    no_match: tuple[Example, ...] = ()


class EffectRule(Strict):
    """A verdict for effects: (action x path class x origin x flags) -> verdict."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    category: str = Field(min_length=1)
    risk: RiskName
    message: str = Field(min_length=1, description="May use {target}, {program}, {data}.")
    verdict: VerdictName | None = Field(default=None, description="Overrides the risk mapping.")
    action: tuple[ActionName, ...] = Field(min_length=1)
    classes: tuple[str, ...] = Field(default=(), description="The target is in one of these.")
    not_classes: tuple[str, ...] = Field(default=(), description="...and in none of these.")
    data_classes: tuple[str, ...] = Field(
        default=(), description="send: something sent is in one of these ('environment' too)."
    )
    origin: tuple[OriginName, ...] = Field(default=(), description="Code or content origin.")
    flags_any: tuple[str, ...] = ()
    flags_all: tuple[str, ...] = ()
    not_flags: tuple[str, ...] = ()
    target: Re2Pattern | None = Field(default=None, description="RE2 on the target text.")
    content: Re2Pattern | None = Field(default=None, description="RE2 on written content.")
    host_not_allowed: bool = Field(
        default=False, description="The target host is not on egress.allowed_domains."
    )
    session: tuple[Literal["untrusted_input"], ...] = Field(
        default=(),
        description="Only in sessions in all of these states (untrusted_input: the session "
        "read a tool result or fetched content that looked like a prompt injection).",
    )
    examples: EffectRuleExamples = EffectRuleExamples()


# --- Tool integrity, injection-aware sessions and package names (issue 15).

ScanScope = Literal["content", "tools"]


class InjectionExamples(Strict):
    match: tuple[str, ...] = ()
    no_match: tuple[str, ...] = ()


class InjectionRule(Strict):
    """A sign of instructions aimed at the model, in data it reads (RE2 over the text made
    plain: invisible characters removed, NFKC, look-alike letters mapped to Latin)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    category: str = Field(min_length=1, description="Combinations are written on categories.")
    risk: RiskName
    risk_in_tools: RiskName | None = Field(
        default=None, description="The risk in tool descriptions and schemas, when different."
    )
    pattern: Re2Pattern
    message: str = Field(min_length=1)
    scope: tuple[ScanScope, ...] = Field(
        default=("content", "tools"),
        min_length=1,
        description="content: tool results and fetched content; tools: tool definitions.",
    )
    examples: InjectionExamples = InjectionExamples()


class InjectionCombination(Strict):
    """Signs that mean little alone and much together, e.g. an encoded block next to a
    note addressed to an AI."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_.-]*$")
    categories: tuple[str, ...] = Field(min_length=2, description="All of these are present.")
    risk: RiskName
    message: str = Field(min_length=1)
    scope: tuple[ScanScope, ...] = ("content", "tools")


class UnicodeRisks(Strict):
    """The risk of each kind of hidden text (sidecar/integrity/unicode.py)."""

    tag_text: RiskName = "high"
    bidi_controls: RiskName = "medium"
    zero_width: RiskName = "medium"
    variation_selectors: RiskName = "medium"
    confusables: RiskName = "medium"


class InjectionClassifier(ModelEndpoint):
    """An opt-in model that judges tool results the rules did not flag. Until it answers
    the session counts as unchecked; if it fails, risky calls ask."""

    enabled: bool = False
    timeout_ms: float = Field(default=10_000, gt=0, le=120_000)
    max_chars: int = Field(default=8_000, ge=256, le=200_000)


LETTERS = "{letters}"  # in a lexicon word: "and any further letters"
_ANY_LETTERS = r"[^\s\d.,;:!?'\x22()\[\]<>/\\*#@&=+|`~^$%-]*"  # RE2's \w is ASCII only


def lexicon_fragment(word: str) -> str:
    """A lexicon word as the RE2 it stands for."""
    return word.replace(LETTERS, _ANY_LETTERS)


def _lexicon_words(words: tuple[str, ...]) -> tuple[str, ...]:
    for word in words:
        fragment = lexicon_fragment(word)
        try:
            compiled = re2.compile(f"(?i)(?:{fragment})")
        except re2.error as error:
            raise ValueError(f"{word!r} is not an RE2 fragment: {error}") from error
        if compiled.groups:
            raise ValueError(f"{word!r} has a capturing group; write (?:...)")
        if compiled.fullmatch("") is not None:
            raise ValueError(f"{word!r} matches the empty string")
    return words


LexiconWords = Annotated[tuple[str, ...], AfterValidator(_lexicon_words)]


class InjectionLexicon(Strict):
    """The words that fill the slots of the structural injection check (intent.py): RE2
    fragments, case-insensitive, no capturing groups. The lists accumulate across files."""

    role_words: LexiconWords = Field(default=(), description="What an agent answers to.")
    greeting_words: LexiconWords = Field(default=(), description="Greetings before a role.")
    override_verbs: LexiconWords = Field(default=(), description="Verbs that drop instructions.")
    instruction_words: LexiconWords = Field(default=(), description="What is dropped.")
    earlier_words: LexiconWords = Field(default=(), description="Which instructions.")
    send_verbs: LexiconWords = Field(default=(), description="Verbs of sending.")
    secret_words: LexiconWords = Field(default=(), description="Words that name secrets.")
    take_verbs: LexiconWords = Field(default=(), description="Verbs of taking or showing.")


class InjectionPolicy(Strict):
    """Injection-aware sessions: scanning tool results and fetched content, and the taint."""

    rules: tuple[InjectionRule, ...] = ()
    combinations: tuple[InjectionCombination, ...] = ()
    unicode: UnicodeRisks = UnicodeRisks()
    encoded_min_length: int = Field(
        default=40, ge=16, description="Shorter base64 or hex runs are not decoded."
    )
    taint_risk: RiskName = Field(
        default="high", description="A message with a sign of this risk or more taints the session."
    )
    structure: bool = Field(
        default=True,
        description="Also judge text by its structure (an address to the agent next to a risky "
        "request, secrecy, role markers, overrides: sidecar/integrity/intent.py), not only by "
        "the rules; a finding is a high sign.",
    )
    opaque_tools: VerdictName = Field(
        default="require_approval",
        description="While tainted: a call whose effects cannot be seen (an MCP tool, say) "
        "and that is not known to be read-only.",
    )
    classifier: InjectionClassifier = InjectionClassifier()
    lexicon: InjectionLexicon = Field(
        default=InjectionLexicon(),
        description="The words of the structural check (policies/41-injection-lexicon.yaml).",
    )

    @field_validator("rules")
    @classmethod
    def _unique_rule_ids(cls, value: tuple[InjectionRule, ...]) -> tuple[InjectionRule, ...]:
        seen: set[str] = set()
        for rule in value:
            if rule.id in seen:
                raise ValueError(f"injection rule id {rule.id!r} is used twice")
            seen.add(rule.id)
        return value


_TOOL_UNICODE = UnicodeRisks(
    tag_text="critical",
    bidi_controls="high",
    zero_width="high",
    variation_selectors="high",
    confusables="high",
)


class ToolIntegrityPolicy(Strict):
    """Registered tool definitions: drift from the trusted one, and poisoned descriptions."""

    drift_verdict: VerdictName = Field(
        default="require_approval", description="For calls to a tool whose definition changed."
    )
    risk_verdicts: dict[RiskName, VerdictName] = Field(
        default={"critical": "deny", "high": "require_approval", "medium": "allow", "low": "allow"},
        description="What a sign in a tool's description or schema does to its calls.",
    )
    unicode: UnicodeRisks = _TOOL_UNICODE


class PackageEcosystem(Strict):
    """Popular names of one package registry, for typosquat checks."""

    programs: tuple[str, ...] = Field(
        min_length=1, description="Catalogue programs whose installs name packages here."
    )
    names: str = Field(
        min_length=1,
        description="A text file beside the policy files: one name a line, most popular "
        "first ('#' lines are comments).",
    )
    protect: int = Field(
        default=1000, ge=0, description="Names this popular are what typos are checked against."
    )
    known: int = Field(default=10_000, ge=0, description="Names this popular never ask.")
    normalise: Literal["npm", "pypi", "cargo", "gem"]
    allow: tuple[str, ...] = Field(default=(), description="More names that never ask.")
    protect_also: tuple[str, ...] = Field(
        default=(),
        description="Popular names the list's source undercounts (scaffolders run with npx, "
        "gems Debian does not package): protected like the most popular, and never asking.",
    )


class PackagePolicy(Strict):
    typosquat_min_length: int = Field(
        default=5, ge=1, description="Shorter names have too many legitimate neighbours."
    )
    ecosystems: dict[str, PackageEcosystem] = {}


AdapterKind = Literal[
    "shell", "write", "edit", "read", "delete", "move", "patch", "fetch", "code", "sql",
    "mcp_wrapper", "dispatch", "none", "template",
]  # fmt: skip


class ToolAdapter(Strict):
    """How a runtime's tool carries its action: which argument holds the command line, the
    path, the content, the patch, the URL or the code. See policies/07-tool-adapters.yaml."""

    name: str = Field(default="", description="A label for findings, e.g. 'claude-code Bash'.")
    tools: tuple[str, ...] = Field(
        min_length=1, description="Globs on tool names, case-insensitive."
    )
    kind: AdapterKind
    command: tuple[str, ...] = ("command", "cmd", "command_line", "cmdline")
    commands: tuple[str, ...] = ("commands",)
    path: tuple[str, ...] = (
        "file_path", "path", "target_file", "absolutePath", "absolute_path", "notebook_path",
        "filePath",
        "filename", "file", "dir_path", "relative_workspace_path", "paths", "files",
        "file_paths", "include",
    )  # fmt: skip
    content: tuple[str, ...] = (
        "content", "file_text", "new_string", "new_str", "code_edit", "new_source", "new_text",
        "newText",
        "after", "diff", "edits", "text", "contents", "fact",
    )  # fmt: skip
    destination: tuple[str, ...] = ("destination", "new_path", "to", "target")
    patch: tuple[str, ...] = ("input", "patch", "command")
    url: tuple[str, ...] = ("url", "urls", "uri", "href", "requests", "link")
    code: tuple[str, ...] = ("code", "script", "source")
    language: str = Field(default="", description="The language of `code`, when fixed.")
    sql: tuple[str, ...] = ("sql", "query", "statement", "sql_query", "statements")
    sql_client: str = Field(
        default="psql",
        description="sql: the catalogue's client program whose model judges the statement.",
    )
    language_key: str = "language"
    template: str = Field(
        default="",
        description="template: the command line the tool amounts to, from its arguments: "
        "`kubectl delete {kind} {name} [-n {namespace}] [--context {context}]`. A bracketed "
        "group is left out when an argument in it is missing; a missing argument outside "
        "one means the call cannot be told (ask). Values are quoted; `{key:raw}` is not "
        "(a manifest fed as a here-document).",
    )
    dispatch_key: str = "command"
    dispatch: dict[str, AdapterKind] = Field(
        default={}, description="dispatch: the kind for each value of dispatch_key."
    )
    server_key: str = "server_name"
    tool_key: str = "tool_name"
    arguments_key: str = "arguments"

    @model_validator(mode="after")
    def _template_for_templates(self) -> ToolAdapter:
        if self.kind == "template" and not self.template.strip():
            raise ValueError("an adapter of kind 'template' needs a 'template'")
        return self


class Limits(Strict):
    max_tool_calls: int = Field(default=50, ge=1, le=MAX_TOOL_CALLS)
    max_arguments_bytes: int = Field(default=1 << 20, ge=1024)


class Policy(Strict):
    version: Literal[1] = 1
    sensitive_paths: tuple[Re2Pattern, ...] = Field(
        default=(), description="RE2 patterns of paths that hold secrets (keys, .env, history)."
    )
    order: tuple[str, ...] = (
        "security", "egress", "integrity", "adversary", "permission", "repetition",
    )  # fmt: skip
    inspectors: dict[str, InspectorSettings] = {}
    permission: PermissionPolicy = PermissionPolicy()
    security: SecurityPolicy = SecurityPolicy()
    egress: EgressPolicy = EgressPolicy()
    repetition: RepetitionPolicy = RepetitionPolicy()
    adversary: AdversaryPolicy = AdversaryPolicy()
    context: ContextPolicy = ContextPolicy()
    limits: Limits = Limits()
    text_patterns: dict[str, Re2Text] = Field(
        default={},
        description="Named RE2 patterns that programs' text_flags use by name ('@production'), "
        "so one idea (what names a production place) is written once.",
    )
    programs: dict[str, ProgramSpec] = Field(
        default={}, description="The program catalogue: what each program does (effects)."
    )
    path_classes: dict[str, PathClass] = Field(
        default={}, description="Classes of paths that effect rules are written against."
    )
    effect_rules: tuple[EffectRule, ...] = ()
    tool_adapters: tuple[ToolAdapter, ...] = Field(
        default=(),
        description="What runtimes' tools do (shell, file write, patch, fetch, ...); a later "
        "file's adapter for the same name wins.",
    )
    injection: InjectionPolicy = InjectionPolicy()
    tool_integrity: ToolIntegrityPolicy = ToolIntegrityPolicy()
    packages: PackagePolicy = PackagePolicy()

    @model_validator(mode="before")
    @classmethod
    def _named_text_patterns(cls, data: Any, info: ValidationInfo) -> Any:
        """`@name` in a program's text_flags stands for text_patterns[name], defined in the
        same file or an earlier one (the loader passes those in as context)."""
        if not isinstance(data, dict) or not isinstance(data.get("programs"), dict):
            return data
        own = data.get("text_patterns") or {}
        if not isinstance(own, dict):
            return data  # the field's own validation names the problem
        earlier = (info.context or {}).get("text_patterns") or {}
        patterns = {**earlier, **own}
        programs = {
            name: resolve_text_patterns(spec, patterns, f"programs.{name}")
            for name, spec in data["programs"].items()
        }
        return {**data, "programs": programs}

    @field_validator("effect_rules")
    @classmethod
    def _unique_effect_ids(cls, value: tuple[EffectRule, ...]) -> tuple[EffectRule, ...]:
        seen: set[str] = set()
        for rule in value:
            if rule.id in seen:
                raise ValueError(f"effect rule id {rule.id!r} is used twice")
            seen.add(rule.id)
        return value

    @field_validator("order")
    @classmethod
    def _known_inspectors(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [name for name in value if name not in INSPECTOR_NAMES]
        if unknown:
            raise ValueError(
                f"unknown inspector {unknown[0]!r}; known: {', '.join(INSPECTOR_NAMES)}"
            )
        if len(set(value)) != len(value):
            raise ValueError("an inspector is listed twice")
        return value

    @field_validator("inspectors")
    @classmethod
    def _known_settings(cls, value: dict[str, InspectorSettings]) -> dict[str, InspectorSettings]:
        for name in value:
            if name not in INSPECTOR_NAMES:
                raise ValueError(f"unknown inspector {name!r}; known: {', '.join(INSPECTOR_NAMES)}")
        return value

    def settings_for(self, inspector: str) -> InspectorSettings:
        default = _ADVERSARY_DEFAULTS if inspector == "adversary" else InspectorSettings()
        given = self.inspectors.get(inspector)
        if given is None:
            return default
        # Unset fields take the inspector's own defaults (the adversary is off,
        # slower and fails closed unless told otherwise).
        return default.model_copy(update=given.model_dump(exclude_unset=True))


def policy_json_schema() -> str:
    """The JSON Schema of a policy file (policies/schema/policy.schema.json is this)."""
    schema = Policy.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "Agent policy sidecar policy file"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
