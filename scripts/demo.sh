#!/usr/bin/env bash
# The main job: installs everything (scripts/setup.sh), builds, and runs the
# demo of the four forwarding figures (loop detection and loop prevention, in NRF
# forwarding and NRF Growth forwarding) on the demo configurations in
# conf/demo. See README.md.
#
# Usage: scripts/demo.sh [--ipv6] [BUILD_DIR]
#   --ipv6 (or NRFWD_DEMO_IPV6=1): the DPDK topology over IPv6
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ipv6=()
if [ "${1:-}" = "--ipv6" ]; then
	ipv6=(--ipv6)
	shift
elif [ "${NRFWD_DEMO_IPV6:-0}" = 1 ]; then
	ipv6=(--ipv6)
fi
builddir=${1:-build}
cd "$here"
scripts/setup.sh "$builddir"
ninja -C "$builddir" >/dev/null
exec python3 scripts/demo.py --build-dir "$builddir" "${ipv6[@]}"
