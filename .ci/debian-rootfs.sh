#!/usr/bin/env bash
# A Debian 12 root file system with Python 3.11, as a tarball: the base that
# tests/test_image.py builds the Dockerfile on, since no image registry is reachable here.
# It comes from the Debian mirror (debootstrap); needs root.
# Usage: .ci/debian-rootfs.sh OUT.tar
set -euo pipefail
out="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
  bookworm "$work/rootfs" >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; exit 1; }
mkdir -p "$(dirname "$out")"
tar -C "$work/rootfs" -cf "$out.part" .
mv "$out.part" "$out"
echo "built $out"
