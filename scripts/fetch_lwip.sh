#!/usr/bin/env bash
# Fetch Debian 12's lwIP source package (lwip 2.1.3+dfsg1-2) into
# subprojects/lwip and lay the project's meson.build, lwipopts.h and port
# files (subprojects/packagefiles/lwip) over it: the meson subproject the
# DPDK transport builds lwIP from (decision 0010). Never committed
# (.gitignore). Idempotent: an unpacked tree of the right version is kept,
# only the overlay is refreshed.
#
# Trust: the three files are checked against SHA-256 sums pinned here. They
# are the sums of bookworm's Sources index, which is signed by the Debian
# archive key (checked when this script was written: InRelease good
# signature "Debian Stable Release Key (12/bookworm)" -> Sources.xz ->
# lwip_2.1.3+dfsg1-2.dsc); dpkg-source then checks the tarballs against the
# .dsc once more and applies Debian's patches.
#
# Usage: scripts/fetch_lwip.sh          exit 0: subprojects/lwip ready
#                                       exit 1: not fetched (reason on stderr)
# Env:   NRFWD_LWIP_MIRROR  base URL of a Debian mirror (default deb.debian.org)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
ver=2.1.3+dfsg1-2
dest="$here/subprojects/lwip"
overlay="$here/subprojects/packagefiles/lwip"
mirror=${NRFWD_LWIP_MIRROR:-http://deb.debian.org/debian}
pool="$mirror/pool/main/l/lwip"

# name sha256 sha1 (sha1: snapshot.debian.org's file address)
files=(
	"lwip_${ver}.dsc 8d8f944db8e6d542fc2d6f01559078fb1b5dda71651c67ee5fa3571ed1342c50 4ea174f0001d159542348b389016e5b968475992"
	"lwip_2.1.3+dfsg1.orig.tar.xz 0a8276d09fc4e97bbba2f953d74af2388fc2195ea156be9d7589e297a68fde24 3abf03cb17b9ba41e30da318d8f65f2aeb203911"
	"lwip_${ver}.debian.tar.xz c5a48413d362cc757032cdd58f528f75eb64ee781ca46ca24f010b49b0e62a90 24241dcaae84292de44edb425f49cd9cc8febff4"
)

fail() {
	echo "fetch-lwip: $*" >&2
	exit 1
}

# Copy the overlay only where it differs, so an unchanged tree keeps its
# timestamps (no rebuild of lwIP on every setup).
sync_overlay() {
	local f rel
	while IFS= read -r -d '' f; do
		rel=${f#"$overlay"/}
		mkdir -p "$(dirname "$dest/$rel")"
		cmp -s "$f" "$dest/$rel" || cp "$f" "$dest/$rel"
	done < <(find "$overlay" -type f -print0)
}

[ -d "$overlay" ] || fail "no $overlay in this checkout"
if [ -f "$dest/.nrf-lwip-version" ] && [ "$(cat "$dest/.nrf-lwip-version")" = "$ver" ]; then
	sync_overlay
	echo "fetch-lwip: lwip $ver already in subprojects/lwip"
	exit 0
fi
for tool in curl sha256sum dpkg-source; do
	command -v "$tool" >/dev/null || fail "$tool not found (dpkg-dev, curl, coreutils)"
done

mkdir -p "$here/subprojects"
tmp=$(mktemp -d "$here/subprojects/.lwip-fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for entry in "${files[@]}"; do
	read -r name sum sha1 <<<"$entry"
	ok=0
	for url in "$pool/$name" "https://snapshot.debian.org/file/$sha1"; do
		if curl -fsSL --retry 2 --connect-timeout 10 --max-time 120 -o "$tmp/$name" "$url" &&
			echo "$sum  $tmp/$name" | sha256sum -c --status; then
			ok=1
			break
		fi
		echo "fetch-lwip: $url: download failed or checksum mismatch" >&2
	done
	[ "$ok" = 1 ] || fail "cannot get $name with SHA-256 $sum"
done
# Checksums again from the .dsc, then Debian's quilt patches. The .dsc's
# OpenPGP signature cannot be checked without debian-keyring (not
# installed); the pinned sums above stand for it.
if ! (cd "$tmp" && dpkg-source -q -x "lwip_${ver}.dsc" src >"$tmp/log" 2>&1); then
	cat "$tmp/log" >&2
	fail "dpkg-source could not unpack lwip_${ver}.dsc"
fi
echo "$ver" >"$tmp/src/.nrf-lwip-version"
rm -rf "$dest"
mv "$tmp/src" "$dest"
sync_overlay
echo "fetch-lwip: lwip $ver unpacked into subprojects/lwip (Debian patches applied)"
