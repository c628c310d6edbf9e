#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# srnic through DKMS: the module is rebuilt for every kernel the machine
# installs (dkms.conf at the repo root says how).
#
#   tools/dkms.sh stage DIR        copy the module source and dkms.conf into
#                                  DIR (what /usr/src/srnic-<version>/ holds)
#   tools/dkms.sh version          print the version (dkms.conf PACKAGE_VERSION)
#   tools/dkms.sh build [OPTS]     stage into SOURCETREE/srnic-<version>, then
#                                  dkms add and dkms build for KVER; a source
#                                  already there that equals this checkout's
#                                  is kept with what DKMS built from it
#   tools/dkms.sh install [OPTS]   the same, then dkms install: the module goes
#                                  to /lib/modules/KVER/updates/dkms/, depmod
#   tools/dkms.sh remove [OPTS]    dkms remove --all, then delete the staged
#                                  source
#
# OPTS: -k KVER (default: $KVER, else the running kernel), and DKMS's own
# --dkmstree DIR, --sourcetree DIR, --installtree DIR (defaults
# /var/lib/dkms, /usr/src, /lib/modules), passed through to every dkms call,
# e.g. to build into a private tree as a normal user or in a test.
# `make dkms-install` / `make dkms-remove` call this with KVER = the kernel
# of KDIR. Needs root for the default trees. DKMS signs the module with its
# own key (/var/lib/dkms/mok.key); see README.md "Secure Boot".
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
prog=dkms.sh
die() { echo "$prog: $*" >&2; exit 1; }

version() {
	sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$top/dkms.conf"
}

# stage DIR: the module's source as DKMS builds it; no build products
stage() {
	local dir=$1
	mkdir -p "$dir"
	cp "$top/Kbuild" "$top/dkms.conf" "$dir/"
	(cd "$top" && find kernel include -type f \
		! -name '*.o' ! -name '*.ko' ! -name '*.mod' ! -name '*.mod.c' \
		! -name '.*' ! -name '*.a' ! -name 'modules.order' -print0 |
		xargs -0 cp --parents -t "$dir")
}

[ $# -ge 1 ] || die "usage: $prog stage DIR | version | build|install|remove [-k KVER] [--dkmstree D] [--sourcetree D] [--installtree D]"
cmd=$1
shift
case $cmd in
stage)
	[ $# -eq 1 ] || die "usage: $prog stage DIR"
	stage "$1"
	exit 0
	;;
version)
	version
	exit 0
	;;
build | install | remove) ;;
*) die "unknown command '$cmd' (stage, version, build, install, remove)" ;;
esac

# nodir_spaces DIR: DIR, or die if its path has a space: DKMS's scripts split
# such a path, and it compares its trees' links with `readlink -f`, so a
# symlink without spaces does not help
nodir_spaces() {
	case $1 in
	*[[:space:]]*) die "DKMS cannot take a directory whose path has a space: $1" ;;
	esac
	printf '%s\n' "$1"
}

kver=${KVER:-$(uname -r)}
srctree=/usr/src
trees=()
while [ $# -gt 0 ]; do
	case $1 in
	-k) [ $# -ge 2 ] || die "-k needs a kernel version"; kver=$2; shift 2 ;;
	--dkmstree | --installtree)
		[ $# -ge 2 ] || die "$1 needs a directory"
		mkdir -p -- "$2"
		trees+=("$1" "$(nodir_spaces "$(realpath -e -- "$2")")"); shift 2 ;;
	--sourcetree)
		[ $# -ge 2 ] || die "$1 needs a directory"
		mkdir -p -- "$2"
		srctree=$(nodir_spaces "$(realpath -e -- "$2")"); shift 2 ;;
	*) die "unknown option '$1'" ;;
	esac
done
trees+=(--sourcetree "$srctree")

command -v dkms >/dev/null || die "dkms not found: apt install dkms"
ver=$(version)
[ -n "$ver" ] || die "no PACKAGE_VERSION in $top/dkms.conf"
mv_="srnic/$ver"

added() { [ -n "$(dkms status "${trees[@]}" -m srnic -v "$ver" 2>/dev/null)" ]; }

if [ "$cmd" = remove ]; then
	if added; then
		dkms remove "${trees[@]}" "$mv_" --all
	else
		echo "$prog: $mv_ is not in the dkms tree"
	fi
	rm -rf -- "$srctree/srnic-$ver"
	exit 0
fi

# the source DKMS has is this checkout's: keep it (and what DKMS built from
# it), else replace it and drop what DKMS has of the old one
staged=$srctree/srnic-$ver
tmp=$(mktemp -d "${TMPDIR:-/tmp}/srnic-dkms.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
stage "$tmp/src"
if ! added || ! diff -r -q "$tmp/src" "$staged" >/dev/null 2>&1; then
	! added || dkms remove "${trees[@]}" "$mv_" --all >/dev/null
	rm -rf -- "$staged"
	mkdir -p "$srctree"
	cp -r "$tmp/src" "$staged"
	dkms add "${trees[@]}" "$mv_"
fi
built() { dkms status "${trees[@]}" -m srnic -v "$ver" -k "$kver" 2>/dev/null | grep -q ': \(built\|installed\)'; }
if ! built; then
	[ -e "/lib/modules/$kver/build/include" ] ||
		die "no headers for kernel $kver in /lib/modules/$kver/build: apt install linux-headers-$kver (or pass -k KVER)"
	dkms build "${trees[@]}" "$mv_" -k "$kver"
fi
[ "$cmd" = build ] || dkms install "${trees[@]}" "$mv_" -k "$kver"
dkms status "${trees[@]}" -m srnic -v "$ver"
