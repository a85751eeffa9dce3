#!/usr/bin/env bash
# Installs everything (scripts/setup.sh), builds, and runs the whole test
# suite: unit tests (GoogleTest + fuzz corpora), integration tests (real
# processes on loopback) and DPDK tests, then the same again on a second
# build with AddressSanitizer + UndefinedBehaviorSanitizer (BUILD_DIR-asan:
# unit tests, fuzz corpora and the integration suite; docs/testing.md says
# what is left out and why). Last line: "N passed, N failed" over both
# builds. Exit status non-zero when anything failed.
#
# Usage: scripts/test.sh [BUILD_DIR]
# Env:   NRFWD_SANITIZE=0  skip the sanitizer build
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}
asandir=${builddir%/}-asan
cd "$here"
# Where the time goes (docs/testing.md, "CI time").
phase() { echo "test.sh: $1 after $SECONDS s"; }
scripts/setup.sh "$builddir"
ninja -C "$builddir"
phase "build"
sanitize=${NRFWD_SANITIZE:-1}
if [ "$sanitize" = 1 ]; then
	# clang: its ASan and UBSan share one runtime, so UBSan's reports of
	# the processes tests start land in files too (gcc's libubsan ignores
	# log_path next to libasan); a second compiler on every file as well.
	# Warnings are the gcc build's job (-Werror there; DPDK's headers warn
	# under clang). No LTO: nothing to gain in this build. Debian's lwIP:
	# the DPDK transport is not tested here (docs/testing.md).
	if [ ! -f "$asandir/build.ninja" ]; then
		CC=clang CXX=clang++ meson setup "$asandir" -Dbuildtype=debugoptimized \
			-Db_sanitize=address,undefined -Db_lto=false -Dlwip=system >/dev/null
	fi
	echo "setup: sanitizer build directory $asandir configured"
	ninja -C "$asandir"
	phase "sanitizer build"
fi
suites=(--suite unit)
if [ -f tests/integration/meson.build ]; then
	suites+=(--suite integration)
fi
if [ -f tests/dpdk/meson.build ]; then
	suites+=(--suite dpdk)
fi
# The Debian package: built from a clone of HEAD, installed and run in a
# throwaway root (tests/package/test_package.py, docs/service.md).
if [ -f tests/package/meson.build ] && command -v dpkg-buildpackage >/dev/null; then
	suites+=(--suite package)
fi
set +e
meson test -C "$builddir" "${suites[@]}" --print-errorlogs --num-processes 2
rc=$?
phase "tests"
logs=("$builddir/meson-logs/testlog.json")
reports=()
if [ "$sanitize" = 1 ]; then
	# Every sanitizer finding stops the process (halt_on_error, UBSan too);
	# ASan's leak check runs at every exit. Processes the integration
	# tests start write their reports to files (log_path) that count as
	# failures of their own (scripts/test_summary.py --reports): a leak
	# at nrfwd's exit does not fail the test that stopped it otherwise.
	san_opts=halt_on_error=1:abort_on_error=1:print_summary=1:print_stacktrace=1
	export ASAN_OPTIONS=$san_opts:detect_leaks=1
	export UBSAN_OPTIONS=$san_opts
	meson test -C "$asandir" --suite unit --print-errorlogs --num-processes 2 \
		--logbase testlog-unit || rc=1
	phase "sanitizer unit tests"
	logs+=("$asandir/meson-logs/testlog-unit.json")
	# The integration files run under the sanitizers: the data path's
	# failure, attack, limit and reconfiguration paths, within CI time.
	# Left out (docs/testing.md, "Sanitizer build"): test_topo_agreement
	# (time: 70 s here; the paths it drives run in the files below),
	# test_nrfstub (the stub alone; it runs instrumented in every
	# file below), test_limits (asserts RSS bounds, which ASan's shadow
	# and quarantine do not keep). A new file is added here when it fits.
	asan_integration=(test_h2_conformance test_bad_input test_hostile test_faults test_isolation
		test_timeouts test_links test_health test_reconfig test_tls test_api
		test_seed_topology test_nrfwd_basic test_nrfwd_ctl test_nrfwd_ctl_topo test_load
		test_dns test_peers test_upstream_h2 test_fleet_tls test_idle_eviction
		test_client_limits test_units test_loops test_upgrade)
	if [ -f tests/integration/meson.build ]; then
		rdir="$(cd "$asandir" && pwd)/meson-logs/sanitizer-reports"
		rm -rf "$rdir"
		mkdir -p "$rdir"
		ASAN_OPTIONS=$ASAN_OPTIONS:log_path=$rdir/san:log_exe_name=1 \
		UBSAN_OPTIONS=$UBSAN_OPTIONS:log_path=$rdir/san:log_exe_name=1 \
			meson test -C "$asandir" "${asan_integration[@]}" --print-errorlogs \
			--num-processes 2 --logbase testlog-integration || rc=1
		phase "sanitizer integration tests"
		logs+=("$asandir/meson-logs/testlog-integration.json")
		reports=(--reports "$rdir")
		for f in "$rdir"/*; do
			[ -s "$f" ] || continue
			echo "---- sanitizer report $(basename "$f") ----"
			cat "$f"
			rc=1
		done
	fi
fi
set -e
python3 scripts/test_summary.py "${logs[@]}" "${reports[@]}" || rc=1
exit $rc
