#!/usr/bin/env bash
# The main job: installs everything (scripts/setup.sh), builds, and runs the
# demo of the four forwarding figures (loop detection and loop prevention, in NRF
# forwarding and NRF Growth forwarding) on the demo configurations in
# conf/demo. See README.md.
#
# Usage: scripts/demo.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}
cd "$here"
scripts/setup.sh "$builddir"
ninja -C "$builddir" >/dev/null
exec python3 scripts/demo.py --build-dir "$builddir"
