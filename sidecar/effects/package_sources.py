"""Where packages come from: what configuration files, lockfiles, manifests, settings commands
and environment variables say about package sources and their integrity checks.

A write is judged by what it says, however it is written (a file tool, a redirect, `npm config
set`, `go env -w`, `git config`, `sed -i` on a lockfile): a source on a host that is not a
trusted package index (`egress.package_indexes`) is `untrusted_source`; a check switched off
(`strict-ssl false`, `trusted-host`, `GONOSUMDB`, `http.sslVerify false`) is `insecure_source`;
sources that are all trusted are `trusted_source`, and content that changes no source and
holds no literal credential is `benign_config` (`engine-strict=true`). Which files are package
configuration is policy (`package_config` and `package_manifest` in 06-path-classes.yaml);
how each is read is here. Formats are read leniently: an edit may hold only a fragment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import pairwise
from typing import NamedTuple

import re2

from sidecar.effects.hosts import host_of

UNTRUSTED, INSECURE, TRUSTED, BENIGN, STORES_CREDENTIAL = (
    "untrusted_source",
    "insecure_source",
    "trusted_source",
    "benign_config",
    "stores_credential",
)
# `https://user:secret@host/`, `https://x-access-token:${GH_TOKEN}@host/`: userinfo that
# carries a secret (a bare user name, `git@`, carries none).
_URL_SECRET = re2.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:\"']*:[^/@\s\"']+@")
_MAX_TEXT = 256 * 1024
_MAX_LINES = 5000
# Where code is hosted rather than indexed: a dependency given as a git URL there is ordinary.
CODE_HOSTS = (
    "github.com", "gitlab.com", "bitbucket.org", "codeload.github.com",
    "githubusercontent.com", "git.sr.ht", "codeberg.org",
)  # fmt: skip


class Findings(NamedTuple):
    untrusted: tuple[str, ...] = ()  # sources on hosts that are not trusted
    insecure: tuple[str, ...] = ()  # integrity or TLS checks switched off
    sources: int = 0  # sources named (trusted or not)
    credential: bool = False  # a literal credential written (not a ${VAR} reference)
    sensitive: bool = False  # how packages are fetched changes (a CA, a proxy): not benign
    # A URL with a secret in it kept in a config (git's url.X.insteadOf): a shell expands a
    # ${VAR} before git writes it, so the secret lands in the file in plain text.
    url_credential: bool = False

    def flags(self, known: bool = True) -> frozenset[str]:
        """The flags a write with these findings carries; `known`: the content was seen."""
        found: set[str] = set()
        if self.untrusted:
            found.add(UNTRUSTED)
        if self.insecure:
            found.add(INSECURE)
        if self.sources and not self.untrusted and not self.insecure:
            found.add(TRUSTED)
        if self.url_credential:
            found.add(STORES_CREDENTIAL)
        if known and not (
            self.untrusted
            or self.insecure
            or self.credential
            or self.sensitive
            or self.url_credential
        ):
            found.add(BENIGN)
        return frozenset(found)


class _Collector:
    def __init__(self, trusted: Callable[[str], bool]) -> None:
        self.trusted = trusted
        self.untrusted: list[str] = []
        self.insecure: list[str] = []
        self.sources = 0
        self.credential = False
        self.sensitive = False
        self.url_credential = False

    def index(self, value: str) -> None:
        """A package index or registry (a URL; a bare name such as `conda-forge` is none)."""
        host = _host(value)
        if not host:
            return
        self.sources += 1
        if not self.trusted(host):
            self.untrusted.append(host)

    def direct(self, value: str) -> None:
        """A dependency fetched straight from a URL: trusted indexes and code hosts pass."""
        host = _host(value)
        if not host:
            return
        self.sources += 1
        if not self.trusted(host) and not _is_code_host(host):
            self.untrusted.append(host)

    def redirect(self, replacement: str, original: str) -> None:
        """git's `insteadOf`: fetches of `original` go to `replacement`."""
        new, old = _host(replacement), _host(original)
        if _URL_SECRET.search(replacement.strip().strip("\"'")) is not None:
            self.url_credential = True
        if not new:
            return
        self.sources += 1
        if new != old and not self.trusted(new) and not _is_code_host(new):
            self.untrusted.append(new)

    def off(self, what: str) -> None:
        self.insecure.append(what)

    def findings(self) -> Findings:
        return Findings(
            tuple(dict.fromkeys(self.untrusted)),
            tuple(dict.fromkeys(self.insecure)),
            self.sources,
            self.credential,
            self.sensitive,
            self.url_credential,
        )


