#!/usr/bin/env bash
# Where nrfwd's CPU goes: perf record (cpu-clock; this VM has no hardware
# counters) of one nrfwd worker forwarding to nrfstub under h2load.
# Usage: bench/e2e/profile_nrfwd.sh [VIA] [BUILD_DIR]
#   VIA default: a 3-member Via (forwarded); pass one that ends with
#   "2.0 nrf-bench.seg1.example.com:28802" to profile 508 answers.
# Then: perf report -i /tmp/nrfwd-perf.data --no-children --sort dso,symbol -g none
set -euo pipefail
via=${1:-"2.0 a.x:1, 2.0 b.y:2, 2.0 c.z:3"}
b=${2:-build}
cd "$(dirname "$0")/../.."
cfg=$(mktemp /tmp/nrfwd-prof.XXXXXX.json)
cat > "$cfg" <<J
{"generalOptions":{"ocnrfHost":"nrf-bench.seg1.example.com","ocnrfPort":28802},
 "forwardingOptions":{"featureStatus":"ENABLED","nrfHostConfig":[{"fqdn":"nrf-up.example.com","ipv4Address":"127.0.0.1","port":28801}]},
 "runtime":{"listen":[{"address":"127.0.0.1","port":28802}],"management":{"port":0},"limits":{"maxConcurrentStreams":256}}}
J
taskset -c 0 "$b/app/nrfstub/nrfstub" --listen 127.0.0.1:28801 --profiles conf/stub-profiles-a.json \
	--no-record --log-level error 2>/dev/null & sp=$!
taskset -c 1 "$b/app/nrfwd/nrfwd" --config "$cfg" --workers 1 --log-level error 2>/dev/null & np=$!
trap 'kill $np $sp 2>/dev/null; rm -f "$cfg"' EXIT
sleep 0.5
url='http://127.0.0.1:28802/nnrf-disc/v1/nf-instances?target-nf-type=AMF'
taskset -c 0 h2load -n 5000 -c 8 -m 32 -H "via: $via" "$url" >/dev/null
perf record -e cpu-clock -F 5000 -g -p $np -o /tmp/nrfwd-perf.data 2>/dev/null & pp=$!
sleep 0.2
taskset -c 0 h2load -n 100000 -c 8 -m 32 -H "via: $via" "$url" | grep -E 'finished|requests:'
kill -INT $pp
wait $pp 2>/dev/null || true
perf report -i /tmp/nrfwd-perf.data --no-children --sort dso -g none 2>/dev/null | grep '%' | head -8
