#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of tests/tier_deploy.sh (run by tests/vm/vmrun, one boot):
# the three ways a user installs srnic, each followed by what the user does
# next, each undone again.
#
#   tests/vm/vmrun tests/deploy/guest.sh DIR
#
# DIR (made by tests/deploy/host.sh): dkms/tree and dkms/src, a private DKMS
# tree where the host ran `tools/dkms.sh build` for this kernel (compiling
# in a TCG guest takes far too long), deb/ (tools/mkdeb.sh) and
# srnic-<v>.dkms.tar.gz (dkms mktarball of that build, with its source).
#
#  1. insmod: bare `insmod srnic.ko` fails with "Unknown symbol" (what the
#     README says), and works once its dependencies are loaded.
#  2. make install: srnic.ko in /lib/modules/KVER/updates/, `modprobe srnic`
#     loads it with its dependencies, `rdma link add` autoloads it; make
#     uninstall: gone, modprobe fails.
#  3. DKMS (tools/dkms.sh = make dkms-install): dkms install from the private
#     tree into /lib/modules/KVER/updates/dkms/, signed with DKMS's key;
#     `rdma link add` autoloads exactly that module; ibv_rc_pingpong -c
#     between two devices; tools/dkms.sh remove: gone.
#  4. .deb: apt install ./srnic-dkms_*.deb ./srnic-tools_*.deb
#     ./srnic-provider_*.deb (offline; the
#     postinst is dkms's common.postinst, fed the host's build through
#     /usr/share/srnic-dkms/<tarball> so that it does not compile;
#     SRNIC_DEPLOY_GUEST_BUILD=1 drops the tarball and compiles in the guest);
#     `rdma link add` autoloads, /usr/sbin/srnicctl show sees the device,
#     man srnicctl, a native device listed by stock ibv_devices through the
#     installed provider; apt remove (purge for the provider): module,
#     source, srnicctl, provider and its driver file gone.
#
# SRNIC_DEPLOY_PARTS (default "insmod install dkms deb"): run only these parts.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/vm/lib.sh
PARTS=" ${SRNIC_DEPLOY_PARTS:-insmod install dkms deb} "
part() { [[ $PARTS == *" $1 "* ]] && part_t0=$SECONDS; }

D=${1:?usage: guest.sh DIR}
KVER=$(uname -r)
VER=$(tools/dkms.sh version)
TREES=(--dkmstree "$D/dkms/tree" --sourcetree "$D/dkms/src")
mod_file() { modinfo -n srnic 2>/dev/null; }
loaded() { [ -d /sys/module/srnic ]; }
unloaded() { ! loaded; }
no_srnic_module() { ! modinfo -n srnic >/dev/null 2>&1; }
# unload srnic and whatever it pulled in (best effort; checks follow)
unload_all() {
	rmmod srnic 2>/dev/null
	modprobe -r -q ib_uverbs ip6_udp_tunnel udp_tunnel 2>/dev/null
	return 0
}
link_up_autoload() {
	# $1: what installed the module
	t_check "$1: rdma link add autoloads srnic" \
		ip netns exec nsA rdma link add srnic0 type srnic netdev vethA
	t_check "$1: srnic module loaded by the alias" loaded
}
link_down() {
	ip netns exec nsA rdma link delete srnic0 2>/dev/null
	ip netns exec nsB rdma link delete srnic1 2>/dev/null
	t_check "$1: rmmod srnic" bash -c 'rmmod srnic && ! test -d /sys/module/srnic'
}

dmesg -C
modprobe -a veth
netns_pair_setup || exit 1
t_check "start: no srnic module installed for $KVER" no_srnic_module
t_check "start: DKMS knows no srnic" bash -c '[ -z "$(dkms status -m srnic)" ]'

# ---------------------------------------------------------------- 1. insmod
if part insmod; then
t_expect_fail "bare insmod srnic.ko fails: Unknown symbol" "Unknown symbol" insmod srnic.ko
t_check "insmod after modprobe of its dependencies (modinfo -F depends)" \
	bash -c 'modprobe -a $(modinfo -F depends srnic.ko | tr , " ") && insmod srnic.ko'
unload_all
t_check "insmod: unloaded again" unloaded
echo "deploy-guest: part insmod: $((SECONDS - part_t0)) s"
fi

