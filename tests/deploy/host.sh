#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of tests/tier_deploy.sh: the install route into a staging root,
# a real DKMS build of dkms.conf into a private tree, the two .deb packages;
# leaves in DIR what tests/deploy/guest.sh installs in the guest.
#
#   tests/deploy/host.sh DIR     (srnic.ko and build/userspace already built)
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd -P)
cd "$top" || exit 1
D=${1:?usage: host.sh DIR}
pass=0
fail=0
ok() { echo "PASS: $1"; pass=$((pass + 1)); }
ko() { echo "FAIL: $1"; fail=$((fail + 1)); }
check() { local n=$1; shift; if "$@"; then ok "$n"; else ko "$n"; fi; }
# run NAME CMD...: CMD's output indented; PASS iff it exits 0
run() {
	local n=$1 rc
	shift
	"$@" >"$D/run.log" 2>&1
	rc=$?
	sed 's/^/  | /' "$D/run.log" | tail -n 25
	check "$n" test "$rc" -eq 0
}

KREL=$(make -s --no-print-directory kernelrelease)
VER=$(tools/dkms.sh version)
rm -rf -- "$D"
mkdir -p "$D"

check "kernel release of KDIR known ($KREL)" test -n "$KREL"
check "dkms.conf PACKAGE_VERSION ($VER) = kernel/srnic.h version" test "$VER" = \
	"$(sed -n 's/^#define SRNIC_VERSION_\(MAJOR\|MINOR\|PATCH\)[[:space:]]*\([0-9]*\)$/\2/p' kernel/srnic.h | paste -sd.)"

# ---------------------------------------------------------------- make install
dest=$D/dest
m="$dest/lib/modules/$KREL"
run "make install DESTDIR=<staging root>" make install DESTDIR="$dest"
check "make install: updates/srnic.ko is srnic.ko" cmp -s srnic.ko "$m/updates/srnic.ko"
check "make install: depmod ran (modules.dep)" grep -qx 'updates/srnic.ko:.*' "$m/modules.dep"
check "make install: rdma-link alias in modules.alias" grep -qx 'alias rdma-link-srnic srnic' "$m/modules.alias"
run "make uninstall DESTDIR=<staging root>" make uninstall DESTDIR="$dest"
check "make uninstall: srnic.ko gone" test ! -e "$m/updates/srnic.ko"
check "make uninstall: depmod ran (no srnic in modules.dep)" bash -c '! grep -q srnic "$1"' _ "$m/modules.dep"
out=$(make install KVER=0.0.0-none DESTDIR="$dest" 2>&1)
check "make install KVER=<no such kernel> fails, saying so" \
	bash -c '[ "$1" -ne 0 ] && grep -q "0.0.0-none" <<<"$2"' _ "$?" "$out"
kdir=/lib/modules/$KREL/build
out=$(make install KVER=0.0.0-none KDIR="$kdir" DESTDIR="$dest" 2>&1)
check "make install KVER=<not KDIR's kernel> KDIR=... fails, saying so" \
	bash -c '[ "$1" -ne 0 ] && grep -q "KVER=0.0.0-none but KDIR" <<<"$2"' _ "$?" "$out"
out=$(make install DESTDIR="$D/a b" 2>&1)
check "make install DESTDIR=<path with a space> fails, saying why" \
	bash -c '[ "$1" -ne 0 ] && grep -q "cannot take a path with spaces" <<<"$2"' _ "$?" "$out"

# ---------------------------------------------------------------- DKMS
trees=(--dkmstree "$D/dkms/tree" --sourcetree "$D/dkms/src")
t0=$SECONDS
run "tools/dkms.sh build -k $KREL (private DKMS tree)" tools/dkms.sh build -k "$KREL" "${trees[@]}"
echo "info: dkms build took $((SECONDS - t0)) s"
check "dkms status: built for $KREL" \
	bash -c 'dkms status "${@:2}" -m srnic -k "$1" | grep -q ": built"' _ "$KREL" "${trees[@]}"
