#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kernels.sh: the kernels srnic is built and VM-tested against besides Debian
# 12's own 6.1, fetched from Debian's registry.
#
#   tools/kernels.sh setup          both of the below (tools/setup.sh runs it)
#   tools/kernels.sh install-6.12   Debian's 6.12 from bookworm-backports on this
#                                   host: linux-image-6.12.N+deb12-amd64 and its
#                                   headers (root)
#   tools/kernels.sh prepare-newest the newest kernel Debian offers (trixie-
#                                   backports, forky, sid) in $SRNIC_KERNELS/KVER/
#                                   (root): chroot/ (a minbase chroot of its suite
#                                   with its headers: its kbuild tools need that
#                                   suite's glibc) and root/ (boot/vmlinuz-KVER
#                                   and lib/modules/KVER, unpacked, depmod'ed:
#                                   what tests/vm/vmrun boots)
#   tools/kernels.sh list           KVER and build dir of every supported kernel
#                                   present, one a line (6.1, 6.12, newest)
#   tools/kernels.sh make KVER [MAKE ARGS...]
#                                   make for KVER: on the host if it has
#                                   /lib/modules/KVER/build, else through KVER's
#                                   chroot (the checkout bind-mounted at its own
#                                   path, in a private mount namespace)
#
# Environment: SRNIC_KERNELS (cache dir, default /var/tmp/srnic-kernels),
# SRNIC_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# SRNIC_K612 / SRNIC_KNEWEST (pin a version instead of the registry's newest,
# e.g. 6.12.95+deb12 / 7.3.4+deb13).
#
# No apt source is ever added to /etc/apt: registry look-ups and the 6.12
# install use a private apt configuration (sources + lists under
# $SRNIC_KERNELS/apt), so other apt users on the machine never see
# bookworm-backports or newer suites. The image's postinst repoints
# /vmlinuz and /initrd.img: they are put back.
set -euo pipefail
export LC_ALL=C

readonly PROG=kernels.sh
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
readonly REPO
readonly KROOT=${SRNIC_KERNELS:-/var/tmp/srnic-kernels}
readonly MIRROR=${SRNIC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
readonly KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
readonly FLAVOUR=amd64

die() { echo "$PROG: $*" >&2; exit 1; }
msg() { echo "$PROG: $*" >&2; }
need_root() { [ "$(id -u)" -eq 0 ] || die "$1 must run as root"; }

# apt_private NAME SUITE...: a private apt configuration over Debian's main
# archive with SUITEs, its lists refreshed; sets APT (options for apt-get and
# apt-cache).
apt_private() {
	local name=$1 dir
	shift
	dir=$KROOT/apt/$name
	mkdir -p "$dir/parts" "$dir/lists/partial" "$dir/cache/archives/partial"
	cat >"$dir/parts/srnic.sources" <<-EOF
		Types: deb
		URIs: $MIRROR
		Suites: $*
		Components: main
		Signed-By: $KEYRING
	EOF
	APT=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$dir/parts"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		-o "DPkg::Lock::Timeout=600" -o "APT::Get::List-Cleanup=0")
	apt-get "${APT[@]}" -qq update || die "apt-get update for $* failed"
}

# newest_abi PATTERN: the highest X of linux-headers-X-amd64 matching PATTERN.
newest_abi() {
	apt-cache "${APT[@]}" pkgnames linux-headers- |
		sed -nE "s/^linux-headers-($1)-$FLAVOUR\$/\1/p" | sort -V | tail -n1
}

# ---------------------------------------------------------------- 6.12
install_612() {
	local abi kver l pkgs=() links=() saved=()
	need_root install-6.12
	apt_private bookworm-bpo bookworm bookworm-updates bookworm-backports
	abi=${SRNIC_K612:-$(newest_abi '6\.12\.[0-9]+\+deb12')}
	[ -n "$abi" ] || die "no linux-headers-6.12.*+deb12-$FLAVOUR in bookworm-backports"
	kver=$abi-$FLAVOUR
	if [ -f "/boot/vmlinuz-$kver" ] && [ -f "/lib/modules/$kver/build/Makefile" ]; then
		msg "$kver already installed"
		return 0
	fi
	pkgs=("linux-image-$kver" "linux-headers-$kver")
	for l in /vmlinuz /initrd.img /vmlinuz.old /initrd.img.old; do
		links+=("$l")
		saved+=("$(readlink "$l" 2>/dev/null || true)")
	done
	msg "installing ${pkgs[*]} (bookworm-backports)"
	DEBIAN_FRONTEND=noninteractive apt-get "${APT[@]}" install -y -qq \
		--no-install-recommends "${pkgs[@]}" >/dev/null ||
		die "apt-get install ${pkgs[*]} failed"
	for l in "${!links[@]}"; do
		if [ -n "${saved[$l]}" ]; then
			ln -sfn "${saved[$l]}" "${links[$l]}"
		else
			rm -f "${links[$l]}"
		fi
	done
	[ -f "/lib/modules/$kver/build/Makefile" ] || die "no /lib/modules/$kver/build after install"
	msg "installed $kver"
}

# ---------------------------------------------------------------- newest
# The suites a newer kernel may come from, and the base suite a chroot for
# each is bootstrapped from.
base_suite() {
	case $1 in
	trixie | trixie-backports) echo trixie ;;
	forky | forky-backports) echo forky ;;
	*) echo "$1" ;;
	esac
}

