"""Turn Prometheus Operator CRD manifests into the schema files the chart test reads.

Not run by the tests (nothing is downloaded at test time). To refresh, take the CRD
manifests of a prometheus-operator release (example/prometheus-operator-crd/ in its
repository, or the release's bundle) and run:
    python tests/data/crds/vendor_crds.py CRD.yaml... > /dev/null
Descriptions are dropped (they are documentation, and most of the bytes); every other
part of each version's openAPIV3Schema is kept as it is.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent


def without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: without_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def main(paths: list[str]) -> None:
    for path in paths:
        crd = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        annotations = crd["metadata"].get("annotations", {})
        spec = crd["spec"]
        for version in spec["versions"]:
            out = {
                "source": "prometheus-operator CRD " + crd["metadata"]["name"],
                "operatorVersion": annotations.get("operator.prometheus.io/version", ""),
                "license": "Apache-2.0",
                "apiVersion": f"{spec['group']}/{version['name']}",
                "kind": spec["names"]["kind"],
                "openAPIV3Schema": without_descriptions(version["schema"]["openAPIV3Schema"]),
            }
            target = HERE / f"{spec['names']['plural']}.{spec['group']}.{version['name']}.json"
            target.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
            print(target)


if __name__ == "__main__":
    main(sys.argv[1:])
