#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# libsrnic through the real libibverbs, on fake devices: which devices does
# ibv_devices list with and without RDMAV_DRIVERS naming the provider?
#
#   provider_sysfs_test.sh <dir>/libsrnic
#
# libibverbs finds devices by rdma netlink and, where that protocol is
# missing (no ib_core loaded), by sysfs below $SYSFS_PATH: class/
# infiniband_verbs/uverbsN/{ibdev,abi_version,dev} and a character device
# /dev/infiniband/uverbsN whose number matches dev. The test builds such a
# tree, and a tmpfs /dev, in a private mount namespace:
#   srnicn0  ABI 16, srnic/provider "native"   native srnic device
#   srnicd0  ABI 2,  srnic/provider "rxe"      default-mode srnic device
#   srnicx0  ABI 16, srnic/provider "rxe"      inconsistent: refused
#   other0   ABI 16, no srnic/                 not srnic: refused
# Expected: only srnicn0, and only with the provider.
#
# Needs root (unshare, mount, mknod), unshare(1) and ibv_devices; skipped
# (exit 77) without them, or when ib_core is loaded (netlink then answers
# and libibverbs never reads the fake tree). Inside a chroot, whose root is
# no mount point, unshare -m cannot make mounts private: enter the namespace
# first and say so, e.g. for rdma-core 56:
#   unshare -m chroot ROOT env SRNIC_TEST_IN_MOUNT_NS=1 \
#       sh .../provider_sysfs_test.sh /tmp/b56/libsrnic
set -eu

[ $# -eq 1 ] || { echo "usage: $0 <dir>/libsrnic" >&2; exit 2; }
provider=$1

skip() { echo "provider_sysfs_test: SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root"
in_ns=${SRNIC_TEST_IN_MOUNT_NS:-0}
[ "$in_ns" = 1 ] || command -v unshare >/dev/null || skip "no unshare(1)"
command -v ibv_devices >/dev/null || skip "no ibv_devices (ibverbs-utils)"
[ ! -d /sys/class/infiniband ] || skip "ib_core is loaded: libibverbs uses netlink"

tmp=$(mktemp -d /tmp/srnic_provider_sysfs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Runs in the new mount namespace: fake tree, tmpfs /dev, two listings.
cat >"$tmp/inner.sh" <<'EOF'
set -eu
sys=$1 provider=$2 out=$3
mount -t tmpfs srnic_test_dev /dev
mkdir /dev/infiniband
mkdir -p "$sys/class/infiniband_verbs"
echo 6 >"$sys/class/infiniband_verbs/abi_version"
minor=192
fake() { # uverbsN ibdev abi provider|-
	v=$sys/class/infiniband_verbs/$1 d=$sys/class/infiniband/$2
	mkdir -p "$v" "$d"
	echo "$2" >"$v/ibdev"
	echo "$3" >"$v/abi_version"
	echo "231:$minor" >"$v/dev"
	echo 1 >"$d/node_type"
	echo "0002:c9ff:fe00:$minor" >"$d/node_guid"
	if [ "$4" != - ]; then
		mkdir "$d/srnic"
		echo "$4" >"$d/srnic/provider"
	fi
	mknod "/dev/infiniband/$1" c 231 $minor
	minor=$((minor + 1))
}
fake uverbs0 srnicn0 16 native
fake uverbs1 srnicd0 2 rxe
fake uverbs2 srnicx0 16 rxe
fake uverbs3 other0 16 -
SYSFS_PATH=$sys ibv_devices >"$out.without" 2>&1
SYSFS_PATH=$sys RDMAV_DRIVERS=$provider ibv_devices >"$out.with" 2>&1
EOF

if [ "$in_ns" = 1 ]; then
	sh "$tmp/inner.sh" "$tmp/sys" "$provider" "$tmp/list"
else
	unshare -m true 2>/dev/null ||
		skip "unshare -m fails here (a chroot? see the header)"
	unshare -m sh "$tmp/inner.sh" "$tmp/sys" "$provider" "$tmp/list"
fi

fail=0
listed() { grep -q "^[[:space:]]*$1[[:space:]]" "$2"; }
if listed srnicn0 "$tmp/list.without"; then
	echo "FAIL: the native device is listed without libsrnic"; fail=1
fi
if ! listed srnicn0 "$tmp/list.with"; then
	echo "FAIL: the native device is not listed with libsrnic"; fail=1
fi
for dev in srnicd0 srnicx0 other0; do
	if listed $dev "$tmp/list.with"; then
		echo "FAIL: $dev is listed with libsrnic"; fail=1
	fi
done
if [ $fail -ne 0 ]; then
	echo "--- without:"; cat "$tmp/list.without"
	echo "--- with:"; cat "$tmp/list.with"
	exit 1
fi
echo "provider_sysfs_test: ok"
