#!/usr/bin/env bash
# The pictures of docs/nrfwd-ctl.md: `nrfwd-ctl lint` and `nrfwd-ctl trace`
# of the example topologies in conf/demo (the four figures and the misrouted
# variants), as Graphviz DOT (committed) and SVG (rendered when Debian's
# graphviz is installed: apt-get install graphviz).
#
# Usage: scripts/render_pictures.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}
cd "$here"
ctl=$builddir/app/nrfwd-ctl/nrfwd-ctl
out=docs/pictures
fwd=conf/demo/forwarding
gro=conf/demo/growth
nef='/nnrf-disc/v1/nf-instances?target-nf-type=NEF'
svg() { if command -v dot >/dev/null; then echo --svg "$out/$1.svg"; fi; }

# lint exits 1 (warnings) or 2 (errors) on these: that is the point.
"$ctl" lint $fwd/nrf-a.json $fwd/nrf-e.json --dot $out/seed-forwarding-lint.dot \
	$(svg seed-forwarding-lint) >/dev/null || true
"$ctl" lint $fwd/nrf-a.json $fwd/nrf-e-misrouted.json \
	--dot $out/seed-forwarding-misrouted-lint.dot $(svg seed-forwarding-misrouted-lint) \
	>/dev/null || true
"$ctl" lint $gro/nrf-a.json $gro/nrf-e.json $gro/nrf-g.json --dot $out/seed-growth-lint.dot \
	$(svg seed-growth-lint) >/dev/null || true
"$ctl" lint $gro/nrf-a.json $gro/nrf-e-misrouted.json $gro/nrf-g.json \
	--dot $out/seed-growth-misrouted-lint.dot $(svg seed-growth-misrouted-lint) \
	>/dev/null || true

# The four figures, each a trace from NRF-A of a discovery nobody holds.
"$ctl" trace $fwd/nrf-a.json $fwd/nrf-e-misrouted.json --at nrf-a --path "$nef" \
	--dot $out/figure-I1-trace.dot $(svg figure-I1-trace) >/dev/null
"$ctl" trace $gro/nrf-a.json $gro/nrf-e-misrouted.json $gro/nrf-g.json --at nrf-a \
	--path "$nef" --dot $out/figure-I2-trace.dot $(svg figure-I2-trace) >/dev/null
"$ctl" trace $fwd/nrf-a.json $fwd/nrf-e.json --at nrf-a --path "$nef" \
	--dot $out/figure-I3-trace.dot $(svg figure-I3-trace) >/dev/null
"$ctl" trace $gro/nrf-a.json $gro/nrf-e.json $gro/nrf-g.json --at nrf-a --path "$nef" \
	--dot $out/figure-I4-trace.dot $(svg figure-I4-trace) >/dev/null
ls $out
