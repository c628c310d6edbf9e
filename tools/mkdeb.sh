#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the Debian packages a Debian/Ubuntu user installs with
# `apt install ./srnic-dkms_*.deb ./srnic-tools_*.deb` (and
# ./srnic-provider_*.deb for devices in native mode):
#
#   srnic-dkms   (all)    the module source and dkms.conf in
#                         /usr/src/srnic-<version>/; postinst registers, builds
#                         and installs it with DKMS for the running and the
#                         newest installed kernel (dkms's common.postinst, as
#                         dh_dkms does), prerm removes it from DKMS
#   srnic-tools  (<arch>) srnicctl (its eBPF programs are built in) in
#                         /usr/sbin, its man page srnicctl(8)
#   srnic-provider (<arch>) srnic's libibverbs provider (native mode:
#                         docs/native-provider.md) in libibverbs' provider
#                         directory and /etc/libibverbs.d/srnic.driver (a
#                         conffile: purge removes it). Built for one
#                         rdma-core release (the provider's private ABI), so
#                         it depends on exactly that libibverbs1 release
#
#   tools/mkdeb.sh [-o OUTDIR]     default OUTDIR: build/deb
#
# Uses dpkg-deb (--root-owner-group: no fakeroot needed) and dpkg-shlibdeps
# for srnic-tools' library dependencies; `make userspace` must have run
# (`make deb` does both). Prints the paths of the packages.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
prog=mkdeb.sh
die() { echo "$prog: $*" >&2; exit 1; }

out=$top/build/deb
while [ $# -gt 0 ]; do
	case $1 in
	-o) [ $# -ge 2 ] || die "-o needs a directory"; out=$2; shift 2 ;;
	-h | --help) sed -n '4,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
for t in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
	command -v "$t" >/dev/null || die "$t not found: apt install dpkg-dev"
done
ctl=$top/build/userspace/ctl/srnicctl
[ -x "$ctl" ] || die "$ctl not built: run make userspace (or make deb)"

ver=$("$top/tools/dkms.sh" version)
[ -n "$ver" ] || die "no version in dkms.conf"
kver=$(sed -n 's/^#define SRNIC_VERSION_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*\([0-9]*\)$/\2/p' \
	"$top/kernel/srnic.h" | paste -sd.)
[ "$ver" = "$kver" ] || die "dkms.conf PACKAGE_VERSION $ver != kernel/srnic.h version $kver"
debver=$ver-1
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
maint="srnic developers <srnic@localhost>"
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
work=$(mktemp -d "${TMPDIR:-/tmp}/mkdeb.XXXXXX")
trap 'rm -rf -- "$work"' EXIT

# doc PKG: /usr/share/doc/PKG/copyright (Debian policy 12.5)
doc() {
	local d=$work/$1/usr/share/doc/$1
	mkdir -p "$d"
	cat >"$d/copyright" <<-EOF
	Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
	Upstream-Name: srnic

	Files: *
	Copyright: srnic developers
	License: GPL-2
	 On Debian systems, the full text of the GNU General Public License
	 version 2 can be found in the file /usr/share/common-licenses/GPL-2.
	EOF
}

# ---------------------------------------------------------------- srnic-dkms
p=$work/srnic-dkms
"$top/tools/dkms.sh" stage "$p/usr/src/srnic-$ver"
doc srnic-dkms
mkdir -p "$p/DEBIAN"
cat >"$p/DEBIAN/control" <<EOF
Package: srnic-dkms
Version: $debver
Architecture: all
Maintainer: $maint
Section: kernel
Priority: optional
Depends: dkms (>= 2.1.0.0)
Recommends: srnic-tools, rdma-core, ibverbs-providers
Installed-Size: $(du -sk "$p/usr" | cut -f1)
Description: srnic, a software RoCEv2 RDMA NIC (kernel module, DKMS source)
 srnic turns any Ethernet netdev into a RoCEv2 RDMA device
 (rdma link add NAME type srnic netdev IFNAME). Stock rdma-core drives it
 through its rxe provider.
 .
 This package holds the module's source; DKMS builds and installs it for
 every kernel that has its headers installed. srnic and rdma_rxe cannot be
 loaded together.
EOF
# postinst/prerm: what dh_dkms generates, by hand
cat >"$p/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
	/usr/lib/dkms/common.postinst srnic $ver /usr/share/srnic-dkms "" "\$2"
fi
EOF
cat >"$p/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
case "\$1" in
remove | upgrade | deconfigure)
	if [ -n "\$(dkms status -m srnic -v $ver 2>/dev/null)" ]; then
		dkms remove -m srnic -v $ver --all
	fi
	;;
