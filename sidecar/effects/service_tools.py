"""A structured tool of a service's MCP server is that service's CLI in disguise:
`mcp__kubernetes__delete_resource{kind, name, namespace}` is `kubectl delete KIND NAME -n NS`,
`mcp__aws__ec2_authorize_security_group_ingress{group_id, cidr}` is `aws ec2
authorize-security-group-ingress --group-id ... --cidr ...`, `mcp__gcp__run_gcloud_command{args}`
is `gcloud ARGS`. Each is judged as the line it amounts to, so a server's own naming (which
no list of tool names can keep up with) never hides what the call does.

The lines are built from the words of the tool's name and its arguments; the catalogue
judges them like any command an agent types.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import re2

_WORD_SPLIT = re2.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?:[A-Z][a-z]|$)?")
# CLIs whose MCP servers wrap them: a server named for one runs it. (Database servers are
# read by their statements instead: sidecar/effects/adapters.py.)
CLI_PROGRAMS = frozenset({
    "aws", "gcloud", "gsutil", "bq", "az", "kubectl", "helm", "terraform", "tofu", "gh", "glab",
    "docker", "podman", "git", "vault", "doctl", "flyctl", "fly", "heroku", "oc", "ansible",
    "pulumi", "wrangler", "vercel", "netlify", "firebase",
    "supabase", "stripe", "kustomize", "argocd", "flux", "nomad", "consul", "oci", "ibmcloud",
    "linode-cli", "hcloud", "railway", "render", "sops", "op", "bw", "doppler",
})  # fmt: skip
_SERVER_ALIASES = {"gcp": "gcloud", "google-cloud": "gcloud", "azure": "az", "github": "gh",
                   "gitlab": "glab", "k8s": "kubectl", "kubernetes": "kubectl", "fly.io": "flyctl",
                   "digitalocean": "doctl", "hashicorp-vault": "vault", "1password": "op",
                   "bitwarden": "bw", "cloudflare": "wrangler"}  # fmt: skip
_RUNNER_WORDS = frozenset({"run", "exec", "execute", "call", "invoke", "cli", "command", "cmd"})
_FILLER_WORDS = frozenset({"tool", "shell", "terminal", "raw", "any", "generic", "line"})
_ARGV_KEYS = ("args", "arguments", "argv", "cli_args", "command_args", "parameters")
_LINE_KEYS = ("command", "cmd", "cli_command", "command_line", "commandline", "subcommand")


def words_of(name: str) -> list[str]:
    """`ec2_authorizeSecurityGroupIngress` -> [ec2, authorize, security, group, ingress]."""
    return [w.lower() for w in _WORD_SPLIT.findall(name)]


def program_of_server(server: str) -> str:
    """The CLI an MCP server is named for (`aws`, `gcp` -> gcloud, `terraform-mcp`), or ""."""
    name = server.lower()
    for affix in ("mcp-server-", "mcp-", "-mcp-server", "-mcp", "_mcp", "mcp_", "-server"):
        name = name.replace(affix, "")
    name = _SERVER_ALIASES.get(name, name)
    return name if name in CLI_PROGRAMS else ""


def wrapped_cli_line(tool: str, server: str, arguments: Mapping[str, Any]) -> str | None:
    """`run_gcloud_command{args: [...]}`, `terraform_cli{command: "plan"}`, or a runner tool of
    a server named for a CLI (`mcp__terraform__run_command{command: "fmt"}`): that CLI's line."""
    words = words_of(tool)
    program = next((w for w in words if w in CLI_PROGRAMS), "") or program_of_server(server)
    # Only a runner: `run_container{image, command}` names what it runs the command in.
    if not program or not _RUNNER_WORDS.intersection(words):
        return None
    if not set(words) <= _RUNNER_WORDS | _FILLER_WORDS | {program}:
        return None
    line = _first_text(arguments, _LINE_KEYS)
    argv = _first_list(arguments, _ARGV_KEYS)
    if line is None and argv is None:
        return None
    parts: list[str] = []
    if line is not None:
        first = line.strip().split(" ", 1)[0]
        if first.rsplit("/", 1)[-1] == program:
            return " ".join([line, *(shlex.quote(a) for a in argv or [])])
        parts.append(line)
    parts.extend(shlex.quote(a) for a in argv or [])
    return " ".join([program, *parts])


