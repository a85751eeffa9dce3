#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# User-space instructions per request of one nrfwd worker, counted by
# callgrind (exact and repeatable, unlike CPU time on a shared machine):
# h2load -c 8 -m 32 through nrfwd (kernel sockets, one worker) to nrfstub,
# instrumentation switched on after a 2000-request warm-up.
#
#   bench/e2e/icount_nrfwd.sh [BUILD_DIR] [REQUESTS] [KINDS]
#
# Environment: ICOUNT_SPLIT=0 prints only the totals; ICOUNT_SYSCALLS=1 also
# counts system calls per request (strace -c -f on nrfwd without valgrind,
# same load); ICOUNT_KEEP=DIR keeps the callgrind dumps there.
#
# Prints "KIND N" (user-space instructions per request) for each of KINDS,
# then, unless ICOUNT_SPLIT=0, the split by object (nghttp2, nrfwd, libc,
# Hyperscan, vdso) and the top functions by self cost (icount_split.py: what
# callgrind_annotate --inclusive=no shows, per request). KINDS (default
# "forwarded 508 local local404"):
#   forwarded  the pure forwarder's request with a 3-member Via
#   508        the same with nrfwd's own identity appended (loop detected)
#   local      nrfwd with a local NRF that answers (200, relayed)
#   local404   nrfwd with a local NRF that answers 404 (the forwarding
#              trigger), then the same request forwarded to the peer
set -euo pipefail
b=${1:-build}
n=${2:-20000}
kinds=${3:-forwarded 508 local local404}
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d /tmp/nrfwd-icount.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
# four free ports (SO_REUSEPORT would let a second nrfwd share a fixed one)
read -r up port lok l404 < <(python3 -c 'import socket
s = [socket.socket() for _ in range(4)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
cat > "$tmp/cfg.json" <<J
{"generalOptions":{"ocnrfHost":"nrf-bench.seg1.example.com","ocnrfPort":$port},
 "forwardingOptions":{"featureStatus":"ENABLED","nrfHostConfig":[{"fqdn":"nrf-up.example.com","ipv4Address":"127.0.0.1","port":$up}]},
 "runtime":{"listen":[{"address":"127.0.0.1","port":$port}],"management":{"port":0},"limits":{"maxConcurrentStreams":256}}}
J
for l in lok l404; do
	lp=${!l}
	sed "s/\"management\"/\"localNrf\":{\"address\":\"127.0.0.1\",\"port\":$lp},\"management\"/" \
		"$tmp/cfg.json" > "$tmp/cfg-$l.json"
done
"$b/app/nrfstub/nrfstub" --listen 127.0.0.1:$lok --profiles conf/stub-profiles-a.json \
	--no-record --log-level error 2>/dev/null &
pids+=($!)
"$b/app/nrfstub/nrfstub" --listen 127.0.0.1:$l404 --profiles conf/stub-profiles-a.json \
	--no-record --log-level error --fault status:404 2>/dev/null &
pids+=($!)
"$b/app/nrfstub/nrfstub" --listen 127.0.0.1:$up --profiles conf/stub-profiles-a.json \
	--no-record --log-level error 2>/dev/null &
pids+=($!)
wait_port() { # nrfwd starts slowly under valgrind
	for _ in $(seq 300); do
		(echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "nothing listens on port $1" >&2
	exit 1
}
wait_port $up
url="http://127.0.0.1:$port/nnrf-disc/v1/nf-instances?target-nf-type=AMF&requester-nf-type=SMF"
fw="2.0 nrf-x.seg9.example.com:8080, 2.0 nrf-y.seg8.example.com:8080, 2.0 nrf-z.seg7.example.com:8080"
wait_port $lok
wait_port $l404
for kind in $kinds; do
	via=$fw
	cfg=$tmp/cfg.json
	[ "$kind" = 508 ] && via="$fw, 2.0 nrf-bench.seg1.example.com:$port"
	[ "$kind" = local ] && cfg=$tmp/cfg-lok.json
	[ "$kind" = local404 ] && cfg=$tmp/cfg-l404.json
	valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$tmp/cg.$kind" \
		"$b/app/nrfwd/nrfwd" --config "$cfg" --workers 1 --log-level error 2>/dev/null &
	np=$!
	pids+=($np)
	wait_port $port
	h2load -n 2000 -c 8 -m 32 -H "via: $via" "$url" >/dev/null
	callgrind_control -i on $np >/dev/null 2>&1
	h2load -n "$n" -c 8 -m 32 -H "via: $via" "$url" >/dev/null
	callgrind_control -d $np >/dev/null 2>&1
	callgrind_control -i off $np >/dev/null 2>&1
	kill -TERM $np
	wait $np 2>/dev/null || true
	# the dump taken while instrumented (the file written at exit holds
	# only what ran after instrumentation was off)
	total=$(awk '/^summary:/ { print $2 }' "$tmp/cg.$kind.1")
	echo "$kind $((total / n))"
	if [ "${ICOUNT_SPLIT:-1}" != 0 ]; then
		python3 bench/e2e/icount_split.py "$tmp/cg.$kind.1" "$n" "${ICOUNT_TOP:-25}"
	fi
	if [ -n "${ICOUNT_KEEP:-}" ]; then
		mkdir -p "$ICOUNT_KEEP"
		cp "$tmp/cg.$kind.1" "$ICOUNT_KEEP/cg.$kind"
	fi
	if [ "${ICOUNT_SYSCALLS:-0}" = 1 ]; then
		# The same load on nrfwd without valgrind, strace attached to
		# every thread after the warm-up.
		"$b/app/nrfwd/nrfwd" --config "$cfg" --workers 1 --log-level error 2>/dev/null &
		np=$!
		pids+=($np)
		wait_port $port
		h2load -n 2000 -c 8 -m 32 -H "via: $via" "$url" >/dev/null
		strace -c -f -qq -o "$tmp/st.$kind" -p $np &
		sp=$!
		sleep 1
		h2load -n "$n" -c 8 -m 32 -H "via: $via" "$url" >/dev/null
		kill -INT $sp
		wait $sp 2>/dev/null || true
		kill -TERM $np
		wait $np 2>/dev/null || true
		awk -v n="$n" '$NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" {
			printf "  syscall %-14s %8.3f per request (%d)\n", $NF, $4 / n, $4 }
			$NF == "total" { printf "  syscalls total %8.3f per request\n", $4 / n }' "$tmp/st.$kind"
	fi
done