esac
EOF
chmod 755 "$p/DEBIAN/postinst" "$p/DEBIAN/prerm"

# ---------------------------------------------------------------- srnic-tools
p=$work/srnic-tools
DESTDIR=$p cmake --install "$top/build/userspace" --prefix /usr --strip >/dev/null
[ -x "$p/usr/bin/srnicctl" ] || die "cmake --install did not install usr/bin/srnicctl"
mkdir -p "$p/usr/sbin"
mv "$p/usr/bin/srnicctl" "$p/usr/sbin/srnicctl"
rmdir "$p/usr/bin"
extra=$(cd "$p" && find . -type f ! -path ./usr/sbin/srnicctl)
[ -z "$extra" ] || die "cmake --install installed more than srnicctl: $extra"
mkdir -p "$p/usr/share/man/man8"
gzip -9n <"$top/userspace/ctl/srnicctl.8" >"$p/usr/share/man/man8/srnicctl.8.gz"
doc srnic-tools
# dpkg-shlibdeps wants a debian/control of a source package
mkdir -p "$work/src/debian"
printf 'Source: srnic\n\nPackage: srnic-tools\nArchitecture: any\n' >"$work/src/debian/control"
deps=$(cd "$work/src" && dpkg-shlibdeps -O -e"$p/usr/sbin/srnicctl" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$deps" ] || die "dpkg-shlibdeps found no dependencies for srnicctl"
mkdir -p "$p/DEBIAN"
cat >"$p/DEBIAN/control" <<EOF
Package: srnic-tools
Version: $debver
Architecture: $arch
Maintainer: $maint
Section: net
Priority: optional
Depends: $deps
Recommends: srnic-dkms, rdma-core, ibverbs-providers
Installed-Size: $(du -sk "$p/usr" | cut -f1)
Description: srnic, a software RoCEv2 RDMA NIC (srnicctl)
 srnicctl inspects and controls srnic devices with iproute2's grammar:
 dev add/del, show, stats, qp, dcqcn, doctor (diagnosis with fixes and a
 loopback self-test) and the eBPF tools top and lat.
EOF

# ------------------------------------------------------------- srnic-provider
p=$work/srnic-provider
DESTDIR=$p cmake --install "$top/build/userspace" --component srnic_provider \
	--prefix /usr --strip >/dev/null
so=$(cd "$p" && find . -name 'libsrnic-rdmav*.so' -printf '%P\n')
[ -n "$so" ] && [ -f "$p/etc/libibverbs.d/srnic.driver" ] ||
	die "cmake --install --component srnic_provider installed no provider and driver file"
doc srnic-provider
printf 'Source: srnic\n\nPackage: srnic-provider\nArchitecture: any\n' >"$work/src/debian/control"
deps=$(cd "$work/src" && dpkg-shlibdeps -O -e"$p/$so" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$deps" ] || die "dpkg-shlibdeps found no dependencies for $so"
# libibverbs 1.14.<release>.<patch>: the release the private ABI was read from
rel=$(pkg-config --modversion libibverbs | cut -d. -f3)
[[ $rel =~ ^[0-9]+$ ]] || die "cannot read the rdma-core release from libibverbs' version"
mkdir -p "$p/DEBIAN"
echo /etc/libibverbs.d/srnic.driver >"$p/DEBIAN/conffiles"
cat >"$p/DEBIAN/control" <<EOF
Package: srnic-provider
Version: $debver
Architecture: $arch
Maintainer: $maint
Section: net
Priority: optional
Depends: $deps, libibverbs1 (>= $rel), libibverbs1 (<< $((rel + 1)))
Recommends: srnic-dkms
Installed-Size: $(du -sk "$p/usr" | cut -f1)
Description: srnic, a software RoCEv2 RDMA NIC (native verbs provider)
 libibverbs provider for srnic devices made in native mode (rdma link add
 NAME type srnic_native netdev IFNAME): dma-buf memory regions and what the
 stock rxe provider cannot reach. Devices in the default mode keep using
 rdma-core's rxe provider. Built for rdma-core $rel.
EOF

for p in srnic-dkms srnic-tools srnic-provider; do
	a=$([ "$p" = srnic-dkms ] && echo all || echo "$arch")
	f=$out/${p}_${debver}_$a.deb
	dpkg-deb --root-owner-group -Zxz --build "$work/$p" "$f" >/dev/null
	echo "$f"
done