prepare_newest() {
	local abi kver suite base dir chroot root tmp deb debs=()
	need_root prepare-newest
	command -v debootstrap >/dev/null || die "debootstrap not found (tools/setup.sh)"
	apt_private newest trixie trixie-backports forky sid
	abi=${SRNIC_KNEWEST:-$(newest_abi '[0-9]+\.[0-9]+\.[0-9]+\+deb[0-9]+')}
	[ -n "$abi" ] || die "no linux-headers-*-$FLAVOUR found in trixie-backports/forky/sid"
	kver=$abi-$FLAVOUR
	# the suite holding the newest version of that package
	suite=$(apt-cache "${APT[@]}" madison "linux-headers-$kver" |
		sort -t'|' -k2,2V | tail -n1 | awk -F'|' '{ print $3 }' |
		awk '{ split($2, s, "/"); print s[1] }')
	[ -n "$suite" ] || die "cannot tell which suite holds linux-headers-$kver"
	base=$(base_suite "$suite")
	dir=$KROOT/$kver
	chroot=$dir/chroot root=$dir/root
	if [ -f "$dir/ready" ]; then
		msg "$kver already prepared in $dir"
		return 0
	fi
	msg "newest kernel: $kver ($suite); preparing $dir"
	mkdir -p "$dir"
	in_chroot() { chroot "$chroot" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
	# 1. the chroot with the headers (kept when complete: a re-run resumes)
	if [ ! -f "$chroot/.srnic-headers" ]; then
		rm -rf "$chroot" "$root"
		tmp=$(mktemp -d "$dir/tmp.XXXXXX")
		debootstrap --variant=minbase --include=make,ca-certificates "$base" \
			"$tmp/chroot" "$MIRROR" >"$dir/debootstrap.log" 2>&1 ||
			die "debootstrap $base failed: see $dir/debootstrap.log"
		rm -f "$tmp/chroot/etc/apt/sources.list"
		cat >"$tmp/chroot/etc/apt/sources.list.d/srnic.sources" <<-EOF
			Types: deb
			URIs: $MIRROR
			Suites: $(printf '%s\n' "$base" "$suite" | sort -u | tr '\n' ' ')
			Components: main
		EOF
		mv "$tmp/chroot" "$chroot"
		rm -rf "$tmp"
		{
			in_chroot apt-get -qq update &&
			in_chroot apt-get -y -qq -t "$suite" --no-install-recommends \
				install "linux-headers-$kver" binutils
		} >>"$dir/debootstrap.log" 2>&1 ||
			die "installing linux-headers-$kver in the chroot failed: see $dir/debootstrap.log"
		in_chroot apt-get -qq clean
		touch "$chroot/.srnic-headers"
	fi
	# 2. the image and its modules, unpacked (not installed: no initramfs,
	# no bootloader); 7.x splits them into linux-base/-binary/-modules
	rm -rf "$root" "$dir"/tmp.*
	tmp=$(mktemp -d "$dir/tmp.XXXXXX")
	debs=("linux-image-$kver")
	while read -r deb; do
		debs+=("$deb")
	done < <(in_chroot apt-cache depends "linux-image-$kver" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-(base|binary|modules)-[0-9]/ { print $2 }')
	in_chroot sh -c 'cd /tmp && apt-get -qq download "$@"' \
		_ "${debs[@]}" >>"$dir/debootstrap.log" 2>&1 ||
		die "downloading ${debs[*]} failed: see $dir/debootstrap.log"
	for deb in "$chroot"/tmp/linux-*.deb; do
		dpkg -x "$deb" "$tmp/root"
		rm -f "$deb"
	done
	if [ -d "$tmp/root/usr/lib/modules/$kver" ]; then
		mkdir -p "$tmp/root/lib/modules"
		mv "$tmp/root/usr/lib/modules/$kver" "$tmp/root/lib/modules/"
	fi
	# 7.x ships the image as /usr/lib/modules/KVER/vmlinuz
	if [ ! -f "$tmp/root/boot/vmlinuz-$kver" ] &&
	   [ -f "$tmp/root/lib/modules/$kver/vmlinuz" ]; then
		mkdir -p "$tmp/root/boot"
		mv "$tmp/root/lib/modules/$kver/vmlinuz" "$tmp/root/boot/vmlinuz-$kver"
	fi
	[ -f "$tmp/root/boot/vmlinuz-$kver" ] || die "no boot/vmlinuz-$kver in ${debs[*]}"
	[ -d "$tmp/root/lib/modules/$kver/kernel" ] || die "no lib/modules/$kver in ${debs[*]}"
	depmod -b "$tmp/root" "$kver" || die "depmod -b $tmp/root $kver failed"
	mv "$tmp/root" "$root"
	rm -rf "$tmp"
	echo "$suite" >"$dir/ready"
	# older newest kernels: gone (each is ~700 MB)
	for d in "$KROOT"/*/ready; do
		[ -f "$d" ] && [ "$d" != "$dir/ready" ] && rm -rf "${d%/ready}"
	done
	msg "prepared $kver: $(du -sh "$dir" | cut -f1) in $dir"
}

# ---------------------------------------------------------------- list/make
# KVER and build dir of each supported kernel present: the newest 6.1, the
# newest 6.12 (host headers) and the newest prepared chroot kernel.
list() {
	local d v
	for v in '6.1.*' '6.12.*'; do
		# shellcheck disable=SC2086 # the glob is wanted
		d=$(printf '%s\n' /lib/modules/$v/build | sort -V | tail -n1)
		[ -f "$d/Makefile" ] || continue
		d=${d%/build}
		echo "${d##*/} $d/build"
	done
	for d in "$KROOT"/*/ready; do
		[ -f "$d" ] || continue
		d=${d%/ready}
		echo "${d##*/} $d/chroot/lib/modules/${d##*/}/build"
	done | sort -V | tail -n1
}

kmake() {
	local kver=${1:-} dir
	[ -n "$kver" ] || die "usage: $PROG make KVER [MAKE ARGS...]"
	shift
	if [ -f "/lib/modules/$kver/build/Makefile" ]; then
		exec make -C "$REPO" KVER="$kver" "$@"
	fi
	dir=$KROOT/$kver
	[ -f "$dir/ready" ] ||
		die "no headers for $kver: install linux-headers-$kver (or tools/kernels.sh prepare-newest)"
	need_root "make through the $kver chroot"
	# a private mount namespace: the bind mount goes away with the process.
	# The checkout appears as /srnic: newer kbuilds resolve M= to its real
	# path, so a checkout path with spaces would reach them through any
	# symlink (the Makefile's way on the host).
	exec unshare -m -- bash -c '
		set -e
		mkdir -p "$1/chroot/srnic"
		mount --bind "$2" "$1/chroot/srnic"
		mount -t proc proc "$1/chroot/proc"	# objtool reads it
		exec chroot "$1/chroot" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
			make -C /srnic KVER="$3" "${@:4}"' _ "$dir" "$REPO" "$kver" "$@"
}

case ${1:-} in
setup) install_612; prepare_newest ;;
install-6.12) install_612 ;;
prepare-newest) prepare_newest ;;
list) list ;;
make) shift; kmake "$@" ;;
*) sed -n '4,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