# ---------------------------------------------------------------- 2. make install
if part install; then
t_check "make install" make install
t_eq "make install: module in updates/" "$(mod_file)" "/lib/modules/$KVER/updates/srnic.ko"
t_check "modprobe srnic" modprobe srnic
t_check "modprobe loaded its dependencies (udp_tunnel, ib_uverbs)" \
	test -d /sys/module/udp_tunnel -a -d /sys/module/ib_uverbs
t_check "modprobe -r srnic" bash -c 'modprobe -r srnic && ! test -d /sys/module/srnic'
link_up_autoload "make install"
link_down "make install"
unload_all
t_check "make uninstall" make uninstall
t_check "make uninstall: no srnic module any more" no_srnic_module
t_expect_fail "make uninstall: modprobe srnic fails" "not found" modprobe srnic
echo "deploy-guest: part install: $((SECONDS - part_t0)) s"
fi

# ---------------------------------------------------------------- 3. DKMS
if part dkms; then
out=$(tools/dkms.sh install -k "$KVER" "${TREES[@]}" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
t_eq "tools/dkms.sh install" "$rc" 0
t_check "dkms: did not compile in the guest (the host's build was used)" \
	bash -c '! grep -q "^Building module" <<<"$1"' _ "$out"
t_check "dkms status: installed for $KVER" \
	bash -c 'dkms status "$@" -m srnic -v "'"$VER"'" -k "'"$KVER"'" | grep -q ": installed"' _ "${TREES[@]}"
t_eq "dkms: module in updates/dkms/" "$(mod_file)" "/lib/modules/$KVER/updates/dkms/srnic.ko"
t_eq "dkms: module signed with DKMS's key" "$(modinfo -F signer srnic 2>/dev/null)" "DKMS module signing key"
link_up_autoload dkms
t_eq "dkms: the loaded module is the DKMS build" \
	"$(cat /sys/module/srnic/srcversion 2>/dev/null)" "$(modinfo -F srcversion "/lib/modules/$KVER/updates/dkms/srnic.ko")"
ip netns exec nsB rdma link add srnic1 type srnic netdev vethB
G0=$(settle roce_gid_index srnic0 10.99.0.1)
G1=$(settle roce_gid_index srnic1 10.99.0.2)
t_check "dkms: IPv4 RoCEv2 GIDs present" test -n "$G0" -a -n "$G1"
pkts0=$(counter srnic0 rcvd_pkts)
pair "dkms: ibv_rc_pingpong -c srnic0 <-> srnic1" \
	ibv_rc_pingpong -d srnic0 -g "$G0" -n 100 -s 4096 -c -- \
	ibv_rc_pingpong -d srnic1 -g "$G1" -n 100 -s 4096 -c 10.99.0.1
t_check "dkms: srnic0 received packets" test "$(counter srnic0 rcvd_pkts)" -gt "$((pkts0 + 100))"
link_down dkms
t_check "tools/dkms.sh remove" tools/dkms.sh remove "${TREES[@]}"
t_check "dkms remove: no srnic module any more" no_srnic_module
t_check "dkms remove: staged source gone" test ! -e "$D/dkms/src/srnic-$VER"
unload_all
echo "deploy-guest: part dkms: $((SECONDS - part_t0)) s"
fi

# ---------------------------------------------------------------- 4. .deb
if part deb; then
debs=("$D"/deb/srnic-dkms_*.deb "$D"/deb/srnic-tools_*.deb "$D"/deb/srnic-provider_*.deb)
t_check "three .deb packages to install" test -f "${debs[0]}" -a -f "${debs[1]}" -a -f "${debs[2]}"
if [ "${SRNIC_DEPLOY_GUEST_BUILD:-0}" != 1 ]; then
	mkdir -p /usr/share/srnic-dkms
	cp "$D/srnic-$VER.dkms.tar.gz" /usr/share/srnic-dkms/
fi
# The postinst builds for the running and the newest kernel with headers;
# the guest sees every kernel the host has, and compiling takes too long
# here: this guest is a machine with the running kernel's headers only.
for b in /lib/modules/*/build; do
	[ "$b" = "/lib/modules/$KVER/build" ] || rm -f "$b"
done
# apt offline, from the dpkg database alone (no package lists: building
# apt's cache from them takes minutes under TCG); and no man-db index
# rebuild on the trigger (a full mandb run, twice, under TCG): `man srnicctl`
# below finds the page without the index
rm -f /var/lib/man-db/auto-update
mkdir -p /tmp/apt-off/lists/partial /tmp/apt-off/parts
: >/tmp/apt-off/sources.list
apt_off=(-o Dir::Etc::SourceList=/tmp/apt-off/sources.list -o Dir::Etc::SourceParts=/tmp/apt-off/parts
	-o Dir::State::Lists=/tmp/apt-off/lists -o Dir::Cache::pkgcache=
	-o Dir::Cache::srcpkgcache= -o Dpkg::Use-Pty=0)
t0=$EPOCHREALTIME
out=$(cd "$D/deb" && DEBIAN_FRONTEND=noninteractive timeout 1800 apt-get install -y \
	--no-install-recommends "${apt_off[@]}" "./${debs[0]##*/}" "./${debs[1]##*/}" \
	"./${debs[2]##*/}" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
echo "info: apt install took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
t_eq "apt install ./srnic-dkms_*.deb ./srnic-tools_*.deb ./srnic-provider_*.deb" "$rc" 0
t_check "deb: the three packages installed" \
	bash -c 'dpkg-query -W -f="\${Status}\n" srnic-dkms srnic-tools srnic-provider | grep -c "install ok installed" | grep -qx 3'
t_check "deb: postinst left srnic installed in DKMS for $KVER" \
	bash -c 'dkms status -m srnic -v "'"$VER"'" -k "'"$KVER"'" | grep -q ": installed"'
t_check "deb: DKMS has the source (rebuilds for new kernels)" test -L "/var/lib/dkms/srnic/$VER/source"
t_eq "deb: module in updates/dkms/" "$(mod_file)" "/lib/modules/$KVER/updates/dkms/srnic.ko"
t_eq "deb: srnicctl on PATH is the package's" "$(command -v srnicctl)" /usr/sbin/srnicctl
t_check "deb: man srnicctl" bash -c 'man -w srnicctl | grep -q /usr/share/man/man8/srnicctl.8'
link_up_autoload deb
out=$(srnicctl show srnic0 2>&1)
printf '%s\n' "$out" | sed 's/^/  | /'
t_check "deb: srnicctl show srnic0: device, port, netdev" \
	bash -c '[[ $1 == "dev srnic0 kind srnic port 1 "* && $1 == *" netdev vethA "* ]]' _ "$out"
# native mode: stock libibverbs finds the installed provider by itself
t_check "deb: rdma link add srnic1 type srnic_native" \
	ip netns exec nsB rdma link add srnic1 type srnic_native netdev vethB
t_check "deb: ibv_devices lists native srnic1 (installed provider) and srnic0" \
	bash -c 'l=$(env -u RDMAV_DRIVERS ibv_devices); [[ $l == *" srnic1 "* && $l == *" srnic0 "* ]]'
t_check "deb: ibv_devinfo -d srnic1" \
	bash -c 'env -u RDMAV_DRIVERS ibv_devinfo -d srnic1 | grep -q PORT_ACTIVE'
link_down deb
out=$(DEBIAN_FRONTEND=noninteractive apt-get remove -y "${apt_off[@]}" srnic-dkms srnic-tools 2>&1 &&
	DEBIAN_FRONTEND=noninteractive apt-get purge -y "${apt_off[@]}" srnic-provider 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
t_eq "apt remove srnic-dkms srnic-tools, apt purge srnic-provider" "$rc" 0
t_check "apt remove: no srnic module any more" no_srnic_module
t_check "apt remove: DKMS knows no srnic" bash -c '[ -z "$(dkms status -m srnic)" ]'
t_check "apt remove: /usr/src/srnic-$VER gone" test ! -e "/usr/src/srnic-$VER"
t_check "apt remove: srnicctl gone" test ! -e /usr/sbin/srnicctl
t_check "apt purge: the provider and its driver file gone" \
	bash -c '! ls /usr/lib/*/libibverbs/libsrnic-rdmav34.so /etc/libibverbs.d/srnic.driver 2>/dev/null'
t_expect_fail "apt remove: modprobe srnic fails" "not found" modprobe srnic
echo "deploy-guest: part deb: $((SECONDS - part_t0)) s"
fi

t_check "no kernel warnings" bash -c "! dmesg | grep -E '^(\[[ 0-9.]+\] )?(WARNING|BUG|Oops|general protection)'"
t_summary