def _host(value: str) -> str:
    value = value.strip().strip("\"',;[]{}()")
    if not value:
        return ""
    if "://" in value or value.startswith("git@"):
        return host_of(value)
    return ""


def _is_code_host(host: str) -> bool:
    return any(host == h or host.endswith("." + h) for h in CODE_HOSTS)


# --- Which reader a file needs, by its name.
def kind_of(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    lowered = name.lower()
    if lowered in ("npmrc", ".npmrc"):
        return "npmrc"
    if lowered == ".yarnrc":
        return "yarnrc"
    if lowered in (".yarnrc.yml", ".yarnrc.yaml"):
        return "yarnrc_yml"
    if lowered in ("pip.conf", "pip.ini", ".pydistutils.cfg", "pydistutils.cfg"):
        return "ini"
    if lowered in ("config.toml", "config") and "/.cargo/" in "/" + path:
        return "toml"
    if lowered in (
        "uv.toml",
        "pyproject.toml",
        "cargo.toml",
        "pipfile",
        "poetry.toml",
        "bunfig.toml",
    ):
        return "toml"
    if (lowered == "env" and "/go/" in "/" + path) or lowered == "go.env":
        return "go_env"
    if lowered == "go.mod":
        return "go_mod"
    if lowered in (".gitconfig", "gitconfig") or ("/" + path).endswith(
        ("/.git/config", "/git/config")
    ):
        return "gitconfig"
    if lowered in (".condarc", "condarc", ".mambarc", "environment.yml", "environment.yaml"):
        return "yaml_list"
    if lowered in (".gemrc", "gemrc", "gemfile", "gems.rb") or ("/" + path).endswith(
        "/.bundle/config"
    ):
        return "ruby"
    if lowered.endswith(".lock") or lowered in (
        "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "bun.lock",
        "composer.lock", "pipfile.lock", "packages.lock.json", "gradle.lockfile",
    ):  # fmt: skip
        return "lockfile"
    if lowered.startswith(("requirements", "constraints")) and lowered.endswith((".txt", ".in")):
        return "requirements"
    if lowered == "package.json" or lowered == "composer.json":
        return "json_manifest"
    if lowered in ("settings.xml", "pom.xml", "nuget.config", "ivysettings.xml"):
        return "xml"
    if lowered.endswith((".gradle", ".gradle.kts")):
        return "gradle"
    if lowered == "daemon.json":
        return "docker_daemon"
    if lowered.endswith((".list", ".sources")) and "/apt/" in path:
        return "apt"
    if lowered.endswith(".repo"):
        return "yum"
    return ""


def findings(path: str, text: str, trusted: Callable[[str], bool]) -> Findings:
    """What a text written to a package configuration file, lockfile or manifest says."""
    kind = kind_of(path)
    collector = _Collector(trusted)
    if kind and text:
        _READERS[kind](text[:_MAX_TEXT], collector)
        collector.sensitive = _FETCH_SETTING.search(text[:_MAX_TEXT]) is not None
    return collector.findings()


# Settings that change how packages are fetched without naming a source: a CA bundle or a
# client certificate (who is trusted), a proxy (who sees and may change the traffic).
_FETCH_SETTING = re2.compile(
    r"(?im)(^|[\s.:_-])(cafile|ca|cert|client-cert|certfile|keyfile|sslcainfo|sslcapath|sslcert|"
    r"sslkey|ssl_ca_cert|proxy|https?[-_]proxy|https-proxy|client_cert|cert_file)\s*[=: ]"
)


def word_findings(
    words: Iterable[str], trusted: Callable[[str], bool], dotted: bool = True
) -> Findings:
    """An edit whose result is not known (`sed -i 's#old#new#' yarn.lock`), or a settings
    command no reader knows (`poetry source add x URL`): every host its words name is taken
    as a source the file may be pointed at. `dotted`: bare host names count too, not only
    URLs (a settings command's values are other things: `git config user.email a@b.com`)."""
    collector = _Collector(trusted)
    for word in words:
        for host in _hosts_in(word, dotted):
            collector.sources += 1
            if not trusted(host) and not _is_code_host(host):
                collector.untrusted.append(host)
        lowered = word.lower()
        if _EDIT_OFF.search(lowered) is not None:
            collector.off(word[:80])
        if "@" in word and _URL_SECRET.search(word) is not None:
            collector.url_credential = True
    return collector.findings()


_EDIT_OFF = re2.compile(
    r"(strict-ssl|strictssl|enablestrictssl|sslverify|ssl_verify|verify_ssl|gpgcheck|"
    r"check-revoke)\s*[\"']?\s*[=: ]\s*[\"']?(false|0|no|off)\b|trusted-host|trusted=yes|"
    r"gonosumdb|gonosumcheck|goinsecure|gosumdb=off|-insecure"
)
# Host names in free text: a URL's host (the text after it may be an edit script's delimiter,
# `s#https://a#https://b#g`), or a dotted name ending in a common top-level domain.
_URL_HOST = re2.compile(
    r"(?i)[a-z][a-z0-9+.-]*://(?:[^/@\s\"'#]*@)?([a-z0-9.-]+)|git@([a-z0-9.-]+):"
)
_DOTTED_HOST = re2.compile(
    r"(?i)^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
    r"(?:com|net|org|io|dev|co|app|xyz|info|biz|cloud|site|online|top|ru|cn|cc|me|sh|to|ws|"
    r"tk|ml|ga|cf|gq|pw|link|click|live|pro|tech|zone|space|host|services|systems|[a-z]{2})$"
)
# Two-letter suffixes that name file types far more often than countries (`setup.py`).
_FILE_SUFFIXES = frozenset(
    {"py", "js", "ts", "rs", "go", "sh", "md", "rb", "pl", "cs", "kt", "gz", "xz", "db", "so",
     "mk", "ps", "pm", "ex", "hs", "ml", "in"}
)  # fmt: skip
_MAIL = re2.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_DELIMITERS = re2.compile(r"[\s/#|,;:\"'@=<>()\[\]{}\\*+?^$]+")


def _hosts_in(text: str, dotted: bool = True) -> list[str]:
    found = [(a or b).lower().strip(".") for a, b in _URL_HOST.findall(text)]
    if not dotted:
        return [h for h in dict.fromkeys(found) if h]
    # Mail addresses name no source (`s/old@acme.com/new@acme.com/` in package.json).
    bare = _MAIL.sub(" ", _URL_HOST.sub(" ", text))
    for token in _DELIMITERS.split(bare):
        token = token.strip(".")
        if (
            "." in token
            and _DOTTED_HOST.search(token) is not None
            and token.rsplit(".", 1)[-1].lower() not in _FILE_SUFFIXES
        ):
            found.append(token.lower())
    return [h for h in dict.fromkeys(found) if h]


def command_findings(path: str, words: list[str], trusted: Callable[[str], bool]) -> Findings:
    """A settings command's words (`npm config set strict-ssl false`, `go env -w A=b C=d`,
    `git config url.X.insteadOf Y`): each `key=value` word, and each pair of neighbouring
    words, is read as a line of the file the command changes; hosts named anywhere count."""
    lines = [w for w in words if "=" in w] + [f"{a} {b}" for a, b in pairwise(words)]
    read = findings(path, "\n".join(lines), trusted)
    if any(w.lower().startswith("repositories.") for w in words):
        # `composer config repositories.NAME vcs URL`: packages resolve from that
        # repository, an index of its own (a code host is no trusted index).
        repositories = _Collector(trusted)
        for word in words:
            repositories.index(word)
        read = merged(read, repositories.findings())
    if read.sources or read.insecure or kind_of(path) == "gitconfig":
        return read  # git's values are URLs of many kinds (remotes): only its reader counts
    return merged(read, word_findings(words, trusted, dotted=False))


def names_url_secret(words: Iterable[str]) -> bool:
    """Whether a word holds a URL with a secret in its userinfo (a `$VAR` there counts: the
    shell puts the value in before the program stores it)."""
    return any("@" in w and _URL_SECRET.search(w) is not None for w in words)


def merged(*parts: Findings) -> Findings:
    return Findings(
        tuple(dict.fromkeys(h for part in parts for h in part.untrusted)),
        tuple(dict.fromkeys(c for part in parts for c in part.insecure)),
        sum(part.sources for part in parts),
        any(part.credential for part in parts),
        any(part.sensitive for part in parts),
        any(part.url_credential for part in parts),
    )


# --- Readers.
_KEY_VALUE = re2.compile(r"^\s*([^=:\s#;][^=:]*?)\s*(?:=|:|\s)\s*(.*?)\s*$")
_ENV_REFERENCE = re2.compile(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$|^\$\{\{.*\}\}$|^<.*>$|^$")
_FALSE = frozenset({"false", "0", "no", "off"})


def _lines(text: str) -> list[str]:
    return [
        line for line in text.splitlines()[:_MAX_LINES] if line.strip()[:1] not in ("#", ";", "")
    ]


def _pairs(text: str) -> Iterable[tuple[str, str]]:
    """`key=value`, `key = value`, `key: value` and `key value` lines (a settings command's
    words are such a line too: `registry https://x`, `strict-ssl false`)."""
    for line in _lines(text):
        match = _KEY_VALUE.search(line)
        if match is not None:
            yield match.group(1).strip().strip("\"'").lower(), match.group(2).strip().strip("\"'")


def _npmrc(text: str, out: _Collector) -> None:
    for line in _lines(text):
        # Keys hold colons (`@acme:registry`, `//host/:_authToken`): split at `=`, or at the
        # first blank in a settings command's words (`registry https://x`).
        key, equals, value = line.partition("=")
        if not equals:
            key, _, value = line.strip().partition(" ")
        key, value = key.strip().lower(), value.strip().strip("\"'")
        name = key.rsplit(":", 1)[-1]
        if name in ("registry", "npmregistryserver"):
            out.index(value)
        elif name in ("strict-ssl", "strict_ssl", "strictssl") and value.lower() in _FALSE:
            out.off(key)
        elif name in ("_authtoken", "_auth", "_password", "password", "token", "npmauthtoken"):
            out.credential = out.credential or _ENV_REFERENCE.search(value) is None


def _yarnrc(text: str, out: _Collector) -> None:
    _npmrc(text, out)


def _yarnrc_yml(text: str, out: _Collector) -> None:
    for key, value in _pairs(text):
        name = key.lstrip("- ")
        if name in ("npmregistryserver", "registry"):
            out.index(value)
        elif (name == "enablestrictssl" and value.lower() in _FALSE) or (
            name == "unsafehttpwhitelist"
        ):
            out.off(key)
        elif name in ("npmauthtoken", "npmauthident"):
            out.credential = out.credential or _ENV_REFERENCE.search(value) is None


_INDEX_KEYS = frozenset(
    {"index-url", "index_url", "extra-index-url", "extra_index_url", "find-links",
     "find_links", "global.index-url", "global.extra-index-url", "install.index-url",
     "install.extra-index-url", "global.find-links", "default-index", "index"}
)  # fmt: skip


def _ini(text: str, out: _Collector) -> None:
    for key, value in _pairs(text):
        name = key.rsplit(".", 1)[-1] if key.count(".") == 1 else key
        if key in _INDEX_KEYS or name in _INDEX_KEYS:
            for part in value.split():
                out.index(part)
        elif name in ("trusted-host", "trusted_host"):
            for host in value.replace(",", " ").split():
                if not out.trusted(host.split(":")[0].lower()):
                    out.off(f"trusted-host {host}")
        elif name in ("cert", "client-cert") and value:
            pass  # a CA bundle for an internal index: not a source by itself
        elif name in ("password", "token"):
            out.credential = out.credential or _ENV_REFERENCE.search(value) is None


_TOML_URL = re2.compile(
    r"(?im)^\s*(?:[\"']?[A-Za-z0-9_.-]*[\"']?\s*=\s*(\{)[^}\n]*?)?\b(registry|index|url|index-url|"
    r"extra-index-url|index_url|extra_index_url|find-links|git|registry-index|verify_ssl|"
    r"check-revoke)\s*=\s*[\"']?([^\"'\s,}]*)"
)
_PEP508_URL = re2.compile(
    r"(?i)[\"']\s*[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[^\]]*\])?\s*@\s*([^\s\"';]+)"
)


def _toml(text: str, out: _Collector) -> None:
    for inline, key, value in _TOML_URL.findall(text[:_MAX_TEXT]):
        key = key.lower()
        if key in ("verify_ssl", "check-revoke"):
            if value.lower() in _FALSE:
                out.off(key)
        elif inline or key == "git":
            out.direct(value)  # `x = { git = "..." }`, `{ url = "..." }`: one dependency
        else:
            out.index(value.removeprefix("sparse+").removeprefix("registry+"))
    for url in _PEP508_URL.findall(text[:_MAX_TEXT]):
        out.direct(url)


def _go_env(text: str, out: _Collector) -> None:
    for word in text.replace("\n", " ").split():
        name, equals, value = word.partition("=")
        if not equals:
            continue
        _go_variable(name.upper(), value.strip("\"'"), out)


def _go_variable(name: str, value: str, out: _Collector) -> None:
    if name == "GOPROXY":
        for entry in value.replace("|", ",").split(","):
            entry = entry.strip()
            if entry in ("direct", "off", ""):
                continue
            host = _host(entry) or host_of(entry)
            out.sources += 1
            if host and not out.trusted(host):
                out.untrusted.append(host)
    elif name in ("GONOSUMDB", "GONOSUMCHECK", "GONOSUMCHECKDB", "GOINSECURE") and value:
        out.off(f"{name}={value}")
    elif name == "GOSUMDB" and value.lower() in ("off", ""):
        out.off("GOSUMDB=off")
    elif name == "GOFLAGS" and "-insecure" in value:
        out.off("GOFLAGS=-insecure")


_GO_REPLACE = re2.compile(r"(?m)^\s*(?:replace\s+)?\S+(?:\s+v\S+)?\s*=>\s*(\S+)")


_GO_EDIT_REPLACE = re2.compile(r"(?:^|\s)-replace[= ]\S+?=(\S+)")


def _go_mod(text: str, out: _Collector) -> None:
    edits = _GO_EDIT_REPLACE.findall(text[:_MAX_TEXT])  # go mod edit -replace old=new@v
    for target in _GO_REPLACE.findall(text[:_MAX_TEXT]) + [t.split("@", 1)[0] for t in edits]:
        if target.startswith((".", "/")):
            continue  # a local directory
        host = target.split("/", 1)[0].lower()
        if "." in host:
            out.sources += 1
            if not out.trusted(host) and not _is_code_host(host) and not _known_go_host(host):
                out.untrusted.append(host)


def _known_go_host(host: str) -> bool:
    return host in ("golang.org", "google.golang.org", "gopkg.in", "go.uber.org", "k8s.io")


_GIT_SECTION = re2.compile(r'^\s*\[\s*([A-Za-z]+)(?:\s+"([^"]*)")?\s*\]')
_GIT_DOTTED = re2.compile(
    r"(?i)^\s*(url|http)\.(.+)\.(insteadof|pushinsteadof|sslverify)\s*[= ]\s*(.*)$"
)


def _gitconfig(text: str, out: _Collector) -> None:
    section, subsection = "", ""
    for line in _lines(text):
        header = _GIT_SECTION.search(line)
        if header is not None:
            section, subsection = header.group(1).lower(), header.group(2) or ""
            continue
        dotted = _GIT_DOTTED.search(line)
        if dotted is not None:  # `git config url.X.insteadOf Y`, `http.sslVerify false`
            _git_setting(
                dotted.group(1).lower(), dotted.group(2), dotted.group(3).lower(),
                dotted.group(4).strip().strip("\"'"), out,
            )  # fmt: skip
            continue
        simple = re2.search(r"(?i)^\s*(http)\.(sslverify)\s*[= ]\s*(\S+)", line)
        if simple is not None:
            _git_setting("http", "", "sslverify", simple.group(3), out)
            continue
        match = _KEY_VALUE.search(line)
        if match is not None and section:
            key = match.group(1).strip().lower()
            _git_setting(section, subsection, key, match.group(2).strip().strip("\"'"), out)


def _git_setting(section: str, subsection: str, key: str, value: str, out: _Collector) -> None:
    if section == "url" and key in ("insteadof", "pushinsteadof"):
        out.redirect(subsection, value)
    elif section == "http" and key == "sslverify" and value.lower() in _FALSE:
        out.off(f"http{'.' + subsection if subsection else ''}.sslVerify=false")


_YAML_URL = re2.compile(
    r"(?im)^\s*(?:-\s*|[A-Za-z_:]+\s*:\s*)[\"']?([a-z][a-z0-9+.-]*://[^\s\"']+)"
)


def _yaml_list(text: str, out: _Collector) -> None:
    for url in _YAML_URL.findall(text[:_MAX_TEXT]):
        out.index(url)
    if re2.search(r"(?im)^\s*ssl_verify\s*:\s*(false|no|0)\b", text[:_MAX_TEXT]):
        out.off("ssl_verify false")


_RUBY_SOURCE = re2.compile(
    r"(?im)(?:^\s*source\s+[\"']|^\s*-\s*|:?git\s*(?:=>|:)\s*[\"']|BUNDLE_MIRROR__\S*:\s*[\"']?)"
    r"([a-z][a-z0-9+.-]*://[^\s\"']+|git@[^\s\"']+)"
)


def _ruby(text: str, out: _Collector) -> None:
    for url in _RUBY_SOURCE.findall(text[:_MAX_TEXT]):
        out.index(url)


_ANY_URL = re2.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s\"'<>`,]+|git@[A-Za-z0-9.-]+:[^\s\"']*)")


def _lockfile(text: str, out: _Collector) -> None:
    for url in _ANY_URL.findall(text[:_MAX_TEXT]):
        out.direct(url.removeprefix("registry+").removeprefix("sparse+").removeprefix("git+"))


_REQUIREMENT_INDEX = re2.compile(
    r"(?i)^\s*(?:-i|--index-url|--extra-index-url|-f|--find-links)(?:\s*=\s*|\s+)(\S+)"
)
_REQUIREMENT_TRUSTED = re2.compile(r"(?i)^\s*--trusted-host(?:\s*=\s*|\s+)(\S+)")


def _requirements(text: str, out: _Collector) -> None:
    for line in _lines(text):
        index = _REQUIREMENT_INDEX.search(line)
        if index is not None:
            out.index(index.group(1))
            continue
        trusted_host = _REQUIREMENT_TRUSTED.search(line)
        if trusted_host is not None:
            if not out.trusted(trusted_host.group(1).split(":")[0].lower()):
                out.off(f"trusted-host {trusted_host.group(1)}")
            continue
        for url in _ANY_URL.findall(line):
            out.direct(url.removeprefix("git+"))


_JSON_DEPENDENCY = re2.compile(
    r'"([^"]+)"\s*:\s*"((?:git\+|git:|https?:|github:|gitlab:|bitbucket:|file:)[^"]*)"'
)
_JSON_REPOSITORY = re2.compile(r'"url"\s*:\s*"([^"]+)"')
_JSON_NOT_DEPENDENCY = frozenset(
    {"homepage", "url", "$schema", "funding", "bugs", "repository", "author", "license",
     "documentation", "email", "web", "changelog", "source", "issues", "support", "docs"}
)  # fmt: skip


def _json_manifest(text: str, out: _Collector) -> None:
    for name, value in _JSON_DEPENDENCY.findall(text[:_MAX_TEXT]):
        if name.lower() in _JSON_NOT_DEPENDENCY or value.startswith("file:"):
            continue
        if value.startswith(("github:", "gitlab:", "bitbucket:")):
            out.sources += 1
            continue
        out.direct(value.removeprefix("git+"))
    if '"repositories"' in text:  # composer.json: package repositories
        for url in _JSON_REPOSITORY.findall(text[:_MAX_TEXT]):
            out.index(url)


_XML_URL = re2.compile(r"(?is)<url>\s*([^<\s]+)\s*</url>|value\s*=\s*\"(https?://[^\"]+)\"")


def _xml(text: str, out: _Collector) -> None:
    for element, attribute in _XML_URL.findall(text[:_MAX_TEXT]):
        out.index(element or attribute)


_GRADLE_URL = re2.compile(r"(?i)\burl\s*(?:=|\()?\s*(?:uri\s*\(\s*)?[\"']([^\"']+)[\"']")


def _gradle(text: str, out: _Collector) -> None:
    for url in _GRADLE_URL.findall(text[:_MAX_TEXT]):
        out.index(url)
    if "allowInsecureProtocol" in text and re2.search(r"allowInsecureProtocol\s*=?\s*true", text):
        out.off("allowInsecureProtocol")


def _docker_daemon(text: str, out: _Collector) -> None:
    if "insecure-registries" in text:
        out.off("insecure-registries")
    if "registry-mirrors" in text:
        for url in _ANY_URL.findall(text[:_MAX_TEXT]):
            out.index(url)


def _apt(text: str, out: _Collector) -> None:
    if re2.search(r"(?i)trusted\s*=\s*yes|allow-insecure\s*=\s*yes", text[:_MAX_TEXT]):
        out.off("trusted=yes")


def _yum(text: str, out: _Collector) -> None:
    if re2.search(r"(?im)^\s*(gpgcheck|repo_gpgcheck|sslverify)\s*=\s*(0|false|no)\b", text):
        out.off("gpgcheck=0")


_READERS: dict[str, Callable[[str, _Collector], None]] = {
    "npmrc": _npmrc,
    "yarnrc": _yarnrc,
    "yarnrc_yml": _yarnrc_yml,
    "ini": _ini,
    "toml": _toml,
    "go_env": _go_env,
    "go_mod": _go_mod,
    "gitconfig": _gitconfig,
    "yaml_list": _yaml_list,
    "ruby": _ruby,
    "lockfile": _lockfile,
    "requirements": _requirements,
    "json_manifest": _json_manifest,
    "xml": _xml,
    "gradle": _gradle,
    "docker_daemon": _docker_daemon,
    "apt": _apt,
    "yum": _yum,
}

# --- Environment variables that choose package sources or switch checks off.
_INDEX_VARIABLES = frozenset(
    {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL",
     "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_FIND_LINKS",
     "NPM_CONFIG_REGISTRY", "YARN_REGISTRY", "YARN_NPM_REGISTRY_SERVER", "BUN_CONFIG_REGISTRY",
     "PNPM_CONFIG_REGISTRY", "POETRY_REPOSITORIES_URL", "PDM_PYPI_URL", "CONDA_CHANNELS",
     "CARGO_REGISTRY_INDEX", "GEM_SOURCE", "BUNDLE_MIRROR__ALL", "COMPOSER_REPOSITORY"}
)  # fmt: skip
_INSECURE_VARIABLES = {
    "PIP_TRUSTED_HOST": "", "UV_INSECURE_HOST": "", "GIT_SSL_NO_VERIFY": "",
    "NPM_CONFIG_STRICT_SSL": "false", "YARN_ENABLE_STRICT_SSL": "false",
    "NODE_TLS_REJECT_UNAUTHORIZED": "0", "CARGO_HTTP_CHECK_REVOKE": "false",
    "CARGO_NET_GIT_FETCH_WITH_CLI": "",
}  # fmt: skip
_GO_VARIABLES = frozenset({"GOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOINSECURE", "GOSUMDB",
                           "GOFLAGS", "GONOSUMCHECKDB"})  # fmt: skip


def is_source_variable(name: str) -> bool:
    upper = name.upper()
    return (
        upper in _INDEX_VARIABLES
        or upper in _INSECURE_VARIABLES
        or upper in _GO_VARIABLES
        or upper.startswith(("CARGO_REGISTRIES_", "NPM_CONFIG_@", "BUNDLE_MIRROR__"))
    )


def variable_findings(name: str, value: str, trusted: Callable[[str], bool]) -> Findings:
    """`export PIP_INDEX_URL=...`, `GIT_SSL_NO_VERIFY=1 git clone ...`."""
    out = _Collector(trusted)
    upper = name.upper()
    value = value.strip().strip("\"'")
    if upper in _GO_VARIABLES:
        _go_variable(upper, value, out)
    elif upper in _INDEX_VARIABLES or upper.startswith(("CARGO_REGISTRIES_", "BUNDLE_MIRROR__")):
        for part in value.replace(",", " ").split():
            out.index(part)
    elif upper in _INSECURE_VARIABLES:
        off_value = _INSECURE_VARIABLES[upper]
        if upper in ("PIP_TRUSTED_HOST", "UV_INSECURE_HOST"):
            if any(not trusted(h.split(":")[0].lower()) for h in value.replace(",", " ").split()):
                out.off(f"{upper}={value}")
        elif upper == "CARGO_NET_GIT_FETCH_WITH_CLI":
            pass
        elif ((off_value and value.lower() in _FALSE) or (not off_value and value)) and (
            upper != "GIT_SSL_NO_VERIFY" or value.lower() not in _FALSE
        ):
            out.off(f"{upper}={value}")
    return out.findings()


PACKAGE_SOURCE = "package_source"  # the effect was judged for what it says about sources
_CONFIG = "config"  # a settings command's write (`npm config set ...`): its words are the content


def judged_write(
    target: str, content: str, flags: frozenset[str], trusted: Callable[[str], bool]
) -> tuple[frozenset[str], tuple[str, ...]] | None:
    """The flags (and the hosts or checks, for messages) a write with known content earns,
    or None when it is not about package sources."""
    if PACKAGE_SOURCE in flags:
        return None
    kind = kind_of(target)
    if not kind and _CONFIG not in flags:
        return None
    found = findings(target, content, trusted) if kind else Findings()
    if _CONFIG in flags and not (found.sources or found.insecure or found.credential):
        found = word_findings(content.split(), trusted)
    return found.flags() | {PACKAGE_SOURCE}, found.untrusted + found.insecure
