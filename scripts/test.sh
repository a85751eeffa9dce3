#!/usr/bin/env bash
# Installs everything (scripts/setup.sh), builds, and runs the whole test
# suite: unit tests (GoogleTest + fuzz corpora) and integration tests (real
# processes on loopback). Exit status non-zero when anything failed.
#
# Usage: scripts/test.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}
cd "$here"
scripts/setup.sh "$builddir"
ninja -C "$builddir"
suites=(--suite unit)
if [ -f tests/integration/meson.build ]; then
	suites+=(--suite integration)
fi
if [ -f tests/dpdk/meson.build ]; then
	suites+=(--suite dpdk)
fi
set +e
meson test -C "$builddir" "${suites[@]}" --print-errorlogs --num-processes 2
rc=$?
set -e
python3 scripts/test_summary.py "$builddir/meson-logs/testlog.json"
exit $rc