ko_=$D/dkms/tree/srnic/$VER/$KREL/$(uname -m)/module/srnic.ko
check "dkms build: vermagic is $KREL" bash -c '[[ $(modinfo -F vermagic "$1") == "$2 "* ]]' _ "$ko_" "$KREL"
check "dkms build: rdma-link alias" bash -c 'modinfo -F alias "$1" | grep -qx rdma-link-srnic' _ "$ko_"
check "dkms build: staged source has no build products" \
	bash -c '[ -z "$(find "$1" -name "*.o" -o -name "*.ko" -o -name "*.cmd")" ]' _ "$D/dkms/src/srnic-$VER"
run "tools/dkms.sh build again: keeps the build" tools/dkms.sh build -k "$KREL" "${trees[@]}"
check "tools/dkms.sh build again: did not compile" bash -c '! grep -q "^Building module" "$1"' _ "$D/run.log"
# what the guest's apt postinst loads instead of compiling (see guest.sh)
run "dkms mktarball" dkms mktarball "${trees[@]}" -m srnic -v "$VER" -k "$KREL" \
	--archive "$D/srnic-$VER.dkms.tar.gz"
check "dkms tarball made" test -s "$D/srnic-$VER.dkms.tar.gz"

# ---------------------------------------------------------------- .deb
run "tools/mkdeb.sh" tools/mkdeb.sh -o "$D/deb"
dd=$D/deb/srnic-dkms_$VER-1_all.deb
td=$D/deb/srnic-tools_$VER-1_$(dpkg --print-architecture).deb
check "srnic-dkms .deb built" test -s "$dd"
check "srnic-tools .deb built" test -s "$td"
c=$(dpkg-deb -c "$dd" 2>/dev/null | awk '{ print $6 }')
for f in dkms.conf Kbuild kernel/srnic_main.c kernel/srnic.h include/uapi/rdma/srnic.h; do
	check "srnic-dkms holds /usr/src/srnic-$VER/$f" grep -qx "./usr/src/srnic-$VER/$f" <<<"$c"
done
check "srnic-dkms holds no build products" bash -c '! grep -qE "\.(o|ko|cmd)$" <<<"$1"' _ "$c"
check "srnic-dkms depends on dkms" bash -c 'dpkg-deb -f "$1" Depends | grep -q "^dkms"' _ "$dd"
check "srnic-dkms postinst runs dkms's common.postinst" \
	bash -c 'dpkg-deb --ctrl-tarfile "$1" | tar -xOf - ./postinst | grep -q "common.postinst srnic $2"' _ "$dd" "$VER"
check "srnic-dkms prerm removes it from DKMS" \
	bash -c 'dpkg-deb --ctrl-tarfile "$1" | tar -xOf - ./prerm | grep -q "dkms remove -m srnic -v $2 --all"' _ "$dd" "$VER"
c=$(dpkg-deb -c "$td" 2>/dev/null | awk '{ print $6 }')
check "srnic-tools holds /usr/sbin/srnicctl" grep -qx ./usr/sbin/srnicctl <<<"$c"
check "srnic-tools holds the man page" grep -qx ./usr/share/man/man8/srnicctl.8.gz <<<"$c"
check "srnic-tools depends on libibverbs1 (dpkg-shlibdeps)" \
	bash -c 'dpkg-deb -f "$1" Depends | grep -q "libibverbs1"' _ "$td"
pd=$D/deb/srnic-provider_$VER-1_$(dpkg --print-architecture).deb
check "srnic-provider .deb built" test -s "$pd"
c=$(dpkg-deb -c "$pd" 2>/dev/null | awk '{ print $6 }')
check "srnic-provider holds the provider in libibverbs' directory" \
	grep -qx "./usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libibverbs/libsrnic-rdmav34.so" <<<"$c"
check "srnic-provider holds /etc/libibverbs.d/srnic.driver (a conffile)" \
	bash -c 'grep -qx ./etc/libibverbs.d/srnic.driver <<<"$1" &&
		dpkg-deb --ctrl-tarfile "$2" | tar -xOf - ./conffiles | grep -qx /etc/libibverbs.d/srnic.driver' _ "$c" "$pd"
check "srnic-provider depends on the libibverbs1 release it was built for" \
	bash -c 'dpkg-deb -f "$1" Depends | grep -q "libibverbs1 (<< "' _ "$pd"
check "man page renders" bash -c 'man -l userspace/ctl/srnicctl.8 2>/dev/null | grep -q "srnicctl - inspect and control srnic"'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
