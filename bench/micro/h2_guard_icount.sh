#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per frame and per request of the front frame-header pass
# (h2_guard_frame) and of nghttp2_session_mem_recv on the same input
# (bench/micro/h2_guard_bench.c), counted by callgrind: exact and
# repeatable, unlike timings on a shared machine. Markdown on stdout.
#
#   bench/micro/h2_guard_icount.sh [BUILD_DIR]
bench_name=h2_guard_bench
. "$(dirname "$0")/callgrind.sh"
passes=10

# count FUNCTION METHOD: "Ir frames requests"
count() {
	cg_run "$1" --method "$2" --calls $passes
	ir=$(cg_ir)
	set -- $(awk '/^frames/ { print $2, $4 }' "$out/log")
	echo "$ir $1 $2"
}

set -- $(count h2_guard_frame pass)
pass_ir=$1 frames=$2 reqs=$3
set -- $(count nghttp2_session_mem_recv recv)
recv_ir=$1
awk -v p="$pass_ir" -v r="$recv_ir" -v f="$frames" -v q="$reqs" -v n=$passes 'BEGIN {
	printf "Input: %d requests, %d frames per pass; %d passes.\n\n", q, f, n
	print "| | instructions per frame | per request |"
	print "|---|---:|---:|"
	printf "| pass (h2_guard_frame) | %.1f | %.1f |\n", p / n / f, p / n / q
	printf "| nghttp2_session_mem_recv | %.1f | %.1f |\n", r / n / f, r / n / q
	printf "\npass / mem_recv = %.2f %%\n", 100 * p / r
}'
