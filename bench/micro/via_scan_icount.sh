#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Instructions per nrf_via_scan() call, counted by callgrind (exact and
# repeatable, unlike timings on a shared machine): the bench's inputs,
# 4 members of which 0, 1 or 4 are identities, then 1, 4, 16 and 64
# members with the last one an identity. Markdown on stdout.
#
#   bench/micro/via_scan_icount.sh [BUILD_DIR]
#
# Valgrind has no AVX-512: Hyperscan runs its AVX2 code under it.
bench_name=via_scan_bench
. "$(dirname "$0")/callgrind.sh"
calls=1000

count() { # ids members known
	cg_run nrf_via_scan --ids "$1" --members "$2" --known "$3" --calls $calls
	awk -v n=$calls '/^summary:/ { printf "%d", $2 / n }' "$out/cg"
}

echo "| identities | 4 members, 0 identities | 4 members, 1 identity | 4 members, 4 identities |"
echo "|---:|---:|---:|---:|"
for n in 1 8 64 1024; do
	if [ "$n" = 1 ]; then four=-; else four=$(count "$n" 4 4); fi
	echo "| $n | $(count "$n" 4 0) | $(count "$n" 4 1) | $four |"
done
echo
echo "| identities | 1 member | 4 members | 16 members | 64 members |"
echo "|---:|---:|---:|---:|---:|"
for n in 1 8 64 1024; do
	echo "| $n | $(count "$n" 1 1) | $(count "$n" 4 1) | $(count "$n" 16 1) | $(count "$n" 64 1) |"
done