# --- Vault servers: tools named for Vault's HTTP API (`sys_audit_disable`, `kv_get`,
# `policy_delete`) are the vault commands they amount to.
_VAULT_NOUNS = (
    ("audit", "audit"), ("auth", "auth"), ("secrets", "secrets"), ("mount", "secrets"),
    ("mounts", "secrets"), ("engine", "secrets"), ("policy", "policy"), ("policies", "policy"),
    ("kv", "kv"), ("secret", "kv"), ("seal", "operator"), ("token", "token"), ("lease", "lease"),
)  # fmt: skip
_VAULT_VERBS = {
    "disable": "disable", "unmount": "disable", "delete": "delete", "remove": "delete",
    "destroy": "destroy", "get": "get", "read": "get", "list": "list", "revoke": "revoke",
    "seal": "seal", "put": "put", "write": "put", "create": "put", "update": "put",
}  # fmt: skip
_VAULT_PATH_KEYS = ("path", "secret_path", "mount", "mount_path", "name", "key", "accessor")


def vault_line(tool: str, arguments: Mapping[str, Any]) -> str | None:
    words = [w for w in words_of(tool) if w not in ("vault", "sys", "hashicorp", "v1", "api")]
    noun = next((n for w in words for word, n in _VAULT_NOUNS if w == word), "")
    verb = next((_VAULT_VERBS[w] for w in words if w in _VAULT_VERBS), "")
    if not noun or not verb:
        return None
    path = _first_text(arguments, _VAULT_PATH_KEYS) or ""
    operand = [shlex.quote(path)] if path and "\n" not in path else []
    if noun == "operator":
        return "vault operator seal" if verb == "seal" else None
    if noun == "kv" and verb == "delete":
        verb = "destroy" if _truthy(arguments, ("permanent", "destroy", "all_versions")) else verb
    if noun in ("audit", "auth", "secrets") and verb == "delete":
        verb = "disable"  # DELETE /sys/audit/PATH disables that device
    if noun == "policy" and verb == "get":
        verb = "read"
    return " ".join(["vault", noun, verb, *operand])


# --- Kubernetes servers: verb and kind from the tool's name, the rest from its arguments.
_KUBE_SERVER = re2.compile(r"(?i)(kube|k8s|openshift|\beks\b|\bgke\b|\baks\b)")
_KUBE_VERBS = {
    "get": "get", "list": "get", "read": "get", "show": "get", "view": "get", "fetch": "get",
    "find": "get", "search": "get", "watch": "get", "describe": "describe", "top": "top",
    "logs": "logs", "log": "logs", "delete": "delete", "remove": "delete", "destroy": "delete",
    "purge": "delete", "drop": "delete", "evict": "delete", "scale": "scale", "exec": "exec",
    "execute": "exec", "shell": "exec", "apply": "apply", "create": "apply", "update": "apply",
    "upsert": "apply", "replace": "apply", "deploy": "apply", "install": "apply",
    "patch": "patch", "edit": "patch", "restart": "restart", "rollout": "restart",
    "rollback": "undo", "undo": "undo", "cordon": "cordon", "uncordon": "uncordon",
    "drain": "drain", "taint": "taint", "label": "label", "annotate": "annotate",
}  # fmt: skip
_KUBE_KINDS = {
    "pod": "pod", "pods": "pod", "deployment": "deployment", "deployments": "deployment",
    "namespace": "namespace", "namespaces": "namespace", "ns": "namespace",
    "secret": "secret", "secrets": "secret", "service": "service", "services": "service",
    "svc": "service", "configmap": "configmap", "configmaps": "configmap", "node": "node",
    "nodes": "node", "job": "job", "jobs": "job", "cronjob": "cronjob", "cronjobs": "cronjob",
    "statefulset": "statefulset", "statefulsets": "statefulset", "daemonset": "daemonset",
    "daemonsets": "daemonset", "ingress": "ingress", "ingresses": "ingress", "pvc": "pvc",
    "pvcs": "pvc", "replicaset": "replicaset", "replicasets": "replicaset",
    "serviceaccount": "serviceaccount", "role": "role", "rolebinding": "rolebinding",
    "clusterrole": "clusterrole", "clusterrolebinding": "clusterrolebinding", "crd": "crd",
}  # fmt: skip
_KIND_KEYS = ("kind", "resource_type", "resourcetype", "resource_kind", "type", "resource")
_NAME_KEYS = ("name", "resource_name", "resourcename", "pod", "pod_name", "podname",
              "deployment", "deployment_name", "secret", "secret_name", "target")  # fmt: skip
