#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# trixie-chroot.sh: a Debian 13 (trixie) root with rdma-core 56 and perftest
# 25.01, for running the stock tools of that release against srnic
# (tests/vm/test_rdmacore56.sh). Needs root and debootstrap (tools/setup.sh).
#
#   tools/trixie-chroot.sh          build the chroot if missing; print its path
#   tools/trixie-chroot.sh --path   print the path only (no build; exit 1 if
#                                   the chroot is not built)
#   tools/trixie-chroot.sh provider build srnic's libibverbs provider
#                                   (userspace/provider/, native mode) for
#                                   rdma-core 56 inside the chroot, into
#                                   ROOT/opt/srnic/libsrnic-rdmav34.so; print
#                                   the RDMAV_DRIVERS value for the chroot's
#                                   tools (/opt/srnic/libsrnic)
#
# The chroot lives in /var/cache/srnic-trixie/<key>/root (override the parent
# with SRNIC_TRIXIE_CACHE), where <key> hashes the suite, mirror and package
# list below: change them and a new chroot is built beside the old one (older
# ones are removed). Idempotent: a complete chroot (marked by ".complete")
# is reused; a half-built one (interrupted run) is removed and rebuilt.
# A lock serialises concurrent runs. About 1 minute and 300 MB.
#
# Running its tools: bind-mount /dev and /sys and mount /proc inside it, then
# `chroot ROOT ibv_devinfo` (tests/vm/test_rdmacore56.sh does this in a
# guest). Why /var/cache: a vmrun guest sees the host's root filesystem, but
# with fresh tmpfs on /tmp and /var/tmp, so a chroot there would be invisible
# to the guest; /var/cache is shared like the rest of the root.
set -euo pipefail
export LC_ALL=C

readonly SUITE=trixie
readonly MIRROR=${SRNIC_TRIXIE_MIRROR:-http://deb.debian.org/debian}
# libibverbs-dev, libc6-dev, cmake, gcc, make, pkgconf: building srnic's provider for 56
readonly PKGS=rdma-core,ibverbs-utils,ibverbs-providers,perftest,iproute2,kmod,rdmacm-utils,python3-pyverbs,libibverbs-dev,libc6-dev,cmake,gcc,make,pkgconf
readonly PARENT=${SRNIC_TRIXIE_CACHE:-/var/cache/srnic-trixie}

die() { echo "trixie-chroot: $*" >&2; exit 1; }

key=$(printf '%s\n' "$SUITE" "$MIRROR" "$PKGS" | sha256sum | cut -c1-12)
dir=$PARENT/$key
root=$dir/root

if [ "${1:-}" = --path ]; then
	[ -f "$dir/.complete" ] || die "not built: run tools/trixie-chroot.sh as root"
	echo "$root"
	exit 0
fi
provider=0
case ${1:-} in
"") ;;
provider) provider=1 ;;
*) die "usage: tools/trixie-chroot.sh [--path | provider]" ;;
esac
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap)"
command -v debootstrap >/dev/null || die "debootstrap not found: run tools/setup.sh"

mkdir -p "$PARENT"
exec 9>"$PARENT/.lock"
flock 9
if [ ! -f "$dir/.complete" ]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	echo "trixie-chroot: debootstrap $SUITE into $root (log: $dir/debootstrap.log)" >&2
	if ! debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$root" "$MIRROR" \
		>"$dir/debootstrap.log" 2>&1; then
		tail -n 20 "$dir/debootstrap.log" >&2
		die "debootstrap failed (log: $dir/debootstrap.log)"
	fi
	# what the tests rely on
	for t in ibv_devinfo ibv_rc_pingpong ib_write_bw rping; do
		[ -x "$root/usr/bin/$t" ] || die "$t missing in $root"
	done
	# the package cache is 100+ MB the tools do not need
	rm -rf "$root/var/cache/apt/archives/"*.deb
	dpkg-query --admindir="$root/var/lib/dpkg" -W rdma-core perftest >"$dir/versions"
	touch "$dir/.complete"
	# drop chroots of older package lists
	find "$PARENT" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
fi
if [ "$provider" = 1 ]; then
	# the sources the provider needs, copied in (the chroot cannot see the
	# checkout), built there against its libibverbs
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
	rm -rf "$root/opt/srnic" "$root/opt/srnic-src"
	mkdir -p "$root/opt/srnic-src/userspace" "$root/opt/srnic"
	cp -r "$src/userspace/provider" "$root/opt/srnic-src/userspace/"
	cp -r "$src/include" "$root/opt/srnic-src/"
	if ! chroot "$root" sh -c 'cmake -S /opt/srnic-src/userspace/provider \
		-B /opt/srnic-src/build && cmake --build /opt/srnic-src/build' \
		>"$dir/provider-build.log" 2>&1; then
		tail -n 20 "$dir/provider-build.log" >&2
		die "building the provider in the chroot failed (log: $dir/provider-build.log)"
	fi
	cp "$root/opt/srnic-src/build/libsrnic-rdmav34.so" "$root/opt/srnic/"
	flock -u 9
	echo /opt/srnic/libsrnic
	exit 0
fi
flock -u 9
echo "$root"
