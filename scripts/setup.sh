#!/usr/bin/env bash
# Idempotent setup for nrfwd on Debian 12: installs every package the project
# needs (build, tests, demo, benchmarks) and configures the meson build dir.
#
# Usage: scripts/setup.sh [BUILD_DIR]   (default: build)
# Env:   NRFWD_SKIP_APT=1  skip the package step (already installed)
#        NRFWD_LWIP=system  do not fetch lwIP's source: the DPDK transport
#                           then uses Debian's liblwip (decision 0010)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}

pkgs=(
	build-essential meson ninja-build pkg-config
	dpdk libdpdk-dev
	libnghttp2-dev nghttp2-client nghttp2-proxy
	libhyperscan-dev libjansson-dev libmicrohttpd-dev libssl-dev
	googletest libgtest-dev
	clang libclang-rt-dev
	liblwip-dev dpkg-dev xz-utils
	iproute2 ethtool curl haproxy jq python3
	python3-h2
	debhelper fakeroot lintian prometheus systemd
	libcurl4-openssl-dev etcd-server etcd-client
	dnsmasq-base logrotate testssl.sh graphviz
)

if [ "${NRFWD_SKIP_APT:-0}" != 1 ]; then
	missing=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "setup: installing ${missing[*]}"
		if [ "$(id -u)" -ne 0 ]; then
			echo "setup: need root to install packages" >&2
			exit 1
		fi
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	else
		echo "setup: all packages present"
	fi
fi

cd "$here"
# lwIP for the DPDK transport: our own build from Debian's source package
# (meson subproject, decision 0010); without it meson falls back to
# Debian's liblwip.
if [ "${NRFWD_LWIP:-auto}" = system ]; then
	echo "setup: NRFWD_LWIP=system: the DPDK transport uses Debian's liblwip"
elif ! scripts/fetch_lwip.sh; then
	echo "setup: lwIP source not fetched (reason above): the DPDK transport uses Debian's liblwip"
fi
if [ -f "$builddir/build.ninja" ]; then
	meson setup --reconfigure "$builddir" >/dev/null
else
	meson setup "$builddir" -Dbuildtype=debugoptimized -Dwerror=true >/dev/null
fi
echo "setup: build directory $builddir configured"