_NAMESPACE_KEYS = ("namespace", "ns", "namespace_name")
_CONTEXT_KEYS = ("context", "kube_context", "kubecontext", "cluster", "cluster_name")
_MANIFEST_KEYS = ("manifest", "yaml", "resource", "body", "spec", "content", "definition")
_REVEAL_KEYS = ("decode", "decoded", "reveal", "show_values", "include_data", "values")


def is_kubernetes_server(server: str, tool: str) -> bool:
    return bool(_KUBE_SERVER.search(server)) or tool.lower().startswith("kubectl")


def kubernetes_line(tool: str, arguments: Mapping[str, Any]) -> str | None:
    words = [w for w in words_of(tool) if w not in ("kubectl", "k8s", "kubernetes")]
    verb = next((_KUBE_VERBS[w] for w in words if w in _KUBE_VERBS), "")
    if not verb:
        return _generic_kubectl_line(arguments)
    kind = next((_KUBE_KINDS[w] for w in words if w in _KUBE_KINDS), "")
    given_kind = _first_text(arguments, _KIND_KEYS)
    if not kind and given_kind and "\n" not in given_kind:
        kind = given_kind.lower()
    name = _first_text(arguments, _NAME_KEYS)
    namespace = _first_text(arguments, _NAMESPACE_KEYS)
    if kind == "namespace" and not name:
        name, namespace = namespace, None
    where = _options(("-n", namespace), ("--context", _first_text(arguments, _CONTEXT_KEYS)))
    selector = _first_text(arguments, ("label_selector", "labelselector", "selector", "labels"))
    if selector:
        where += ["-l", shlex.quote(selector)]
    target = [shlex.quote(kind)] if kind else []
    if name:
        target.append(shlex.quote(name))
    if verb == "exec":
        command = arguments.get("command", arguments.get("cmd"))
        if isinstance(command, list) and all(isinstance(c, str) for c in command):
            inner = shlex.join(command)
        elif isinstance(command, str):
            inner = command
        else:
            return None
        container = _first_text(arguments, ("container", "container_name"))
        pod = [shlex.quote(name)] if name else []
        return " ".join(["kubectl exec", *pod, *where, *_options(("-c", container)), "--", inner])
    if verb == "apply":
        manifest = arguments.get(next((k for k in _MANIFEST_KEYS if k in arguments), ""), None)
        if isinstance(manifest, (dict, list)):
            manifest = json.dumps(manifest)
        if isinstance(manifest, str) and ("\n" in manifest or manifest.lstrip().startswith("{")):
            return (
                f"kubectl apply {' '.join(where)} -f - <<'SIDECAR_MANIFEST'\n{manifest}\n"
                "SIDECAR_MANIFEST"
            )
        if words and words[0] in ("create", "install", "deploy") and not kind:
            return None
        image = _first_text(arguments, ("image",))
        if image and name:  # create_deployment{name, image}
            return " ".join(["kubectl create deployment", shlex.quote(name), "--image",
                             shlex.quote(image), *where])  # fmt: skip
        return " ".join(["kubectl apply", *where, "-f", "-"]) if not target else None
    if verb == "scale":
        replicas = arguments.get("replicas", arguments.get("count"))
        if not isinstance(replicas, (int, str)) or not name:
            return None
        kind_word = kind or "deployment"
        return " ".join(["kubectl scale", kind_word, shlex.quote(name), "--replicas",
                         shlex.quote(str(replicas)), *where])  # fmt: skip
    if verb in ("restart", "undo"):
        if not name:
            return None
        return " ".join(["kubectl rollout", verb, f"{kind or 'deployment'}/{shlex.quote(name)}",
                         *where])  # fmt: skip
    if verb == "logs":
        return " ".join(["kubectl logs", *([shlex.quote(name)] if name else []), *where])
    if verb == "get" and kind == "secret" and _truthy(arguments, _REVEAL_KEYS) is not False:
        # A secrets tool returns the values unless told not to (`decode: false`).
        return " ".join(["kubectl get", *target, *where, "-o", "yaml"])
    if verb == "delete" and not name and not selector:
        if _truthy(arguments, ("all",)):
            return " ".join(["kubectl delete", *target, "--all", *where])
        return None  # cannot tell what goes
    return " ".join(["kubectl", verb, *target, *where])


