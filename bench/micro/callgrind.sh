# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by the *_icount.sh drivers (POSIX sh) after they set bench_name:
# build (their BUILD_DIR argument, default build), bench (the micro
# benchmark's binary in it), out (a temporary directory, removed on exit),
# and
#   cg_run FUNCTION ARGS...
# which runs the benchmark with ARGS under callgrind, counting the
# instructions inside FUNCTION only: its stdout in "$out/log", the counts in
# "$out/cg" (cg_ir prints their total).
set -eu
build=${1:-build}
bench=$build/bench/micro/$bench_name
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cg_run() {
	fn=$1
	shift
	valgrind --tool=callgrind --callgrind-out-file="$out/cg" --toggle-collect="$fn" \
		"$bench" "$@" >"$out/log" 2>/dev/null
}

cg_ir() {
	awk '/^summary:/ { print $2 }' "$out/cg"
}
