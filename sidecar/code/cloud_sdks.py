"""Cloud and cluster SDKs called from Python: a destructive verb on one of their clients
(`ec2.terminate_instances(...)`, `bucket.objects.all().delete()`, `delete_namespaced_pod`)
destroys infrastructure as the CLI would. The clients are built at run time from strings, so
this reads the call names: the module imports an SDK, and a method named for destruction is
called. Called in a loop or on `.all()`, it destroys everything of a kind (`broad`)."""

from __future__ import annotations

import ast

import re2

from sidecar.effects.model import Action, Effect

_SDKS = (
    "boto3", "botocore", "aioboto3", "google.cloud", "googleapiclient", "azure", "kubernetes",
    "openstack", "digitalocean", "hcloud", "linode_api4", "oci", "ibm_cloud_sdk_core",
    "pulumi_aws", "mypy_boto3",
)  # fmt: skip
_DESTROYS = re2.compile(
    r"^(delete|terminate|destroy|purge|drop|remove|deregister|empty)(_|$)"
    r"|^(batch_delete|delete_namespaced|delete_collection)"
)
# Methods of secret stores' clients that return a secret: HashiCorp Vault (hvac), AWS Secrets
# Manager, Google Secret Manager, Azure Key Vault, the Kubernetes API, the system keyring.
SECRET_READERS = frozenset(
    {"read_secret_version", "read_secret", "get_secret_value", "access_secret_version",
     "get_secret", "read_namespaced_secret", "list_namespaced_secret",
     "list_secret_for_all_namespaces", "get_password", "get_credential"}
)  # fmt: skip
_PRODUCTION = re2.compile(r"(?i)(^|[^a-z0-9])(prod|production|prd|live)([^a-z0-9]|$)")
_CLOUD = frozenset({"cloud"})
_MAX_FOUND = 16


def cloud_destruction(tree: ast.Module) -> list[Effect]:
    """Destroy effects for destructive SDK calls, if the module imports a cloud SDK."""
    if not _imports_sdk(tree):
        return []
    in_loops = {id(n) for loop in ast.walk(tree) if _is_loop(loop) for n in ast.walk(loop)}
    production = any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and _PRODUCTION.search(n.value)
        for n in ast.walk(tree)
    )
    found: list[Effect] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.func.attr
        if _DESTROYS.search(name) is None:
            continue
        flags = set(_CLOUD)
        if id(node) in in_loops or _on_everything(node.func.value):
            flags.add("broad")
        if production:
            flags.add("production")
        found.append(Effect(Action.DESTROY, f"cloud SDK {name}", flags=frozenset(flags),
                            program=f"python {name}"))  # fmt: skip
        if len(found) >= _MAX_FOUND:
            break
    return found


def _imports_sdk(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        if any(n == sdk or n.startswith(sdk + ".") for n in names for sdk in _SDKS):
            return True
    return False


def _is_loop(node: ast.AST) -> bool:
    return isinstance(
        node, (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.GeneratorExp,
               ast.DictComp)
    )  # fmt: skip


def _on_everything(value: ast.expr) -> bool:
    """`x.objects.all().delete()`, `table.scan().delete()`: a whole collection."""
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("all", "filter", "scan", "list", "iterator", "pages")
    )