def _generic_kubectl_line(arguments: Mapping[str, Any]) -> str | None:
    """`kubectl_generic{command: "create", resourceType, name, namespace, args: [...]}` or
    `{command: "get pods -n x"}`: the kubectl line the arguments spell."""
    command = _first_text(arguments, ("command", "verb", "operation", "subcommand"))
    if not command:
        return None
    extra = _first_list(arguments, ("args", "flags", "extra_args", "arguments")) or []
    if " " in command.strip():
        words = command.split(None, 1)
        rest = words[1] if words[0] == "kubectl" and len(words) > 1 else command
        return " ".join(["kubectl", rest, *(shlex.quote(a) for a in extra)])
    kind = _first_text(arguments, _KIND_KEYS)
    name = _first_text(arguments, _NAME_KEYS)
    where = _options(("-n", _first_text(arguments, _NAMESPACE_KEYS)),
                     ("--context", _first_text(arguments, _CONTEXT_KEYS)))  # fmt: skip
    target = [shlex.quote(t) for t in (kind, name) if t and "\n" not in t]
    return " ".join(["kubectl", shlex.quote(command), *target, *where,
                     *(shlex.quote(a) for a in extra)])  # fmt: skip


# --- AWS API servers: `ec2_describe_instances`, `s3_delete_bucket` name the service and the
# operation; the arguments are its options.
_AWS_SERVER = re2.compile(r"(?i)(^|[-_.])aws($|[-_.])|awslabs")
_AWS_SERVICES = frozenset({
    "ec2", "s3", "s3api", "iam", "rds", "lambda", "ecs", "eks", "ecr", "dynamodb",
    "cloudformation", "route53", "sqs", "sns", "kms", "secretsmanager", "ssm", "logs",
    "cloudtrail", "guardduty", "sts", "elbv2", "elb", "autoscaling", "cloudwatch",
    "organizations", "cloudfront", "apigateway", "efs", "elasticache", "redshift", "glue",
    "athena", "kinesis", "backup", "config", "securityhub", "inspector2", "macie2", "waf",
    "wafv2", "acm", "cognito", "events", "stepfunctions", "batch", "sagemaker", "bedrock",
})  # fmt: skip
_S3_HIGH_LEVEL = frozenset({"ls", "cp", "mv", "rm", "sync", "mb", "rb", "presign", "website"})


def is_aws_server(server: str) -> bool:
    return bool(_AWS_SERVER.search(server))


def aws_line(tool: str, arguments: Mapping[str, Any]) -> str | None:
    words = words_of(tool)
    if words and words[0] == "aws":
        words = words[1:]
    if len(words) < 2 or words[0] not in _AWS_SERVICES:
        return None
    service, operation = words[0], "-".join(words[1:])
    if service == "s3" and words[1] not in _S3_HIGH_LEVEL:
        service = "s3api"
    return " ".join(["aws", service, operation, *_aws_options(arguments)])


def _aws_options(arguments: Mapping[str, Any]) -> list[str]:
    """Arguments as the CLI's options: `group_id` is `--group-id`, true is a bare flag."""
    options: list[str] = []
    for key, value in arguments.items():
        flag = "--" + "-".join(words_of(str(key)))
        if value is True:
            options.append(flag)
        elif isinstance(value, (str, int, float)) and value is not False:
            options += [flag, shlex.quote(str(value))]
        elif isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
            options += [flag, *(shlex.quote(str(v)) for v in value)]
        elif isinstance(value, (dict, list)):
            options += [flag, shlex.quote(json.dumps(value))]
    return options


_AWS_POSITIONAL = ("path", "paths", "source", "src", "destination", "dest", "dst", "uri", "url")


def aws_call_line(arguments: Mapping[str, Any]) -> str | None:
    """`call_aws{service: "s3", operation: "rm", params: {path: "s3://..."}}`."""
    service = _first_text(arguments, ("service", "service_name"))
    operation = _first_text(arguments, ("operation", "action", "command", "api"))
    if not service or not operation:
        return None
    params = next(
        (v for k, v in _lowered(arguments).items()
         if k in ("params", "parameters", "arguments", "args", "options") and isinstance(v, dict)),
        {},
    )  # fmt: skip
    operation = "-".join(words_of(operation))
    positional = [
        shlex.quote(str(params[k])) for k in params if str(k).lower() in _AWS_POSITIONAL
        and isinstance(params[k], (str, int))
    ]  # fmt: skip
    rest = {k: v for k, v in params.items() if str(k).lower() not in _AWS_POSITIONAL}
    if service == "s3" and operation not in _S3_HIGH_LEVEL:
        service = "s3api"
    return " ".join(["aws", service, operation, *positional, *_aws_options(rest)])


# --- Schedulers exposed as tools: a cron job, a systemd unit, a launchd agent or a Windows
# scheduled task created through a server is the same persistence as the shell's.
_SCHEDULER_WORDS = frozenset({
    "cron", "crontab", "systemd", "unit", "timer", "launchd", "launchagent", "launchagents",
    "plist", "schtasks", "scheduler", "scheduled", "schedule", "startup", "autostart",
})  # fmt: skip
_CREATE_WORDS = frozenset({
    "add", "create", "install", "register", "new", "write", "set", "schedule", "enable", "put",
    "update", "upsert",
})  # fmt: skip
_COMMAND_KEYS = ("command", "cmd", "job", "script", "exec_start", "execstart", "program",
                 "run", "action", "task_command", "executable", "exec")  # fmt: skip
_CONTENT_KEYS = ("content", "unit_file", "unit_content", "definition", "body", "text", "plist",
                 "xml", "contents")  # fmt: skip


_SCHEDULE_KEYS = ("schedule", "cron", "cron_expression", "expression", "when", "spec", "interval",
                  "timing")  # fmt: skip


def scheduled_line(tool: str, server: str, arguments: Mapping[str, Any]) -> str | None:
    words = set(words_of(tool)) | set(words_of(server))
    if not words & _SCHEDULER_WORDS or not words & _CREATE_WORDS:
        return None
    content = _first_text(arguments, _CONTENT_KEYS)
    command = _first_text(arguments, _COMMAND_KEYS)
    argv = _first_list(arguments, ("args", "arguments", "argv", "program_arguments"))
    if command is not None and argv and command.split(" ", 1)[0] == command:
        command = " ".join([command, *(shlex.quote(a) for a in argv)])
    name = _first_text(arguments, ("unit_name", "unit", "name", "label", "task_name", "id",
                                   "service_name", "job_name")) or "agent-job"  # fmt: skip
    name = "".join(c if c.isalnum() or c in "._-@" else "-" for c in name)[:80]
    if words & {"systemd", "unit", "timer"}:
        if content is None and command is not None:
            content = f"[Service]\nExecStart={command}\n"
        if content is None:
            return None
        if "." not in name:
            name += ".service"
        return (
            f"mkdir -p ~/.config/systemd/user && cat > ~/.config/systemd/user/{name} "
            f"<<'SIDECAR_UNIT'\n{content}\nSIDECAR_UNIT\nsystemctl --user enable --now {name}"
        )
    if words & {"launchd", "launchagent", "launchagents", "plist"}:
        if content is None and command is not None:
            content = (
                f"<plist><dict><key>Label</key><string>{name}</string><key>ProgramArguments"
                f"</key><array><string>/bin/sh</string><string>-c</string><string>{command}"
                "</string></array><key>RunAtLoad</key><true/></dict></plist>"
            )
        if content is None:
            return None
        path = f"~/Library/LaunchAgents/{name}.plist"
        return f"cat > {path} <<'SIDECAR_PLIST'\n{content}\nSIDECAR_PLIST\nlaunchctl load {path}"
    if command is None:
        return None
    if words & {"schtasks"} or ("scheduled" in words and "task" in words):
        return f"schtasks /create /tn {shlex.quote(name)} /tr {shlex.quote(command)} /sc onlogon"
    schedule = _first_text(arguments, _SCHEDULE_KEYS) or "@daily"
    return f"(crontab -l; echo {shlex.quote(schedule + ' ' + command)}) | crontab -"


def _options(*pairs: tuple[str, str | None]) -> list[str]:
    return [part for flag, value in pairs if value for part in (flag, shlex.quote(value))]


def _lowered(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {str(k).lower().replace("-", "_"): v for k, v in arguments.items()}


def _first_text(arguments: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    lowered = _lowered(arguments)
    for key in keys:
        value = lowered.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
    return None


def _first_list(arguments: Mapping[str, Any], keys: Sequence[str]) -> list[str] | None:
    lowered = _lowered(arguments)
    for key in keys:
        value = lowered.get(key)
        if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
            return [str(v) for v in value]
        if isinstance(value, str) and value.strip():
            return shlex.split(value) if _splits(value) else [value]
    return None


def _splits(text: str) -> bool:
    try:
        shlex.split(text)
    except ValueError:
        return False
    return True


def _truthy(arguments: Mapping[str, Any], keys: Sequence[str]) -> bool | None:
    lowered = _lowered(arguments)
    for key in keys:
        if key in lowered:
            value = lowered[key]
            return value not in (False, "false", "no", 0, None, "")
    return None
